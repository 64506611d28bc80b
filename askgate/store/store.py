"""The one persistence interface the broker uses (SQLAlchemy 2 async; SQLite or PostgreSQL).

Writes go through :meth:`Store.write`, a unit of work: everything done on the yielded :class:`Tx` commits
together or not at all. That is how an answer, its audit entries, a remembered consent and the deletion
of the ask's credentials become durable in one step, and why nothing is acknowledged before it is
committed. Asks change only by compare-and-set on ``version``.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect

from askgate.store import tables as t
from askgate.store.engine import Engines, asyncpg_dsn, create_engines, normalise_url
from askgate.store import pg_fast as pgf
from askgate.store import record_memo
from askgate.store import sqlite_fast as fast
from askgate.store.group import GroupCommit
from askgate.store.jsontext import dumps_text
from askgate.store.migrate import upgrade
from askgate.store.secretbox import SecretBox, key_from_passphrase
from askgate.store.tokens import ROLES, new_token, token_hash

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection  # PostgreSQL's; SQLite runs inline (engine.py)

NOTIFY_CHANNEL = "askgate_events"


def _dumps(value: Any) -> str:
    return dumps_text(value)  # orjson, with the standard encoder for what orjson would refuse (jsontext.py)


def _now() -> datetime:
    return datetime.now(UTC)


# --------------------------------------------------------------------------------------------------
# Value types
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AskRow:
    """One stored ask: the lifecycle's JSON record plus the columns listing and scheduling use."""

    id: str
    version: int
    state: str
    terminal: bool
    dialect: str
    created_at: datetime
    record: dict[str, Any]
    asker: str | None = None
    session_id: str | None = None
    external_id: str | None = None
    updated_at: datetime | None = None
    next_wake_at: datetime | None = None
    offered_to: tuple[str, ...] = ()


@dataclass(frozen=True)
class AskQuery:
    """Filters for :meth:`Store.list_asks`; ``None`` means "any". Results are newest first."""

    state: str | None = None
    dialect: str | None = None
    asker: str | None = None
    respondent: str | None = None
    session_id: str | None = None
    limit: int = 50
    cursor: str | None = None  # opaque, from a previous page's ``next_cursor``


@dataclass(frozen=True)
class Page:
    items: list[AskRow]
    next_cursor: str | None


@dataclass(frozen=True)
class Principal:
    id: str
    role: str


@dataclass(frozen=True)
class ConsentGrant:
    respondent_id: str
    scope: str
    granted: bool
    decided_at: datetime
    ask_id: str | None = None


@dataclass(frozen=True)
class Callback:
    id: int
    ask_id: str
    url: str
    delivered_at: datetime | None
    attempts: int


class VersionConflict(Exception):
    """Compare-and-set lost: somebody else changed the ask first."""

    def __init__(self, ask_id: str, expected: int) -> None:
        super().__init__(f"ask {ask_id} is no longer at version {expected}")
        self.ask_id = ask_id
        self.expected = expected


class IdempotentReplay(Exception):
    """The idempotency key was used before (for the same or for another request body)."""

    def __init__(self, ask_id: str, same_body: bool) -> None:
        super().__init__(f"idempotency key already used for ask {ask_id}")
        self.ask_id = ask_id
        self.same_body = same_body


EntryFactory = Callable[[str | None, int], dict[str, Any]]
"""(previous_hash, sequence number) -> a chained audit entry carrying ``entry_hash``."""


# --------------------------------------------------------------------------------------------------
# Row mapping
# --------------------------------------------------------------------------------------------------


def _row_values(row: AskRow, now: datetime) -> dict[str, Any]:
    return {
        "id": row.id,
        "version": row.version,
        "state": row.state,
        "terminal": row.terminal,
        "dialect": row.dialect,
        "asker": row.asker,
        "session_id": row.session_id,
        "external_id": row.external_id,
        "created_at": row.created_at,
        "updated_at": now,
        "next_wake_at": row.next_wake_at,
        "record": _dumped_record(row.record),
    }


def _dumped_record(doc: dict[str, Any]) -> str:
    text = _dumps(doc)
    record_memo.remember(text, doc)  # read back soon (an answer follows its create): no json.loads then
    return text


def _from_db(r: Any, offered: tuple[str, ...]) -> AskRow:
    return AskRow(
        id=r.id,
        version=r.version,
        state=r.state,
        terminal=bool(r.terminal),
        dialect=r.dialect,
        asker=r.asker,
        session_id=r.session_id,
        external_id=r.external_id,
        created_at=r.created_at,
        updated_at=r.updated_at,
        next_wake_at=r.next_wake_at,
        record=json.loads(r.record),
        offered_to=offered,
    )


