"""What the inbox shows about an ask: labels, urgency, the context panels and answer summaries.

Pure functions over the lifecycle's :class:`AskRecord`: no I/O, so the list page, the live feed and the
history all describe an ask the same way. Credentials never appear: a delivery endpoint is reduced to
its host and the authorization is never read.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from askgate.core.lifecycle import AskRecord, final_answer
from askgate.core.model import ApprovalDecision, ApprovalSpec, Ask, FormSpec, IntegerField

DIALECTS = {
    "a2a-elicitation": "A2A elicitation",
    "mcp-elicitation": "MCP elicitation",
    "aqp": "AQP query",
    "acs": "ACS approval",
    "canonical": "askgate",
}
KINDS = {
    "form": "form",
    "text": "text",
    "choice": "choice",
    "yes_no": "yes / no",
    "number": "number",
    "approval": "approval",
}
URGENT_SECONDS = 5 * 60
SOON_SECONDS = 60 * 60
OPEN_STATES = ("delivered", "pending")


def iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def urgency(record: AskRecord, now: datetime) -> str:
    """``urgent`` (< 5 min left), ``soon`` (< 1 h) or ``""``; the page's script keeps it current."""
    if record.deadline_at is None:
        return ""
    left = (record.deadline_at - now).total_seconds()
    if left < URGENT_SECONDS:
        return "urgent"
    return "soon" if left < SOON_SECONDS else ""


def asker_of(ask: Ask) -> str:
    agent = ask.binding.get("agent_id") if isinstance(ask.binding, dict) else None
    who = ask.asker or "unknown"
    return f"{agent} (via {who})" if isinstance(agent, str) and agent and agent != who else who


def item(record: AskRecord, me: str, now: datetime) -> dict[str, Any]:
    """One row of the inbox list."""
    ask = record.ask
    fields = len(ask.spec.fields) if isinstance(ask.spec, FormSpec) else 1
    return {
        "id": record.id,
        "prompt": ask.prompt if len(ask.prompt) <= 240 else ask.prompt[:239] + "…",
        "asker": asker_of(ask),
        "dialect": ask.dialect.value,
        "dialect_label": DIALECTS.get(ask.dialect.value, ask.dialect.value),
        "kind": ask.spec.kind,
        "kind_label": KINDS.get(ask.spec.kind, ask.spec.kind),
        "purpose": ask.purpose,
        "fields": fields,
        "created_at": iso(record.created_at),
        "deadline_at": iso(record.deadline_at),
        "urgency": urgency(record, now),
        "consent_needed": record.consent_of(me) == "pending",
        "search": " ".join(
            x
            for x in (
                ask.prompt,
                ask.details or "",
                asker_of(ask),
                ask.purpose or "",
                DIALECTS.get(ask.dialect.value, ""),
            )
            if x
        ).lower(),
    }


def is_open_for(record: AskRecord, me: str) -> bool:
    return (
        not record.terminal
        and record.state.value in OPEN_STATES
        and me in record.offered_to
        and record.consent_of(me) != "refused"
        and not any(v.respondent_id == me for v in record.votes)
    )


def settled_text(record: AskRecord) -> str:
    """One sentence a person reads when an ask leaves: who took it and how, or why it ended."""
    outcome = final_answer(record)
    state = record.state.value
    by = outcome.respondent.id if outcome is not None and outcome.respondent is not None else None
    if state == "answered":
        how = describe_value(outcome.value) if outcome is not None else ""
        return f"Answered by {by or 'someone'}" + (f": {how}" if how else "")
    if state == "declined":
        return f"Declined by {by}" if by else "Declined"
    if state == "cancelled":
        return f"Cancelled by {by}" if by else "Cancelled"
    if state == "withdrawn":
        return "Withdrawn by the asker"
    if state == "expired":
        return "Expired: nobody answered before the deadline"
    if state == "timed_out":
        if outcome is not None and isinstance(outcome.value, ApprovalDecision):
            return f"Timed out: decided {outcome.value.decision} by its timeout rule"
        return "Timed out: nobody answered in time"
    return state


def describe_value(value: Any) -> str:
    """A short human reading of an answer value."""
    if value is None:
        return ""
    if isinstance(value, ApprovalDecision):
        parts: list[str] = [value.decision]
        if value.selected_option:
            parts.append(f"option “{value.selected_option}”")
        if value.intent_extension is not None:
            scope = "this session" if value.intent_extension.scope == "session" else "this request"
            parts.append(f"extra capabilities for {scope}")
        if value.reasoning:
            parts.append(f"reason: {value.reasoning}")
        return ", ".join(parts)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_short(v)}" for k, v in value.items()) or "(empty form)"
    return _short(value)


