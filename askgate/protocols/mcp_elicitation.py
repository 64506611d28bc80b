"""MCP elicitation, form mode, revisions 2025-06-18 and 2025-11-25: protocols.md §2.

askgate declares ``form`` only: a ``mode: "url"`` request or a task-augmented one is refused with
``AskgateError(code="unsupported")`` (rules ``mcp.url-mode`` / ``mcp.task-augmented``), which the
server layer answers with JSON-RPC ``-32602``. The ``requestedSchema`` keyword sets follow the
negotiated revision (§2.2). MCP's own types are open, so unknown request params other than those are
accepted, ignored and recorded in ``Ask.notes``; ``_meta`` is carried but never interpreted.
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

DIALECT = Dialect.MCP_ELICITATION
VERSIONS = ("2025-06-18", "2025-11-25")
LATEST = "2025-11-25"
METHOD = "elicitation/create"
_ENVELOPE_KEYS = ("jsonrpc", "id", "method", "params")
_RESPONSE_ENVELOPE_KEYS = ("jsonrpc", "id", "result")
_KNOWN_PARAMS = ("message", "requestedSchema", "mode", "_meta", "task")


def _version(version: Any) -> str:
    if version not in VERSIONS:
        raise AskgateError(
            f"unsupported MCP revision {version!r}",
            [Fault("", f"MCP revision must be one of {', '.join(VERSIONS)}", "mcp.version")],
            code="unsupported",
        )
    return version


def client_capabilities(version: str = LATEST) -> dict:
    """askgate's ``capabilities.elicitation`` as an MCP client: form only (bare ``{}`` for 2025-06-18 peers)."""
    return {} if _version(version) == "2025-06-18" else {"form": {}}


def _envelope(doc: dict) -> tuple[Any, str, list[Fault], Any]:
    """Check a JSON-RPC ``elicitation/create`` request: ``(params, base pointer, faults, id)``."""
    faults: list[Fault] = []
    for key in doc:
        if key not in _ENVELOPE_KEYS:
            faults.append(Fault(pointer_join("", key), f'JSON-RPC request has unsupported member "{key}"', "additionalProperties"))
    if doc.get("jsonrpc") != "2.0" or type(doc.get("jsonrpc")) is not str:
        faults.append(Fault("/jsonrpc", 'jsonrpc must be "2.0"', "const"))
    rid = doc.get("id")
    if "id" not in doc:
        faults.append(Fault("", "a request needs an id", "required"))
    elif type(rid) is not str and type(rid) is not int:
        faults.append(Fault("/id", "id must be a string or an integer", "type"))
    if doc.get("method") != METHOD or type(doc.get("method")) is not str:
        faults.append(Fault("/method", f'method must be "{METHOD}"', "const"))
    if "params" not in doc:
        faults.append(Fault("", "params is required", "required"))
    return doc.get("params"), "/params", faults, rid


def _refusals(params: dict, base: str) -> list[Fault]:
    out = []
    if params.get("mode") == "url":
        out.append(Fault(f"{base}/mode", "URL-mode elicitation is not supported; askgate accepts form mode only",
                         "mcp.url-mode"))
    if "task" in params:
        out.append(Fault(f"{base}/task", "task-augmented elicitation is not supported", "mcp.task-augmented"))
    return out


def parse_request(doc: Any, version: str = LATEST, **opts: Any) -> Ask:
    """``elicitation/create`` params, or the whole JSON-RPC request, -> canonical Ask.

    Raises ``AskgateError(code="unsupported")`` for URL mode and task-augmented requests, and
    ``AskgateError(code="invalid_request")`` with every fault otherwise. Other options as for A2A
    (``id``, ``external_id``, ``session_id``, ``asker``, ``respondent``); ``external_id`` defaults to the
    JSON-RPC request id. ``json_text=True``: the document is JSON text, decoded strictly first.
    """
    version = _version(version)
    if opts.get("json_text") and isinstance(doc, (str, bytes, bytearray)):
        doc = loads_strict(doc)
    faults: list[Fault] = []
    params, base, rid = doc, "", None
    if type(doc) is dict and ("jsonrpc" in doc or "method" in doc):
        params, base, faults, rid = _envelope(doc)
    notes: list[str] = []
    spec = None
    if type(params) is not dict:
        if base == "" or "params" in doc:
            faults.append(Fault(base, "params must be an object with message and requestedSchema", "type"))
    else:
        refused = _refusals(params, base)
        if refused:
            raise AskgateError(f"unsupported elicitation request: {refused[0].message}", refused, code="unsupported")
        for key in params:
            if key not in _KNOWN_PARAMS:
                notes.append(f'ignored unknown param "{key if len(key) <= 64 else key[:64] + "…"}"')
        if "mode" in params and params["mode"] != "form":
            faults.append(Fault(f"{base}/mode", 'mode must be "form" or "url"', "enum"))
        if "_meta" in params and type(params["_meta"]) is not dict:
            faults.append(Fault(f"{base}/_meta", "_meta must be an object", "type"))
        spec = common.check_message_and_schema(params, base, f"mcp-{version}", faults)
    raise_if_faults(faults, "invalid elicitation/create request", code="invalid_request")
    if version == "2025-11-25" and any(
        f.kind == "choice" and not f.titled and any(o.label is not None for o in f.options) for f in spec.fields
    ):
        notes.append("enumNames is deprecated in MCP 2025-11-25 (legacy titled enum)")
    fields = common.ask_options(opts)
    if rid is not None:
        fields.setdefault("external_id", str(rid))
    return common.build_ask(
        dialect=DIALECT, dialect_version=version, prompt=params["message"], spec=spec, original=doc,
        notes=tuple(notes) + borderline_secret_notes(spec), **fields,
    )


