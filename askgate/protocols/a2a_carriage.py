"""How asks and answers ride in A2A messages (protocols.md §1.2), as pure functions over ProtoJSON dicts.

The ``elicitation/v1`` codec (:mod:`askgate.protocols.a2a_elicitation`) checks the typed payloads; this
module decides what goes into a message and how a message reads as an answer, for every ask askgate
puts to an A2A peer (its A2A caller, or an agent respondent), whatever dialect the ask came in:

- :func:`request_for` — the ``{message, requestedSchema}`` for any ask. An ACS approval, which
  ``elicitation/v1`` cannot carry as such, becomes a small decision form [ours, docs/wire.md "A2A"].
- :func:`answer_from_message` — the canonical answer JSON (``{"outcome", "value"?}``) a message
  carries: the ``elicitation/v1`` response data part if there is one, else the plain-text fallback.
  Every fault is raised as :class:`AskgateError` with JSON pointers into the response.

No I/O, no clock: the edges (askgate/server/a2a, askgate/channels/a2a_respondent.py) convert protobuf
messages to dicts and call these.
"""

from __future__ import annotations

import json
import math
from typing import Any

from askgate.core.model import Answer, ApprovalDecision, ApprovalSpec, Ask, FormSpec
from askgate.errors import AskgateError, Fault
from askgate.protocols import a2a_elicitation as codec
from askgate.protocols.flat_schema import WRAPPED_FIELD, as_form

EXTENSION_URI = codec.EXTENSION_URI
PAYLOAD_KEY = codec.PAYLOAD_KEY
#: Extra data part sent with an approval: the ACS approval request of protocols.md §4.8.
ACS_APPROVAL_KEY = "askgate/acs-approval-request"
#: Data part key of the outcome askgate reports to an A2A asker (the dialect-neutral answer).
OUTCOME_KEY = "askgate/outcome"
#: Data part key of the asker's own dialect response (AQP, ACS, MCP documents) in an outcome artifact.
RESPONSE_KEY = "askgate/response"

#: Approval decision form field names [ours]: the ACS approver answer members, flat.
DECISION = "decision"
REASONING = "reasoning"
OPTION = "selected_option"
GRANT = "grant_intent_extension"
_SAFE = 2**53 - 1


# --------------------------------------------------------------------------------------------------
# Asking.
# --------------------------------------------------------------------------------------------------


def approval_schema(spec: ApprovalSpec) -> dict[str, Any]:
    """The flat ``requestedSchema`` an A2A approver fills in for an ACS ASK [ours]."""
    props: dict[str, Any] = {
        DECISION: {"type": "string", "title": "Decision", "enum": ["allow", "deny"], "enumNames": ["Allow", "Deny"]},
        REASONING: {"type": "string", "title": "Reasoning", "maxLength": 4000},
    }
    if spec.options:
        props[OPTION] = {"type": "string", "title": "Option", "enum": list(spec.options)}
    if spec.intent_extension is not None:
        props[GRANT] = {"type": "boolean", "title": "Grant the proposed intent extension", "default": False}
    return {"type": "object", "properties": props, "required": [DECISION]}


def request_for(ask: Ask) -> dict[str, Any]:
    """The ``elicitation/v1`` request for ``ask``; raises ``AskgateError(code="unsupported")`` when the
    ask cannot be put as a flat form (multi-select, pattern)."""
    if isinstance(ask.spec, ApprovalSpec):
        message = ask.prompt if not ask.details else f"{ask.prompt}\n\n{ask.details}"
        return {"message": message or "Approve this request?", "requestedSchema": approval_schema(ask.spec)}
    return codec.render_request(ask)


def _form_ask(ask: Ask) -> Ask:
    """The ask as the form its A2A respondent answers (approvals: the decision form)."""
    if isinstance(ask.spec, ApprovalSpec):
        return codec.parse_request(request_for(ask))
    return ask


