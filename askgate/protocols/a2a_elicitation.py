"""A2A typed elicitation (``elicitation/v1``) codec: protocols.md §1.

The seed schema is a ``oneOf`` of a request and a response branch; each document is checked against
the branch its role calls for (§1.3), by hand-compiled checks that also apply every runtime rule of
§1.4 and carry the reference runtime's messages. Requests may arrive bare (``{message,
requestedSchema}``) or as the A2A data part ``{"elicitation/v1": {...}}``; pointers then start at
``/elicitation~1v1``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from askgate.core.model import Answer, Ask, Dialect, Respondent
from askgate.errors import AskgateError, Fault, pointer_join, raise_if_faults
from askgate.jsonload import loads_strict
from askgate.protocols import elicitation_common as common
from askgate.protocols.flat_schema import (
    borderline_secret_notes,
    render_requested_schema,
)

DIALECT = Dialect.A2A_ELICITATION
VERSION = "v1"
EXTENSION_URI = "https://github.com/ai-outfitter/channels/a2a-extensions/elicitation/v1"
PAYLOAD_KEY = "elicitation/v1"
_WRAP_PTR = "/elicitation~1v1"
_REQUEST_KEYS = ("message", "requestedSchema")
_RESPONSE_KEYS = ("action", "content")


def _unwrap(doc: Any) -> tuple[Any, str]:
    """Strip the A2A data-part wrapper ``{"elicitation/v1": {...}}`` if present."""
    if type(doc) is dict and len(doc) == 1 and PAYLOAD_KEY in doc:
        return doc[PAYLOAD_KEY], _WRAP_PTR
    return doc, ""


def check_request_shape(doc: Any, base: str = "") -> tuple[Any, list[Fault]]:
    """The request branch (§1.3) plus the §1.4 runtime rules: ``(FormSpec or None, faults)``."""
    if type(doc) is not dict:
        return None, [Fault(base, "request must be an object with message and requestedSchema", "type")]
    faults: list[Fault] = []
    for key in doc:
        if key not in _REQUEST_KEYS:
            faults.append(Fault(pointer_join(base, key), f'request has unsupported keyword "{key}"', "additionalProperties"))
    spec = common.check_message_and_schema(doc, base, "a2a", faults)
    return spec, faults


def parse_request(doc: Any, **opts: Any) -> Ask:
    """A2A elicitation request (bare or data-part wrapped) -> canonical Ask.

    Options that land on the Ask: ``id``, ``external_id`` (e.g. the taskId), ``session_id`` (contextId),
    ``asker``, ``respondent``; anything else (such as ``now``) is accepted and ignored. With
    ``json_text=True`` the document is JSON text, decoded strictly first (as :func:`parse_request_bytes`).
    """
    if opts.get("json_text") and isinstance(doc, (str, bytes, bytearray)):
        doc = loads_strict(doc)
    inner, base = _unwrap(doc)
    spec, faults = check_request_shape(inner, base)
    raise_if_faults(faults, "invalid elicitation/v1 request", code="invalid_request")
    return common.build_ask(
        dialect=DIALECT, dialect_version=VERSION, prompt=inner["message"], spec=spec, original=doc,
        notes=borderline_secret_notes(spec), **common.ask_options(opts),
    )


def validate_request(doc: Any, **opts: Any) -> list[Fault]:
    """The verdict alone: every fault :func:`parse_request` would raise, ``[]`` for a valid request."""
    return common.faults_of(parse_request, doc, **opts)


def parse_request_bytes(data: bytes | str, **opts: Any) -> Ask:
    """Strict JSON (no duplicate keys, NaN or overflow) then :func:`parse_request`."""
    return parse_request(loads_strict(data), **opts)


def check_response_shape(payload: Any, base: str = "") -> tuple[str | None, list[Fault]]:
    """The seed's response branch alone: ``(action or None, faults)``; content iff accept."""
    if type(payload) is not dict:
        return None, [Fault(base, "response must be an object with action and content", "type")]
    faults: list[Fault] = []
    for key in payload:
        if key not in _RESPONSE_KEYS:
            faults.append(Fault(pointer_join(base, key), f'response has unsupported keyword "{key}"', "additionalProperties"))
    action, action_faults = common.check_action(payload, base)
    faults.extend(action_faults)
    if "content" in payload:
        faults.extend(common.check_content_shape(payload["content"], f"{base}/content", allow_lists=False))
    if action == "accept" and "content" not in payload:
        faults.append(Fault(base, "content is required when action is accept", "required"))
    elif action is not None and action != "accept" and "content" in payload:
        faults.append(Fault(f"{base}/content", f"content must be omitted when action is {action}", "not"))
    return action, faults


def check_answer(
    ask: Ask, payload: Any, *, respondent: Respondent | None = None, answered_at: datetime | None = None, **_: Any
) -> Answer:
    """An ``{action, content?}`` response (bare or wrapped) -> canonical Answer, checked against ``ask.spec``."""
    inner, base = _unwrap(payload)
    action, faults = check_response_shape(inner, base)
    if action is None:
        raise_if_faults(faults, "invalid elicitation/v1 response", code="invalid_answer")
    return common.finish_answer(
        ask, action, inner.get("content"), faults, f"{base}/content", respondent=respondent, answered_at=answered_at
    )


def render_answer(ask: Ask, answer: Answer, *, wrap: bool = False, **_: Any) -> dict:
    """Canonical Answer -> ``{action, content?}``: content always on accept, never otherwise; timeouts cancel.

    ``wrap=True`` returns the data-part form ``{"elicitation/v1": {...}}``.
    """
    action = common.wire_action(answer)
    out: dict[str, Any] = {"action": action}
    if action == "accept":
        out["content"] = common.wire_content(ask.spec, answer)
    return {PAYLOAD_KEY: out} if wrap else out


def render_request(ask: Ask) -> dict:
    """Canonical Ask -> ``{message, requestedSchema}`` for an A2A respondent (titled enums downgraded).

    Raises ``AskgateError(code="unsupported")`` for what ``elicitation/v1`` cannot carry (multi-select,
    pattern, approvals).
    """
    form, _wrapped = common.ask_form(ask)
    message = ask.prompt if not ask.details else f"{ask.prompt}\n\n{ask.details}"
    if not message:
        raise AskgateError("an elicitation/v1 message must not be empty",
                           [Fault("", "the ask has an empty prompt", "minLength")], code="unsupported")
    return {"message": message, "requestedSchema": render_requested_schema(form, profile="a2a")}


def status_message_parts(ask: Ask, *, extension_active: bool) -> list[dict]:
    """The parts of the input-required status message (§1.2): the question as text, always first;
    the ``elicitation/v1`` data part only when the caller activated the extension."""
    parts: list[dict] = [{"text": ask.prompt}]
    if extension_active:
        parts.append({"data": {PAYLOAD_KEY: render_request(ask)}})
    return parts


def answer_summary(answer: Answer) -> str:
    """The text part that accompanies an answer message (§1.2) for callers without the extension."""
    action = common.wire_action(answer)
    if action == "decline":
        return "The user declined to answer."
    if action == "cancel":
        return "The request was cancelled without an answer."
    value = answer.value
    if isinstance(value, dict):
        items = ", ".join(f"{k}: {', '.join(v) if isinstance(v, tuple) else v}" for k, v in value.items())
        return f"accepted {items}" if items else "accepted"
    return f"accepted {value}"
