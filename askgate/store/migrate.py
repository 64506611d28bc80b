"""Alembic migrations shipped inside the package, run on start so `askgate serve` needs no set-up."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).with_name("migrations")
HEAD = "0001"  # the newest revision in migrations/versions (tests/store/test_migrate.py checks it is)
_LOCK_KEY = 0x61736B67  # "askg": serialises concurrent migrators on one PostgreSQL


def _config(connection: Any) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Bring the schema to ``revision``; safe to call from several processes at once.

    A database already at :data:`HEAD` is recognised with one query, without importing Alembic (about half
    a second of start-up, which a restart spends while deadlines are falling due)."""
    if revision in ("head", HEAD) and await _stored_revision(engine) == HEAD:
        return
    from alembic import command

    async with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
        await conn.run_sync(lambda sync_conn: command.upgrade(_config(sync_conn), revision))


async def current_revision(engine: AsyncEngine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    async with engine.connect() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())


async def _stored_revision(engine: AsyncEngine) -> str | None:
    """The revision recorded in ``alembic_version``, or None when there is none (a new database)."""
    async with engine.connect() as conn:
        try:
            rows = (await conn.execute(text("SELECT version_num FROM alembic_version"))).all()
        except DBAPIError:  # no such table yet: a new database, which Alembic then creates
            return None
    return rows[0][0] if len(rows) == 1 else None
