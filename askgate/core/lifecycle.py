"""The pure lifecycle of an ask: one record, events in, a new record plus audit events and effects out.

Nothing here reads a clock or touches storage: ``now`` and the consent store (``stored_consent``) are
arguments, and every side effect (notify a respondent, deliver an outcome, remember consent, extend an
ACS session intent, wake me at ...) is returned as data for the broker to run after it has saved the
record. That is what lets the broker persist a transition atomically and replay deadlines after a crash.

States (``State``): ``pending`` (accepted, offered to nobody yet: held by AQP timing, or no respondent
yet), ``delivered`` (offered to at least one respondent, possibly still awaiting their consent), and the
terminal ``answered``, ``declined``, ``cancelled``, ``timed_out``, ``expired``, ``withdrawn``. AQP's
``held`` and ``awaiting_consent`` are the ``hold`` sub-status of ``pending`` / ``delivered``.

Neighbours: ``record.py`` (``AskRecord``, ``State`` and their JSON form), ``routing.py`` (``Routing``,
vote combination), ``consent.py`` (AQP consent statuses), ``audit_data.py`` (what an audit event may
hold), ``audit.py`` (the hash chain). The record types are re-exported here, as the contract names them.

Additions to the contract in broker-interface.md (all additive):

* ``AskRecord`` also carries ``offered_at`` (escalation clock), ``escalation_level``, ``consents``
  (per-respondent consent status), ``settled_at`` and ``settled_by``.
* ``open_ask`` takes an optional ``timeout_seconds``: a caller's own timeout, counted from ``now``.
* ``Notify`` carries the respondent ids and whether it is an offer or a consent request.
* ``LifecycleError`` carries ``transition``: when an event arrives after a deadline or escalation fell
  due, the lifecycle first settles what was due; if the event is then refused, ``error.transition``
  holds that settlement, which the caller must still save. It also carries ``audit``: the refusal as
  an audit event (an answer from a non-offered respondent is audited even though nothing changes).
* An approver's grant may accept or narrow the proposed ``intent_extension``, never widen it
  (protocols.md §4.5); a wider one is ``invalid``. ``quorum`` may not exceed the reachable respondents.
* ``past_expiry(record, now)``: from the deadline on, an AQP outcome is never released.
* ``record.answer`` is set only in state ``answered`` and for an ACS ask settled by its timeout
  disposition (``state == timed_out``, ``answer.value.decided_by == "timeout"``). Use
  :func:`final_answer` for the dialect-neutral outcome of any terminal record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from . import consent as consent_rules
from .audit_data import ask_summary, ijson
from .consent import ConsentState
from .model import Answer, ApprovalDecision, ApprovalSpec, Ask, Capability, IntentExtension, Respondent
from .record import TERMINAL, AskRecord, ConsentStatus, Hold, State, Vote, evolve
from .routing import EscalationStep, Routing, decide

__all__ = [
    "TERMINAL",
    "AskRecord",
    "AuditEvent",
    "ConsentReply",
    "ConsentStatus",
    "Deliver",
    "Effect",
    "EscalationStep",
    "Event",
    "ExtendIntent",
    "Hold",
    "LifecycleError",
    "Notify",
    "Offer",
    "RememberConsent",
    "Respond",
    "Routing",
    "ScheduleWake",
    "Signal",
    "State",
    "StoredConsent",
    "Tick",
    "Transition",
    "Vote",
    "Withdraw",
    "apply",
    "final_answer",
    "is_terminal",
    "next_wake",
    "open_ask",
    "past_expiry",
]


StoredConsent = Callable[[str, str], "bool | None"]


def _no_stored_consent(respondent_id: str, scope: str) -> bool | None:
    return None


# ------------------------------------------------------------------------------------------------ events


@dataclass(frozen=True)
class Offer:
    """Offer the ask now to these respondents (ids known to the routing). Not allowed while held."""

    respondent_ids: tuple[str, ...]


@dataclass(frozen=True)
class Respond:
    """An answer from ``respondent`` (already authenticated and validated against the spec by a codec)."""

    respondent: Respondent
    answer: Answer


@dataclass(frozen=True)
class Withdraw:
    """The asker withdraws the ask (AQP shows it as ``cancelled``)."""

    by: str


@dataclass(frozen=True)
class Signal:
    """An AQP timing signal; one that does not apply is a no-op."""

    kind: Literal["outcome_known", "task_complete", "release"]


@dataclass(frozen=True)
class Tick:
    """Settle whatever is due at ``now``: the deadline and escalation steps."""


@dataclass(frozen=True)
class ConsentReply:
    """A respondent's reply to a consent request."""

    respondent_id: str
    granted: bool


