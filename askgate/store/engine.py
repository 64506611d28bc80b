"""Database URLs and engines: SQLite (file, WAL, aiosqlite) or PostgreSQL (asyncpg).

SQLite allows one writer at a time, so askgate opens two engines on the file: a read engine whose
transactions start DEFERRED (WAL readers never block), and a single-connection write engine whose
transactions start IMMEDIATE, so a write transaction holds the write lock from its first statement and
compare-and-set sequences cannot interleave. PostgreSQL uses one pooled engine for both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

DEFAULT_SQLITE_PATH = Path(".askgate") / "askgate.db"


def normalise_url(url: str | None) -> str:
    """Map what a person types (``postgresql://``, ``sqlite:///x.db``, a bare path) to an async driver URL."""
    if not url:
        url = f"sqlite:///{DEFAULT_SQLITE_PATH}"
    if "://" not in url:
        url = f"sqlite:///{url}"
    u = make_url(url)
    if u.drivername in ("postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2"):
        u = u.set(drivername="postgresql+asyncpg")
    elif u.drivername == "sqlite":
        u = u.set(drivername="sqlite+aiosqlite")
    if u.drivername not in ("postgresql+asyncpg", "sqlite+aiosqlite"):
        raise ValueError(f"unsupported database URL scheme {u.drivername!r}: use sqlite:/// or postgresql://")
    return u.render_as_string(hide_password=False)


def backend_of(url: str) -> str:
    return "postgresql" if make_url(url).drivername.startswith("postgresql") else "sqlite"


def asyncpg_dsn(url: str) -> str:
    """The plain libpq-style DSN asyncpg.connect() wants (for the LISTEN connection)."""
    u = make_url(url).set(drivername="postgresql")
    return u.render_as_string(hide_password=False)


@dataclass
class Engines:
    backend: str
    read: AsyncEngine
    write: AsyncEngine

    async def dispose(self) -> None:
        await self.write.dispose()
        if self.read is not self.write:
            await self.read.dispose()


def _sqlite_engine(url: str, *, begin: str, pool_size: int, synchronous: str) -> AsyncEngine:
    engine = create_async_engine(url, pool_size=pool_size, max_overflow=0, pool_timeout=600)

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (pysqlite's implicit BEGIN is wrong)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA synchronous={synchronous}")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql(begin)

    return engine


def create_engines(url: str, *, sqlite_synchronous: str = "FULL", pool_size: int = 10) -> Engines:
    url = normalise_url(url)
    if backend_of(url) == "sqlite":
        path = make_url(url).database
        if path and path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        if sqlite_synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError("sqlite_synchronous must be OFF, NORMAL, FULL or EXTRA")
        sync = sqlite_synchronous.upper()
        write = _sqlite_engine(url, begin="BEGIN IMMEDIATE", pool_size=1, synchronous=sync)
        read = _sqlite_engine(url, begin="BEGIN", pool_size=pool_size, synchronous=sync)
        return Engines("sqlite", read, write)
    engine = create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_timeout=600,
                                 pool_pre_ping=True)
    return Engines("postgresql", engine, engine)
