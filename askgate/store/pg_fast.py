"""The hot statements on PostgreSQL, run straight on the asyncpg connection.

Through SQLAlchemy Core on asyncpg every statement costs building the statement, its compilation cache
key, the execution context and two greenlet hops, and ``pool_pre_ping`` cost a round trip per check-out:
~11 ms of server CPU per ask created and answered, most of it Python around a few fast statements. Here
the broker's per-request statements are SQL text on the asyncpg connection itself (asyncpg prepares each
once per connection and caches it), and round trips are merged where PostgreSQL allows: an ask and its
offers in one statement, a compare-and-set that also locks the ask's chain head, other chain heads
locked-or-created in one upsert, and at the end of a write the audit entries, the chain heads, secret
deletions and the ``pg_notify`` wake-ups in one statement of data-modifying CTEs. The check-out and
``BEGIN`` are one greenlet hop, the ``COMMIT`` and check-in another; there is no pre-ping.

Writes stay inside the transaction SQLAlchemy opened (:func:`begin`), so ``Tx.conn`` keeps working for
the rarer Core statements (consent, intents, secrets, callbacks, push bookkeeping) and everything commits
or rolls back together. Hot reads use a small asyncpg pool of their own (:class:`ReadPool`). Rows stored
here are what the Core path stores (aware UTC ``timestamptz``, native booleans), so both paths read each
other's rows; tests/store/test_pg_fast.py compares them on a real PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import asyncpg
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.util import await_only, greenlet_spawn

ASK_COLUMNS = ("id, version, state, terminal, dialect, asker, session_id, external_id, created_at, updated_at, "
               "next_wake_at, record")
_WITH_OFFERS = f"SELECT {ASK_COLUMNS}, ARRAY(SELECT respondent_id FROM ask_offers WHERE ask_id = asks.id) FROM asks"

T = TypeVar("T")

# Errors that mean the connection itself is gone (not that the statement was wrong).
_DEAD = (asyncpg.exceptions.ConnectionDoesNotExistError, asyncpg.exceptions.InterfaceError,
         asyncpg.exceptions.AdminShutdownError, asyncpg.exceptions.CannotConnectNowError, ConnectionError, OSError)


def dt(value: datetime | None) -> datetime | None:
    """An aware datetime as UTC (what the Core path's ``UTCDateTime`` binds); naive ones are refused."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetime given to the store; pass an aware UTC datetime")
    return value.astimezone(UTC)


def is_dead(driver: Any, exc: BaseException) -> bool:
    """Did ``exc`` come from a lost connection? (Then it must not go back to any pool.)"""
    return driver is None or driver.is_closed() or _dead_error(exc)


def _dead_error(exc: BaseException) -> bool:
    """A lost-connection error, raised by asyncpg itself or translated by SQLAlchemy's adapter."""
    seen: BaseException | None = exc
    for _ in range(4):  # the adapter's error wraps asyncpg's (``__cause__``); SQLAlchemy's may wrap that
        if seen is None:
            return False
        if isinstance(seen, _DEAD) or (isinstance(seen, DBAPIError) and seen.connection_invalidated):
            return True
        seen = seen.__cause__ or getattr(seen, "orig", None)
    return False


# --------------------------------------------------------------------------------------------------
# Write transactions on SQLAlchemy's connection
# --------------------------------------------------------------------------------------------------


def _open(sync_engine: Any) -> tuple[Any, asyncpg.Connection]:
    """(In a greenlet) check a connection out, begin SQLAlchemy's transaction and send the ``BEGIN``."""
    sync_conn = sync_engine.connect()
    driver = None
    try:
        sync_conn.begin()
        fairy = sync_conn.connection
        driver = fairy.driver_connection
        adapter = fairy.dbapi_connection
        if adapter._transaction is None:  # noqa: SLF001 - see begin()
            await_only(adapter._start_transaction())  # noqa: SLF001
    except BaseException as exc:
        _discard(sync_conn, driver, exc)
        raise
    return sync_conn, driver


def _commit(sync_conn: Any, driver: asyncpg.Connection) -> None:
    """(In a greenlet) commit and return the connection to the pool (or drop it if it died)."""
    try:
        sync_conn.commit()
    except BaseException as exc:
        _discard(sync_conn, driver, exc)
        raise
    sync_conn.close()


def _discard(sync_conn: Any, driver: asyncpg.Connection | None, exc: BaseException) -> None:
    """(In a greenlet) after a failure: roll back and return the connection, or invalidate a dead one."""
    try:
        if isinstance(exc, Exception) and is_dead(driver, exc):
            sync_conn.invalidate()
        else:
            try:
                sync_conn.rollback()
            except Exception:  # noqa: BLE001 - the unit's own error is what the caller must see
                sync_conn.invalidate()
    finally:
        sync_conn.close()


@asynccontextmanager
async def begin(engine: AsyncEngine, attempts: int = 3) -> AsyncIterator[tuple[AsyncConnection, asyncpg.Connection]]:
    """An AsyncConnection in a started transaction and its asyncpg connection; commits on normal exit.

    The ``BEGIN`` is sent now (SQLAlchemy's asyncpg adapter would send it lazily before its first own
    statement, which raw statements bypass), and it doubles as the liveness check ``pool_pre_ping`` paid a
    separate round trip for: a connection found dead there is invalidated and another one taken, before
    anything was done on it. A connection lost later fails the unit (rolled back, never acknowledged) and
    is invalidated rather than returned to the pool. Check-out and ``BEGIN`` are one greenlet hop, commit
    and check-in another (AsyncConnection's own methods take one hop each)."""
    for attempt in range(attempts):
        try:
            sync_conn, driver = await greenlet_spawn(_open, engine.sync_engine)
        except Exception as exc:
            if attempt + 1 < attempts and isinstance(exc, Exception) and _dead_error(exc):
                continue
            raise
        break
    conn = AsyncConnection(engine, sync_conn)
    try:
        yield conn, driver
    except BaseException as exc:
        await greenlet_spawn(_discard, sync_conn, driver, exc)
        raise
    await greenlet_spawn(_commit, sync_conn, driver)


# --------------------------------------------------------------------------------------------------
# Hot reads on a pool of their own
# --------------------------------------------------------------------------------------------------


async def _keep_session(_conn: asyncpg.Connection) -> None:
    """The read pool's reset: nothing to undo (its connections only ever run plain SELECTs outside any
    transaction), so no ``RESET ALL`` round trip per read (asyncpg still checks no transaction is open)."""


class ReadPool:
    """asyncpg connections for single-statement reads (each its own snapshot, autocommit).

    Made lazily on first use (in the loop that uses it). A read that fails because its connection died
    is retried once on another connection: a read has no effect to repeat."""

    def __init__(self, dsn: str, size: int) -> None:
        self._dsn = dsn
        self._size = size
        self._pool: asyncpg.Pool | None = None
        self._lock = asyncio.Lock()

    async def _get(self) -> asyncpg.Pool:
        if self._pool is None:
            async with self._lock:
                if self._pool is None:
                    self._pool = await asyncpg.create_pool(self._dsn, min_size=1, max_size=self._size,
                                                           reset=_keep_session)
        return self._pool

    async def run(self, fn: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        pool = self._pool or await self._get()
        for attempt in (0, 1):
            async with pool.acquire() as c:
                try:
                    return await fn(c)
                except Exception as exc:
                    if attempt or not is_dead(c, exc):
                        raise
                    c.terminate()  # the pool replaces a closed connection on release
        raise AssertionError("unreachable")

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()


# --------------------------------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------------------------------


async def get_ask_row(c: asyncpg.Connection, ask_id: str) -> asyncpg.Record | None:
    """The ask's columns and, last, its offers as an array: one statement, so one snapshot."""
    return await c.fetchrow(f"{_WITH_OFFERS} WHERE id = $1", ask_id)


async def due_rows(c: asyncpg.Connection, now: datetime, limit: int) -> list[asyncpg.Record]:
    """Live asks whose wake time has come, earliest first, locked; rows other processes hold are skipped."""
    return await c.fetch(f"{_WITH_OFFERS} WHERE terminal = false AND next_wake_at <= $1 "
                         "ORDER BY next_wake_at LIMIT $2 FOR UPDATE OF asks SKIP LOCKED", dt(now), limit)


def _ask_args(v: dict[str, Any]) -> tuple[Any, ...]:
    return (v["version"], v["state"], bool(v["terminal"]), v["dialect"], v["asker"], v["session_id"],
            v["external_id"], dt(v["updated_at"]), dt(v["next_wake_at"]), v["record"])


async def insert_ask(c: asyncpg.Connection, v: dict[str, Any], offered: Sequence[str]) -> None:
    """The ask and its offers in one statement (the offers' foreign key is checked at its end)."""
    args = (v["id"], *_ask_args(v), dt(v["created_at"]))
    if offered:
        await c.execute(
            "WITH a AS (INSERT INTO asks (id, version, state, terminal, dialect, asker, session_id, external_id, "
            "updated_at, next_wake_at, record, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12) "
            "RETURNING id) "
            "INSERT INTO ask_offers (ask_id, respondent_id) SELECT a.id, r FROM a, unnest($13::varchar[]) AS r",
            *args, list(offered))
    else:
        await c.execute(
            "INSERT INTO asks (id, version, state, terminal, dialect, asker, session_id, external_id, "
            "updated_at, next_wake_at, record, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)", *args)


_CAS = ("UPDATE asks SET version=$2, state=$3, terminal=$4, dialect=$5, asker=$6, session_id=$7, external_id=$8, "
        "updated_at=$9, next_wake_at=$10, record=$11 WHERE id = $1 AND version = $12")


_HEAD_AFTER_CAS = ("hd AS (UPDATE chain_heads SET length = chain_heads.length FROM u "
                   "WHERE chain_heads.chain_kind = 'ask' AND chain_heads.chain_id = u.id "
                   "RETURNING chain_heads.length, chain_heads.head_hash) "
                   "SELECT (SELECT count(*) FROM u), hd.length, hd.head_hash FROM (SELECT 1) AS one "
                   "LEFT JOIN hd ON true")
_CAS_HEAD = f"WITH u AS ({_CAS} RETURNING id), {_HEAD_AFTER_CAS}"
_CAS_OFFERS_HEAD = (
    f"WITH u AS ({_CAS} RETURNING id), "
    "d AS (DELETE FROM ask_offers WHERE ask_id IN (SELECT id FROM u) AND NOT (respondent_id = ANY($13::varchar[]))), "
    "i AS (INSERT INTO ask_offers (ask_id, respondent_id) SELECT u.id, r FROM u, unnest($13::varchar[]) AS r "
    f"ON CONFLICT DO NOTHING), {_HEAD_AFTER_CAS}")


async def cas_ask(c: asyncpg.Connection, v: dict[str, Any], expected_version: int,
                  offered: Sequence[str] | None) -> tuple[bool, tuple[int, str | None] | None]:
    """Compare-and-set, and the ask's chain head locked in the same statement (a change is audited next,
    so this saves the round trip of :func:`lock_head`): (matched, (length, head_hash) or None if the ask
    has no chain head yet). With ``offered`` the offer index is made equal to it as well. Everything
    after the update reads its result, so it runs after the update holds the ask's row lock (the lock that
    serialises writers of one ask, taken first as on the Core path) and does nothing when no row matched."""
    args = (v["id"], *_ask_args(v), expected_version)
    if offered is None:
        r = await c.fetchrow(_CAS_HEAD, *args)
    else:
        r = await c.fetchrow(_CAS_OFFERS_HEAD, *args, list(offered))
    return r[0] == 1, ((r[1], r[2]) if r[1] is not None else None)


_CAS_MANY = (
    "WITH v AS (SELECT * FROM unnest($1::varchar[], $2::int[], $3::varchar[], $4::bool[], $5::varchar[], "
    "$6::varchar[], $7::varchar[], $8::varchar[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::int[]) "
    "AS v(id, version, state, terminal, dialect, asker, session_id, external_id, updated_at, next_wake_at, record, "
    "expected)), "
    "u AS (UPDATE asks SET version=v.version, state=v.state, terminal=v.terminal, dialect=v.dialect, asker=v.asker, "
    "session_id=v.session_id, external_id=v.external_id, updated_at=v.updated_at, next_wake_at=v.next_wake_at, "
    "record=v.record FROM v WHERE asks.id = v.id AND asks.version = v.expected RETURNING asks.id), "
    "hd AS (UPDATE chain_heads SET length = chain_heads.length FROM u "
    "WHERE chain_heads.chain_kind = 'ask' AND chain_heads.chain_id = u.id "
    "RETURNING chain_heads.chain_id, chain_heads.length, chain_heads.head_hash) "
    "SELECT (SELECT count(*) FROM u), hd.chain_id, hd.length, hd.head_hash FROM (SELECT 1) AS one "
    "LEFT JOIN hd ON true")


async def cas_many(c: asyncpg.Connection, updates: Sequence[tuple[dict[str, Any], int]]
                   ) -> tuple[int, dict[str, tuple[int, str | None]]]:
    """Many compare-and-sets (offers unchanged) in one round trip, each ask's chain head locked as
    :func:`cas_ask` locks it: (rows matched, {ask id: (length, head_hash)} for the asks that have a head).
    Deadline settlement writes hundreds of asks per transaction; one statement each made it round-trip
    bound (about 1,200 settlements a second instead of the 1,667 a 100,000-deadline minute needs)."""
    cols: list[list[Any]] = [[] for _ in range(12)]
    for v, expected in updates:
        for i, x in enumerate((v["id"], *_ask_args(v), expected)):
            cols[i].append(x)
    rows = await c.fetch(_CAS_MANY, *cols)
    heads = {r[1]: (r[2], r[3]) for r in rows if r[1] is not None}
    return (rows[0][0] if rows else 0), heads


async def lock_head(c: asyncpg.Connection, kind: str, chain_id: str) -> tuple[int, str | None]:
    """Create-or-lock a chain head in one round trip: the upsert locks the row either way, and returns
    what it holds (a fresh head is length 0, no hash)."""
    r = await c.fetchrow(
        "INSERT INTO chain_heads (chain_kind, chain_id, length, head_hash) VALUES ($1, $2, 0, NULL) "
        "ON CONFLICT (chain_kind, chain_id) DO UPDATE SET length = chain_heads.length RETURNING length, head_hash",
        kind, chain_id)
    return r[0], r[1]


async def finish(c: asyncpg.Connection, entries: Sequence[dict[str, Any]],
                 new_heads: Sequence[tuple[str, str, int, str | None]],
                 heads: Sequence[tuple[str, str, int, str | None]], drop_secrets: Sequence[str],
                 notify_channel: str, changed: Sequence[str]) -> None:
    """At the end of a write, in one statement: the audit entries, the new chain heads, the other chain
    heads (all locked, see :func:`lock_head`), the secrets to delete and one ``pg_notify`` per changed ask
    (delivered at commit)."""
    if not entries and not new_heads and not heads and not drop_secrets and not changed:
        return
    await c.execute(
        "WITH e AS (INSERT INTO audit_entries (chain_kind, chain_id, seq, entry_hash, entry) "
        "SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::int[], $4::varchar[], $5::text[])), "
        "n AS (INSERT INTO chain_heads (chain_kind, chain_id, length, head_hash) "
        "SELECT * FROM unnest($6::varchar[], $7::varchar[], $8::int[], $9::varchar[])), "
        "h AS (UPDATE chain_heads SET length = v.n, head_hash = v.h "
        "FROM unnest($10::varchar[], $11::varchar[], $12::int[], $13::varchar[]) AS v(k, c, n, h) "
        "WHERE chain_heads.chain_kind = v.k AND chain_heads.chain_id = v.c), "
        "s AS (DELETE FROM ask_secrets WHERE ask_id = ANY($14::varchar[])) "
        "SELECT count(pg_notify($15, x)) FROM unnest($16::text[]) AS x",
        [e["chain_kind"] for e in entries], [e["chain_id"] for e in entries], [e["seq"] for e in entries],
        [e["entry_hash"] for e in entries], [e["entry"] for e in entries],
        [h[0] for h in new_heads], [h[1] for h in new_heads], [h[2] for h in new_heads], [h[3] for h in new_heads],
        [h[0] for h in heads], [h[1] for h in heads], [h[2] for h in heads], [h[3] for h in heads],
        list(drop_secrets), notify_channel, list(changed))


async def claim_idempotency(c: asyncpg.Connection, principal: str, operation: str, key: str, request_hash: str,
                            ask_id: str, now: datetime) -> tuple[str, str] | None:
    """None if the key was free (now claimed), else the (request_hash, ask_id) it was claimed with."""
    status = await c.execute(
        "INSERT INTO idempotency (principal_id, operation, key, request_hash, ask_id, created_at) "
        "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING", principal, operation, key, request_hash, ask_id,
        dt(now))
    if status == "INSERT 0 1":
        return None
    r = await c.fetchrow("SELECT request_hash, ask_id FROM idempotency WHERE principal_id = $1 AND operation = $2 "
                         "AND key = $3", principal, operation, key)
    return r[0], r[1]


async def find_idempotent(c: asyncpg.Connection, principal: str, operation: str, key: str) -> tuple[str, str] | None:
    r = await c.fetchrow("SELECT request_hash, ask_id FROM idempotency WHERE principal_id = $1 AND operation = $2 "
                         "AND key = $3", principal, operation, key)
    return (r[0], r[1]) if r is not None else None


async def delete_secrets(c: asyncpg.Connection, ask_id: str) -> None:
    await c.execute("DELETE FROM ask_secrets WHERE ask_id = $1", ask_id)


async def principal_for_token_hash(c: asyncpg.Connection, digest: str) -> tuple[str, str] | None:
    r = await c.fetchrow("SELECT principals.id, principals.role FROM principals JOIN api_tokens "
                         "ON api_tokens.principal_id = principals.id "
                         "WHERE api_tokens.token_hash = $1 AND api_tokens.revoked = false", digest)
    return (r[0], r[1]) if r is not None else None


async def consent_map(c: asyncpg.Connection, ids: Sequence[str]) -> dict[tuple[str, str], bool]:
    rows = await c.fetch("SELECT respondent_id, scope, granted FROM consent_grants "
                         "WHERE respondent_id = ANY($1::varchar[])", list(ids))
    return {(r[0], r[1]): bool(r[2]) for r in rows}


async def next_wake(c: asyncpg.Connection) -> datetime | None:
    v: datetime | None = await c.fetchval("SELECT next_wake_at FROM asks WHERE terminal = false "
                                          "AND next_wake_at IS NOT NULL ORDER BY next_wake_at LIMIT 1")
    return v.astimezone(UTC) if v is not None else None


async def pending_callbacks_for(c: asyncpg.Connection, ids: Sequence[str]) -> list[asyncpg.Record]:
    """(id, ask_id, url, delivered_at, attempts) of the undelivered callbacks of these asks, by id."""
    return await c.fetch("SELECT id, ask_id, url, delivered_at, attempts FROM callbacks "
                         "WHERE ask_id = ANY($1::varchar[]) AND delivered_at IS NULL ORDER BY id", list(ids))