Event = Offer | Respond | Withdraw | Signal | Tick | ConsentReply


# ----------------------------------------------------------------------------------------------- effects


@dataclass(frozen=True)
class Notify:
    """Tell these respondents about the ask: ``offer`` shows it; ``consent`` asks for consent first."""

    ask_id: str
    respondent_ids: tuple[str, ...] = ()
    kind: Literal["offer", "consent"] = "offer"


@dataclass(frozen=True)
class Deliver:
    """The ask is terminal: wake waiters and push the outcome (:func:`final_answer`) to the asker."""

    ask_id: str


@dataclass(frozen=True)
class RememberConsent:
    """Store an AQP ``ask_once`` decision for (respondent id, consent scope) until revoked."""

    respondent_id: str
    scope: str
    granted: bool


@dataclass(frozen=True)
class ExtendIntent:
    """Append capabilities to an ACS session's intent (an approver's ``scope: session`` grant)."""

    session_id: str
    capabilities: tuple[Capability, ...]


@dataclass(frozen=True)
class ScheduleWake:
    """Apply :class:`Tick` to this ask at ``at`` (the earliest deadline or escalation step)."""

    ask_id: str
    at: datetime


Effect = Notify | Deliver | RememberConsent | ExtendIntent | ScheduleWake


@dataclass(frozen=True)
class AuditEvent:
    """A dialect-neutral audit event; the broker turns it into chain entries (askgate.core.audit).

    ``step_type`` is one of ``ask``, ``offer``, ``consent``, ``signal``, ``escalation``, ``answer``,
    ``vote``, ``withdraw``, ``timeout``, ``intent_extension``, ``refused``. ``data`` is JSON (I-JSON) and
    never holds a credential. ``step_id`` / ``entry_id`` are set when the entry must carry specific ids
    (an ACS ``intent_extension`` entry: the ASK's ``step_id`` and ``<request_id>/intent_extension``);
    otherwise the broker chooses them. ``version`` is the record version this event produced.
    """

    ask_id: str
    step_type: str
    at: datetime
    version: int
    data: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    step_id: str | None = None
    entry_id: str | None = None
    request_hash: str | None = None


@dataclass(frozen=True)
class Transition:
    """The new record (version + 1 when anything changed), its audit events and effects."""

    record: AskRecord
    audit: tuple[AuditEvent, ...] = ()
    effects: tuple[Effect, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.audit)