def _short(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v) or "(none)"
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 80 else s[:79] + "…"


def history_item(record: AskRecord, now: datetime) -> dict[str, Any]:
    outcome = final_answer(record)
    return {
        "id": record.id,
        "prompt": record.ask.prompt if len(record.ask.prompt) <= 200 else record.ask.prompt[:199] + "…",
        "dialect": record.ask.dialect.value,
        "dialect_label": DIALECTS.get(record.ask.dialect.value, record.ask.dialect.value),
        "state": record.state.value,
        "outcome": outcome.outcome if outcome is not None else None,
        "by": outcome.respondent.id
        if outcome is not None and outcome.respondent is not None
        else (record.settled_by or ""),
        "how": describe_value(outcome.value) if outcome is not None else "",
        "summary": settled_text(record),
        "settled_at": iso(record.settled_at),
        "asker": asker_of(record.ask),
    }


def approval_panel(record: AskRecord, session_intent: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """The ACS context an approver needs: who asks for what, the proposed extension, the timeout rule."""
    ask = record.ask
    if not isinstance(ask.spec, ApprovalSpec):
        return None
    b = ask.binding if isinstance(ask.binding, dict) else {}
    ext = ask.spec.intent_extension
    caps = []
    if ext is not None:
        for c in ext.capabilities:
            d = c.model_dump(exclude_none=True)
            caps.append(
                {
                    "tool": d.pop("tool", None),
                    "operation": d.pop("operation", None),
                    "resource": d.pop("resource", None),
                    "other": ", ".join(f"{k}={v}" for k, v in d.items()),
                }
            )
    binding = [(k, b[k]) for k in ("agent_id", "method", "step_id", "request_id", "request_hash") if b.get(k)]
    return {
        "agent": b.get("agent_id") or ask.asker,
        "reasoning": b.get("reasoning"),
        "binding": [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in binding],
        "session_id": ask.session_id,
        "options": list(ask.spec.options),
        "capabilities": caps,
        "scope": ext.scope if ext is not None else None,
        "provenance": json.dumps(ext.provenance, ensure_ascii=False)
        if ext is not None and ext.provenance
        else None,
        "session_intent": session_intent or [],
        "on_timeout": ask.deadline.on_timeout if ask.deadline.on_timeout in ("allow", "deny") else "deny",
    }


def consent_panel(record: AskRecord) -> dict[str, Any] | None:
    """For AQP: what is asked, whether a consent reply is remembered, the data policy, where the answer goes."""
    ask = record.ask
    if ask.dialect.value != "aqp":
        return None
    mode = ask.consent.mode
    remembered = {
        "not_required": "No consent step: answering is enough.",
        "ask_once": f"Your consent is asked once and remembered for “{ask.consent.scope or '(no scope)'}”: "
        "later asks with this scope will not ask again.",
        "ask_always": "Your consent is asked every time and never remembered.",
    }[mode]
    d = ask.delivery
    host = None
    if d.endpoint:
        try:
            host = urlsplit(d.endpoint).hostname
        except ValueError:
            host = None
    goes = {
        "reply": "back to the asker on the channel it came from",
        "https": "posted over HTTPS",
        "mcp": "returned over MCP",
        "a2a": "returned over A2A",
        "other": "handed back by the asker's own means",
    }
    timing = {
        "immediate": "released to the asker as soon as you answer",
        "after_outcome_known": "held until the outcome is known",
        "after_task_complete": "held until the task is complete",
        "deferred": "held until the asker releases it",
    }[ask.timing]
    return {
        "purpose": ask.purpose,
        "mode": mode,
        "scope": ask.consent.scope,
        "remembered": remembered,
        "data_policy": ask.consent.data_policy,
        "binding": d.binding,
        "destination": goes.get(d.binding, d.binding),
        "host": host,
        "timing": timing,
    }


def field_hints(record: AskRecord) -> dict[str, dict[str, Any]]:
    """Renderer hints A2UI has no property for: integer steps and numeric keyboards."""
    from askgate.a2ui.plan import plan_ask

    out: dict[str, dict[str, Any]] = {}
    for fp in plan_ask(record.ask).fields:
        if isinstance(fp.field, IntegerField):
            out[fp.id] = {"step": 1, "integer": True}
    return out


def subject_text(ask: Ask) -> str | None:
    if ask.subject is None:
        return None
    return (
        ask.subject if isinstance(ask.subject, str) else json.dumps(ask.subject, ensure_ascii=False, indent=2)
    )
