"""Who may answer an ask, and how several answers combine into one outcome.

Kept apart from the state machine so the combination rules (first / all / quorum / deny_any) can be read
and tested on their own: :func:`decide` looks only at votes, never at time or storage.

Rules [ours; protocols.md leaves multi-respondent asks undefined, ACS defers quorum to v0.2]:

* ``first``    — the first answer (of any outcome) settles the ask.
* ``all``      — ``N`` approvals settle it as approved, where ``N`` is ``len(respondents)``; the first
  non-approval settles it at once (one refusal makes "all approve" impossible).
* ``quorum``   — ``quorum`` (M) approvals settle it as approved; a non-approval settles it only once M
  approvals have become impossible (approvals + respondents still able to vote < M).
* ``deny_any`` — any non-approval settles it at once; ``quorum`` approvals (default: all N) approve it.

An *approval* is an ``accept`` answer that is not an ACS ``deny``; decline, cancel, a consent refusal and
an ACS ``deny`` are non-approvals. Escalated respondents vote like the first ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .model import Answer, ApprovalDecision, Respondent
from .memo import IdentityMemo

Rule = Literal["first", "all", "quorum", "deny_any"]
RULES: tuple[str, ...] = ("first", "all", "quorum", "deny_any")


@dataclass(frozen=True)
class EscalationStep:
    """After ``after_seconds`` (counted from the first offer) with no outcome, offer to ``respondents``.

    A step with no respondents ends the ladder: the ask settles with its timeout disposition then.
    """

    after_seconds: float
    respondents: tuple[Respondent, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "after_seconds": self.after_seconds,
            "respondents": [r.model_dump(mode="json", exclude_none=True) for r in self.respondents],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> EscalationStep:
        return cls(
            after_seconds=float(d["after_seconds"]),
            respondents=tuple(Respondent.model_validate(r) for r in d.get("respondents", ())),
        )


@dataclass(frozen=True)
class Routing:
    """The respondents an ask is offered to first, the combination rule, and the escalation ladder."""

    respondents: tuple[Respondent, ...] = ()
    rule: Rule = "first"
    quorum: int | None = None
    escalation: tuple[EscalationStep, ...] = ()

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"unknown routing rule {self.rule!r}; expected one of {', '.join(RULES)}")
        if self.rule == "quorum" and (self.quorum is None or self.quorum < 1):
            raise ValueError("rule 'quorum' needs quorum >= 1")
        if self.quorum is not None and self.quorum < 1:
            raise ValueError("quorum must be >= 1")
        for step in self.escalation:
            if not step.after_seconds >= 0:
                raise ValueError("escalation after_seconds must be >= 0")
        ids = [r.id for r in self.everyone()]
        if len(ids) != len(set(ids)):
            raise ValueError("a respondent id appears more than once in the routing")
        if self.quorum is not None and self.rule in ("quorum", "deny_any") and self.quorum > len(ids):
            raise ValueError(f"quorum {self.quorum} exceeds the {len(ids)} respondents the routing can reach")

    @classmethod
    def single(cls, respondent: Respondent | None) -> Routing:
        """The common case: one respondent (or none yet), first answer wins."""
        return cls(respondents=(respondent,) if respondent is not None else ())

    def everyone(self) -> tuple[Respondent, ...]:
        """Every respondent the routing could ever offer the ask to, first ones then each step's."""
        out = list(self.respondents)
        for step in self.escalation:
            out.extend(step.respondents)
        return tuple(out)

    def find(self, respondent_id: str) -> Respondent | None:
        for r in self.everyone():
            if r.id == respondent_id:
                return r
        return None

    def required_approvals(self) -> int:
        """How many approvals settle the ask as approved under this rule."""
        if self.rule == "first":
            return 1
        if self.rule == "all":
            return max(1, len(self.respondents))
        if self.quorum is not None:
            return self.quorum
        return max(1, len(self.respondents))

    def to_json(self) -> dict[str, Any]:
        return {
            "respondents": [r.model_dump(mode="json", exclude_none=True) for r in self.respondents],
            "rule": self.rule,
            "quorum": self.quorum,
            "escalation": [s.to_json() for s in self.escalation],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Routing:
        return cls(
            respondents=tuple(Respondent.model_validate(r) for r in d.get("respondents", ())),
            rule=d.get("rule", "first"),
            quorum=d.get("quorum"),
            escalation=tuple(EscalationStep.from_json(s) for s in d.get("escalation", ())),
        )


routing_json: IdentityMemo[Routing, dict[str, Any]] = IdentityMemo(Routing.to_json)
"""``routing.to_json()``, made once per Routing object (frozen; an ask keeps its routing across its steps)."""


def is_approval(answer: Answer) -> bool:
    """An accept that is not an ACS deny."""
    if answer.outcome != "accept":
        return False
    if isinstance(answer.value, ApprovalDecision):
        return answer.value.decision == "allow"
    return True


def decide(routing: Routing, votes: list[Answer], latest: Answer, still_able: int, *, refusal: bool = False) -> bool:
    """Whether ``latest`` (already appended to ``votes``) settles the ask under ``routing.rule``.

    ``still_able`` counts respondents who have not voted and could still approve (offered or yet to be
    offered by escalation, and not refused consent). ``refusal`` marks a consent refusal: it is a
    non-approval, but under ``first`` it settles the ask only when nobody else can still answer (one
    respondent declining to see an ask is not the first *answer*). When this returns True, ``latest``
    is the outcome.
    """
    if routing.rule == "first":
        return still_able == 0 if refusal else True
    approvals = sum(1 for v in votes if is_approval(v))
    need = routing.required_approvals()
    if is_approval(latest):
        return approvals >= need
    if routing.rule in ("all", "deny_any"):
        return True
    return approvals + still_able < need  # quorum: settle only once approval is out of reach
