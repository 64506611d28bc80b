"""Fixtures shared by tests/store, tests/broker and tests/server: the same test on SQLite and PostgreSQL.

Import them into a conftest (``from tests.support.databases import backend, db_url  # noqa: F401``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import postgres

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> str:
    """A URL to an empty database of the parametrized backend."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'askgate.db'}"
    return postgres.fresh_database()
