"""The ask record: everything the lifecycle knows about one ask, and its JSON form for the store.

Kept apart from the reducer (``lifecycle.py``) so the stored shape can be read in one place.
``to_json`` never contains ``ask.delivery.authorization`` (the store keeps that credential apart and
re-attaches it with :meth:`AskRecord.with_authorization`), and any copy of it inside ``ask.original`` is
replaced by ``"<redacted>"``. Answers carry a ``value_kind`` tag so an ACS decision and a form whose
field happens to be called ``decision`` never get confused on the way back.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import SecretStr

from .consent import ConsentState
from .memo import IdentityMemo
from .model import Answer, ApprovalDecision, Ask
from .routing import Routing, routing_json
from .timefmt import iso_z

__all__ = ["TERMINAL", "AskRecord", "ConsentStatus", "Hold", "State", "Vote", "answer_to_json", "evolve", "iso"]


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
        return {
            "id": self.id,
            "ask": _ask_json(self.ask),
            "routing": routing_json(self.routing),
            "state": self.state.value,
            "version": self.version,
            "created_at": iso(self.created_at),
            "deadline_at": iso(self.deadline_at),
            "hold": self.hold,
            "offered_to": list(self.offered_to),
            "votes": [
                {"respondent_id": v.respondent_id, "answer": answer_to_json(v.answer), "at": iso(v.at),
                 "kind": v.kind}
                for v in self.votes
            ],
            "answer": answer_to_json(self.answer) if self.answer is not None else None,
            "signals": list(self.signals),
            "offered_at": iso(self.offered_at),
            "escalation_level": self.escalation_level,
            "consents": [{"respondent_id": c.respondent_id, "status": c.status} for c in self.consents],
            "settled_at": iso(self.settled_at),
            "settled_by": self.settled_by,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AskRecord:
        return cls(
            id=d["id"],
            ask=Ask.model_validate(d["ask"]),
            routing=Routing.from_json(d["routing"]),
            state=State(d["state"]),
            version=int(d["version"]),
            created_at=_parse_dt(d["created_at"]),  # type: ignore[arg-type]
            deadline_at=_parse_dt(d.get("deadline_at")),
            hold=d.get("hold"),
            offered_to=tuple(d.get("offered_to", ())),
            votes=tuple(
                Vote(v["respondent_id"], _answer_from_json(v["answer"]), _parse_dt(v["at"]),  # type: ignore[arg-type]
                     v.get("kind", "answer"))
                for v in d.get("votes", ())
            ),
            answer=_answer_from_json(d["answer"]) if d.get("answer") is not None else None,
            signals=tuple(d.get("signals", ())),
            offered_at=_parse_dt(d.get("offered_at")),
            escalation_level=int(d.get("escalation_level", 0)),
            consents=tuple(ConsentStatus(c["respondent_id"], c["status"]) for c in d.get("consents", ())),
            settled_at=_parse_dt(d.get("settled_at")),
            settled_by=d.get("settled_by"),
        )

    def with_authorization(self, authorization: str | None) -> AskRecord:
        """Re-attach the delivery credential the store kept apart (not a state change: same version)."""
        secret = SecretStr(authorization) if authorization is not None else None
        delivery = self.ask.delivery.model_copy(update={"authorization": secret})
        return replace(self, ask=self.ask.model_copy(update={"delivery": delivery}))


_RECORD_FIELDS = frozenset(f.name for f in fields(AskRecord))


def evolve(record: AskRecord, **changes: Any) -> AskRecord:
    """``dataclasses.replace(record, **changes)`` without its per-call field introspection and ``__init__``
    (the lifecycle makes several per step). AskRecord has no ``__post_init__``, no ``init=False`` field and
    no default factory, so a copy of its attributes with the changes is exactly what ``replace`` builds."""
    if not changes.keys() <= _RECORD_FIELDS:
        raise TypeError(f"AskRecord has no field(s) {sorted(set(changes) - _RECORD_FIELDS)}")
    new = object.__new__(AskRecord)
    attrs = new.__dict__  # frozen blocks attribute assignment, not the instance's own dict
    attrs.update(record.__dict__)
    attrs.update(changes)
    return new


def iso(value: datetime | None) -> str | None:
    return None if value is None else iso_z(value)


def _parse_dt(value: str | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(value)  # Python >= 3.11 reads "Z"


REDACTED = "<redacted>"


def _dump_ask(ask: Ask) -> dict[str, Any]:
    data = ask.model_dump(mode="json", exclude={"delivery": {"authorization"}})
    if ask.delivery.authorization is not None:
        data["original"] = _redact(data.get("original"), ask.delivery.authorization.get_secret_value())
    return data


# The ask's JSON, made once per Ask object (frozen; its record is rewritten at every step); shared between
# the records of one ask, read-only as every record dict is.
_ask_json: IdentityMemo[Ask, dict[str, Any]] = IdentityMemo(_dump_ask)


def _redact(value: Any, secret: str) -> Any:
    if isinstance(value, str):
        return REDACTED if secret and secret in value else value
    if isinstance(value, dict):
        return {k: _redact(v, secret) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, secret) for v in value]
    return value


def answer_to_json(answer: Answer) -> dict[str, Any]:
    """An answer as JSON, tagging the value's kind (a form may have a field called ``decision``)."""
    data = answer.model_dump(mode="json", exclude_none=True)
    if isinstance(answer.value, ApprovalDecision):
        data["value_kind"] = "approval"
    return data


def _answer_from_json(data: dict[str, Any]) -> Answer:
    data = dict(data)
    kind = data.pop("value_kind", None)
    raw = data.pop("value", None)
    value: Any
    if kind == "approval":
        value = ApprovalDecision.model_validate(raw)
    elif isinstance(raw, dict):
        value = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    else:
        value = raw
    return Answer.model_validate(data).model_copy(update={"value": value})