def _from_tuple(r: tuple[Any, ...], offered: tuple[str, ...]) -> AskRow:
    """A row of :data:`sqlite_fast.ASK_COLUMNS` (the raw SQLite path) -> AskRow, as :func:`_from_db` does."""
    return AskRow(id=r[0], version=r[1], state=r[2], terminal=bool(r[3]), dialect=r[4], asker=r[5], session_id=r[6],
                  external_id=r[7], created_at=fast.dt_in(r[8]), updated_at=fast.dt_in(r[9]),  # type: ignore[arg-type]
                  next_wake_at=fast.dt_in(r[10]), record=record_memo.decode(r[11]), offered_to=offered)


def _from_record(r: Any) -> AskRow:
    """A row of :data:`pg_fast.ASK_COLUMNS` plus its offers array (the raw PostgreSQL path) -> AskRow."""
    return AskRow(id=r[0], version=r[1], state=r[2], terminal=r[3], dialect=r[4], asker=r[5], session_id=r[6],
                  external_id=r[7], created_at=r[8].astimezone(UTC), updated_at=r[9].astimezone(UTC),
                  next_wake_at=r[10].astimezone(UTC) if r[10] is not None else None, record=record_memo.decode(r[11]),
                  offered_to=tuple(sorted(r[12])))


def _encode_cursor(row: AskRow) -> str:
    return f"{row.created_at.isoformat()}|{row.id}"


def _decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        stamp, ask_id = cursor.split("|", 1)
        at = datetime.fromisoformat(stamp)
    except ValueError as exc:
        raise ValueError("malformed cursor") from exc
    if at.tzinfo is None:
        raise ValueError("malformed cursor")
    return at, ask_id


# --------------------------------------------------------------------------------------------------
# The unit of work
# --------------------------------------------------------------------------------------------------


class _SqliteWrite:
    """:meth:`Store.write` on SQLite: a :class:`Tx` on a unit of the group commit, its audit entries flushed
    before the unit is released. A class, not a generator: one of these per request."""

    __slots__ = ("_store", "_unit", "_now", "_tx", "_changed")

    def __init__(self, store: Store, group: GroupCommit, now: datetime | None) -> None:
        self._store, self._unit, self._now = store, group.unit(), now

    async def __aenter__(self) -> Tx:
        conn, self._changed = await self._unit.__aenter__()
        self._tx = Tx(conn, self._store, self._now or _now())  # type: ignore[arg-type]
        return self._tx

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        if exc is None:
            try:
                await self._tx.flush()
                self._changed |= self._tx.changed
            except BaseException as failed:
                await self._unit.__aexit__(type(failed), failed, failed.__traceback__)
                raise
        return await self._unit.__aexit__(exc_type, exc, tb)


