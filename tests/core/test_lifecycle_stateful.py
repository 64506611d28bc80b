"""Hypothesis stateful tests: any sequence of events keeps the lifecycle's invariants.

The machine plays broker: it applies events (offers, answers from offered and non-offered respondents,
withdrawals, signals, ticks with advancing time, consent replies, racing answers on one version), saves
what the lifecycle returns (including settlements carried by refusals), runs the consent store, and
appends every audit event to a hash chain. After every step it checks:

* at most one terminal outcome, and a terminal record never changes again;
* nothing is offered at or after the deadline / expiry, and a held ask is offered to nobody;
* ``answer`` is present iff the state is ``answered`` (or an ACS timeout decision);
* each change bumps the version by exactly one and emits audit events; a no-op changes nothing;
* Deliver is emitted exactly once, on the transition into a terminal state;
* the audit chain verifies, and the record round-trips through JSON.
"""

from __future__ import annotations

import json
from datetime import timedelta

from hypothesis import HealthCheck, settings
from hypothesis import event as note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from askgate.core.audit import entries_for, verify_chain
from askgate.core.consent import ANSWERABLE
from askgate.core.lifecycle import (
    TERMINAL,
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
    Signal,
    State,
    Tick,
    Transition,
    Withdraw,
    apply,
    final_answer,
    next_wake,
    open_ask,
)
from askgate.core.model import (
    Answer,
    ApprovalDecision,
    ApprovalSpec,
    Capability,
    IntentExtension,
    Respondent,
)
from tests.core.lifecycle_support import T0, acs_ask, aqp_ask, form_ask
from tests.support.scale import examples

POOL = tuple(Respondent(kind="human", id=f"user:{n}") for n in ("ann", "ben", "cat", "dan", "eve"))
STRANGER = Respondent(kind="human", id="user:mallory")
SCOPE = "scope:stateful-1"
EXT = IntentExtension(capabilities=(Capability(tool="git", operation="push"),), scope="session")


@st.composite
def configs(draw):
    kind = draw(st.sampled_from(["acs", "aqp", "form"]))
    n_first = draw(st.integers(0 if kind == "form" else 1, 3))
    rest = list(POOL[n_first:])
    steps = []
    for _ in range(draw(st.integers(0, 2))):
        take = draw(st.integers(0, min(2, len(rest))))
        steps.append(EscalationStep(draw(st.floats(0, 120)), tuple(rest[:take])))
        rest = rest[take:]
    rule_name = draw(st.sampled_from(["first", "all", "quorum", "deny_any"]))
    reach = n_first + sum(len(s.respondents) for s in steps)
    if reach == 0:
        rule_name, quorum = draw(st.sampled_from(["first", "all"])), None
    elif rule_name == "quorum":
        quorum = draw(st.integers(1, reach))
    else:
        quorum = draw(st.none() | st.integers(1, reach))
    routing = Routing(respondents=POOL[:n_first], rule=rule_name, quorum=quorum, escalation=tuple(steps))
    caller_timeout = None
    if kind == "acs":
        ask = acs_ask(timeout=draw(st.floats(1, 200)), disposition=draw(st.sampled_from([None, "allow", "deny"])),
                      extension=EXT)
    elif kind == "aqp":
        mode = draw(st.sampled_from(["not_required", "ask_once", "ask_always"]))
        ask = aqp_ask(expires_in=draw(st.floats(1, 300)),
                      timing=draw(st.sampled_from(["immediate", "after_outcome_known", "after_task_complete",
                                                   "deferred"])),
                      consent=mode, scope=SCOPE if mode == "ask_once" else None,
                      authorization="Bearer tok-stateful-SECRET", endpoint="https://hooks.example.com/x")
    else:
        ask = form_ask(timeout=draw(st.none() | st.floats(1, 200)))
        caller_timeout = draw(st.none() | st.floats(1, 200))
    stored = draw(st.dictionaries(st.sampled_from([p.id for p in POOL]), st.booleans(), max_size=3))
    return kind, ask, routing, caller_timeout, {(k, SCOPE): v for k, v in stored.items()}


