"""The pure lifecycle of an ask: one record, events in, a new record plus audit events and effects out.

Nothing here reads a clock or touches storage: ``now`` and the consent store (``stored_consent``) are
arguments, and every side effect (notify a respondent, deliver an outcome, remember consent, extend an
ACS session intent, wake me at ...) is returned as data for the broker to run after it has saved the
record. That is what lets the broker persist a transition atomically and replay deadlines after a crash.

States (``State``): ``pending`` (accepted, offered to nobody yet: held by AQP timing, or no respondent
yet), ``delivered`` (offered to at least one respondent, possibly still awaiting their consent), and the
terminal ``answered``, ``declined``, ``cancelled``, ``timed_out``, ``expired``, ``withdrawn``. AQP's
``held`` and ``awaiting_consent`` are the ``hold`` sub-status of ``pending`` / ``delivered``.

Additions to the contract in broker-interface.md (all additive):

* ``AskRecord`` also carries ``offered_at`` (escalation clock), ``escalation_level``, ``consents``
  (per-respondent consent status), ``settled_at`` and ``settled_by``.
* ``open_ask`` takes an optional ``timeout_seconds``: a caller's own timeout, counted from ``now``.
* ``Notify`` carries the respondent ids and whether it is an offer or a consent request.
* ``LifecycleError`` carries ``transition``: when an event arrives after a deadline or escalation fell
  due, the lifecycle first settles what was due; if the event is then refused, ``error.transition``
  holds that settlement, which the caller must still save. It also carries ``audit``: the refusal as
  an audit event (an answer from a non-offered respondent is audited even though nothing changes).
* ``record.answer`` is set only in state ``answered`` and for an ACS ask settled by its timeout
  disposition (``state == timed_out``, ``answer.value.decided_by == "timeout"``). Use
  :func:`final_answer` for the dialect-neutral outcome of any terminal record.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Callable, Literal, Union

from .model import Answer, ApprovalDecision, Ask, Capability, Respondent
from .routing import EscalationStep, Routing

__all__ = [
    "State", "TERMINAL", "Hold", "Vote", "ConsentStatus", "AskRecord",
    "Offer", "Respond", "Withdraw", "Signal", "Tick", "ConsentReply", "Event",
    "Notify", "Deliver", "RememberConsent", "ExtendIntent", "ScheduleWake", "Effect",
    "AuditEvent", "Transition", "LifecycleError", "StoredConsent",
    "open_ask", "apply", "next_wake", "final_answer", "is_terminal",
    "Routing", "EscalationStep",
]


class State(StrEnum):
    PENDING = "pending"
    DELIVERED = "delivered"
    ANSWERED = "answered"
    DECLINED = "declined"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    EXPIRED = "expired"
    WITHDRAWN = "withdrawn"


TERMINAL: frozenset[State] = frozenset(
    {State.ANSWERED, State.DECLINED, State.CANCELLED, State.TIMED_OUT, State.EXPIRED, State.WITHDRAWN}
)

Hold = Literal["held", "awaiting_consent"]
ConsentState = Literal["not_required", "pending", "granted_now", "stored_grant", "refused"]
StoredConsent = Callable[[str, str], "bool | None"]


def _no_stored_consent(respondent_id: str, scope: str) -> bool | None:
    return None


@dataclass(frozen=True)
class Vote:
    """One respondent's answer (or consent refusal, which counts as a decline) as recorded."""

    respondent_id: str
    answer: Answer
    at: datetime
    kind: Literal["answer", "consent_refusal"] = "answer"


@dataclass(frozen=True)
class ConsentStatus:
    """Where one offered respondent stands on AQP consent."""

    respondent_id: str
    status: ConsentState


@dataclass(frozen=True)
class AskRecord:
    """Everything the lifecycle needs to know about one ask. JSON round-trips via to_json/from_json.

    ``to_json`` never contains ``ask.delivery.authorization`` (the store keeps that credential apart and
    re-attaches it with :meth:`with_authorization`), and any copy of it inside ``ask.original`` is
    replaced by ``"<redacted>"``.
    """

    id: str
    ask: Ask
    routing: Routing
    state: State
    version: int
    created_at: datetime
    deadline_at: datetime | None = None
    hold: Hold | None = None
    offered_to: tuple[str, ...] = ()
    votes: tuple[Vote, ...] = ()
    answer: Answer | None = None
    signals: tuple[str, ...] = ()
    offered_at: datetime | None = None
    escalation_level: int = 0
    consents: tuple[ConsentStatus, ...] = ()
    settled_at: datetime | None = None
    settled_by: str | None = None  # "respondent" | "asker" | "deadline" | "escalation" | "consent"

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL

    def consent_of(self, respondent_id: str) -> ConsentState | None:
        for c in self.consents:
            if c.respondent_id == respondent_id:
                return c.status
        return None

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AskRecord:
        raise NotImplementedError

    def with_authorization(self, authorization: str | None) -> AskRecord:
        """Re-attach the delivery credential the store kept apart (not a state change: same version)."""
        raise NotImplementedError


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


Event = Union[Offer, Respond, Withdraw, Signal, Tick, ConsentReply]


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


Effect = Union[Notify, Deliver, RememberConsent, ExtendIntent, ScheduleWake]


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
    """Accept ``ask``: compute its deadline, hold it or offer it (asking consent as needed). Version 1."""
    raise NotImplementedError


def apply(
    record: AskRecord,
    event: Event,
    *,
    now: datetime,
    stored_consent: StoredConsent = _no_stored_consent,
) -> Transition:
    """Apply one event at ``now``; settles anything due first. Raises :class:`LifecycleError`."""
    raise NotImplementedError


def next_wake(record: AskRecord) -> datetime | None:
    """The earliest moment a :class:`Tick` would change this record (deadline or escalation), or None."""
    raise NotImplementedError


def final_answer(record: AskRecord) -> Answer | None:
    """The dialect-neutral outcome of a terminal record (None while it is open).

    answered -> the answer; declined -> outcome ``decline``; cancelled / withdrawn -> ``cancel``;
    expired -> ``expired``; timed_out -> the ACS timeout decision, else outcome ``timed_out``. Codecs map
    it onto the wire (elicitation sends ``cancel`` for ``timed_out``, AQP ``cancelled`` for withdrawn).
    A consent refusal and an explicit decline give the same answer: the asker cannot tell them apart.
    """
    raise NotImplementedError