@dataclass
class Tx:
    """Writes inside one transaction. Created only by :meth:`Store.write` / :meth:`Store.claim_due`."""

    conn: AsyncConnection
    store: Store
    now: datetime
    changed: set[str] = field(default_factory=set)
    _heads: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    _entries: list[dict[str, Any]] = field(default_factory=list)
    raw: Any = None  # PostgreSQL: the asyncpg connection under ``conn``, in the same transaction (pg_fast.py)
    _fresh: set[str] = field(default_factory=set)  # asks inserted by this transaction (their chains start now)
    _drop_secrets: list[str] = field(default_factory=list)  # PostgreSQL: secret deletions sent at the end

    @property
    def _pg(self) -> bool:
        return self.store.backend == "postgresql"

    def _insert(self, table: sa.Table) -> Any:
        return (pg_dialect.insert if self._pg else sqlite_dialect.insert)(table)

    async def claim_idempotency(self, principal: str, operation: str, key: str, request_hash: str,
                                ask_id: str) -> None:
        """Record (principal, operation, key) -> ask; raise :class:`IdempotentReplay` if already used.

        Claimed first in the transaction, so two racing requests with one key serialise on the row.
        """
        if self.raw is not None:
            prior_raw = await pgf.claim_idempotency(self.raw, principal, operation, key, request_hash, ask_id,
                                                    self.now)
            if prior_raw is None:
                return
            raise IdempotentReplay(prior_raw[1], prior_raw[0] == request_hash)
        stmt = self._insert(t.idempotency).values(
            principal_id=principal, operation=operation, key=key, request_hash=request_hash, ask_id=ask_id,
            created_at=self.now,
        ).on_conflict_do_nothing()
        res = await self.conn.execute(stmt)
        if res.rowcount == 1:
            return
        prior = (await self.conn.execute(
            sa.select(t.idempotency.c.request_hash, t.idempotency.c.ask_id).where(
                t.idempotency.c.principal_id == principal, t.idempotency.c.operation == operation,
                t.idempotency.c.key == key)
        )).one()
        raise IdempotentReplay(prior.ask_id, prior.request_hash == request_hash)

    async def insert_ask(self, row: AskRow) -> None:
        if not self._pg:
            db = fast.dbapi(self.conn)
            fast.insert_ask(db, _row_values(row, self.now))
            fast.set_offers(db, row.id, row.offered_to, replace=False)
            self.changed.add(row.id)
            self._fresh.add(row.id)
            return
        if self.raw is not None:
            await pgf.insert_ask(self.raw, _row_values(row, self.now), list(dict.fromkeys(row.offered_to)))
            self.changed.add(row.id)
            self._fresh.add(row.id)
            return
        await self.conn.execute(sa.insert(t.asks).values(**_row_values(row, self.now)))
        await self._set_offers(row.id, row.offered_to)
        self.changed.add(row.id)

    async def cas_ask(self, row: AskRow, expected_version: int, *, offers_changed: bool = True) -> None:
        """Replace the ask if it is still at ``expected_version``; else :class:`VersionConflict`.

        ``offers_changed=False`` skips rewriting the offer index (the caller knows ``offered_to`` is unchanged)."""
        if not self._pg:
            db = fast.dbapi(self.conn)
            if fast.cas_ask(db, _row_values(row, self.now), expected_version) != 1:
                raise VersionConflict(row.id, expected_version)
            if offers_changed:
                fast.set_offers(db, row.id, row.offered_to, replace=True)
            self.changed.add(row.id)
            return
        if self.raw is not None:
            offered = list(dict.fromkeys(row.offered_to)) if offers_changed else None
            matched, head = await pgf.cas_ask(self.raw, _row_values(row, self.now), expected_version, offered)
            if not matched:
                raise VersionConflict(row.id, expected_version)
            if head is not None and ("ask", row.id) not in self._heads:  # locked by the CAS statement
                self._heads[("ask", row.id)] = [head[0], head[1], True]
            self.changed.add(row.id)
            return
        values = _row_values(row, self.now)
        del values["id"], values["created_at"]
        res = await self.conn.execute(
            sa.update(t.asks).where(t.asks.c.id == row.id, t.asks.c.version == expected_version).values(**values)
        )
        if res.rowcount != 1:
            raise VersionConflict(row.id, expected_version)
        if offers_changed:
            await self.conn.execute(sa.delete(t.ask_offers).where(t.ask_offers.c.ask_id == row.id))
            await self._set_offers(row.id, row.offered_to)
        self.changed.add(row.id)

    async def cas_asks(self, updates: Sequence[tuple[AskRow, int, bool]]) -> None:
        """Several compare-and-sets ``(row, expected_version, offers_changed)``; all or :class:`VersionConflict`.
        On SQLite one executemany (deadline settlement writes hundreds at a time)."""
        if self._pg:
            same_offers = [(row, expected) for row, expected, offers_changed in updates if not offers_changed]
            if self.raw is not None and len(same_offers) > 1:
                matched, heads = await pgf.cas_many(self.raw, [(_row_values(row, self.now), expected)
                                                               for row, expected in same_offers])
                if matched != len(same_offers):
                    raise VersionConflict(same_offers[0][0].id, same_offers[0][1])
                for row, _expected in same_offers:
                    head = heads.get(row.id)
                    if head is not None and ("ask", row.id) not in self._heads:  # locked by the statement
                        self._heads[("ask", row.id)] = [head[0], head[1], True]
                    self.changed.add(row.id)
                updates = [u for u in updates if u[2]]
            for row, expected, offers_changed in updates:
                await self.cas_ask(row, expected, offers_changed=offers_changed)
            return
        if not updates:
            return
        db = fast.dbapi(self.conn)
        if fast.cas_many(db, [(_row_values(row, self.now), expected) for row, expected, _ in updates]) != len(updates):
            raise VersionConflict(updates[0][0].id, updates[0][1])
        for row, _expected, offers_changed in updates:
            if offers_changed:
                fast.set_offers(db, row.id, row.offered_to, replace=True)
            self.changed.add(row.id)

    async def _set_offers(self, ask_id: str, offered: Iterable[str]) -> None:
        rows = [{"ask_id": ask_id, "respondent_id": r} for r in dict.fromkeys(offered)]
        if rows:
            await self.conn.execute(sa.insert(t.ask_offers), rows)

    async def append_audit(self, chain_kind: str, chain_id: str, make_entry: EntryFactory) -> dict[str, Any]:
        """Append one entry to a hash chain. The head is locked on first touch (PostgreSQL: FOR UPDATE;
        SQLite: the transaction already holds the write lock), kept in memory for the rest of the
        transaction, and all entries and heads are written in a few batched statements at commit."""
        key = (chain_kind, chain_id)
        head = self._heads.get(key)
        if head is None and chain_kind == "ask" and chain_id in self._fresh:
            # the chain of an ask this transaction inserted starts now: its head is inserted at the end
            # (if a head existed after all, that insert fails the unit: a chain is never forked)
            head = self._heads[key] = [0, None, False]
        if head is None and not self._pg:
            found_raw = fast.chain_head(fast.dbapi(self.conn), chain_kind, chain_id)
            head = [found_raw[0], found_raw[1], True] if found_raw is not None else [0, None, False]
            self._heads[key] = head
        if head is None and self.raw is not None:
            length, head_hash = await pgf.lock_head(self.raw, chain_kind, chain_id)
            head = self._heads[key] = [length, head_hash, True]  # exists now (locked): updated at the end
        if head is None:
            if self._pg:
                await self.conn.execute(
                    self._insert(t.chain_heads).values(chain_kind=chain_kind, chain_id=chain_id, length=0,
                                                       head_hash=None).on_conflict_do_nothing())
            found = (await self.conn.execute(
                sa.select(t.chain_heads.c.length, t.chain_heads.c.head_hash)
                .where(t.chain_heads.c.chain_kind == chain_kind, t.chain_heads.c.chain_id == chain_id)
                .with_for_update()
            )).one_or_none()
            head = [found.length, found.head_hash, True] if found is not None else [0, None, False]
            self._heads[key] = head
        entry = make_entry(head[1], head[0])
        digest = entry["entry_hash"]
        self._entries.append({"chain_kind": chain_kind, "chain_id": chain_id, "seq": head[0],
                              "entry_hash": digest, "entry": _dumps(entry)})
        head[0], head[1] = head[0] + 1, digest
        return entry

    async def flush(self) -> None:
        """Write the audit entries and chain heads appended so far (called before commit)."""
        if self.raw is not None:
            await self._finish_pg(())
            return
        if not self._pg:
            fast.write_chain(fast.dbapi(self.conn), self._entries,
                             [(k, c, h[0], h[1]) for (k, c), h in self._heads.items() if not h[2]],
                             [(h[0], h[1], k, c) for (k, c), h in self._heads.items() if h[2]])
            self._entries = []
            for h in self._heads.values():
                h[2] = True
            return
        if self._entries:
            await self.conn.execute(sa.insert(t.audit_entries), self._entries)
            self._entries = []
        if self._heads:
            new = [{"chain_kind": k, "chain_id": c, "length": h[0], "head_hash": h[1]}
                   for (k, c), h in self._heads.items() if not h[2]]
            old = [{"k": k, "c": c, "n": h[0], "h": h[1]} for (k, c), h in self._heads.items() if h[2]]
            if new:
                await self.conn.execute(sa.insert(t.chain_heads), new)
            if old:
                await self.conn.execute(
                    sa.update(t.chain_heads)
                    .where(t.chain_heads.c.chain_kind == sa.bindparam("k"), t.chain_heads.c.chain_id == sa.bindparam("c"))
                    .values(length=sa.bindparam("n"), head_hash=sa.bindparam("h")), old)
            for h in self._heads.values():
                h[2] = True

    async def _finish_pg(self, notify: Sequence[str]) -> None:
        """PostgreSQL: the audit entries and chain heads so far, and ``pg_notify`` for ``notify``, in one
        statement."""
        new = [(k, c, h[0], h[1]) for (k, c), h in self._heads.items() if not h[2]]
        old = [(k, c, h[0], h[1]) for (k, c), h in self._heads.items() if h[2]]
        await pgf.finish(self.raw, self._entries, new, old, self._drop_secrets, NOTIFY_CHANNEL, notify)
        self._entries = []
        self._drop_secrets = []
        for h in self._heads.values():
            h[2] = True

    async def put_consent(self, respondent_id: str, scope: str, granted: bool, ask_id: str | None = None) -> None:
        stmt = self._insert(t.consent_grants).values(
            respondent_id=respondent_id, scope=scope, granted=granted, decided_at=self.now, ask_id=ask_id)
        stmt = stmt.on_conflict_do_update(
            index_elements=["respondent_id", "scope"],
            set_={"granted": granted, "decided_at": self.now, "ask_id": ask_id},
        )
        await self.conn.execute(stmt)

    async def revoke_consent(self, respondent_id: str, scope: str) -> bool:
        res = await self.conn.execute(sa.delete(t.consent_grants).where(
            t.consent_grants.c.respondent_id == respondent_id, t.consent_grants.c.scope == scope))
        return res.rowcount > 0

    async def extend_intent(self, session_id: str, capabilities: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Append capabilities (deduplicated) to a session's intent; returns the whole intent."""
        current = (await self.conn.execute(
            sa.select(t.session_intents.c.capabilities).where(t.session_intents.c.session_id == session_id)
            .with_for_update()
        )).scalar_one_or_none()
        caps: list[dict[str, Any]] = json.loads(current) if current else []
        seen = {_dumps(c) for c in caps}
        for cap in capabilities:
            if _dumps(cap) not in seen:
                caps.append(dict(cap))
                seen.add(_dumps(cap))
        stmt = self._insert(t.session_intents).values(
            session_id=session_id, capabilities=_dumps(caps), updated_at=self.now)
        stmt = stmt.on_conflict_do_update(index_elements=["session_id"],
                                          set_={"capabilities": _dumps(caps), "updated_at": self.now})
        await self.conn.execute(stmt)
        return caps

    async def put_secret(self, ask_id: str, kind: str, value: str) -> None:
        if ask_id in self._drop_secrets:  # PostgreSQL: a deletion still pending goes first
            self._drop_secrets.remove(ask_id)
            await pgf.delete_secrets(self.raw, ask_id)
        sealed = (await self.store.secret_box()).seal(value)
        stmt = self._insert(t.ask_secrets).values(ask_id=ask_id, kind=kind, sealed=sealed)
        await self.conn.execute(stmt.on_conflict_do_update(index_elements=["ask_id", "kind"],
                                                           set_={"sealed": sealed}))

    async def delete_secrets(self, ask_id: str) -> None:
        if not self._pg:
            fast.delete_secrets(fast.dbapi(self.conn), ask_id)
            return
        if self.raw is not None:  # sent with the audit entries at the end (one round trip fewer)
            if ask_id not in self._drop_secrets:
                self._drop_secrets.append(ask_id)
            return
        await self.conn.execute(sa.delete(t.ask_secrets).where(t.ask_secrets.c.ask_id == ask_id))

    async def add_callback(self, ask_id: str, url: str) -> int:
        res = await self.conn.execute(
            sa.insert(t.callbacks).values(ask_id=ask_id, url=url, created_at=self.now, attempts=0)
            .returning(t.callbacks.c.id))
        return int(res.scalar_one())

    async def mark_callback(self, callback_id: int, *, delivered: bool, error: str | None = None) -> None:
        values: dict[str, Any] = {"attempts": t.callbacks.c.attempts + 1, "last_error": error}
        if delivered:
            values["delivered_at"] = self.now
        await self.conn.execute(sa.update(t.callbacks).where(t.callbacks.c.id == callback_id).values(**values))


# --------------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------------


class Store:
    """Durable asks, audit chains, consent, intents, principals, tokens, idempotency, callbacks, secrets."""

    def __init__(self, engines: Engines, *, secret_key: str | None = None) -> None:
        self._engines = engines
        self.backend = engines.backend
        self._secret_key = secret_key
        self._box: SecretBox | None = None
        self._listeners: list[Callable[[set[str]], None]] = []
        self._group: GroupCommit | None = None
        self._hot_read: Any = None  # SQLite: one pooled connection kept for the raw reads (see _raw_read)
        self._reads: pgf.ReadPool | None = None  # PostgreSQL: asyncpg connections for the raw hot reads
        if self.backend == "sqlite":
            self._group = GroupCommit(engines.write, self._committed)
        else:
            self._reads = pgf.ReadPool(asyncpg_dsn(engines.write.url.render_as_string(hide_password=False)),
                                       size=engines.write.pool.size())

    @contextmanager
    def _raw_read(self) -> Iterator[Any]:
        """The sqlite3 connection for the raw hot-path reads. Each use runs synchronously on the event loop
        (no await inside), so one connection serves them all; in autocommit mode every statement is its own
        read snapshot, as with a fresh pooled connection, without a pool check-out and check-in per read."""
        if self._hot_read is None:
            self._hot_read = self._engines.read.sync_engine.raw_connection()
        try:
            yield self._hot_read.dbapi_connection
        except BaseException:
            held, self._hot_read = self._hot_read, None
            held.close()  # back to the pool, which resets it (no statement left open); the next read takes another
            raise

    def _committed(self, changed: set[str]) -> None:
        for listener in self._listeners:
            listener(set(changed))

    @classmethod
    async def open(cls, url: str | None = None, *, migrate: bool = True, secret_key: str | None = None,
                   sqlite_synchronous: str = "FULL", pool_size: int = 10) -> Store:
        engines = create_engines(normalise_url(url), sqlite_synchronous=sqlite_synchronous, pool_size=pool_size)
        store = cls(engines, secret_key=secret_key or os.environ.get("ASKGATE_SECRET_KEY"))
        if migrate:
            await upgrade(engines.write)
        await store.secret_box()  # resolve the key now: never inside a write transaction
        return store

    async def close(self) -> None:
        if self._group is not None:
            await self._group.close()
        if self._hot_read is not None:
            self._hot_read.close()  # back to the pool, which dispose() then closes
            self._hot_read = None
        if self._reads is not None:
            await self._reads.close()
        await self._engines.dispose()

    @property
    def engines(self) -> Engines:
        return self._engines

    def on_commit(self, listener: Callable[[set[str]], None]) -> None:
        """Call ``listener(changed_ask_ids)`` after each committed write (in this process)."""
        self._listeners.append(listener)

    # ---- transactions ---------------------------------------------------------------------------

    def write(self, now: datetime | None = None) -> AbstractAsyncContextManager[Tx]:
        """A write transaction; commits on normal exit, rolls back on any exception. On SQLite it is a
        unit of a group commit (askgate/store/group.py): same guarantees, one fsync for many units."""
        if self._group is not None:
            return _SqliteWrite(self, self._group, now)
        return self._pg_write(now)

    @asynccontextmanager
    async def _pg_write(self, now: datetime | None) -> AsyncIterator[Tx]:
        async with pgf.begin(self._engines.write) as (conn, raw):  # PostgreSQL (SQLite took the branch above)
            tx = Tx(conn, self, now or _now(), raw=raw)
            yield tx
            await tx._finish_pg(sorted(tx.changed))  # entries, heads and the cross-process pg_notify
        if tx.changed:
            for listener in self._listeners:
                listener(set(tx.changed))

    @asynccontextmanager
    async def claim_due(self, now: datetime, limit: int = 100) -> AsyncIterator[tuple[Tx, list[AskRow]]]:
        """Lock up to ``limit`` live asks whose wake time has come (PostgreSQL: FOR UPDATE SKIP LOCKED, so
        several processes share the work and never settle one ask twice) and yield them with a write Tx."""
        async with self.write(now) as tx:
            if self._group is not None:  # SQLite: the unit holds the write lock, so nobody else can claim them
                raw = fast.due_rows(fast.dbapi(tx.conn), now, limit)
                yield tx, [_from_tuple(r, tuple(sorted(json.loads(r[12])))) for r in raw]
                return
            yield tx, [_from_record(r) for r in await pgf.due_rows(tx.raw, now, limit)]

    # ---- asks -----------------------------------------------------------------------------------

    async def _offers(self, conn: AsyncConnection, ids: list[str]) -> dict[str, tuple[str, ...]]:
        if not ids:
            return {}
        out: dict[str, list[str]] = {}
        res = await conn.execute(sa.select(t.ask_offers.c.ask_id, t.ask_offers.c.respondent_id)
                                 .where(t.ask_offers.c.ask_id.in_(ids)))
        for ask_id, resp in res.all():
            out.setdefault(ask_id, []).append(resp)
        return {k: tuple(sorted(v)) for k, v in out.items()}

    async def get_ask(self, ask_id: str) -> AskRow | None:
        if self._group is not None:
            with self._raw_read() as db:
                raw = fast.get_ask_row(db, ask_id)
            return _from_tuple(raw, tuple(sorted(json.loads(raw[12])))) if raw is not None else None
        assert self._reads is not None
        found = await self._reads.run(lambda c: pgf.get_ask_row(c, ask_id))
        return _from_record(found) if found is not None else None

    async def list_asks(self, query: AskQuery) -> Page:
        limit = max(1, min(query.limit, 500))
        q = sa.select(t.asks)
        if query.state:
            q = q.where(t.asks.c.state == query.state)
        if query.dialect:
            q = q.where(t.asks.c.dialect == query.dialect)
        if query.asker:
            q = q.where(t.asks.c.asker == query.asker)
        if query.session_id:
            q = q.where(t.asks.c.session_id == query.session_id)
        if query.respondent:
            q = q.where(t.asks.c.id.in_(sa.select(t.ask_offers.c.ask_id)
                                        .where(t.ask_offers.c.respondent_id == query.respondent)))
        if query.cursor:
            at, ask_id = _decode_cursor(query.cursor)
            q = q.where(sa.or_(t.asks.c.created_at < at,
                               sa.and_(t.asks.c.created_at == at, t.asks.c.id < ask_id)))
        q = q.order_by(t.asks.c.created_at.desc(), t.asks.c.id.desc()).limit(limit + 1)
        async with self._engines.read.connect() as conn:
            rows = (await conn.execute(q)).all()
            more = len(rows) > limit
            rows = rows[:limit]
            offers = await self._offers(conn, [r.id for r in rows])
        items = [_from_db(r, offers.get(r.id, ())) for r in rows]
        return Page(items, _encode_cursor(items[-1]) if more and items else None)

    async def next_wake(self) -> datetime | None:
        """The earliest wake time of any live ask (the scheduler sleeps until then)."""
        if self._group is not None:
            with self._raw_read() as db:
                return fast.next_wake(db)
        assert self._reads is not None
        return await self._reads.run(pgf.next_wake)

    async def count_asks(self, *, state: str | None = None) -> int:
        q = sa.select(sa.func.count()).select_from(t.asks)
        if state:
            q = q.where(t.asks.c.state == state)
        async with self._engines.read.connect() as conn:
            return int((await conn.execute(q)).scalar_one())

    # ---- audit ----------------------------------------------------------------------------------

    async def audit_chain(self, chain_kind: str, chain_id: str) -> list[dict[str, Any]]:
        async with self._engines.read.connect() as conn:
            res = await conn.execute(
                sa.select(t.audit_entries.c.entry)
                .where(t.audit_entries.c.chain_kind == chain_kind, t.audit_entries.c.chain_id == chain_id)
                .order_by(t.audit_entries.c.seq))
            return [json.loads(e) for (e,) in res.all()]

    async def chain_head(self, chain_kind: str, chain_id: str) -> str | None:
        """The latest entry_hash of a chain (None for an empty chain)."""
        async with self._engines.read.connect() as conn:
            return (await conn.execute(sa.select(t.chain_heads.c.head_hash).where(
                t.chain_heads.c.chain_kind == chain_kind, t.chain_heads.c.chain_id == chain_id))).scalar_one_or_none()

    # ---- consent and intents --------------------------------------------------------------------

    async def get_consent(self, respondent_id: str, scope: str) -> ConsentGrant | None:
        async with self._engines.read.connect() as conn:
            r = (await conn.execute(sa.select(t.consent_grants).where(
                t.consent_grants.c.respondent_id == respondent_id, t.consent_grants.c.scope == scope))).one_or_none()
        return ConsentGrant(r.respondent_id, r.scope, bool(r.granted), r.decided_at, r.ask_id) if r else None

    async def consent_map(self, respondent_ids: Iterable[str]) -> dict[tuple[str, str], bool]:
        """All stored decisions of these respondents, for the lifecycle's pure ``stored_consent`` lookup."""
        ids = list(dict.fromkeys(respondent_ids))
        if not ids:
            return {}
        if self._group is not None:
            with self._raw_read() as db:
                return fast.consent_map(db, ids)
        assert self._reads is not None
        return await self._reads.run(lambda c: pgf.consent_map(c, ids))

    async def list_consents(self, respondent_id: str | None = None) -> list[ConsentGrant]:
        q = sa.select(t.consent_grants).order_by(t.consent_grants.c.respondent_id, t.consent_grants.c.scope)
        if respondent_id is not None:
            q = q.where(t.consent_grants.c.respondent_id == respondent_id)
        async with self._engines.read.connect() as conn:
            return [ConsentGrant(r.respondent_id, r.scope, bool(r.granted), r.decided_at, r.ask_id)
                    for r in (await conn.execute(q)).all()]

    async def get_intent(self, session_id: str) -> list[dict[str, Any]]:
        async with self._engines.read.connect() as conn:
            v = (await conn.execute(sa.select(t.session_intents.c.capabilities)
                                    .where(t.session_intents.c.session_id == session_id))).scalar_one_or_none()
        return json.loads(v) if v else []

    # ---- principals and tokens ------------------------------------------------------------------

    async def create_token(self, principal_id: str, role: str, *, label: str | None = None) -> str:
        """Create the principal if new (its role must match if it exists) and return a fresh token, once."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}")
        token = new_token()
        async with self.write() as tx:
            existing = (await tx.conn.execute(sa.select(t.principals.c.role)
                                              .where(t.principals.c.id == principal_id))).scalar_one_or_none()
            if existing is None:
                await tx.conn.execute(sa.insert(t.principals).values(id=principal_id, role=role, created_at=tx.now))
            elif existing != role:
                raise ValueError(f"principal {principal_id!r} already exists with role {existing!r}")
            await tx.conn.execute(sa.insert(t.api_tokens).values(
                token_hash=token_hash(token), principal_id=principal_id, label=label, created_at=tx.now,
                revoked=False))
        return token

    async def ensure_first_admin(self, principal_id: str = "admin") -> str | None:
        """Create an admin token if no principal exists yet; returns it (to print once) or None."""
        async with self._engines.read.connect() as conn:
            n = (await conn.execute(sa.select(sa.func.count()).select_from(t.principals))).scalar_one()
        if n:
            return None
        try:
            async with self.write() as tx:  # re-check under the write lock: two processes may start at once
                if (await tx.conn.execute(sa.select(sa.func.count()).select_from(t.principals))).scalar_one():
                    return None
                token = new_token()
                await tx.conn.execute(sa.insert(t.principals).values(id=principal_id, role="admin",
                                                                     created_at=tx.now))
                await tx.conn.execute(sa.insert(t.api_tokens).values(
                    token_hash=token_hash(token), principal_id=principal_id, label="first admin",
                    created_at=tx.now, revoked=False))
        except sa.exc.IntegrityError:  # PostgreSQL has no process-wide write lock: another process won the race
            return None
        return token

    async def principal_for_token(self, token: str) -> Principal | None:
        if self._group is not None:
            with self._raw_read() as db:
                found = fast.principal_for_token_hash(db, token_hash(token))
            return Principal(found[0], found[1]) if found else None
        assert self._reads is not None
        digest = token_hash(token)
        found = await self._reads.run(lambda c: pgf.principal_for_token_hash(c, digest))
        return Principal(found[0], found[1]) if found else None

    async def revoke_token(self, token: str) -> bool:
        async with self.write() as tx:
            res = await tx.conn.execute(sa.update(t.api_tokens).where(t.api_tokens.c.token_hash == token_hash(token))
                                        .values(revoked=True))
        return res.rowcount > 0

    # ---- idempotency, secrets, callbacks --------------------------------------------------------

    async def find_idempotent(self, principal: str, operation: str, key: str) -> tuple[str, str] | None:
        """(request_hash, ask_id) recorded for this key, if any."""
        if self._reads is not None:
            return await self._reads.run(lambda c: pgf.find_idempotent(c, principal, operation, key))
        async with self._engines.read.connect() as conn:
            r = (await conn.execute(sa.select(t.idempotency.c.request_hash, t.idempotency.c.ask_id).where(
                t.idempotency.c.principal_id == principal, t.idempotency.c.operation == operation,
                t.idempotency.c.key == key))).one_or_none()
        return (r.request_hash, r.ask_id) if r else None

    async def secret_box(self) -> SecretBox:
        if self._box is None:
            if self._secret_key:
                self._box = SecretBox(key_from_passphrase(self._secret_key))
            else:
                self._box = SecretBox(await self._stored_key())
        return self._box

    async def _stored_key(self) -> bytes:
        async with self._engines.read.connect() as conn:
            v = (await conn.execute(sa.select(t.kv.c.value).where(t.kv.c.key == "secret_key"))).scalar_one_or_none()
        if v:
            return v.encode()
        candidate = SecretBox.new_key().decode()
        async with self.write() as tx:
            ins = (pg_dialect.insert if self.backend == "postgresql" else sqlite_dialect.insert)(t.kv)
            await tx.conn.execute(ins.values(key="secret_key", value=candidate).on_conflict_do_nothing())
            v = (await tx.conn.execute(sa.select(t.kv.c.value).where(t.kv.c.key == "secret_key"))).scalar_one()
        return v.encode()

    async def get_secret(self, ask_id: str, kind: str) -> str | None:
        async with self._engines.read.connect() as conn:
            sealed = (await conn.execute(sa.select(t.ask_secrets.c.sealed).where(
                t.ask_secrets.c.ask_id == ask_id, t.ask_secrets.c.kind == kind))).scalar_one_or_none()
        return (await self.secret_box()).open(sealed) if sealed else None

    async def callbacks_for(self, ask_id: str, *, pending_only: bool = False) -> list[Callback]:
        q = sa.select(t.callbacks).where(t.callbacks.c.ask_id == ask_id).order_by(t.callbacks.c.id)
        if pending_only:
            q = q.where(t.callbacks.c.delivered_at.is_(None))
        async with self._engines.read.connect() as conn:
            return [Callback(r.id, r.ask_id, r.url, r.delivered_at, r.attempts) for r in (await conn.execute(q)).all()]

    async def pending_callbacks_for(self, ask_ids: Iterable[str]) -> list[Callback]:
        """Undelivered callbacks of these asks, in one query (the delivery worker batches terminal asks)."""
        ids = list(dict.fromkeys(ask_ids))
        if not ids:
            return []
        if self._group is not None:  # every terminal ask comes through here: the raw path
            with self._raw_read() as db:
                return [Callback(i, a, u, fast.dt_in(d), n) for i, a, u, d, n in fast.pending_callbacks_for(db, ids)]
        if self._reads is not None:  # PostgreSQL: the raw path as well
            rows = await self._reads.run(lambda c: pgf.pending_callbacks_for(c, ids))
            return [Callback(i, a, u, d.astimezone(UTC) if d is not None else None, n) for i, a, u, d, n in rows]
        q = (sa.select(t.callbacks).where(t.callbacks.c.ask_id.in_(ids), t.callbacks.c.delivered_at.is_(None))
             .order_by(t.callbacks.c.id))
        async with self._engines.read.connect() as conn:
            return [Callback(r.id, r.ask_id, r.url, r.delivered_at, r.attempts) for r in (await conn.execute(q)).all()]

    async def pending_callbacks(self, limit: int = 100) -> list[Callback]:
        """Undelivered callbacks of terminal asks (re-driven after a restart)."""
        q = (sa.select(t.callbacks).join(t.asks, t.asks.c.id == t.callbacks.c.ask_id)
             .where(t.callbacks.c.delivered_at.is_(None), t.asks.c.terminal == sa.true(), t.callbacks.c.attempts < 5)
             .order_by(t.callbacks.c.id).limit(limit))
        async with self._engines.read.connect() as conn:
            return [Callback(r.id, r.ask_id, r.url, r.delivered_at, r.attempts) for r in (await conn.execute(q)).all()]


__all__ = [
    "AskQuery", "AskRow", "Callback", "ConsentGrant", "EntryFactory", "IdempotentReplay", "NOTIFY_CHANNEL", "Page",
    "Principal", "Store", "Tx", "VersionConflict", "replace",
]