def validate_request(doc: Any, **opts: Any) -> list[Fault]:
    """The verdict alone: every fault :func:`parse_request` would raise, ``[]`` for a valid request."""
    return common.faults_of(parse_request, doc, **opts)


def parse_request_bytes(data: bytes | str, version: str = LATEST, **opts: Any) -> Ask:
    """Strict JSON (no duplicate keys, NaN or overflow) then :func:`parse_request`."""
    return parse_request(loads_strict(data), version, **opts)


def check_result_shape(payload: Any, *, version: str = LATEST) -> tuple[str | None, Any, str, list[Fault]]:
    """An ``ElicitResult`` (or a JSON-RPC response carrying one): ``(action, content, content pointer, faults)``.

    An ``accept`` without ``content`` reads as ``{}`` (§2.3); ``content`` on decline or cancel is ignored.
    """
    base = ""
    faults: list[Fault] = []
    if type(payload) is dict and "jsonrpc" in payload:
        for key in payload:
            if key not in _RESPONSE_ENVELOPE_KEYS:
                faults.append(Fault(pointer_join("", key), f'JSON-RPC response has unsupported member "{key}"',
                                    "additionalProperties"))
        if payload.get("jsonrpc") != "2.0" or type(payload.get("jsonrpc")) is not str:
            faults.append(Fault("/jsonrpc", 'jsonrpc must be "2.0"', "const"))
        if "result" not in payload:
            faults.append(Fault("", "a JSON-RPC response carrying an answer needs a result", "required"))
        payload, base = payload.get("result"), "/result"
    if type(payload) is not dict:
        faults.append(Fault(base, "ElicitResult must be an object with an action", "type"))
        return None, None, base, faults
    action, action_faults = common.check_action(payload, base)
    faults.extend(action_faults)
    if "_meta" in payload and type(payload["_meta"]) is not dict:
        faults.append(Fault(f"{base}/_meta", "_meta must be an object", "type"))
    content = payload.get("content", {}) if action == "accept" else None
    if action == "accept":
        faults.extend(common.check_content_shape(content, f"{base}/content", allow_lists=version == "2025-11-25"))
    return action, content, f"{base}/content", faults


def check_answer(
    ask: Ask, payload: Any, *, respondent: Respondent | None = None, answered_at: datetime | None = None, **_: Any
) -> Answer:
    """An ``ElicitResult`` -> canonical Answer, checked against ``ask.spec`` (§1.5 plus §2.3)."""
    version = ask.dialect_version if ask.dialect == DIALECT and ask.dialect_version in VERSIONS else LATEST
    action, content, ptr, faults = check_result_shape(payload, version=version)
    if action is None:
        raise_if_faults(faults, "invalid ElicitResult", code="invalid_answer")
    return common.finish_answer(ask, action, content, faults, ptr, respondent=respondent, answered_at=answered_at)


def result_meta(payload: Any) -> dict | None:
    """The ``_meta`` of an ``ElicitResult`` (bare or in a JSON-RPC response), untouched, for relaying:
    ``render_answer(ask, check_answer(ask, payload), meta=result_meta(payload))``."""
    if type(payload) is dict and "jsonrpc" in payload:
        payload = payload.get("result")
    meta = payload.get("_meta") if type(payload) is dict else None
    return meta if type(meta) is dict else None


def render_answer(ask: Ask, answer: Answer, *, meta: dict | None = None, request_id: Any = None, **_: Any) -> dict:
    """Canonical Answer -> ``ElicitResult``: content always on accept, never on decline/cancel; a timeout
    is ``cancel``. ``meta`` (e.g. the ``_meta`` of a relayed result) is passed through untouched;
    with ``request_id`` the result is wrapped in its JSON-RPC response."""
    action = common.wire_action(answer)
    out: dict[str, Any] = {"action": action}
    if action == "accept":
        out["content"] = common.wire_content(ask.spec, answer)
    if meta is not None:
        out["_meta"] = meta
    if request_id is not None:
        return {"jsonrpc": "2.0", "id": request_id, "result": out}
    return out


def render_request(ask: Ask, version: str = LATEST) -> dict:
    """Canonical Ask -> ``elicitation/create`` params for a respondent's client on ``version``.

    For 2025-06-18 titled enums are downgraded to ``enum`` + ``enumNames``; multi-select and pattern
    raise ``AskgateError(code="unsupported")`` there.
    """
    version = _version(version)
    form, _wrapped = common.ask_form(ask)
    message = ask.prompt if not ask.details else f"{ask.prompt}\n\n{ask.details}"
    return {"message": message, "requestedSchema": render_requested_schema(form, profile=f"mcp-{version}")}