WHO = st.sampled_from(POOL + (STRANGER,))
MOVES = st.sampled_from(["accept", "deny", "decline", "cancel", "grant", "bogus"])


class LifecycleMachine(RuleBasedStateMachine):
    def lookup(self, rid: str, scope: str) -> bool | None:
        return self.stored.get((rid, scope))

    @initialize(config=configs())
    def start(self, config) -> None:
        self.kind, ask, routing, caller_timeout, self.stored = config
        self.now = T0
        self.chain: list[dict] = []
        self.delivers = 0
        self.first_outcome: Answer | None = None
        self.first_state: State | None = None
        self.record: AskRecord | None = None
        t = open_ask(ask, ask_id="m-1", routing=routing, now=self.now, stored_consent=self.lookup,
                     timeout_seconds=caller_timeout)
        self.accept(None, t)

    # ------------------------------------------------------------------------------------- helpers

    def answer_for(self, move: str) -> tuple[Answer, bool]:
        """An answer of the given kind for this ask, and whether the lifecycle must accept its shape."""
        if self.kind == "acs":
            if move == "accept":
                return Answer(outcome="accept", value=ApprovalDecision(decision="allow")), True
            if move == "grant":
                return Answer(outcome="accept", value=ApprovalDecision(decision="allow", intent_extension=EXT)), True
            if move == "deny":
                return Answer(outcome="accept", value=ApprovalDecision(decision="deny", reasoning="no")), True
            if move == "bogus":
                return Answer(outcome="accept", value=ApprovalDecision(decision="deny", decided_by="timeout")), False
            return Answer(outcome=move), False  # decline / cancel: an approver may only allow or deny
        if move in ("accept", "grant"):
            return Answer(outcome="accept", value="fine" if self.kind == "aqp" else {"name": "Ada"}), True
        if move == "bogus":
            return Answer(outcome="expired"), False
        if move == "deny":
            return Answer(outcome="accept", value=ApprovalDecision(decision="deny")), False
        return Answer(outcome=move), True

    def step(self, event, *, shape_ok: bool = True) -> None:
        old = self.record
        assert old is not None
        try:
            t = apply(old, event, now=self.now, stored_consent=self.lookup)
        except LifecycleError as e:
            seen = e.transition.record if e.transition is not None else old
            note(f"refused {type(event).__name__}: {e.code}")
            self.check_refusal(seen, event, e, shape_ok)
            assert e.audit is not None and e.audit.step_type == "refused"
            if e.transition is not None:
                assert e.transition.record.version == old.version + 1
                self.accept(old, e.transition)
            return
        if isinstance(event, Respond) and old.state not in TERMINAL:
            assert shape_ok, "an answer of an impossible shape was accepted"
        self.accept(old, t)

    def check_refusal(self, rec: AskRecord, event, e: LifecycleError, shape_ok: bool) -> None:
        if rec.state in TERMINAL:
            assert e.code == "conflict" and e.outcome == final_answer(rec) and e.state is rec.state
            return
        if isinstance(event, Respond):
            rid = event.respondent.id
            if rid not in rec.offered_to or rec.consent_of(rid) not in ANSWERABLE:
                assert e.code == "forbidden"
            elif any(v.respondent_id == rid for v in rec.votes):
                assert e.code == "conflict"
            else:
                assert e.code == "invalid" and not shape_ok
        elif isinstance(event, ConsentReply):
            if event.respondent_id not in rec.offered_to:
                assert e.code == "forbidden"
            else:
                assert e.code == "conflict" and rec.consent_of(event.respondent_id) != "pending"
        elif isinstance(event, Offer):
            assert e.code == "invalid"
            assert rec.hold == "held" or any(rec.routing.find(i) is None for i in event.respondent_ids)
        else:
            raise AssertionError(f"{type(event).__name__} refused on an open ask: {e.code} {e.message}")

    def accept(self, old: AskRecord | None, t: Transition) -> None:
        new = t.record
        # versions and audit: a change is exactly one version and at least one audit event
        if old is None:
            assert new.version == 1 and t.audit
        elif t.audit:
            assert new.version == old.version + 1
        else:
            assert new == old and t.effects == ()
        assert all(ev.version == new.version and ev.ask_id == new.id for ev in t.audit)
        # a terminal record never changes
        if old is not None and old.state in TERMINAL:
            assert new == old and not t.audit
        # exactly one Deliver, on the way into a terminal state
        delivers = [e for e in t.effects if isinstance(e, Deliver)]
        entering = new.state in TERMINAL and (old is None or old.state not in TERMINAL)
        assert len(delivers) == (1 if entering else 0)
        self.delivers += len(delivers)
        assert self.delivers <= 1
        if new.state in TERMINAL:
            if self.first_state is None:
                self.first_state, self.first_outcome = new.state, final_answer(new)
            assert (new.state, final_answer(new)) == (self.first_state, self.first_outcome)
        # never offered at or after the deadline, never while held, only to the offered
        for n in (e for e in t.effects if isinstance(e, Notify)):
            assert new.deadline_at is None or self.now < new.deadline_at
            assert new.state is State.DELIVERED and new.hold != "held"
            assert set(n.respondent_ids) <= set(new.offered_to)
        # consent memory is the broker's job: do it, and only for ask_once
        for rc in (e for e in t.effects if isinstance(e, RememberConsent)):
            assert new.ask.consent.mode == "ask_once" and rc.scope == SCOPE
            self.stored[(rc.respondent_id, rc.scope)] = rc.granted
        for ext in (e for e in t.effects if isinstance(e, ExtendIntent)):
            assert new.state is State.ANSWERED and isinstance(new.answer.value, ApprovalDecision)  # type: ignore[union-attr]
            assert new.answer.value.intent_extension == EXT and ext.session_id == "sess-1"  # type: ignore[union-attr]
        self.check_record(new)
        # the chain: every event appended, and it always verifies
        head = self.chain[-1]["entry_hash"] if self.chain else None
        self.chain += entries_for(t.audit, previous_hash=head)
        result = verify_chain(self.chain)
        assert result.ok, result
        assert "tok-stateful-SECRET" not in json.dumps(self.chain)
        self.record = new
        note(f"{self.kind}: {new.state.value}" + (f"/{new.hold}" if new.hold else ""))

    def check_record(self, r: AskRecord) -> None:
        approval = isinstance(r.ask.spec, ApprovalSpec)
        if r.state is State.ANSWERED:
            assert r.answer is not None and r.answer.outcome == "accept"
            assert r.answer.respondent is not None and r.answer.respondent.id in r.offered_to
        elif r.state is State.TIMED_OUT and approval:
            assert r.answer is not None and r.answer.outcome == "timed_out"
            assert isinstance(r.answer.value, ApprovalDecision) and r.answer.value.decided_by == "timeout"
            assert r.answer.value.decision == (r.ask.deadline.on_timeout if r.ask.deadline.on_timeout in (
                "allow", "deny") else "deny")
        else:
            assert r.answer is None
        if r.state is State.EXPIRED:
            assert self.kind == "aqp"
        if r.state in (State.TIMED_OUT, State.EXPIRED):
            assert r.settled_by in ("deadline", "escalation")
            if r.settled_by == "deadline":
                assert r.deadline_at is not None and r.settled_at is not None and r.settled_at >= r.deadline_at
        assert (r.settled_at is not None) == (r.state in TERMINAL)
        if r.state is State.PENDING:
            assert r.offered_to == ()
        if r.state is State.DELIVERED:
            assert r.offered_to
        if r.hold == "held":
            assert r.state is State.PENDING and r.ask.timing != "immediate"
        if r.hold == "awaiting_consent":
            assert r.state is State.DELIVERED
        voters = [v.respondent_id for v in r.votes]
        assert len(voters) == len(set(voters)) and set(voters) <= set(r.offered_to)
        if r.state not in TERMINAL and r.deadline_at is not None:
            assert self.now < r.deadline_at
        assert (next_wake(r) is None) == (r.state in TERMINAL or (
            r.deadline_at is None and (r.offered_at is None or r.escalation_level >= len(r.routing.escalation))))
        doc = r.to_json()
        back = AskRecord.from_json(json.loads(json.dumps(doc)))
        assert back.to_json() == doc  # JSON is a fixpoint
        plain = r.with_authorization(None)  # the credential (and its copy in original) stay out of JSON
        assert back.with_authorization(None) == type(r)(**{**plain.__dict__, "ask": plain.ask.model_copy(
            update={"original": back.ask.original})})

    # --------------------------------------------------------------------------------------- rules

    @rule(dt=st.floats(0, 25))
    def tick(self, dt: float) -> None:
        self.now += timedelta(seconds=dt)
        self.step(Tick())

    @rule(who=WHO, move=MOVES, dt=st.floats(0, 10))
    def respond(self, who: Respondent, move: str, dt: float) -> None:
        self.now += timedelta(seconds=dt)
        answer, ok = self.answer_for(move)
        self.step(Respond(who, answer), shape_ok=ok)

    @rule(data=st.data(), move=MOVES, dt=st.floats(0, 10))
    def respond_as_offered(self, data: st.DataObject, move: str, dt: float) -> None:
        """Most answers in real life come from someone the ask was offered to."""
        assert self.record is not None
        if not self.record.offered_to:
            return
        rid = data.draw(st.sampled_from(self.record.offered_to))
        self.respond(self.record.routing.find(rid), move, dt)  # type: ignore[arg-type]

    @rule(data=st.data(), granted=st.booleans())
    def consent_as_offered(self, data: st.DataObject, granted: bool) -> None:
        assert self.record is not None
        if self.record.offered_to:
            self.step(ConsentReply(data.draw(st.sampled_from(self.record.offered_to)), granted))

    @rule(by=st.sampled_from(["principal:ci", "admin"]), roll=st.integers(0, 3))
    def withdraw(self, by: str, roll: int) -> None:
        if roll == 0:  # rarer than the other events, so that more runs reach an answer
            self.step(Withdraw(by))

    @rule(kind=st.sampled_from(["outcome_known", "task_complete", "release"]), dt=st.floats(0, 30))
    def signal(self, kind: str, dt: float) -> None:
        self.now += timedelta(seconds=dt)
        self.step(Signal(kind))  # type: ignore[arg-type]

    @rule(who=WHO, granted=st.booleans())
    def consent(self, who: Respondent, granted: bool) -> None:
        self.step(ConsentReply(who.id, granted))

    @rule(ids=st.lists(st.sampled_from([p.id for p in POOL + (STRANGER,)]), min_size=1, max_size=3))
    def offer(self, ids: list[str]) -> None:
        self.step(Offer(tuple(ids)))

    @rule(a=WHO, b=WHO, move_a=MOVES, move_b=MOVES)
    def race(self, a: Respondent, b: Respondent, move_a: str, move_b: str) -> None:
        """Two answers computed on the same version: the store lets one in, the other is re-applied."""
        old = self.record
        assert old is not None
        ans_a, ok_a = self.answer_for(move_a)
        ans_b, ok_b = self.answer_for(move_b)
        try:
            first = apply(old, Respond(a, ans_a), now=self.now, stored_consent=self.lookup)
            again = apply(old, Respond(a, ans_a), now=self.now, stored_consent=self.lookup)
            assert first == again  # deterministic reducer
        except LifecycleError:
            self.step(Respond(a, ans_a), shape_ok=ok_a)
            return
        self.step(Respond(a, ans_a), shape_ok=ok_a)
        self.step(Respond(b, ans_b), shape_ok=ok_b)  # the loser, re-applied on the winner's version

    @invariant()
    def chain_covers_every_version(self) -> None:
        if self.record is None:
            return
        versions = {e["ask_version"] for e in self.chain}
        assert versions == set(range(1, self.record.version + 1))


LifecycleMachine.TestCase.settings = settings(
    max_examples=examples(400),
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestLifecycleStateful = LifecycleMachine.TestCase
