"""The raw asyncpg hot path on PostgreSQL (askgate/store/pg_fast.py) against the SQLAlchemy Core path, on a
real server: the same operations store the same rows, each path reads the other's rows, raw statements
share SQLAlchemy's transaction (commit and roll back with the Core statements), notifications go out on
commit only, compare-and-set and idempotency races have one winner, and a dead pooled connection is
replaced instead of failing the request."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
import sqlalchemy as sa

from askgate.core.audit import chain_entry, verify_chain
from askgate.store import AskRow, IdempotentReplay, Store, Tx, VersionConflict
from askgate.store import tables as t
from askgate.store.engine import asyncpg_dsn
from askgate.store.store import NOTIFY_CHANNEL
from tests.support import postgres

T0 = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)


def row(ask_id: str, *, version: int = 1, state: str = "pending", offered: tuple[str, ...] = (),
        wake: datetime | None = None, terminal: bool = False, session: str | None = "sess") -> AskRow:
    return AskRow(id=ask_id, version=version, state=state, terminal=terminal, dialect="a2a", created_at=T0,
                  record={"id": ask_id, "n": version, "text": "é ✓ \U0001f600"}, asker="agent", session_id=session,
                  external_id="ext-" + ask_id, offered_to=offered, next_wake_at=wake)


def factory(step: str):
    def make(prev: str | None, seq: int) -> dict[str, Any]:
        return chain_entry(entry_id=f"{step}-{seq}", step_id="s", step_type=step, timestamp=T0, data={"seq": seq},
                           previous_hash=prev)
    return make


@pytest.fixture
async def store():
    st = await Store.open(postgres.fresh_database())
    yield st
    await st.close()


async def scenario(tx: Tx, ask_id: str, step: int) -> None:
    """One step of an ask's life, the same whichever path ``tx`` takes."""
    if step == 0:
        await tx.claim_idempotency("agent", "create", "key-" + ask_id, "h", ask_id)
        await tx.insert_ask(row(ask_id, offered=("bob", "amy"), wake=T0 + timedelta(minutes=5)))
        await tx.put_secret(ask_id, "authorization", "Bearer x")
        await tx.append_audit("ask", ask_id, factory("created"))
        await tx.append_audit("session", "sess-" + ask_id, factory("created"))
    elif step == 1:  # offers change: one kept, one dropped, one added
        await tx.cas_ask(row(ask_id, version=2, state="delivered", offered=("amy", "cat"), wake=T0), 1)
        await tx.append_audit("ask", ask_id, factory("offered"))
    else:
        await tx.cas_ask(row(ask_id, version=3, state="answered", offered=("amy", "cat"), terminal=True), 2,
                         offers_changed=False)
        await tx.append_audit("ask", ask_id, factory("answered"))
        await tx.append_audit("ask", ask_id, factory("closed"))
        await tx.append_audit("session", "sess-" + ask_id, factory("answered"))
        await tx.delete_secrets(ask_id)


async def core_write(store: Store, now: datetime, fn: Any) -> None:
    """A write on the SQLAlchemy Core path (a Tx without the raw connection)."""
    async with store.engines.write.begin() as conn:
        tx = Tx(conn, store, now)
        await fn(tx)
        await tx.flush()


async def dump(store: Store, ask_id: str) -> dict[str, Any]:
    """Everything stored about one ask, read with SQLAlchemy Core, its id replaced by a placeholder."""
    sess = "sess-" + ask_id
    out: dict[str, Any] = {}
    async with store.engines.read.connect() as conn:
        for name, table, where in (
            ("ask", t.asks, t.asks.c.id == ask_id),
            ("offers", t.ask_offers, t.ask_offers.c.ask_id == ask_id),
            ("heads", t.chain_heads, t.chain_heads.c.chain_id.in_([ask_id, sess])),
            ("entries", t.audit_entries, t.audit_entries.c.chain_id.in_([ask_id, sess])),
            ("idempotency", t.idempotency, t.idempotency.c.ask_id == ask_id),
            ("secrets", t.ask_secrets, t.ask_secrets.c.ask_id == ask_id),
        ):
            rows = [dict(r._mapping) for r in (await conn.execute(sa.select(table).where(where))).all()]
            for r in rows:
                r.pop("id", None) if name == "entries" else None
                r.pop("sealed", None)  # sealed with a fresh nonce each time
                for k, v in list(r.items()):
                    if isinstance(v, str):
                        r[k] = v.replace(ask_id, "<ID>")
            out[name] = sorted(rows, key=repr)
    return out


