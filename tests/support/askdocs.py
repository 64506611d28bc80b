"""Small valid request documents in each dialect, for broker and server tests."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any


def aqp(*, expires_in: float = 600, fmt: str = "choice", timing: str = "immediate", consent: str = "not_required",
        scope: str | None = None, authorization: str | None = None, query_id: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"format": fmt}
    if fmt == "choice":
        response["choices"] = ["ship", "hold"]
    delivery: dict[str, Any] = {"binding": "other"}
    if authorization is not None:
        delivery = {"binding": "https", "endpoint": "https://agent.example/aqp", "authorization": authorization}
    doc: dict[str, Any] = {
        "protocolVersion": "2026-07-30", "queryId": query_id or str(uuid.uuid4()), "type": "approval",
        "subject": {"change": 42}, "prompt": "Ship the release?", "timing": timing, "consentMode": consent,
        "response": response, "delivery": delivery,
        "expiresAt": (datetime.now(UTC) + timedelta(seconds=expires_in)).isoformat().replace("+00:00", "Z"),
    }
    if scope is not None:
        doc["consentScope"] = scope
    return doc


def aqp_answer(value: Any = "ship", fmt: str = "choice") -> dict[str, Any]:
    return {"format": fmt, "value": value}


def acs(approver: str = "lead", *, timeout: int = 600, disposition: str = "deny", session: bool = False,
        options: list[str] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"approver": {"type": "human", "id": approver}, "question": "Run the migration?",
                           "timeout_seconds": timeout, "timeout_disposition": disposition}
    if options:
        doc["options"] = options
    if session:
        doc["intent_extension"] = {"capabilities": [{"tool": "shell", "operation": "exec"}], "scope": "session"}
    return doc


def a2a(message: str = "Your name?") -> dict[str, Any]:
    return {"message": message, "requestedSchema": {"type": "object", "properties": {"name": {"type": "string",
            "minLength": 1}}, "required": ["name"]}}


def mcp(message: str = "Pick a colour") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {
        "message": message, "requestedSchema": {"type": "object", "properties": {
            "colour": {"type": "string", "enum": ["red", "green"]}}, "required": ["colour"]}}}
