"""Builders shared by the lifecycle tests: asks of each dialect, respondents, a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from askgate.core.lifecycle import AskRecord, Routing, Transition, open_ask
from askgate.core.model import (
    Answer,
    ApprovalDecision,
    ApprovalSpec,
    Ask,
    Consent,
    Deadline,
    Delivery,
    Dialect,
    FormSpec,
    IntentExtension,
    Respondent,
    StringField,
    TextSpec,
)

T0 = datetime(2026, 8, 2, 10, 0, 0, tzinfo=UTC)
ALICE = Respondent(kind="human", id="user:alice")
BOB = Respondent(kind="human", id="user:bob")
CAROL = Respondent(kind="agent", id="agent:carol")
MALLORY = Respondent(kind="human", id="user:mallory")


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def acs_ask(*, timeout: float = 60, disposition: str | None = None, session: str | None = "sess-1",
            extension: IntentExtension | None = None) -> Ask:
    deadline = Deadline(timeout_seconds=timeout, on_timeout=disposition) if disposition else Deadline(
        timeout_seconds=timeout)
    return Ask(
        dialect=Dialect.ACS, purpose="approval", prompt="Run rm -rf build/?", spec=ApprovalSpec(
            options=(), intent_extension=extension),
        respondent=ALICE, deadline=deadline, session_id=session,
        binding={"step_id": "step-19", "request_id": "req-7", "request_hash": "ab" * 32, "agent_id": "agent-1"},
    )


def aqp_ask(*, expires_in: float = 600, timing: str = "immediate", consent: str = "not_required",
            scope: str | None = None, authorization: str | None = None,
            endpoint: str | None = None) -> Ask:
    original: dict[str, Any] = {"queryId": "q-1", "prompt": "How did it go?"}
    if authorization is not None:
        original["delivery"] = {"binding": "https", "endpoint": endpoint, "authorization": authorization}
    return Ask(
        dialect=Dialect.AQP, dialect_version="2026-07-30", external_id="q-1", purpose="feedback",
        prompt="How did it go?", spec=TextSpec(max_length=200),
        deadline=Deadline(expires_at=at(expires_in), on_timeout="expire"),
        consent=Consent(mode=consent, scope=scope), timing=timing,  # type: ignore[arg-type]
        delivery=Delivery(binding="https" if authorization else "other", endpoint=endpoint,
                          authorization=authorization),  # type: ignore[arg-type]
        asker="principal:ci", original=original,
    )


def form_ask(*, dialect: Dialect = Dialect.MCP_ELICITATION, timeout: float | None = None) -> Ask:
    return Ask(
        dialect=dialect, purpose="elicitation", prompt="Your name?",
        spec=FormSpec(fields=(StringField(name="name", required=True),)),
        deadline=Deadline(timeout_seconds=timeout) if timeout else Deadline(),
    )


def allow(**kw: Any) -> Answer:
    return Answer(outcome="accept", value=ApprovalDecision(decision="allow", **kw))


def deny(**kw: Any) -> Answer:
    return Answer(outcome="accept", value=ApprovalDecision(decision="deny", **kw))


def text(value: str = "fine") -> Answer:
    return Answer(outcome="accept", value=value)


def form(name: str = "Ada") -> Answer:
    return Answer(outcome="accept", value={"name": name})


DECLINE = Answer(outcome="decline")
CANCEL = Answer(outcome="cancel")


def opened(ask: Ask, *respondents: Respondent, rule: str = "first", quorum: int | None = None,
           now: datetime = T0, stored: dict[tuple[str, str], bool] | None = None, **kw: Any) -> Transition:
    routing = Routing(respondents=respondents, rule=rule, quorum=quorum, **kw)  # type: ignore[arg-type]
    table = stored or {}
    return open_ask(ask, ask_id="ask-1", routing=routing, now=now,
                    stored_consent=lambda rid, scope: table.get((rid, scope)))


def record_of(t: Transition) -> AskRecord:
    return t.record
