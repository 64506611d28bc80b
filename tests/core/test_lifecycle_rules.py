"""Unit tests of the ask lifecycle: one test per rule of issue #4 item 1 and protocols.md §3.4 / §4.3-4.5."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.core.lifecycle import (
    AskRecord,
    ConsentReply,
    Deliver,
    EscalationStep,
    ExtendIntent,
    LifecycleError,
    Notify,
    Offer,
    RememberConsent,
    Respond,
    Routing,
    ScheduleWake,
    Signal,
    State,
    Tick,
    Withdraw,
    apply,
    final_answer,
    next_wake,
    open_ask,
)
from askgate.core.model import (
    Answer,
    ApprovalDecision,
    Capability,
    Dialect,
    IntentExtension,
    Respondent,
)
from tests.core.lifecycle_support import (
    ALICE,
    BOB,
    CANCEL,
    CAROL,
    DECLINE,
    MALLORY,
    T0,
    acs_ask,
    allow,
    aqp_ask,
    at,
    deny,
    form,
    form_ask,
    opened,
    text,
)
from tests.support.scale import examples


def effects_of(t, kind):
    return [e for e in t.effects if isinstance(e, kind)]


# ------------------------------------------------------------------------------------------- basics


def test_open_offers_immediately_and_schedules_the_deadline() -> None:
    t = opened(acs_ask(timeout=60), ALICE)
    r = t.record
    assert (r.state, r.version, r.offered_to, r.hold) == (State.DELIVERED, 1, (ALICE.id,), None)
    assert r.deadline_at == at(60)
    assert [e.step_type for e in t.audit] == ["ask", "offer"]
    assert all(e.version == 1 and e.ask_id == "ask-1" for e in t.audit)
    assert effects_of(t, Notify) == [Notify("ask-1", (ALICE.id,), "offer")]
    assert effects_of(t, ScheduleWake) == [ScheduleWake("ask-1", at(60))]


def test_open_without_respondents_is_pending_until_offered() -> None:
    t = opened(form_ask(), escalation=(EscalationStep(30, (BOB,)),))
    assert t.record.state is State.PENDING and t.record.offered_to == () and t.record.hold is None
    assert not effects_of(t, Notify) and next_wake(t.record) is None  # the ladder starts at the first offer
    t2 = apply(t.record, Offer((BOB.id,)), now=at(1))
    assert (t2.record.state, t2.record.offered_to, t2.record.offered_at) == (State.DELIVERED, (BOB.id,), at(1))
    assert effects_of(t2, Notify) == [Notify("ask-1", (BOB.id,), "offer")]


def test_offer_of_a_respondent_outside_the_routing_is_invalid() -> None:
    t = opened(form_ask())
    with pytest.raises(LifecycleError) as e:
        apply(t.record, Offer((ALICE.id,)), now=at(1))
    assert e.value.code == "invalid"


def test_offer_of_an_escalation_respondent_now() -> None:
    t = opened(form_ask(), ALICE, escalation=(EscalationStep(30, (BOB,)),))
    t2 = apply(t.record, Offer((BOB.id,)), now=at(2))
    assert t2.record.offered_to == (ALICE.id, BOB.id) and t2.record.version == 2
    assert effects_of(t2, Notify) == [Notify("ask-1", (BOB.id,), "offer")]
    # offering again changes nothing
    t3 = apply(t2.record, Offer((BOB.id,)), now=at(3))
    assert t3.record is t2.record and t3.audit == () and t3.effects == ()


def test_accept_answers_and_stamps_the_answer() -> None:
    t = opened(form_ask(), ALICE)
    t2 = apply(t.record, Respond(ALICE, form().model_copy(update={"answered_at": at(-999)})), now=at(5))
    r = t2.record
    assert r.state is State.ANSWERED and r.version == 2
    assert r.answer is not None and r.answer.value == {"name": "Ada"}
    assert r.answer.respondent == ALICE and r.answer.answered_at == at(5)
    assert r.answer.consent_basis == "not_required"
    assert (r.settled_at, r.settled_by) == (at(5), "respondent")
    assert effects_of(t2, Deliver) == [Deliver("ask-1")]
    assert [e.step_type for e in t2.audit] == ["answer"]
    assert next_wake(r) is None
    assert final_answer(r) == r.answer


@pytest.mark.parametrize(("answer", "state", "outcome"), [(DECLINE, State.DECLINED, "decline"),
                                                          (CANCEL, State.CANCELLED, "cancel")])
def test_decline_and_cancel_end_without_an_answer_value(answer, state, outcome) -> None:
    t = apply(opened(form_ask(), ALICE).record, Respond(ALICE, answer), now=at(1))
    assert t.record.state is state and t.record.answer is None
    fa = final_answer(t.record)
    assert fa is not None and fa.outcome == outcome and fa.respondent == ALICE and fa.answered_at == at(1)


def test_withdraw() -> None:
    t = apply(opened(form_ask(), ALICE).record, Withdraw("principal:ci"), now=at(2))
    assert t.record.state is State.WITHDRAWN and t.record.settled_by == "asker"
    assert t.audit[0].step_type == "withdraw" and t.audit[0].data == {"by": "principal:ci"}
    fa = final_answer(t.record)
    assert fa is not None and (fa.outcome, fa.reason) == ("cancel", "withdrawn")


def test_a_terminal_ask_refuses_every_further_change_with_the_winning_outcome() -> None:
    won = apply(opened(form_ask(), ALICE, BOB).record, Respond(ALICE, form("A")), now=at(1)).record
    for event in (Respond(BOB, form("B")), Respond(ALICE, form("A2")), Withdraw("x"), Offer((BOB.id,)),
                  ConsentReply(ALICE.id, True)):
        with pytest.raises(LifecycleError) as e:
            apply(won, event, now=at(2))
        assert e.value.code == "conflict"
        assert e.value.outcome == won.answer and e.value.state is State.ANSWERED
        assert e.value.transition is None
    for event in (Tick(), Signal("release")):
        t = apply(won, event, now=at(10_000))
        assert t.record is won and t.audit == () and t.effects == ()


def test_answer_from_a_respondent_not_offered_is_forbidden_and_audited() -> None:
    r = opened(form_ask(), ALICE, escalation=(EscalationStep(30, (BOB,)),)).record
    for who in (MALLORY, BOB):  # a stranger, and an escalation respondent not yet reached
        with pytest.raises(LifecycleError) as e:
            apply(r, Respond(who, form()), now=at(1))
        assert e.value.code == "forbidden"
        assert e.value.audit is not None and e.value.audit.step_type == "refused"
        assert e.value.audit.data["respondent"] == who.id and e.value.audit.data["code"] == "forbidden"
        assert e.value.transition is None


def test_racing_answers_on_one_version_are_deterministic_and_the_loser_conflicts() -> None:
    r = opened(form_ask(), ALICE, BOB).record
    a1 = apply(r, Respond(ALICE, form("A")), now=at(1))
    a2 = apply(r, Respond(ALICE, form("A")), now=at(1))
    assert a1 == a2  # same inputs, same transition: a retry after a lost CAS is safe
    b = apply(r, Respond(BOB, form("B")), now=at(1))
    assert a1.record.version == b.record.version == r.version + 1  # the store's CAS lets only one in
    with pytest.raises(LifecycleError) as e:
        apply(a1.record, Respond(BOB, form("B")), now=at(1))
    assert e.value.code == "conflict" and e.value.outcome is not None
    assert e.value.outcome.value == {"name": "A"}


def test_a_voter_cannot_vote_twice() -> None:
    r = opened(acs_ask(), ALICE, BOB, rule="all").record
    r = apply(r, Respond(ALICE, allow()), now=at(1)).record
    with pytest.raises(LifecycleError) as e:
        apply(r, Respond(ALICE, deny()), now=at(2))
    assert e.value.code == "conflict"


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(LifecycleError) as e:
        opened(form_ask(), ALICE, now=datetime(2026, 1, 1))
    assert e.value.code == "invalid"


# ---------------------------------------------------------------------------------------- deadlines


def test_acs_timeout_is_a_real_deny_decided_by_timeout() -> None:
    r = opened(acs_ask(timeout=30), ALICE).record
    assert apply(r, Tick(), now=at(29.999)).record is r
    t = apply(r, Tick(), now=at(30))
    a = t.record.answer
    assert t.record.state is State.TIMED_OUT and a is not None
    assert a.outcome == "timed_out" and a.value == ApprovalDecision(decision="deny", decided_by="timeout")
    assert a.respondent is None
    ev = t.audit[-1]
    assert ev.step_type == "timeout" and ev.data["reason_code"] == "ask_timeout" and ev.data["fail_open"] is False
    assert final_answer(t.record) == a and effects_of(t, Deliver) == [Deliver("ask-1")]


def test_acs_timeout_allow_is_audited_as_fail_open() -> None:
    t = apply(opened(acs_ask(timeout=30, disposition="allow"), ALICE).record, Tick(), now=at(31))
    assert t.record.answer is not None
    assert t.record.answer.value == ApprovalDecision(decision="allow", decided_by="timeout")
    assert t.audit[-1].data["fail_open"] is True


def test_aqp_deadline_expires() -> None:
    t = apply(opened(aqp_ask(expires_in=100), ALICE).record, Tick(), now=at(100))
    assert t.record.state is State.EXPIRED and t.record.answer is None
    fa = final_answer(t.record)
    assert fa is not None and fa.outcome == "expired"


def test_elicitation_times_out_and_the_agent_is_told_timed_out() -> None:
    t = open_ask(form_ask(), ask_id="e", routing=Routing.single(ALICE), now=T0, timeout_seconds=15)
    assert t.record.deadline_at == at(15)
    t2 = apply(t.record, Tick(), now=at(15))
    assert t2.record.state is State.TIMED_OUT and t2.record.answer is None
    fa = final_answer(t2.record)
    assert fa is not None and fa.outcome == "timed_out"  # never "decline"
    assert t2.audit[-1].data["disposition"] == "cancel"


def test_deadline_is_the_earliest_of_expiry_timeout_and_caller_timeout() -> None:
    ask = aqp_ask(expires_in=100).model_copy(update={"deadline": aqp_ask().deadline.model_copy(
        update={"expires_at": at(100), "timeout_seconds": 80})})
    routing = Routing.single(ALICE)
    assert open_ask(ask, ask_id="x", routing=routing, now=T0).record.deadline_at == at(80)
    assert open_ask(ask, ask_id="x", routing=routing, now=T0, timeout_seconds=10).record.deadline_at == at(10)
    assert open_ask(ask, ask_id="x", routing=routing, now=T0, timeout_seconds=500).record.deadline_at == at(80)


def test_an_answer_after_the_deadline_conflicts_and_carries_the_settlement() -> None:
    r = opened(acs_ask(timeout=30), ALICE).record
    with pytest.raises(LifecycleError) as e:
        apply(r, Respond(ALICE, allow()), now=at(31))
    err = e.value
    assert err.code == "conflict" and err.state is State.TIMED_OUT
    assert err.outcome is not None and err.outcome.value == ApprovalDecision(decision="deny", decided_by="timeout")
    assert err.transition is not None and err.transition.record.state is State.TIMED_OUT
    assert err.transition.record.version == 2 and err.audit is not None and err.audit.version == 2


def test_an_ask_opened_past_its_deadline_settles_at_once_unseen() -> None:
    t = opened(aqp_ask(expires_in=-1), ALICE)
    assert t.record.state is State.EXPIRED and not effects_of(t, Notify)
    assert t.record.offered_to == ()


def test_next_wake_is_the_earliest_deadline_or_escalation() -> None:
    r = opened(form_ask(timeout=100), ALICE, escalation=(EscalationStep(40, (BOB,)),)).record
    assert next_wake(r) == at(40)
    r2 = apply(r, Tick(), now=at(40)).record
    assert next_wake(r2) == at(100)
    assert next_wake(opened(form_ask(), ALICE).record) is None


# -------------------------------------------------------------------------------------- AQP timing

RELEASES = {
    ("after_outcome_known", "outcome_known"): True,
    ("after_outcome_known", "task_complete"): True,
    ("after_outcome_known", "release"): True,
    ("after_task_complete", "outcome_known"): False,
    ("after_task_complete", "task_complete"): True,
    ("after_task_complete", "release"): True,
    ("deferred", "outcome_known"): False,
    ("deferred", "task_complete"): False,
    ("deferred", "release"): True,
}


@pytest.mark.parametrize(("timing", "signal"), sorted(RELEASES))
def test_held_asks_are_released_only_by_their_signal(timing: str, signal: str) -> None:
    t = opened(aqp_ask(timing=timing), ALICE)
    assert (t.record.state, t.record.hold) == (State.PENDING, "held")
    assert not effects_of(t, Notify) and t.record.offered_to == ()
    t2 = apply(t.record, Signal(signal), now=at(5))  # type: ignore[arg-type]
    if RELEASES[(timing, signal)]:
        assert (t2.record.state, t2.record.hold, t2.record.offered_to) == (State.DELIVERED, None, (ALICE.id,))
        assert t2.record.signals == (signal,) and t2.record.offered_at == at(5)
        assert effects_of(t2, Notify) == [Notify("ask-1", (ALICE.id,), "offer")]
        # a second signal is a no-op
        assert apply(t2.record, Signal("release"), now=at(6)).record is t2.record
    else:
        assert t2.record is t.record and t2.audit == ()


def test_immediate_ask_ignores_signals() -> None:
    r = opened(aqp_ask(), ALICE).record
    assert apply(r, Signal("release"), now=at(1)).record is r


def test_a_held_ask_expires_unseen_and_is_never_offered_after_expiry() -> None:
    r = opened(aqp_ask(timing="deferred", expires_in=50), ALICE).record
    t = apply(r, Signal("release"), now=at(50))  # release arrives exactly at expiry
    assert t.record.state is State.EXPIRED and not effects_of(t, Notify) and t.record.offered_to == ()
    t2 = apply(r, Tick(), now=at(70))
    assert t2.record.state is State.EXPIRED and not effects_of(t2, Notify)


def test_a_held_ask_cannot_be_offered_directly() -> None:
    r = opened(aqp_ask(timing="deferred"), ALICE).record
    with pytest.raises(LifecycleError) as e:
        apply(r, Offer((ALICE.id,)), now=at(1))
    assert e.value.code == "invalid"


# ----------------------------------------------------------------------------------------- consent

SCOPE = "team:deploys/feedback"


def test_ask_once_with_a_stored_grant_opens_without_asking() -> None:
    calls: list[tuple[str, str]] = []

    def lookup(rid: str, scope: str) -> bool | None:
        calls.append((rid, scope))
        return True

    t = open_ask(aqp_ask(consent="ask_once", scope=SCOPE), ask_id="q", routing=Routing.single(ALICE), now=T0,
                 stored_consent=lookup)
    assert calls == [(ALICE.id, SCOPE)]
    assert t.record.hold is None and t.record.consent_of(ALICE.id) == "stored_grant"
    assert effects_of(t, Notify) == [Notify("q", (ALICE.id,), "offer")]
    t2 = apply(t.record, Respond(ALICE, text()), now=at(1))
    assert t2.record.answer is not None and t2.record.answer.consent_basis == "stored_grant"


def test_ask_once_with_a_stored_refusal_declines_without_contacting_the_respondent() -> None:
    t = opened(aqp_ask(consent="ask_once", scope=SCOPE), ALICE, stored={(ALICE.id, SCOPE): False})
    assert t.record.state is State.DECLINED and t.record.settled_by == "consent"
    assert not effects_of(t, Notify) and not effects_of(t, RememberConsent)
    # indistinguishable from an explicit decline by the same respondent at the same time
    explicit = apply(opened(aqp_ask(), ALICE).record, Respond(ALICE, Answer(outcome="decline")), now=T0).record
    assert final_answer(t.record) == final_answer(explicit)


def test_ask_once_without_a_stored_decision_asks_then_remembers_a_grant() -> None:
    t = opened(aqp_ask(consent="ask_once", scope=SCOPE), ALICE)
    r = t.record
    assert (r.state, r.hold) == (State.DELIVERED, "awaiting_consent")
    assert effects_of(t, Notify) == [Notify("ask-1", (ALICE.id,), "consent")]
    with pytest.raises(LifecycleError) as e:
        apply(r, Respond(ALICE, text()), now=at(1))
    assert e.value.code == "forbidden"
    t2 = apply(r, ConsentReply(ALICE.id, True), now=at(2))
    assert t2.record.hold is None and t2.record.consent_of(ALICE.id) == "granted_now"
    assert effects_of(t2, RememberConsent) == [RememberConsent(ALICE.id, SCOPE, True)]
    assert effects_of(t2, Notify) == [Notify("ask-1", (ALICE.id,), "offer")]
    t3 = apply(t2.record, Respond(ALICE, text()), now=at(3))
    assert t3.record.answer is not None and t3.record.answer.consent_basis == "granted_now"
    with pytest.raises(LifecycleError) as e2:
        apply(t2.record, ConsentReply(ALICE.id, True), now=at(3))
    assert e2.value.code == "conflict"


def test_ask_once_refusal_is_remembered_and_declines() -> None:
    r = opened(aqp_ask(consent="ask_once", scope=SCOPE), ALICE).record
    t = apply(r, ConsentReply(ALICE.id, False), now=at(2))
    assert t.record.state is State.DECLINED
    assert effects_of(t, RememberConsent) == [RememberConsent(ALICE.id, SCOPE, False)]


def test_ask_always_asks_every_time_and_never_stores() -> None:
    def lookup(rid: str, scope: str) -> bool | None:
        raise AssertionError("ask_always must not look up stored consent")

    t = open_ask(aqp_ask(consent="ask_always"), ask_id="q", routing=Routing.single(ALICE), now=T0,
                 stored_consent=lookup)
    assert t.record.hold == "awaiting_consent"
    t2 = apply(t.record, ConsentReply(ALICE.id, True), now=at(1), stored_consent=lookup)
    assert not effects_of(t2, RememberConsent) and t2.record.hold is None
    t3 = apply(t.record, ConsentReply(ALICE.id, False), now=at(1), stored_consent=lookup)
    assert not effects_of(t3, RememberConsent) and t3.record.state is State.DECLINED


def test_not_required_skips_consent() -> None:
    def lookup(rid: str, scope: str) -> bool | None:
        raise AssertionError("no consent lookup for not_required")

    t = open_ask(aqp_ask(), ask_id="q", routing=Routing.single(ALICE), now=T0, stored_consent=lookup)
    assert t.record.hold is None and t.record.consent_of(ALICE.id) == "not_required"


def test_ask_once_needs_a_scope() -> None:
    with pytest.raises(LifecycleError) as e:
        opened(aqp_ask(consent="ask_once", scope=None), ALICE)
    assert e.value.code == "invalid"


def test_consent_reply_from_someone_not_offered_is_forbidden() -> None:
    r = opened(aqp_ask(consent="ask_always"), ALICE).record
    with pytest.raises(LifecycleError) as e:
        apply(r, ConsentReply(MALLORY.id, True), now=at(1))
    assert e.value.code == "forbidden"


def test_consent_asked_when_a_held_ask_is_released() -> None:
    r = opened(aqp_ask(consent="ask_once", scope=SCOPE, timing="after_task_complete"), ALICE).record
    assert r.consents == ()
    t = apply(r, Signal("task_complete"), now=at(3))
    assert t.record.hold == "awaiting_consent"
    assert effects_of(t, Notify) == [Notify("ask-1", (ALICE.id,), "consent")]


def test_under_first_a_consent_refusal_leaves_the_ask_to_others() -> None:
    r = opened(aqp_ask(consent="ask_always"), ALICE, BOB).record
    t = apply(r, ConsentReply(ALICE.id, False), now=at(1))
    assert t.record.state is State.DELIVERED  # BOB may still answer
    t2 = apply(t.record, ConsentReply(BOB.id, False), now=at(2))
    assert t2.record.state is State.DECLINED


# --------------------------------------------------------------------------------------------- ACS

EXT = (Capability(tool="shell", operation="exec", resource="posix:///srv/app"),)
OTHER = Capability(tool="shell", operation="exec", resource="posix:///")
PROPOSAL = IntentExtension(capabilities=(*EXT, OTHER), scope="session")


@pytest.mark.parametrize(("proposal", "grant"), [
    (None, IntentExtension(capabilities=EXT, scope="this_request")),
    (IntentExtension(capabilities=EXT, scope="this_request"), IntentExtension(capabilities=EXT, scope="session")),
    (IntentExtension(capabilities=EXT, scope="session"),
     IntentExtension(capabilities=(*EXT, OTHER), scope="session")),
    (IntentExtension(capabilities=EXT, scope="session"),
     IntentExtension(capabilities=(Capability(tool="shell"),), scope="session")),
], ids=["no-proposal", "wider-scope", "more-capabilities", "broader-capability"])
def test_a_grant_may_narrow_but_never_widen_the_proposal(proposal, grant) -> None:
    r = opened(acs_ask(extension=proposal), ALICE).record
    with pytest.raises(LifecycleError) as e:
        apply(r, Respond(ALICE, allow(intent_extension=grant)), now=at(1))
    assert e.value.code == "invalid"


def test_a_narrowed_grant_is_accepted() -> None:
    narrowed = IntentExtension(capabilities=EXT, scope="this_request")
    t = apply(opened(acs_ask(extension=PROPOSAL), ALICE).record, Respond(ALICE, allow(intent_extension=narrowed)),
              now=at(1))
    assert t.record.state is State.ANSWERED and not effects_of(t, ExtendIntent)


def test_session_grant_extends_the_session_intent_and_writes_an_intent_extension_entry() -> None:
    grant = IntentExtension(capabilities=EXT, scope="session", provenance={"origin": "user_input"})
    t = apply(opened(acs_ask(extension=PROPOSAL), ALICE).record, Respond(ALICE, allow(intent_extension=grant)), now=at(4))
    assert t.record.state is State.ANSWERED
    assert effects_of(t, ExtendIntent) == [ExtendIntent("sess-1", EXT)]
    ev = [e for e in t.audit if e.step_type == "intent_extension"]
    assert len(ev) == 1
    assert (ev[0].step_id, ev[0].entry_id) == ("step-19", "req-7/intent_extension")
    assert ev[0].data["approver"] == {"type": "human", "id": ALICE.id}
    assert ev[0].data["intent_extension"]["capabilities"] == [
        {"tool": "shell", "operation": "exec", "resource": "posix:///srv/app"}]
    assert ev[0].data["intent_extension"]["provenance"] == {"origin": "user_input"}


def test_this_request_grant_is_recorded_only_in_the_answer_entry() -> None:
    grant = IntentExtension(capabilities=EXT, scope="this_request")
    t = apply(opened(acs_ask(extension=PROPOSAL), ALICE).record, Respond(ALICE, allow(intent_extension=grant)), now=at(4))
    assert not effects_of(t, ExtendIntent)
    assert [e.step_type for e in t.audit] == ["answer"]
    assert t.audit[0].data["answer"]["value"]["intent_extension"]["scope"] == "this_request"


def test_timeout_allow_grants_no_extension() -> None:
    grant = IntentExtension(capabilities=EXT, scope="session")
    t = apply(opened(acs_ask(disposition="allow", extension=grant), ALICE).record, Tick(), now=at(61))
    assert not effects_of(t, ExtendIntent)


def _construct_decision(decision: str) -> Answer:
    bad = ApprovalDecision.model_construct(decision=decision, reasoning=None, selected_option=None,
                                           intent_extension=None, decided_by="approver")
    return Answer.model_construct(outcome="accept", value=bad, respondent=None, answered_at=None, reason=None,
                                  consent_basis=None)


@pytest.mark.parametrize("answer", [
    Answer(outcome="decline"),
    Answer(outcome="cancel"),
    Answer(outcome="accept", value="allow"),
    Answer(outcome="accept", value=ApprovalDecision(decision="deny", decided_by="timeout")),
    Answer(outcome="accept", value=ApprovalDecision(
        decision="deny", intent_extension=IntentExtension(capabilities=EXT, scope="session"))),
    Answer(outcome="timed_out", value=ApprovalDecision(decision="allow")),
    _construct_decision("ask"),
], ids=["decline", "cancel", "string", "decided-by-timeout", "deny-with-grant", "timed_out", "ask"])
def test_an_approver_may_answer_only_allow_or_deny(answer: Answer) -> None:
    r = opened(acs_ask(), ALICE).record
    with pytest.raises(LifecycleError) as e:
        apply(r, Respond(ALICE, answer), now=at(1))
    assert e.value.code == "invalid" and e.value.audit is not None


def test_respondents_cannot_claim_timeout_outcomes_or_decisions_elsewhere() -> None:
    r = opened(form_ask(), ALICE).record
    for bad in (Answer(outcome="timed_out"), Answer(outcome="expired"), allow()):
        with pytest.raises(LifecycleError) as e:
            apply(r, Respond(ALICE, bad), now=at(1))
        assert e.value.code == "invalid"


# ----------------------------------------------------------------------------- several respondents


def test_first_answer_wins() -> None:
    r = opened(form_ask(), ALICE, BOB).record
    t = apply(r, Respond(BOB, form("B")), now=at(1))
    assert t.record.state is State.ANSWERED and t.record.answer.respondent == BOB  # type: ignore[union-attr]


def test_all_must_approve() -> None:
    r = opened(acs_ask(), ALICE, BOB, CAROL, rule="all").record
    r = apply(r, Respond(ALICE, allow()), now=at(1)).record
    r = apply(r, Respond(CAROL, allow()), now=at(2)).record
    assert r.state is State.DELIVERED and r.version == 3 and len(r.votes) == 2
    t = apply(r, Respond(BOB, allow(reasoning="ok")), now=at(3))
    assert t.record.state is State.ANSWERED and t.record.answer.respondent == BOB  # type: ignore[union-attr]
    assert [e.step_type for e in t.audit] == ["answer"]


def test_all_a_single_deny_denies_at_once() -> None:
    r = opened(acs_ask(), ALICE, BOB, CAROL, rule="all").record
    r = apply(r, Respond(ALICE, allow()), now=at(1)).record
    t = apply(r, Respond(BOB, deny(reasoning="no")), now=at(2))
    assert t.record.state is State.ANSWERED
    assert t.record.answer.value.decision == "deny"  # type: ignore[union-attr]


def test_all_on_a_form_a_decline_declines() -> None:
    r = opened(form_ask(), ALICE, BOB, rule="all").record
    r = apply(r, Respond(ALICE, form()), now=at(1)).record
    assert r.state is State.DELIVERED
    assert apply(r, Respond(BOB, DECLINE), now=at(2)).record.state is State.DECLINED


def test_quorum_m_of_n() -> None:
    r = opened(acs_ask(), ALICE, BOB, CAROL, rule="quorum", quorum=2).record
    r = apply(r, Respond(ALICE, deny()), now=at(1)).record
    assert r.state is State.DELIVERED  # 2 approvals still possible
    r = apply(r, Respond(BOB, allow()), now=at(2)).record
    assert r.state is State.DELIVERED
    t = apply(r, Respond(CAROL, allow()), now=at(3))
    assert t.record.state is State.ANSWERED and t.record.answer.value.decision == "allow"  # type: ignore[union-attr]


def test_quorum_settles_deny_once_approval_is_out_of_reach() -> None:
    r = opened(acs_ask(), ALICE, BOB, CAROL, rule="quorum", quorum=2).record
    r = apply(r, Respond(ALICE, deny()), now=at(1)).record
    t = apply(r, Respond(BOB, deny(reasoning="no")), now=at(2))
    assert t.record.state is State.ANSWERED and t.record.answer.value.decision == "deny"  # type: ignore[union-attr]
    assert t.record.answer.respondent == BOB  # type: ignore[union-attr]


def test_deny_any_denies_on_the_first_deny() -> None:
    r = opened(acs_ask(), ALICE, BOB, CAROL, rule="deny_any", quorum=2).record
    r = apply(r, Respond(ALICE, allow()), now=at(1)).record
    t = apply(r, Respond(BOB, deny()), now=at(2))
    assert t.record.answer.value.decision == "deny"  # type: ignore[union-attr]
    r2 = opened(acs_ask(), ALICE, BOB, CAROL, rule="deny_any", quorum=2).record
    r2 = apply(r2, Respond(ALICE, allow()), now=at(1)).record
    assert apply(r2, Respond(CAROL, allow()), now=at(2)).record.state is State.ANSWERED


def test_escalation_ladder_offers_the_next_respondents_then_the_disposition() -> None:
    ladder = (EscalationStep(10, (BOB,)), EscalationStep(20, (CAROL,)), EscalationStep(30))
    r = opened(acs_ask(timeout=100), ALICE, escalation=ladder).record
    assert apply(r, Tick(), now=at(9.5)).record is r
    t = apply(r, Tick(), now=at(10))
    assert t.record.offered_to == (ALICE.id, BOB.id) and t.record.escalation_level == 1
    assert effects_of(t, Notify) == [Notify("ask-1", (BOB.id,), "offer")]
    assert effects_of(t, ScheduleWake) == [ScheduleWake("ask-1", at(20))]
    # a late tick applies every step that fell due, in order, in one version
    t2 = apply(t.record, Tick(), now=at(35))
    assert t2.record.version == t.record.version + 1
    assert [e.step_type for e in t2.audit] == ["escalation", "offer", "escalation", "timeout"]
    assert t2.record.state is State.TIMED_OUT and t2.record.settled_by == "escalation"
    assert t2.record.answer.value == ApprovalDecision(decision="deny", decided_by="timeout")  # type: ignore[union-attr]


def test_escalated_respondent_can_answer_and_the_first_still_can() -> None:
    r = opened(form_ask(), ALICE, escalation=(EscalationStep(10, (BOB,)),)).record
    r = apply(r, Tick(), now=at(10)).record
    assert apply(r, Respond(BOB, form("B")), now=at(11)).record.answer.respondent == BOB  # type: ignore[union-attr]
    assert apply(r, Respond(ALICE, form("A")), now=at(11)).record.answer.respondent == ALICE  # type: ignore[union-attr]


def test_the_deadline_beats_a_later_escalation_step() -> None:
    r = opened(form_ask(timeout=5), ALICE, escalation=(EscalationStep(10, (BOB,)),)).record
    t = apply(r, Tick(), now=at(20))
    assert t.record.state is State.TIMED_OUT and BOB.id not in t.record.offered_to


def test_held_ask_escalation_clock_starts_at_release() -> None:
    r = opened(aqp_ask(timing="deferred"), ALICE, escalation=(EscalationStep(10, (BOB,)),)).record
    assert next_wake(r) == at(600)
    r = apply(r, Signal("release"), now=at(100)).record
    assert next_wake(r) == at(110)


@pytest.mark.parametrize("kwargs", [
    {"rule": "most"}, {"rule": "quorum"}, {"rule": "quorum", "quorum": 0},
    {"respondents": (ALICE, ALICE)}, {"respondents": (ALICE,), "escalation": (EscalationStep(5, (ALICE,)),)},
    {"escalation": (EscalationStep(-1, (BOB,)),)},
    {"respondents": (ALICE, BOB), "rule": "quorum", "quorum": 3},
    {"respondents": (ALICE,), "rule": "deny_any", "quorum": 2},
])
def test_routing_rejects_nonsense(kwargs) -> None:
    with pytest.raises(ValueError):
        Routing(**kwargs)


# ----------------------------------------------------------------------------------- serialisation


def test_records_round_trip_through_json_without_the_credential() -> None:
    secret = "Bearer s3cr3t-XYZ-0001"
    ask = aqp_ask(authorization=secret, endpoint="https://hooks.example.com/aqp")
    r = apply(opened(ask, ALICE).record, Respond(ALICE, text("ok")), now=at(2)).record
    doc = r.to_json()
    dumped = json.dumps(doc)
    assert secret not in dumped and "s3cr3t" not in dumped
    back = AskRecord.from_json(json.loads(dumped))
    assert back.ask.delivery.authorization is None
    restored = back.with_authorization(secret)
    assert restored.ask.delivery.authorization is not None
    assert restored.ask.delivery.authorization.get_secret_value() == secret
    assert restored.ask.original["delivery"]["authorization"] == "<redacted>"
    assert back.answer == r.answer and back.state is r.state and back.version == r.version


@pytest.mark.parametrize("answer", [
    form(),
    Answer(outcome="accept", value={"decision": "allow"}),  # a form field called "decision" stays a dict
    Answer(outcome="accept", value={"tags": ("a", "b"), "n": 3, "x": 1.5, "ok": True}),
])
def test_form_values_round_trip(answer: Answer) -> None:
    r = apply(opened(form_ask(), ALICE).record, Respond(ALICE, answer), now=at(1)).record
    back = AskRecord.from_json(json.loads(json.dumps(r.to_json())))
    assert back == r


def test_approval_records_round_trip() -> None:
    grant = IntentExtension(capabilities=EXT, scope="session")
    r = opened(acs_ask(extension=PROPOSAL), ALICE, BOB, rule="all").record
    r = apply(r, Respond(ALICE, allow(intent_extension=grant, selected_option=None)), now=at(1)).record
    for rec in (r, apply(r, Respond(BOB, deny()), now=at(2)).record, apply(r, Tick(), now=at(99)).record):
        assert AskRecord.from_json(json.loads(json.dumps(rec.to_json()))) == rec


def test_dialect_values_survive() -> None:
    r = opened(form_ask(dialect=Dialect.A2A_ELICITATION), Respondent(kind="service", id="svc")).record
    assert AskRecord.from_json(r.to_json()) == r


def test_past_expiry_tells_the_broker_to_release_nothing_more() -> None:
    from askgate.core.lifecycle import past_expiry

    r = apply(opened(aqp_ask(expires_in=10), ALICE).record, Respond(ALICE, text()), now=at(5)).record
    assert r.state is State.ANSWERED
    assert not past_expiry(r, at(9.999)) and past_expiry(r, at(10))
    assert not past_expiry(opened(form_ask(), ALICE).record, at(10**6))


@settings(max_examples=examples(200))
@given(version=st.integers(1, 9), state=st.sampled_from(list(State)), level=st.integers(0, 3),
       signals=st.lists(st.sampled_from(["outcome_known", "release"]), max_size=2).map(tuple),
       settled_by=st.none() | st.sampled_from(["deadline", "respondent"]))
def test_evolve_builds_what_dataclasses_replace_builds(version: int, state: State, level: int,
                                                       signals: tuple[str, ...], settled_by: str | None) -> None:
    from dataclasses import replace

    from askgate.core.record import evolve

    rec = opened(aqp_ask(), ALICE).record
    changes = {"version": version, "state": state, "escalation_level": level, "signals": signals,
               "settled_by": settled_by}
    got, want = evolve(rec, **changes), replace(rec, **changes)
    assert got == want and type(got) is AskRecord and got.__dict__ == want.__dict__
    assert rec == opened(aqp_ask(), ALICE).record  # the original is untouched
    with pytest.raises(TypeError):
        evolve(rec, no_such_field=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.version = 5  # type: ignore[misc]
