"""Fixtures for tests/broker."""

from tests.support.databases import backend, db_url  # noqa: F401
