"""Fixtures for tests/server."""

from tests.support.databases import backend, db_url  # noqa: F401
