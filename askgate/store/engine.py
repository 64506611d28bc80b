"""Database URLs and engines: SQLite (file, WAL, aiosqlite) or PostgreSQL (asyncpg).

SQLite allows one writer at a time, so askgate opens two engines on the file: a read engine whose
transactions start DEFERRED (WAL readers never block), and a single-connection write engine whose
transactions start IMMEDIATE, so a write transaction holds the write lock from its first statement and
compare-and-set sequences cannot interleave. Both run inline on the event loop (:class:`InlineEngine`);
PostgreSQL uses one pooled asyncpg engine for both.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url

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
    read: Any  # AsyncEngine (PostgreSQL) or InlineEngine (SQLite): both offer connect(), begin(), dispose()
    write: Any

    async def dispose(self) -> None:
        await self.write.dispose()
        if self.read is not self.write:
            await self.read.dispose()


class InlineConnection:
    """The slice of AsyncConnection the store uses, over a synchronous SQLite connection."""

    def __init__(self, conn: Connection) -> None:
        self.sync_connection = conn

    @property
    def dialect(self) -> Any:
        return self.sync_connection.dialect

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        if parameters is None:
            return self.sync_connection.execute(statement)
        return self.sync_connection.execute(statement, parameters)

    async def run_sync(self, fn: Any, *args: Any) -> Any:
        return fn(self.sync_connection, *args)


class InlineEngine:
    """SQLite run inline on the event loop, committing in a worker thread.

    SQLite statements take microseconds, so a thread hop per statement (aiosqlite) costs far more than
    the statement, and on a busy machine every hop waits for a CPU. Here statements run directly on the
    loop; only ``COMMIT`` (which may fsync) goes to a thread, once per transaction. Concurrency is safe:
    a connection is never used by two coroutines, and writers are serialised by the store's lock.
    """

    def __init__(self, url: str, *, begin: str, pool_size: int, synchronous: str, commit_in_thread: bool) -> None:
        self.sync_engine = create_engine(url.replace("sqlite+aiosqlite", "sqlite+pysqlite", 1),
                                         pool_size=pool_size, max_overflow=pool_size, pool_timeout=600,
                                         connect_args={"check_same_thread": False})
        self.url = self.sync_engine.url
        self._commit_in_thread = commit_in_thread
        _sqlite_events(self.sync_engine, begin=begin, synchronous=synchronous)

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[InlineConnection]:
        with self.sync_engine.connect() as conn:
            yield InlineConnection(conn)

    @contextmanager
    def raw(self) -> Iterator[Any]:
        """A pooled sqlite3 connection for the raw hot-path reads (askgate/store/sqlite_fast.py): no
        SQLAlchemy Connection around it; each statement is its own read snapshot (autocommit mode)."""
        pooled = self.sync_engine.raw_connection()
        try:
            yield pooled.dbapi_connection
        finally:
            pooled.close()

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[InlineConnection]:
        conn = self.sync_engine.connect()
        try:
            tx = conn.begin()
            try:
                yield InlineConnection(conn)
            except BaseException:
                tx.rollback()
                raise
            if self._commit_in_thread:
                await asyncio.to_thread(tx.commit)
            else:
                tx.commit()
        finally:
            conn.close()

    async def dispose(self) -> None:
        self.sync_engine.dispose()


def _sqlite_events(engine: Engine, *, begin: str, synchronous: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (pysqlite's implicit BEGIN is wrong)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA synchronous={synchronous}")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql(begin)


def create_engines(url: str, *, sqlite_synchronous: str = "FULL", pool_size: int = 10) -> Engines:
    url = normalise_url(url)
    if backend_of(url) == "sqlite":
        path = make_url(url).database
        if path and path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        if sqlite_synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError("sqlite_synchronous must be OFF, NORMAL, FULL or EXTRA")
        sync = sqlite_synchronous.upper()
        write = InlineEngine(url, begin="BEGIN IMMEDIATE", pool_size=1, synchronous=sync, commit_in_thread=True)
        read = InlineEngine(url, begin="BEGIN", pool_size=pool_size, synchronous=sync, commit_in_thread=False)
        return Engines("sqlite", read, write)
    from sqlalchemy.ext.asyncio import create_async_engine  # PostgreSQL only: SQLite runs inline

    # No pool_pre_ping: it cost a round trip per check-out. A write's BEGIN is its liveness check instead
    # (pg_fast.begin takes another connection when the checked-out one is dead, before anything is done
    # on it), hot reads retry once on another connection, and Core statements that meet a dead
    # connection have SQLAlchemy invalidate it (the statement fails, the next check-out gets a new one).
    engine = create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_timeout=600)
    return Engines("postgresql", engine, engine)
