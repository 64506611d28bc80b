"""What askgate's MCP tools return: structured content (with the same JSON as text) and its models."""

from __future__ import annotations

import json
from typing import Any, Literal

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

from askgate.broker import BrokerError
from askgate.errors import Fault


class ElicitOutcome(BaseModel):
    """``ask_human`` / ``relay_elicitation`` result: the ``ElicitResult`` plus where the ask ended."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str]] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    ask_id: str
    state: str = Field(description="answered, declined, cancelled, timed_out, withdrawn, ...")
    timed_out: bool
    respondent: str | None = None


class ApprovalOutcome(BaseModel):
    """``request_approval`` result: the decision (``deny`` whenever nobody allowed: fail closed)."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["allow", "deny"]
    decided_by: Literal["approver", "timeout", "none"]
    selected_option: str | None = None
    reasoning: str | None = None
    ask_id: str
    state: str
    outcome: str
    respondent: str | None = None


class AnswerReport(BaseModel):
    """What ``answer_asks`` did with one ask."""

    model_config = ConfigDict(extra="forbid")
    ask_id: str
    status: Literal["recorded", "refused", "unsupported", "lost", "failed"]
    outcome: str | None = None
    state: str | None = None
    faults: list[dict[str, str]] = []
    detail: str | None = None


class AnswerAsksOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")
    protocol_version: str
    asks: list[AnswerReport]


def tool_result(data: dict[str, Any], *, error: bool = False) -> CallToolResult:
    """Structured content plus the same JSON as text (MCP's advice for structured tool results)."""
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
                          structured_content=data, is_error=error)


def tool_error(code: str, message: str, faults: list[Fault] | tuple[Fault, ...] = (), **extra: Any) -> CallToolResult:
    data: dict[str, Any] = {"error": code, "message": message, **extra}
    if faults:
        data["faults"] = [f.as_dict() for f in faults]
    return tool_result(data, error=True)


def broker_error(exc: BrokerError) -> CallToolResult:
    return tool_error(exc.code, exc.detail or exc.title, exc.faults, status=exc.status)



__all__ = ["AnswerAsksOutcome", "AnswerReport", "ApprovalOutcome", "ElicitOutcome", "broker_error", "tool_error",
           "tool_result"]
