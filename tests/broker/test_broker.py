"""The broker on SQLite and PostgreSQL: the vertical slice, races, deadlines, restarts, consent, intents."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from askgate.broker import Broker, BrokerError, Idempotency
from askgate.core.audit import verify_chain
from askgate.core.model import Respondent
from askgate.store import Principal, Store
from tests.support import askdocs

ASKER = Principal("agent-1", "asker")
BOB = Principal("bob", "respondent")
EVE = Principal("eve", "respondent")
ADMIN = Principal("root", "admin")
LEAD = Principal("lead", "respondent")


def bob() -> tuple[Respondent, ...]:
    return (Respondent(kind="human", id="bob"),)


@pytest.fixture
async def broker(db_url: str):
    store = await Store.open(db_url)
    b = Broker(store, max_idle=0.5)
    await b.start()
    yield b
    await b.stop()
    await store.close()


async def test_create_offer_answer_wait_audit(broker: Broker) -> None:
    created = await broker.create(askdocs.aqp(), asker=ASKER, respondents=bob())
    rec = created.record
    assert created.created and rec.state == "delivered" and rec.offered_to == ("bob",)
    waiter = asyncio.create_task(broker.wait(rec.id, ASKER, 10))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    answered = await broker.answer(rec.id, askdocs.aqp_answer("ship"), who=BOB)
    assert answered.state == "answered"
    done = await asyncio.wait_for(waiter, 5)
    assert done.state == "answered" and done.answer is not None and done.answer.value == "ship"
    view = await broker.view(done)
    assert view["response"]["status"] == "answered" and view["response"]["answer"] == {"format": "choice",
                                                                                        "value": "ship"}
    chain = await broker.store.audit_chain("ask", rec.id)
    assert [e["step_type"] for e in chain] == ["ask", "offer", "answer"]
    assert verify_chain(chain).ok


@pytest.mark.parametrize("doc_name", ["a2a", "mcp"])
async def test_elicitation_dialects_round_trip(broker: Broker, doc_name: str) -> None:
    doc = getattr(askdocs, doc_name)()
    rec = (await broker.create(doc, asker=ASKER, respondents=bob())).record
    answer = {"action": "accept", "content": {"name": "Ada"}} if doc_name == "a2a" else \
        {"action": "accept", "content": {"colour": "green"}}
    with pytest.raises(BrokerError) as bad:
        await broker.answer(rec.id, {"action": "accept", "content": {"nope": 1}}, who=BOB)
    assert bad.value.status == 422 and bad.value.faults
    done = await broker.answer(rec.id, answer, who=BOB)
    view = await broker.view(done)
    assert view["response"] == answer


async def test_answer_from_someone_not_offered_is_refused_and_audited(broker: Broker) -> None:
    rec = (await broker.create(askdocs.aqp(), asker=ASKER, respondents=bob())).record
    for who in (EVE, ASKER, ADMIN):
        with pytest.raises(BrokerError) as err:
            await broker.answer(rec.id, askdocs.aqp_answer(), who=who)
        assert err.value.status == 403
    chain = await broker.store.audit_chain("ask", rec.id)
    refused = [e for e in chain if e["step_type"] == "refused"]
    assert [e["respondent"] for e in refused] == ["eve", "agent-1", "root"]
    assert verify_chain(chain).ok
    assert (await broker.get(rec.id)).state == "delivered"  # type: ignore[union-attr]


async def test_racing_answers_have_exactly_one_winner(broker: Broker) -> None:
    people = tuple(Respondent(kind="human", id=f"r{i}") for i in range(12))
    rec = (await broker.create(askdocs.aqp(), asker=ASKER, respondents=people)).record

    async def try_answer(i: int) -> str:
        try:
            await broker.answer(rec.id, askdocs.aqp_answer("ship" if i % 2 else "hold"), who=Principal(f"r{i}",
                                                                                                    "respondent"))
            return f"won:{i}"
        except BrokerError as exc:
            assert exc.status == 409 and exc.extra["state"] == "answered"
            return f"lost:{exc.extra['outcome']['respondent']['id']}"

    results = await asyncio.gather(*(try_answer(i) for i in range(12)))
    winners = [r for r in results if r.startswith("won:")]
    assert len(winners) == 1
    winner = winners[0].split(":")[1]
    assert all(r == f"lost:r{winner}" for r in results if r.startswith("lost:"))
    chain = await broker.store.audit_chain("ask", rec.id)
    assert [e["step_type"] for e in chain].count("answer") == 1


async def test_idempotent_answer_replays_and_refuses_other_body(broker: Broker) -> None:
    rec = (await broker.create(askdocs.aqp(), asker=ASKER, respondents=bob())).record
    first = await broker.answer(rec.id, askdocs.aqp_answer("ship"), who=BOB, idempotency=Idempotency("k", "h1"))
    again = await broker.answer(rec.id, askdocs.aqp_answer("ship"), who=BOB, idempotency=Idempotency("k", "h1"))
    assert first.version == again.version and again.answer is not None and again.answer.value == "ship"
    with pytest.raises(BrokerError) as err:
        await broker.answer(rec.id, askdocs.aqp_answer("hold"), who=BOB, idempotency=Idempotency("k", "h2"))
    assert err.value.status == 409 and err.value.code == "idempotency_conflict"


async def test_aqp_query_id_is_idempotent_per_asker(broker: Broker) -> None:
    doc = askdocs.aqp()
    one = await broker.create(doc, asker=ASKER, respondents=bob())
    two = await broker.create(doc, asker=ASKER, respondents=bob())
    assert one.created and not two.created and one.record.id == two.record.id
    other = dict(doc, prompt="Something else?")
    with pytest.raises(BrokerError) as err:
        await broker.create(other, asker=ASKER, respondents=bob())
    assert err.value.status == 409 and err.value.code == "duplicate_query_id"


async def test_deadline_settles_once_with_the_disposition(broker: Broker) -> None:
    aqp = (await broker.create(askdocs.aqp(expires_in=0.6), asker=ASKER, respondents=bob())).record
    acs = (await broker.create(askdocs.acs(timeout=1), asker=ASKER)).record
    el = (await broker.create(askdocs.a2a(), asker=ASKER, respondents=bob(), timeout_seconds=0.6)).record
    done = await asyncio.gather(*(broker.wait(r.id, ASKER, 10) for r in (aqp, acs, el)))
    assert [d.state for d in done] == ["expired", "timed_out", "timed_out"]
    assert (await broker.view(done[0]))["response"]["status"] == "expired"
    acs_view = await broker.view(done[1])
    assert acs_view["response"]["result"]["decision"] == "deny"
    assert acs_view["response"]["result"]["policy_data"]["askgate"]["decided_by"] == "timeout"
    assert (await broker.view(done[2]))["response"] == {"action": "cancel"}
    for r in (aqp, acs, el):
        steps = [e["step_type"] for e in await broker.store.audit_chain("ask", r.id)]
        assert steps.count("timeout") == 1
    with pytest.raises(BrokerError) as late:
        await broker.answer(aqp.id, askdocs.aqp_answer(), who=BOB)
    assert late.value.status == 409 and late.value.extra["outcome"]["outcome"] == "expired"


async def test_deadlines_survive_a_restart(db_url: str) -> None:
    store = await Store.open(db_url)
    b = Broker(store, scheduler=False)
    await b.start()
    due = (await b.create(askdocs.aqp(expires_in=0.3), asker=ASKER, respondents=bob())).record
    later = (await b.create(askdocs.aqp(expires_in=1.5), asker=ASKER, respondents=bob())).record
    await b.stop()
    await store.close()
    await asyncio.sleep(0.5)  # the first deadline passes while nothing runs
    store = await Store.open(db_url)
    b = Broker(store, max_idle=0.5)
    await b.start()  # settles what is due at once
    try:
        assert (await b.get(due.id)).state == "expired"  # type: ignore[union-attr]
        assert (await b.get(later.id)).state == "delivered"  # type: ignore[union-attr]
        assert (await b.wait(later.id, ASKER, 10)).state == "expired"
    finally:
        await b.stop()
        await store.close()


async def test_withdraw_and_visibility(broker: Broker) -> None:
    rec = (await broker.create(askdocs.a2a(), asker=ASKER, respondents=bob())).record
    with pytest.raises(BrokerError) as err:
        await broker.withdraw(rec.id, who=BOB)
    assert err.value.status == 403
    with pytest.raises(BrokerError) as hidden:
        await broker.get_for(rec.id, EVE)
    assert hidden.value.status == 404
    done = await broker.withdraw(rec.id, who=ASKER)
    assert done.state == "withdrawn"
    assert (await broker.view(done))["response"] == {"action": "cancel"}


async def test_held_query_is_released_by_a_signal(broker: Broker) -> None:
    rec = (await broker.create(askdocs.aqp(timing="after_task_complete"), asker=ASKER, respondents=bob())).record
    assert rec.state == "pending" and rec.hold == "held" and rec.offered_to == ()
    same = await broker.signal(rec.id, "outcome_known", who=ASKER)  # does not apply: a no-op
    assert same.version == rec.version
    with pytest.raises(BrokerError):
        await broker.signal(rec.id, "task_complete", who=BOB)
    released = await broker.signal(rec.id, "task_complete", who=ASKER)
    assert released.state == "delivered" and released.offered_to == ("bob",)


async def test_ask_once_consent_is_remembered_and_revocable(broker: Broker) -> None:
    scope = "release-feedback"
    first = (await broker.create(askdocs.aqp(consent="ask_once", scope=scope), asker=ASKER, respondents=bob())).record
    assert first.hold == "awaiting_consent"
    with pytest.raises(BrokerError) as early:
        await broker.answer(first.id, askdocs.aqp_answer(), who=BOB)
    assert early.value.status == 403
    await broker.consent(first.id, True, who=BOB)
    assert (await broker.store.consent_map(["bob"])) == {("bob", scope): True}
    second = (await broker.create(askdocs.aqp(consent="ask_once", scope=scope), asker=ASKER, respondents=bob())).record
    assert second.state == "delivered" and second.hold is None  # the stored grant opens it
    done = await broker.answer(second.id, askdocs.aqp_answer(), who=BOB)
    assert (await broker.view(done))["response"]["consent"] == {"mode": "ask_once", "basis": "stored_grant"}
    async with broker.store.write() as tx:
        assert await tx.revoke_consent("bob", scope)
    third = (await broker.create(askdocs.aqp(consent="ask_once", scope=scope), asker=ASKER, respondents=bob())).record
    assert third.hold == "awaiting_consent"


async def test_acs_session_grant_extends_the_intent_and_chains_the_session(broker: Broker) -> None:
    binding = {"session_id": "sess-1", "step_id": "step-9", "request_id": "req-9"}
    rec = (await broker.create(askdocs.acs(session=True), asker=ASKER, binding=binding)).record
    assert rec.offered_to == ("lead",)
    with pytest.raises(BrokerError) as asked:
        await broker.answer(rec.id, {"decision": "ask"}, who=LEAD)
    assert asked.value.extra["acs_error"]["code"] == -32003
    grant = {"decision": "allow", "reasoning": "ok",
             "intent_extension": {"capabilities": [{"tool": "shell", "operation": "exec"}], "scope": "session"}}
    done = await broker.answer(rec.id, grant, who=LEAD)
    assert await broker.store.get_intent("sess-1") == [{"tool": "shell", "operation": "exec"}]
    session = await broker.store.audit_chain("session", "sess-1")
    assert verify_chain(session).ok and "intent_extension" in [e["step_type"] for e in session]
    view = await broker.view(done)
    assert view["response"]["result"]["decision"] == "allow"
    assert view["response"]["result"]["chain_hash"] == session[-1]["entry_hash"]


async def test_canonical_form(broker: Broker) -> None:
    doc = {"ask": {"dialect": "canonical", "prompt": "Deploy?", "spec": {"kind": "yes_no"}},
           "routing": {"respondents": [{"kind": "human", "id": "bob"}, {"kind": "human", "id": "eve"}],
                       "rule": "all"}}
    rec = (await broker.create(doc, asker=ASKER)).record
    assert set(rec.offered_to) == {"bob", "eve"}
    with pytest.raises(BrokerError) as bad:
        await broker.answer(rec.id, {"outcome": "accept", "value": "yes"}, who=BOB)
    assert bad.value.status == 422 and bad.value.faults[0].pointer == "/value"
    mid = await broker.answer(rec.id, {"outcome": "accept", "value": True}, who=BOB)
    assert not mid.terminal
    done = await broker.answer(rec.id, {"outcome": "accept", "value": True}, who=EVE)
    assert done.state == "answered"
    with pytest.raises(BrokerError) as invalid:
        await broker.create({"ask": {"dialect": "canonical", "spec": {"kind": "nope"}}}, asker=ASKER)
    assert invalid.value.status == 422 and {f.pointer for f in invalid.value.faults} >= {"/ask/prompt"}


async def test_scheduler_uses_the_clock_it_is_given(db_url: str) -> None:
    """A deadline in the past at creation is settled during creation (no wait for the scheduler)."""
    store = await Store.open(db_url)
    b = Broker(store, clock=lambda: datetime.now(UTC) + timedelta(hours=2), scheduler=False)
    await b.start()
    try:
        with pytest.raises(BrokerError) as err:  # AQP refuses an already expired query at intake
            await b.create(askdocs.aqp(expires_in=60), asker=ASKER, respondents=bob())
        assert err.value.code == "already_expired"
    finally:
        await b.stop()
        await store.close()


async def test_a_backlog_of_deadlines_is_settled_in_growing_batches_each_once(db_url: str) -> None:
    """310 asks due at once, settled with batch=20: every one exactly once, in far fewer transactions than
    310/20 = 16 (claims double while they come back full), so a backlog is not bound by one commit per 20."""
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    store = await Store.open(db_url)
    b = Broker(store, scheduler=False, clock=lambda: now[0])
    await b.start()
    try:
        created = await asyncio.gather(*(b.create(askdocs.a2a(f"q{i}"), asker=ASKER, respondents=bob(),
                                                  timeout_seconds=1) for i in range(310)))
        claims: list[int] = []
        real_claim = store.claim_due

        def counting_claim(when: datetime, limit: int = 100):  # type: ignore[no-untyped-def]
            claims.append(limit)
            return real_claim(when, limit=limit)

        store.claim_due = counting_claim  # type: ignore[method-assign]
        now[0] += timedelta(seconds=2)
        assert await b.settle_due(batch=20) == 310
        assert len(claims) <= 6 and claims[0] == 20 and claims[1] == 40, claims
        assert await b.settle_due(batch=20) == 0
        for c in created:
            assert (await b.get(c.record.id)).state == "timed_out"  # type: ignore[union-attr]
            steps = [e["step_type"] for e in await store.audit_chain("ask", c.record.id)]
            assert steps.count("timeout") == 1, steps
    finally:
        await b.stop()
        await store.close()
