"""Fixtures for tests/store."""

from tests.support.databases import backend, db_url  # noqa: F401