async def test_raw_and_core_paths_store_the_same_rows(store: Store) -> None:
    for step in range(3):
        now = T0 + timedelta(seconds=step)
        async with store.write(now) as tx:
            assert tx.raw is not None  # the raw path is taken
            await scenario(tx, "raw", step)
        await core_write(store, now, lambda tx, s=step: scenario(tx, "core", s))
        raw, core = await dump(store, "raw"), await dump(store, "core")
        assert raw == core
        assert raw["ask"] and raw["entries"]
        # and each path reads the other's rows the same way
        got_raw, got_core = await store.get_ask("raw"), await store.get_ask("core")
        assert got_raw is not None and got_core is not None
        assert got_raw.offered_to == got_core.offered_to == (("amy", "bob") if step == 0 else ("amy", "cat"))
        assert {k: v for k, v in got_raw.__dict__.items() if k not in ("id", "record", "external_id")} == \
               {k: v for k, v in got_core.__dict__.items() if k not in ("id", "record", "external_id")}
        assert got_raw.created_at == T0 and got_raw.updated_at == now and got_raw.created_at.tzinfo is not None
    for ask_id in ("raw", "core"):
        for kind, cid in (("ask", ask_id), ("session", "sess-" + ask_id)):
            chain = await store.audit_chain(kind, cid)
            assert verify_chain(chain).ok and chain
            assert await store.chain_head(kind, cid) == chain[-1]["entry_hash"]
    assert await store.get_secret("raw", "authorization") is None


async def test_raw_reads_match_core_reads(store: Store) -> None:
    await core_write(store, T0, lambda tx: scenario(tx, "c", 0))
    async with store.write(T0) as tx:
        await tx.put_consent("bob", "s1", True, "c")
        await tx.put_consent("amy", "s2", False)
        await tx.add_callback("c", "https://example.test/cb")
    assert await store.consent_map(["bob", "amy", "nobody"]) == {("bob", "s1"): True, ("amy", "s2"): False}
    assert await store.find_idempotent("agent", "create", "key-c") == ("h", "c")
    assert await store.find_idempotent("agent", "create", "other") is None
    assert await store.next_wake() == T0 + timedelta(minutes=5)
    pending = await store.pending_callbacks_for(["c", "none"])
    assert [(cb.ask_id, cb.url, cb.delivered_at, cb.attempts) for cb in pending] == \
           [("c", "https://example.test/cb", None, 0)]
    assert pending == await store.callbacks_for("c", pending_only=True)  # the Core read agrees
    token = await store.create_token("bob", "respondent")
    who = await store.principal_for_token(token)
    assert who is not None and (who.id, who.role) == ("bob", "respondent")
    assert await store.revoke_token(token) and await store.principal_for_token(token) is None


async def test_raw_and_core_statements_share_one_transaction(store: Store) -> None:
    with pytest.raises(RuntimeError):
        async with store.write(T0) as tx:
            await tx.insert_ask(row("x", offered=("bob",)))  # raw
            await tx.put_consent("bob", "s", True)  # Core, same transaction
            await tx.append_audit("ask", "x", factory("created"))
            raise RuntimeError("boom")
    assert await store.get_ask("x") is None
    assert await store.consent_map(["bob"]) == {}
    assert await store.audit_chain("ask", "x") == [] and await store.chain_head("ask", "x") is None
    async with store.write(T0) as tx:  # and the pool's connection is clean afterwards
        await tx.insert_ask(row("x", offered=("bob",)))
        await tx.put_consent("bob", "s", True)
    assert (await store.get_ask("x")) is not None and await store.consent_map(["bob"]) == {("bob", "s"): True}