def status_parts(ask: Ask, *, extension_active: bool) -> list[dict[str, Any]]:
    """The input-required status message parts (§1.2): the question as text, then the typed part only
    when the extension is active. Faults in rendering fall back to text only (never strand a caller)."""
    text = ask.prompt if not ask.details else f"{ask.prompt}\n\n{ask.details}"
    parts: list[dict[str, Any]] = [{"text": text or "askgate needs an answer"}]
    if extension_active:
        try:
            parts.append({"data": {PAYLOAD_KEY: request_for(ask)}})
        except AskgateError:
            pass
    return parts


def extension_active(message: dict[str, Any] | None, header_extensions: set[str] | frozenset[str] = frozenset()) -> bool:
    """Active when the latest user message lists the URI in ``extensions``, or the request's
    ``A2A-Extensions`` (or ``X-A2A-Extensions``) header did."""
    if EXTENSION_URI in header_extensions:
        return True
    exts = (message or {}).get("extensions") or []
    return isinstance(exts, list) and EXTENSION_URI in exts


# --------------------------------------------------------------------------------------------------
# Reading answers.
# --------------------------------------------------------------------------------------------------


def narrow_numbers(value: Any) -> Any:
    """protobuf ``Value`` keeps every number as a double: give whole ones (within ±2^53−1) back as int."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) <= _SAFE:
        return int(value)
    if isinstance(value, dict):
        return {k: narrow_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [narrow_numbers(v) for v in value]
    return value


def data_payload(parts: list[dict[str, Any]], key: str) -> tuple[bool, Any, int]:
    """The value under ``key`` in the first data part holding it: ``(found, value, part index)``."""
    for i, part in enumerate(parts if isinstance(parts, list) else []):
        data = part.get("data") if isinstance(part, dict) else None
        if isinstance(data, dict) and key in data:
            return True, narrow_numbers(data[key]), i
    return False, None, -1


def text_of(parts: list[dict[str, Any]]) -> str:
    items = parts if isinstance(parts, list) else []
    return "\n".join(p["text"] for p in items if isinstance(p, dict) and isinstance(p.get("text"), str))


def response_from_text(ask: Ask, text: str) -> dict[str, Any]:
    """The plain-text fallback [ours]: a JSON object is the accepted ``content``; otherwise the text is
    the value of the form's only field (a string as is; ``yes``/``no``/``true``/``false`` for a boolean;
    a number for a number; an option's value or label for a choice). Anything else is a fault."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            content = json.loads(stripped, parse_constant=_refuse_constant)
        except ValueError:
            content = None
        if isinstance(content, dict):
            return {"action": "accept", "content": content}
    form = as_form(_form_ask(ask).spec)[0] if not isinstance(ask.spec, FormSpec) else ask.spec
    if len(form.fields) != 1:
        raise AskgateError("unreadable answer", [Fault("/parts", "this question has several fields: answer with the "
                                                       "elicitation/v1 data part or a JSON object", "a2a.text-answer")],
                           code="invalid_answer")
    field = form.fields[0]
    value: Any = stripped if field.kind == "string" else None
    if field.kind == "boolean":
        value = {"yes": True, "true": True, "no": False, "false": False}.get(stripped.lower())
    elif field.kind in ("number", "integer"):
        try:
            num = float(stripped)
            value = narrow_numbers(num) if math.isfinite(num) else None
        except ValueError:
            value = None
    elif field.kind == "choice":
        for opt in field.options:  # type: ignore[union-attr]
            if stripped in (opt.value, opt.label):
                value = opt.value
                break
    if value is None:
        raise AskgateError("unreadable answer", [Fault("/parts/0/text", f"cannot read {stripped[:80]!r} as a "
                                                       f"{field.kind} answer", "a2a.text-answer")], code="invalid_answer")
    return {"action": "accept", "content": {field.name: value}}


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def _in_form_order(ask: Ask, response: Any) -> Any:
    """Content keys in the form's field order (protobuf ``Struct`` sorts keys; undeclared keys stay, last)."""
    wrapped = type(response) is dict and len(response) == 1 and PAYLOAD_KEY in response
    inner = response[PAYLOAD_KEY] if wrapped else response
    if type(inner) is not dict or type(inner.get("content")) is not dict:
        return response
    form = as_form(ask.spec)[0]
    content = inner["content"]
    ordered = {f.name: content[f.name] for f in form.fields if f.name in content}
    ordered.update({k: v for k, v in content.items() if k not in ordered})
    inner = {**inner, "content": ordered}
    return {PAYLOAD_KEY: inner} if wrapped else inner