class LifecycleError(Exception):
    """An event the lifecycle refuses.

    ``code``: ``conflict`` (the ask is terminal or the respondent already voted; ``outcome`` is the
    winning :func:`final_answer`), ``forbidden`` (not offered, or consent not granted), ``invalid`` (an
    event that makes no sense for this ask). ``transition``: a settlement of due deadlines/escalations
    made before the refusal, which the caller must still save (else None). ``audit``: the refusal as an
    audit event the caller should append to the chain.
    """

    def __init__(
        self,
        code: Literal["conflict", "forbidden", "invalid"],
        message: str,
        *,
        outcome: Answer | None = None,
        state: State | None = None,
        transition: Transition | None = None,
        audit: AuditEvent | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.outcome = outcome
        self.state = state
        self.transition = transition
        self.audit = audit


# ------------------------------------------------------------------------------------------------- API


def is_terminal(record: AskRecord) -> bool:
    return record.state in TERMINAL


def open_ask(
    ask: Ask,
    *,
    ask_id: str,
    routing: Routing,
    now: datetime,
    stored_consent: StoredConsent = _no_stored_consent,
    timeout_seconds: float | None = None,
) -> Transition:
    """Accept ``ask`` at ``now``: compute its deadline, then hold it (AQP timing) or offer it at once
    to ``routing.respondents`` (asking consent first as needed). The record starts at version 1.

    ``timeout_seconds`` is a caller's own timeout (e.g. an elicitation's waiting client), counted from
    ``now``; the deadline is the earliest of it, ``ask.deadline.timeout_seconds`` from ``now`` and
    ``ask.deadline.expires_at``. An ask already past its deadline settles at once.
    """
    _require_aware(now, "now")
    if ask.consent.mode == "ask_once" and not ask.consent.scope:
        raise LifecycleError("invalid", "consent mode ask_once needs a consent scope")
    if timeout_seconds is not None and not timeout_seconds > 0:
        raise LifecycleError("invalid", "a caller's timeout must be a positive number of seconds")
    deadline = _deadline(ask, now, timeout_seconds)
    held = ask.timing != "immediate"
    record = AskRecord(
        id=ask_id, ask=ask, routing=routing, state=State.PENDING, version=0, created_at=now,
        deadline_at=deadline, hold="held" if held else None,
    )
    d = _Draft(record, now, stored_consent)
    d.log("ask", ask_summary(ask, routing, deadline))
    if deadline is not None and now >= deadline:
        _settle_by_deadline(d, by="deadline")
    elif not held:
        _offer(d, routing.respondents)
    return d.finish(None)


def apply(
    record: AskRecord,
    event: Event,
    *,
    now: datetime,
    stored_consent: StoredConsent = _no_stored_consent,
) -> Transition:
    """Apply one event at ``now`` and return the transition (unchanged record, no audit: a no-op).

    Anything due at ``now`` (escalation steps, then the deadline) is settled first, so an event never
    acts on an ask that should already have ended, and a held ask is never offered after its expiry.
    Raises :class:`LifecycleError`; its ``transition`` then holds that settlement, to be saved anyway.
    """
    _require_aware(now, "now")
    d = _Draft(record, now, stored_consent)
    _settle_due(d)
    try:
        _dispatch(d, event)
    except LifecycleError as exc:
        exc.transition = d.finish(record) if d.audit else None
        if exc.audit is None:
            exc.audit = AuditEvent(
                ask_id=record.id, step_type="refused", at=now,
                version=exc.transition.record.version if exc.transition else record.version,
                data={"event": type(event).__name__, "code": exc.code, "reason": exc.message,
                      **_event_actor(event)},
                session_id=record.ask.session_id, request_hash=_request_hash(record.ask),
            )
        raise
    return d.finish(record)


def next_wake(record: AskRecord) -> datetime | None:
    """The earliest moment a :class:`Tick` would change this record (deadline or escalation), or None."""
    if record.state in TERMINAL:
        return None
    candidates = [t for t in (record.deadline_at, _next_escalation_at(record)) if t is not None]
    return min(candidates) if candidates else None


def past_expiry(record: AskRecord, now: datetime) -> bool:
    """Whether ``now`` is at or past the ask's deadline: from then on an AQP outcome is never released,
    not even an answer recorded earlier but not yet pushed (protocols.md §3.4 "Expiry")."""
    return record.deadline_at is not None and now >= record.deadline_at


def final_answer(record: AskRecord) -> Answer | None:
    """The dialect-neutral outcome of a terminal record (None while it is open).

    answered -> the answer; declined -> outcome ``decline``; cancelled / withdrawn -> ``cancel``
    (withdrawn with reason ``withdrawn``); expired -> ``expired``; timed_out -> the ACS timeout decision,
    else outcome ``timed_out``. Codecs map it onto the wire (elicitation sends ``cancel`` for
    ``timed_out``, AQP ``cancelled`` for withdrawn). A consent refusal and an explicit decline give the
    same answer, with no reason: the asker cannot tell them apart.
    """
    state = record.state
    if state not in TERMINAL:
        return None
    if record.answer is not None:
        return record.answer
    at = record.settled_at
    last = record.votes[-1] if record.votes else None
    who = last.answer.respondent if last is not None else None
    if state is State.DECLINED:
        return Answer(outcome="decline", respondent=who, answered_at=at)
    if state is State.CANCELLED:
        return Answer(outcome="cancel", respondent=who, answered_at=at)
    if state is State.WITHDRAWN:
        return Answer(outcome="cancel", answered_at=at, reason="withdrawn")
    if state is State.EXPIRED:
        return Answer(outcome="expired", answered_at=at)
    return Answer(outcome="timed_out", answered_at=at)


# ------------------------------------------------------------------------------------------- internals


class _Draft:
    """A record being changed by one apply(): collects audit events and effects, then finishes once."""

    def __init__(self, record: AskRecord, now: datetime, stored_consent: StoredConsent) -> None:
        self.record = record
        self.now = now
        self.stored_consent = stored_consent
        self.audit: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.effects: list[Effect] = []

    def set(self, **changes: Any) -> None:
        self.record = evolve(self.record, **changes)

    def log(self, step_type: str, data: dict[str, Any], **ids: str) -> None:
        self.audit.append((step_type, ijson(data), ids))

    def finish(self, old: AskRecord | None) -> Transition:
        if not self.audit:
            assert old is not None
            return Transition(old)
        version = (old.version if old is not None else 0) + 1
        rec = evolve(self.record, version=version)
        session, rhash = rec.ask.session_id, _request_hash(rec.ask)
        events = tuple(
            AuditEvent(ask_id=rec.id, step_type=step, at=self.now, version=version, data=data,
                       session_id=session, request_hash=rhash, **ids)
            for step, data, ids in self.audit
        )
        effects = list(self.effects)
        if rec.state in TERMINAL:  # e.g. an escalation offer settled by the same apply: nobody to notify
            effects = [e for e in effects if not isinstance(e, Notify)]
        wake = next_wake(rec)
        if wake is not None and (old is None or wake != next_wake(old)):
            effects.append(ScheduleWake(rec.id, wake))
        return Transition(rec, events, tuple(effects))


def _dispatch(d: _Draft, event: Event) -> None:
    r = d.record
    if isinstance(event, Tick):
        return  # _settle_due already did the work
    if isinstance(event, Signal):
        _signal(d, event)
        return
    if r.state in TERMINAL:
        raise LifecycleError(
            "conflict", f"the ask is already {r.state.value}", outcome=final_answer(r), state=r.state
        )
    if isinstance(event, Respond):
        _respond(d, event)
    elif isinstance(event, Withdraw):
        d.log("withdraw", {"by": event.by})
        _settle(d, State.WITHDRAWN, None, by="asker")
    elif isinstance(event, ConsentReply):
        _consent_reply(d, event)
    elif isinstance(event, Offer):
        _offer_event(d, event)
    else:
        raise LifecycleError("invalid", f"unknown event {type(event).__name__}")


def _settle_due(d: _Draft) -> None:
    """Apply escalation steps that fell due before the deadline, then the deadline itself."""
    steps = d.record.routing.escalation
    while d.record.state not in TERMINAL:
        at = _next_escalation_at(d.record)
        if at is None or at > d.now or (d.record.deadline_at is not None and at >= d.record.deadline_at):
            break
        level = d.record.escalation_level
        step = steps[level]
        d.set(escalation_level=level + 1)
        if not step.respondents:
            d.log("escalation", {"level": level + 1, "end": True})
            _settle_by_deadline(d, by="escalation")
        else:
            d.log("escalation", {"level": level + 1, "respondents": [x.id for x in step.respondents]})
            _offer(d, step.respondents)
    r = d.record
    if r.state not in TERMINAL and r.deadline_at is not None and d.now >= r.deadline_at:
        _settle_by_deadline(d, by="deadline")


def _next_escalation_at(record: AskRecord) -> datetime | None:
    steps = record.routing.escalation
    if record.offered_at is None or record.escalation_level >= len(steps):
        return None
    return record.offered_at + timedelta(seconds=steps[record.escalation_level].after_seconds)


def _signal(d: _Draft, event: Signal) -> None:
    r = d.record
    if event.kind not in _RELEASES:
        raise LifecycleError("invalid", f"unknown signal {event.kind!r}")
    if r.state is not State.PENDING or r.hold != "held" or r.ask.timing not in _RELEASES[event.kind]:
        return  # a signal that does not apply is a no-op (protocols.md §3.4)
    d.set(hold=None, signals=r.signals + (event.kind,))
    d.log("signal", {"signal": event.kind, "timing": r.ask.timing})
    _offer(d, r.routing.respondents)


_RELEASES: dict[str, frozenset[str]] = {
    "outcome_known": frozenset({"after_outcome_known"}),
    "task_complete": frozenset({"after_outcome_known", "after_task_complete"}),
    "release": frozenset({"after_outcome_known", "after_task_complete", "deferred"}),
}


def _offer_event(d: _Draft, event: Offer) -> None:
    r = d.record
    if r.hold == "held":
        raise LifecycleError("invalid", "the ask is held until its timing signal or a release")
    found: list[Respondent] = []
    for rid in event.respondent_ids:
        resp = r.routing.find(rid)
        if resp is None:
            raise LifecycleError("invalid", f"respondent {rid!r} is not in the ask's routing")
        found.append(resp)
    _offer(d, tuple(found))


def _offer(d: _Draft, respondents: tuple[Respondent, ...]) -> None:
    """Offer to respondents not yet offered: consent lookup, stored refusals, notifications."""
    r = d.record
    new: list[Respondent] = []
    for x in respondents:
        if x.id not in r.offered_to and all(y.id != x.id for y in new):
            new.append(x)
    if not new:
        return
    statuses = [ConsentStatus(x.id, consent_rules.initial_status(r.ask.consent, x.id, d.stored_consent))
                for x in new]
    d.set(
        state=State.DELIVERED,
        hold=None,
        offered_to=r.offered_to + tuple(x.id for x in new),
        offered_at=r.offered_at or d.now,
        consents=r.consents + tuple(statuses),
    )
    d.log("offer", {"respondents": [x.id for x in new],
                    "consent": {s.respondent_id: s.status for s in statuses}
                    if r.ask.consent.mode != "not_required" else None})
    for resp, st in zip(new, statuses):
        if st.status == "refused":
            d.log("consent", {"respondent": resp.id, "granted": False, "basis": "stored"})
            _refusal_vote(d, resp)
            if d.record.state in TERMINAL:
                return
    ready = tuple(s.respondent_id for s in statuses if s.status in consent_rules.ANSWERABLE)
    asking = tuple(s.respondent_id for s in statuses if s.status == "pending")
    for s in statuses:
        if s.status == "stored_grant":
            d.log("consent", {"respondent": s.respondent_id, "granted": True, "basis": "stored"})
    if ready:
        d.effects.append(Notify(r.id, ready, "offer"))
    if asking:
        d.effects.append(Notify(r.id, asking, "consent"))
    _recompute_hold(d)


def _recompute_hold(d: _Draft) -> None:
    r = d.record
    if r.state in TERMINAL:
        hold = None
    elif r.state is State.PENDING:
        hold = r.hold
    else:
        statuses = [c.status for c in r.consents if c.respondent_id in r.offered_to]
        waiting = any(s == "pending" for s in statuses)
        able = any(s in consent_rules.ANSWERABLE for s in statuses)
        hold = "awaiting_consent" if waiting and not able else None
    if hold != r.hold:
        d.set(hold=hold)


def _consent_reply(d: _Draft, event: ConsentReply) -> None:
    r = d.record
    rid = event.respondent_id
    if rid not in r.offered_to:
        raise LifecycleError("forbidden", f"the ask was not offered to {rid!r}")
    status = r.consent_of(rid)
    if status != "pending":
        raise LifecycleError("conflict", f"no consent is awaited from {rid!r} (status {status})", state=r.state)
    new_status: ConsentState = "granted_now" if event.granted else "refused"
    d.set(consents=tuple(ConsentStatus(c.respondent_id, new_status) if c.respondent_id == rid else c
                         for c in r.consents))
    d.log("consent", {"respondent": rid, "granted": event.granted, "basis": "asked",
                      "remembered": consent_rules.remembers(r.ask.consent)})
    if consent_rules.remembers(r.ask.consent):
        d.effects.append(RememberConsent(rid, r.ask.consent.scope or "", event.granted))
    if event.granted:
        d.effects.append(Notify(r.id, (rid,), "offer"))
    else:
        resp = r.routing.find(rid) or Respondent(kind="human", id=rid)
        _refusal_vote(d, resp)
    _recompute_hold(d)


def _refusal_vote(d: _Draft, respondent: Respondent) -> None:
    """A consent refusal counts as that respondent's decline (indistinguishable to the asker)."""
    answer = Answer(outcome="decline", respondent=respondent, answered_at=d.now)
    vote = Vote(respondent.id, answer, d.now, "consent_refusal")
    d.set(votes=d.record.votes + (vote,))
    _combine(d, vote, refusal=True)


def _respond(d: _Draft, event: Respond) -> None:
    r = d.record
    rid = event.respondent.id
    if rid not in r.offered_to:
        raise LifecycleError("forbidden", f"the ask was not offered to {rid!r}", state=r.state)
    status = r.consent_of(rid)
    if status not in consent_rules.ANSWERABLE:
        raise LifecycleError("forbidden", f"{rid!r} has not consented to see this ask", state=r.state)
    if any(v.respondent_id == rid for v in r.votes):
        raise LifecycleError("conflict", f"{rid!r} has already answered", state=r.state)
    _check_answer(r.ask, event.answer)
    answer = event.answer.model_copy(update={
        "respondent": event.respondent,
        "answered_at": d.now,  # when askgate recorded it, whatever the respondent claims
        "consent_basis": consent_rules.basis(status) if event.answer.outcome == "accept" else None,
    })
    vote = Vote(rid, answer, d.now, "answer")
    d.set(votes=r.votes + (vote,))
    _combine(d, vote, refusal=False)


def _check_answer(ask: Ask, answer: Answer) -> None:
    """Refuse what no respondent may say; the codecs have already checked the value against the spec."""
    if answer.outcome not in ("accept", "decline", "cancel"):
        raise LifecycleError("invalid", f"a respondent cannot answer with outcome {answer.outcome!r}")
    value = answer.value
    if isinstance(ask.spec, ApprovalSpec):
        if answer.outcome != "accept" or not isinstance(value, ApprovalDecision):
            raise LifecycleError("invalid", "an approver may answer only allow or deny")
        if value.decision not in ("allow", "deny"):
            raise LifecycleError("invalid", "an approver may answer only allow or deny")
        if value.decided_by != "approver":
            raise LifecycleError("invalid", "only the timeout produces a decision decided_by 'timeout'")
        if value.intent_extension is not None:
            if value.decision != "allow":
                raise LifecycleError("invalid", "an intent extension comes only with allow")
            _check_grant(ask.spec, value.intent_extension)
    elif isinstance(value, ApprovalDecision):
        raise LifecycleError("invalid", "an allow/deny decision answers only an approval")


def _check_grant(spec: ApprovalSpec, grant: IntentExtension) -> None:
    """An approver may accept or narrow the proposal (fewer capabilities, session -> this_request),
    never widen it (protocols.md §4.5): no proposal means nothing may be granted."""
    proposal = spec.intent_extension
    if proposal is None:
        raise LifecycleError("invalid", "the ask proposed no intent extension, so none can be granted")
    if grant.scope == "session" and proposal.scope != "session":
        raise LifecycleError("invalid", "a this_request proposal cannot be granted for the whole session")
    wider = [c for c in grant.capabilities if c not in proposal.capabilities]
    if wider:
        raise LifecycleError("invalid", "the grant names capabilities the proposal did not")


def _combine(d: _Draft, vote: Vote, *, refusal: bool) -> None:
    r = d.record
    voted = {v.respondent_id for v in r.votes}
    refused = {c.respondent_id for c in r.consents if c.status == "refused"}
    candidates = {x.id for x in r.routing.everyone()} | set(r.offered_to)
    still_able = len(candidates - voted - refused)
    settles = decide(r.routing, [v.answer for v in r.votes], vote.answer, still_able, refusal=refusal)
    if vote.kind == "answer":
        d.log("answer" if settles else "vote", {"respondent": vote.respondent_id, "answer": vote.answer})
    if not settles:
        return
    state = {"accept": State.ANSWERED, "decline": State.DECLINED, "cancel": State.CANCELLED}[vote.answer.outcome]
    _settle(d, state, vote.answer if state is State.ANSWERED else None,
            by="consent" if refusal else "respondent")
    if state is State.ANSWERED:
        _intent_extension(d, vote)


def _intent_extension(d: _Draft, vote: Vote) -> None:
    r = d.record
    value = vote.answer.value
    if not isinstance(value, ApprovalDecision) or value.decision != "allow" or value.intent_extension is None:
        return
    ext = value.intent_extension
    if ext.scope != "session":
        return  # this_request: recorded in the answer's audit entry only (protocols.md §4.5)
    resp = vote.answer.respondent
    ids: dict[str, str] = {}
    step_id, request_id = r.ask.binding.get("step_id"), r.ask.binding.get("request_id")
    if isinstance(step_id, str):
        ids["step_id"] = step_id
    if isinstance(request_id, str):
        ids["entry_id"] = f"{request_id}/intent_extension"
    d.log("intent_extension", {
        "approver": {"type": resp.kind, "id": resp.id} if resp is not None else None,
        "intent_extension": ext,
        "session_id": r.ask.session_id,
    }, **ids)
    if r.ask.session_id is not None:
        d.effects.append(ExtendIntent(r.ask.session_id, ext.capabilities))


def _settle(d: _Draft, state: State, answer: Answer | None, *, by: str) -> None:
    d.set(state=state, answer=answer, hold=None, settled_at=d.now, settled_by=by)
    d.effects.append(Deliver(d.record.id))


def _settle_by_deadline(d: _Draft, *, by: str) -> None:
    """The disposition: an ACS decision by timeout, AQP expired, otherwise timed out (elicitation cancel)."""
    ask = d.record.ask
    on_timeout = ask.deadline.on_timeout
    if isinstance(ask.spec, ApprovalSpec):
        disposition = on_timeout if on_timeout in ("allow", "deny") else "deny"
        decision = ApprovalDecision(decision=disposition, decided_by="timeout")
        d.log("timeout", {"disposition": disposition, "decided_by": "timeout", "reason_code": "ask_timeout",
                          "fail_open": disposition == "allow", "by": by})
        _settle(d, State.TIMED_OUT, Answer(outcome="timed_out", value=decision, answered_at=d.now), by=by)
    elif on_timeout == "expire" or ask.dialect == "aqp":
        d.log("timeout", {"disposition": "expired", "by": by})
        _settle(d, State.EXPIRED, None, by=by)
    else:
        d.log("timeout", {"disposition": "cancel", "by": by})
        _settle(d, State.TIMED_OUT, None, by=by)


def _deadline(ask: Ask, now: datetime, caller_timeout: float | None) -> datetime | None:
    candidates: list[datetime] = []
    if ask.deadline.expires_at is not None:
        _require_aware(ask.deadline.expires_at, "deadline.expires_at")
        candidates.append(ask.deadline.expires_at)
    for seconds in (ask.deadline.timeout_seconds, caller_timeout):
        if seconds is not None:
            candidates.append(now + timedelta(seconds=seconds))
    return min(candidates) if candidates else None


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise LifecycleError("invalid", f"{name} must be a timezone-aware datetime")


def _request_hash(ask: Ask) -> str | None:
    value = ask.binding.get("request_hash") if ask.binding else None
    return value if isinstance(value, str) else None


def _event_actor(event: Event) -> dict[str, Any]:
    if isinstance(event, Respond):
        return {"respondent": event.respondent.id}
    if isinstance(event, ConsentReply):
        return {"respondent": event.respondent_id}
    if isinstance(event, Withdraw):
        return {"by": event.by}
    return {}