async def test_notifications_are_sent_on_commit_only(store: Store) -> None:
    url = store.engines.write.url.render_as_string(hide_password=False)
    listener = await asyncpg.connect(asyncpg_dsn(url))
    got: asyncio.Queue[str] = asyncio.Queue()
    await listener.add_listener(NOTIFY_CHANNEL, lambda *a: got.put_nowait(a[-1]))
    try:
        with pytest.raises(RuntimeError):
            async with store.write(T0) as tx:
                await tx.insert_ask(row("gone"))
                raise RuntimeError("boom")
        async with store.write(T0) as tx:
            await tx.insert_ask(row("b"))
            await tx.insert_ask(row("a"))
        assert [await asyncio.wait_for(got.get(), 5), await asyncio.wait_for(got.get(), 5)] == ["a", "b"]
        await asyncio.sleep(0.2)
        assert got.empty()  # nothing for the rolled-back write
    finally:
        await listener.close()


async def test_compare_and_set_race_has_one_winner(store: Store) -> None:
    async with store.write(T0) as tx:
        await tx.insert_ask(row("r", offered=("bob",)))
    entered = asyncio.Event()
    results: list[str] = []

    async def contender(name: str, hold: bool) -> None:
        try:
            async with store.write(T0) as tx:
                await tx.cas_ask(row("r", version=2, state="answered", offered=(name,), terminal=True), 1)
                await tx.append_audit("ask", "r", factory(name))
                if hold:  # keep the row locked while the other one tries
                    entered.set()
                    await asyncio.sleep(0.3)
            results.append(name)
        except VersionConflict:
            results.append("conflict")

    first = asyncio.create_task(contender("amy", True))
    await entered.wait()
    await contender("cat", False)
    await first
    assert sorted(results) == ["amy", "conflict"]
    got = await store.get_ask("r")
    assert got is not None and got.version == 2 and got.offered_to == ("amy",)  # the loser changed no offer
    assert [e["step_type"] for e in await store.audit_chain("ask", "r")] == ["amy"]


async def test_idempotency_race_has_one_winner(store: Store) -> None:
    async def create(ask_id: str) -> str:
        try:
            async with store.write(T0) as tx:
                await tx.claim_idempotency("agent", "create", "same-key", "h", ask_id)
                await tx.insert_ask(row(ask_id))
                await asyncio.sleep(0.05)
            return "created"
        except IdempotentReplay as replay:
            return "replay:" + replay.ask_id + (":same" if replay.same_body else ":other")

    outcomes = await asyncio.gather(*(create(f"i{n}") for n in range(6)))
    winners = [n for n, o in enumerate(outcomes) if o == "created"]
    assert len(winners) == 1
    assert sorted(outcomes) == sorted(["created"] + [f"replay:i{winners[0]}:same"] * 5)
    assert [n for n in range(6) if await store.get_ask(f"i{n}") is not None] == winners