def check_response(ask: Ask, response: Any) -> Answer:
    """An ``elicitation/v1`` response (bare or wrapped) checked against what ``ask`` asked: every fault
    raised; for an approval the decision form's content becomes the ACS decision."""
    form_ask = _form_ask(ask)
    response = _in_form_order(form_ask, response)
    if not isinstance(ask.spec, ApprovalSpec):
        return codec.check_answer(ask, response)
    answer = codec.check_answer(form_ask, response)
    if answer.outcome != "accept":
        return answer
    content = answer.value if isinstance(answer.value, dict) else {}
    decision = content.get(DECISION)
    grant = ask.spec.intent_extension if content.get(GRANT) is True and decision == "allow" else None
    value = ApprovalDecision(decision=decision, reasoning=content.get(REASONING),  # type: ignore[arg-type]
                             selected_option=content.get(OPTION), intent_extension=grant)
    return answer.model_copy(update={"value": value})


def answer_from_message(ask: Ask, message: dict[str, Any]) -> tuple[Answer, bool]:
    """The answer a message carries: ``(answer, typed)`` where ``typed`` says the ``elicitation/v1``
    data part was used (else the text fallback was read)."""
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        raise AskgateError("no answer", [Fault("/parts", "a message must have a list of parts", "type")],
                           code="invalid_answer")
    found, payload, index = data_payload(parts, PAYLOAD_KEY)
    if found:
        try:
            return check_response(ask, {PAYLOAD_KEY: payload}), True
        except AskgateError as exc:
            raise AskgateError(exc.summary, [Fault(f"/parts/{index}/data{f.pointer}", f.message, f.rule)
                                             for f in exc.faults], code=exc.code) from None
    text = text_of(parts)
    if not text.strip():
        raise AskgateError("no answer", [Fault("/parts", "the message carries neither an elicitation/v1 data part "
                                               "nor a text answer", "required")], code="invalid_answer")
    return check_response(ask, response_from_text(ask, text)), False


def canonical_answer(answer: Answer) -> dict[str, Any]:
    """The broker's canonical answer form ``{"outcome", "value"?}`` for a checked Answer."""
    out: dict[str, Any] = {"outcome": answer.outcome}
    value = answer.value
    if isinstance(value, ApprovalDecision):
        value = value.model_dump(mode="json", exclude_none=True, exclude={"decided_by"})
    elif isinstance(value, dict):
        value = {k: (list(v) if isinstance(v, tuple) else v) for k, v in value.items()}
    if answer.outcome == "accept":
        out["value"] = value
    if answer.reason:
        out["reason"] = answer.reason
    return out


def faults_text(faults: list[Fault] | tuple[Fault, ...]) -> str:
    """The faults of a refused answer, one per line, for the text part the answering side reads."""
    lines = [f"- {f.pointer or '/'}: {f.message} ({f.rule})" for f in faults]
    return "The answer was not accepted:\n" + "\n".join(lines) if lines else "The answer was not accepted."


def summary(answer: Answer | None) -> str:
    """One line for the outcome's text part."""
    if answer is None:
        return "The ask ended without an answer."
    if answer.outcome == "timed_out":
        return "The ask timed out without an answer."
    if answer.outcome == "expired":
        return "The ask expired without an answer."
    if isinstance(answer.value, ApprovalDecision):
        d = answer.value
        return f"{d.decision}" + (f": {d.reasoning}" if d.reasoning else "")
    return codec.answer_summary(answer)


__all__ = [
    "ACS_APPROVAL_KEY", "EXTENSION_URI", "OUTCOME_KEY", "PAYLOAD_KEY", "RESPONSE_KEY", "WRAPPED_FIELD",
    "answer_from_message", "approval_schema", "canonical_answer", "check_response", "data_payload",
    "extension_active", "faults_text", "narrow_numbers", "request_for", "response_from_text", "status_parts",
    "summary", "text_of",
]
