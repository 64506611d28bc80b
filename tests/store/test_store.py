"""The store on SQLite and PostgreSQL: migrations, CAS, chained audit, idempotency, consent, tokens, secrets."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from askgate.core.audit import chain_entry, verify_chain
from askgate.store import AskQuery, AskRow, IdempotentReplay, Store, VersionConflict
from askgate.store.migrate import current_revision

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def row(ask_id: str, *, at: datetime = T0, state: str = "pending", version: int = 1, asker: str = "a1",
        dialect: str = "aqp", offered: tuple[str, ...] = (), wake: datetime | None = None,
        terminal: bool = False, session: str | None = None) -> AskRow:
    return AskRow(id=ask_id, version=version, state=state, terminal=terminal, dialect=dialect, created_at=at,
                  record={"id": ask_id, "n": version}, asker=asker, offered_to=offered, next_wake_at=wake,
                  session_id=session)


def factory(step: str):
    def make(prev: str | None, seq: int) -> dict:
        return chain_entry(entry_id=f"e{seq}", step_id="s", step_type=step, timestamp=T0, data={"seq": seq},
                           previous_hash=prev)
    return make


@pytest.fixture
async def store(db_url: str):
    st = await Store.open(db_url)
    yield st
    await st.close()


async def test_migrates_an_empty_database_to_head(db_url: str) -> None:
    st = await Store.open(db_url)
    try:
        assert await current_revision(st.engines.write) == "0001"
        async with st.engines.read.connect() as conn:
            names = set(await conn.run_sync(lambda c: sa.inspect(c).get_table_names()))
        assert {"asks", "audit_entries", "consent_grants", "api_tokens", "idempotency", "ask_secrets"} <= names
    finally:
        await st.close()
    again = await Store.open(db_url)  # a second start is a no-op migration
    assert await current_revision(again.engines.write) == "0001"
    await again.close()


async def test_list_filters_and_pages_newest_first(store: Store) -> None:
    async with store.write() as tx:
        for i in range(7):
            await tx.insert_ask(row(f"a{i}", at=T0 + timedelta(seconds=i), asker="x" if i % 2 else "y",
                                    offered=("bob",) if i < 3 else ("eve",), dialect="acs" if i == 6 else "aqp"))
    page = await store.list_asks(AskQuery(limit=3))
    assert [r.id for r in page.items] == ["a6", "a5", "a4"]
    page2 = await store.list_asks(AskQuery(limit=3, cursor=page.next_cursor))
    assert [r.id for r in page2.items] == ["a3", "a2", "a1"]
    page3 = await store.list_asks(AskQuery(limit=3, cursor=page2.next_cursor))
    assert [r.id for r in page3.items] == ["a0"] and page3.next_cursor is None
    assert [r.id for r in (await store.list_asks(AskQuery(asker="x"))).items] == ["a5", "a3", "a1"]
    assert [r.id for r in (await store.list_asks(AskQuery(respondent="bob"))).items] == ["a2", "a1", "a0"]
    assert [r.id for r in (await store.list_asks(AskQuery(dialect="acs"))).items] == ["a6"]
    got = await store.get_ask("a1")
    assert got is not None and got.offered_to == ("bob",) and got.created_at == T0 + timedelta(seconds=1)


async def test_cas_conflict_rolls_back_everything(store: Store) -> None:
    async with store.write() as tx:
        await tx.insert_ask(row("a"))
        await tx.append_audit("ask", "a", factory("ask"))
    async with store.write() as tx:
        await tx.cas_ask(row("a", version=2, state="delivered"), 1)
        await tx.append_audit("ask", "a", factory("offer"))
    with pytest.raises(VersionConflict):
        async with store.write() as tx:
            await tx.append_audit("ask", "a", factory("answer"))  # written first, must vanish with the CAS
            await tx.cas_ask(row("a", version=3, state="answered"), 1)
    got = await store.get_ask("a")
    assert got is not None and got.version == 2 and got.state == "delivered"
    chain = await store.audit_chain("ask", "a")
    assert [e["step_type"] for e in chain] == ["ask", "offer"]
    assert verify_chain(chain).ok


async def test_concurrent_appends_to_one_session_chain_stay_linear(store: Store) -> None:
    async def one(i: int) -> None:
        async with store.write() as tx:
            await tx.insert_ask(row(f"s{i}", session="sess"))
            await tx.append_audit("session", "sess", factory(f"step{i}"))

    await asyncio.gather(*(one(i) for i in range(20)))
    chain = await store.audit_chain("session", "sess")
    assert len(chain) == 20
    assert verify_chain(chain).ok


async def test_idempotency_key_same_and_other_body(store: Store) -> None:
    async with store.write() as tx:
        await tx.claim_idempotency("p", "create", "k1", "h1", "a1")
        await tx.insert_ask(row("a1"))
    for body, same in (("h1", True), ("h2", False)):
        with pytest.raises(IdempotentReplay) as info:
            async with store.write() as tx:
                await tx.claim_idempotency("p", "create", "k1", body, "a-new")
                await tx.insert_ask(row("a-new"))
        assert info.value.ask_id == "a1" and info.value.same_body is same
    assert await store.get_ask("a-new") is None
    async with store.write() as tx:  # another principal may use the same key
        await tx.claim_idempotency("q", "create", "k1", "h1", "a2")


async def test_consent_and_intent(store: Store) -> None:
    async with store.write() as tx:
        await tx.put_consent("bob", "scope-one", True)
        await tx.put_consent("bob", "scope-two", False)
        await tx.put_consent("bob", "scope-one", False)  # a later decision replaces the earlier one
        caps = await tx.extend_intent("s1", [{"tool": "shell"}])
        caps = await tx.extend_intent("s1", [{"tool": "shell"}, {"tool": "git", "operation": "push"}])
    assert caps == [{"tool": "shell"}, {"tool": "git", "operation": "push"}]
    assert await store.get_intent("s1") == caps
    assert await store.consent_map(["bob"]) == {("bob", "scope-one"): False, ("bob", "scope-two"): False}
    async with store.write() as tx:
        assert await tx.revoke_consent("bob", "scope-one")
        assert not await tx.revoke_consent("bob", "nope")
    assert [(g.scope, g.granted) for g in await store.list_consents("bob")] == [("scope-two", False)]


async def test_tokens_are_stored_hashed(store: Store, db_url: str) -> None:
    first = await store.ensure_first_admin()
    assert first is not None and await store.ensure_first_admin() is None
    token = await store.create_token("bob", "respondent")
    who = await store.principal_for_token(token)
    assert who is not None and (who.id, who.role) == ("bob", "respondent")
    assert await store.principal_for_token(token + "x") is None
    with pytest.raises(ValueError):
        await store.create_token("bob", "admin")  # a principal keeps one role
    async with store.engines.read.connect() as conn:
        stored = [r[0] for r in (await conn.execute(sa.text("SELECT token_hash FROM api_tokens"))).all()]
    assert hashlib.sha256(token.encode()).hexdigest() in stored and token not in stored
    assert await store.revoke_token(token) and await store.principal_for_token(token) is None


async def test_secrets_are_sealed_and_deleted(store: Store, db_url: str, backend: str) -> None:
    planted = "Bearer planted-secret-5f1c0a"
    async with store.write() as tx:
        await tx.insert_ask(row("a"))
        await tx.put_secret("a", "authorization", planted)
    assert await store.get_secret("a", "authorization") == planted
    async with store.engines.read.connect() as conn:
        sealed = (await conn.execute(sa.text("SELECT sealed FROM ask_secrets"))).scalar_one()
    assert planted not in sealed
    async with store.write() as tx:
        await tx.delete_secrets("a")
    assert await store.get_secret("a", "authorization") is None


async def test_claim_due_hands_each_ask_to_one_claimer(store: Store, backend: str) -> None:
    now = datetime.now(UTC)
    async with store.write() as tx:
        for i in range(10):
            await tx.insert_ask(row(f"d{i}", wake=now - timedelta(seconds=1)))
        await tx.insert_ask(row("later", wake=now + timedelta(hours=1)))
        await tx.insert_ask(row("over", wake=now - timedelta(seconds=1), terminal=True, state="answered"))
    assert await store.next_wake() == now - timedelta(seconds=1)
    seen: list[list[str]] = []
    gate = asyncio.Event()

    async def claimer() -> None:
        async with store.claim_due(now, limit=6) as (_tx, rows):
            seen.append([r.id for r in rows])
            await asyncio.wait_for(gate.wait(), 5) if len(seen) == 1 and backend == "postgresql" else None

    if backend == "postgresql":  # both transactions open at once: SKIP LOCKED must split the rows
        first = asyncio.create_task(claimer())
        while not seen:
            await asyncio.sleep(0.01)
        await claimer()
        gate.set()
        await first
        assert len(seen[0]) == 6 and len(seen[1]) == 4 and not set(seen[0]) & set(seen[1])
    else:
        await claimer()
        assert len(seen[0]) == 6
    assert "later" not in sum(seen, []) and "over" not in sum(seen, [])


async def test_a_fresh_asks_chain_starts_at_zero_and_is_never_forked(store: Store) -> None:
    """A transaction that inserts an ask starts that ask's chain without reading its head first (the id is
    a fresh UUID); should a chain exist under that id after all (only by misuse) the write fails whole."""
    async with store.write(T0) as tx:
        await tx.insert_ask(row("new"))
        first = await tx.append_audit("ask", "new", factory("created"))
        second = await tx.append_audit("ask", "new", factory("offered"))
    chain = await store.audit_chain("ask", "new")
    assert [e["entry_hash"] for e in chain] == [first["entry_hash"], second["entry_hash"]]
    assert chain[0].get("previous_hash") is None and verify_chain(chain).ok

    async with store.write(T0) as tx:
        await tx.append_audit("ask", "taken", factory("orphan"))
    with pytest.raises(Exception) as caught:  # noqa: PT011 - sqlite3.IntegrityError or asyncpg's UniqueViolationError
        async with store.write(T0) as tx:
            await tx.insert_ask(row("taken"))
            await tx.append_audit("ask", "taken", factory("created"))
    assert "unique" in str(caught.value).lower()
    assert await store.get_ask("taken") is None
    chain = await store.audit_chain("ask", "taken")
    assert [e["step_type"] for e in chain] == ["orphan"] and await store.chain_head("ask", "taken") == chain[0]["entry_hash"]