async def test_a_dead_pooled_connection_is_replaced(store: Store) -> None:
    async with store.write(T0) as tx:
        await tx.insert_ask(row("d"))
    assert await store.get_ask("d") is not None  # a read connection is pooled now, and a write one
    url = store.engines.write.url.render_as_string(hide_password=False)
    admin = await asyncpg.connect(asyncpg_dsn(url))
    try:
        killed = await admin.fetchval("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                      "WHERE datname = current_database() AND pid <> pg_backend_pid()")
    finally:
        await admin.close()
    assert killed >= 2
    await asyncio.sleep(0.2)
    got = await store.get_ask("d")  # the read retries on a fresh connection
    assert got is not None and got.version == 1
    async with store.write(T0) as tx:  # the write's BEGIN finds the dead one and takes another
        await tx.cas_ask(row("d", version=2, state="delivered"), 1)
    got = await store.get_ask("d")
    assert got is not None and got.version == 2


async def test_claim_due_on_the_raw_path(store: Store) -> None:
    now = datetime.now(UTC)
    async with store.write(now) as tx:
        await tx.insert_ask(row("due", offered=("bob", "amy"), wake=now - timedelta(seconds=1)))
        await tx.insert_ask(row("later", wake=now + timedelta(hours=1)))
    async with store.claim_due(now) as (tx, rows):
        assert [(r.id, r.offered_to, r.next_wake_at) for r in rows] == [("due", ("amy", "bob"),
                                                                          now - timedelta(seconds=1))]
        await tx.cas_asks([(row("due", version=2, state="timed_out", terminal=True), 1, False)])
    async with store.claim_due(now) as (_tx, rows):
        assert rows == []


async def test_a_fresh_asks_chain_is_never_forked(store: Store) -> None:
    """The raw path inserts the head of a chain of an ask it just inserted without locking it first;
    should such a chain exist already (asks ids are fresh UUIDs, so only by misuse) the write fails whole."""
    async with store.write(T0) as tx:
        await tx.append_audit("ask", "f", factory("orphan"))
    with pytest.raises(asyncpg.UniqueViolationError):
        async with store.write(T0) as tx:
            await tx.insert_ask(row("f"))
            await tx.append_audit("ask", "f", factory("created"))
    assert await store.get_ask("f") is None
    chain = await store.audit_chain("ask", "f")
    assert [e["step_type"] for e in chain] == ["orphan"] and await store.chain_head("ask", "f") == chain[0]["entry_hash"]


async def test_secret_deletion_waits_for_the_end_but_keeps_its_order(store: Store) -> None:
    async with store.write(T0) as tx:
        await tx.insert_ask(row("s"))
        await tx.put_secret("s", "authorization", "one")
        await tx.put_secret("s", "other", "two")
    async with store.write(T0) as tx:
        await tx.delete_secrets("s")
        await tx.put_secret("s", "authorization", "three")  # put after the deletion: it stays
    assert await store.get_secret("s", "authorization") == "three"
    assert await store.get_secret("s", "other") is None
    async with store.write(T0) as tx:
        await tx.put_secret("s", "other", "four")
        await tx.delete_secrets("s")
    assert await store.get_secret("s", "authorization") is None and await store.get_secret("s", "other") is None


async def test_batched_compare_and_set_matches_one_by_one_and_refuses_a_stale_version(store: Store) -> None:
    """Tx.cas_asks on PostgreSQL writes asks with unchanged offers in one statement (pg_fast.cas_many): the
    rows and audit chains end as the one-by-one Core path leaves them, and one stale version refuses the
    whole batch (nothing of it is kept)."""
    for prefix in ("many", "core"):
        for i in range(3):
            await core_write(store, T0, lambda tx, a=f"{prefix}{i}": scenario(tx, a, 0))
            await core_write(store, T0, lambda tx, a=f"{prefix}{i}": scenario(tx, a, 1))

    def done(ask_id: str) -> AskRow:
        return row(ask_id, version=3, state="answered", offered=("amy", "cat"), terminal=True)

    now = T0 + timedelta(seconds=2)
    async with store.write(now) as tx:
        assert tx.raw is not None
        await tx.cas_asks([(done(f"many{i}"), 2, False) for i in range(3)])
        for i in range(3):
            await tx.append_audit("ask", f"many{i}", factory("answered"))

    async def one_by_one(tx: Tx) -> None:
        for i in range(3):
            await tx.cas_ask(done(f"core{i}"), 2, offers_changed=False)
            await tx.append_audit("ask", f"core{i}", factory("answered"))

    await core_write(store, now, one_by_one)
    for i in range(3):
        many, core = await dump(store, f"many{i}"), await dump(store, f"core{i}")
        assert many == core and many["ask"]
        assert verify_chain(await store.audit_chain("ask", f"many{i}")).ok
    with pytest.raises(VersionConflict):
        async with store.write(now) as tx:  # many1 is at version 3 now: 2 is stale
            await tx.cas_asks([(row("many0", version=4, state="x"), 3, False), (row("many1", version=4), 2, False)])
    assert (await store.get_ask("many0")).version == 3  # type: ignore[union-attr]
