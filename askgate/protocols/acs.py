"""ACS ASK (Agent Control Standard v0.1.0) <-> canonical Ask / Answer; resolution envelope out.

Intake (protocols.md §4.2) takes the bare ``ask_details``, or the Guardian's ``ask`` result
``{type: "final", acs_version, request_id, decision: "ask", reasoning, ask_details, ...}``, possibly
inside its JSON-RPC envelope ``{jsonrpc, id, result}``, plus askgate's ``binding`` context (keyword
``binding=``: ``session_id``, ``agent_id``, ``step_id``, ``request_id``, ``method``, ``request_hash``,
``reasoning``). Faults point into the document; faults in ``binding`` carry pointers under
``/binding`` (it travels beside the document, not inside it).

Every keyword of the seed holds (unknown members pass, as the seed sets no ``additionalProperties``;
they are recorded in ``Ask.notes``); ``intent_extension.provenance`` follows askgate's own provenance
schema (``schemas/acs-provenance.schema.json``). Rules askgate adds [ours]:

- ``acs.question-empty``: ``question`` is ``""``.
- ``acs.timeout-seconds-range``: ``timeout_seconds`` above 2^53-1 (I-JSON integers, §4.6).
- ``acs.ask-origin``: the binding names a ``method`` where ACS allows no ASK (only
  ``steps/toolCallRequest``, ``protocols/MCP/*`` and ``wrapped:mcp-<version>/<method>``).
- ``acs.not-ask`` / ``acs.envelope-error`` / ``acs.unsupported-version`` / ``acs.request-id-mismatch`` /
  ``pattern`` (``request_hash``): for the result, envelope and binding forms.

Answers are the approver's ACS-shaped result, checked by :func:`askgate.core.approval.check_approval`.
An approver's ``decision: "ask"`` fails with rule ``acs.approver-ask`` and error code
``capability_not_negotiated``, which :func:`error_envelope` turns into JSON-RPC error ``-32003``
(CAPABILITY_NOT_NEGOTIATED, §4.3).
"""

from __future__ import annotations

import re
from typing import Any

from askgate.core.approval import (
    check_approval,
    check_intent_extension,
    decision_model,
    intent_extension_model,
)
from askgate.core.construct import make, template
from askgate.core.formats import is_uri as _is_uri
from askgate.core.model import Answer, ApprovalDecision, ApprovalSpec, Ask, Deadline, Dialect, Respondent
from askgate.errors import AskgateError, Fault, raise_if_faults
from askgate.jsonload import loads_strict
from askgate.protocols import _checks as C

DIALECT = Dialect.ACS
ACS_VERSION = "0.1.0"
APPROVER_TYPES = ("human", "agent", "service")
AUTH_METHODS = ("bearer", "mtls")
DISPOSITIONS = ("allow", "deny")
BINDING_MEMBERS = ("session_id", "agent_id", "step_id", "request_id", "method", "request_hash", "reasoning")

#: JSON-RPC standard codes and the ACS error registry (§4.7).
ERROR_CODES: dict[str, int] = {
    "PARSE_ERROR": -32700,
    "INVALID_REQUEST": -32600,
    "METHOD_NOT_FOUND": -32601,
    "INVALID_PARAMS": -32602,
    "INTERNAL_ERROR": -32603,
    "SESSION_REFUSED": -32000,
    "UNSUPPORTED_VERSION": -32001,
    "PROVENANCE_REQUIRED": -32002,
    "CAPABILITY_NOT_NEGOTIATED": -32003,
    "SIGNATURE_INVALID": -32004,
    "REPLAY_DETECTED": -32005,
    "TIMESTAMP_OUT_OF_WINDOW": -32006,
    "CHAIN_MISMATCH": -32007,
}
#: askgate error codes -> ACS error names, for :func:`error_envelope`.
ERROR_NAMES: dict[str, str] = {
    "not_json": "PARSE_ERROR",
    "invalid_request": "INVALID_PARAMS",
    "invalid_answer": "INVALID_PARAMS",
    "unsupported_version": "UNSUPPORTED_VERSION",
    "capability_not_negotiated": "CAPABILITY_NOT_NEGOTIATED",
}

#: Rules by which askgate is stricter than the seed schema for a bare ``ask_details``.
RUNTIME_RULES = ("acs.question-empty", "acs.timeout-seconds-range")

_TYPES, _AUTHS, _DISPOSITIONS = frozenset(APPROVER_TYPES), frozenset(AUTH_METHODS), frozenset(DISPOSITIONS)
_DETAILS = frozenset(
    (
        "approver",
        "question",
        "context",
        "options",
        "timeout_seconds",
        "timeout_disposition",
        "intent_extension",
    )
)
_APPROVER = frozenset(("type", "id", "endpoint", "auth"))
_BINDING = frozenset(BINDING_MEMBERS)
_ENVELOPE = frozenset(("jsonrpc", "id", "result", "error"))
_FORMS = ("auto", "ask_details", "result", "envelope")
_ASK_ORIGIN = re.compile(r"(?:steps/toolCallRequest|protocols/MCP/.+|wrapped:mcp-[^/]+/.+)\Z", re.DOTALL)
_HASH = re.compile(r"[0-9a-f]{64}\Z")
_VERSION = re.compile(r"0\.1\.\d+\Z", re.ASCII)
_is_uuid = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z", re.ASCII
).match
_M = C.MISSING


# --------------------------------------------------------------------------------------------------
# Requests.
# --------------------------------------------------------------------------------------------------


def parse_request(doc: Any, binding: Any = None, form: str = "auto") -> Ask:
    """An ACS ASK (bare ``ask_details``, ``ask`` result or its envelope) -> canonical :class:`Ask`.

    ``binding`` is askgate's binding context (§4.2), optional. ``form`` is ``auto`` (a ``jsonrpc``
    member means an envelope; ``ask_details``, ``decision`` or ``type: "final"`` a result; anything else
    bare ``ask_details``) or one of ``ask_details``, ``result``, ``envelope`` to say which it is.
    Raises ``AskgateError`` with every fault: code ``invalid_request``, or ``unsupported_version`` when
    only ``acs_version`` is wrong.
    """
    return _run(doc, binding, form, True)


def validate_request(doc: Any, binding: Any = None, form: str = "auto") -> list[Fault]:
    """Every fault :func:`parse_request` would raise (empty: valid), without building the :class:`Ask`.

    For callers that only need the verdict (``askgate validate``, benchmarks).
    """
    return _run(doc, binding, form, False)


def _run(doc: Any, binding: Any, form: str, build: bool) -> Any:
    if form not in _FORMS:
        raise AskgateError(
            f"unknown ACS form {form!r}",
            [Fault("", f"form must be one of {', '.join(_FORMS)}", "options.form")],
            code="invalid_options",
        )
    faults: list[Fault] = []
    if type(doc) is not dict:
        top = [Fault("", f"an ACS ask must be a JSON object, not {C.kind(doc)}", "type")]
        if not build:
            return top
        raise_if_faults(top, "invalid ACS ask", code="invalid_request")
    result: Any = None
    base = ""
    details: Any = doc
    if form == "auto":
        if "jsonrpc" in doc:
            form = "envelope"
        elif "ask_details" in doc or "decision" in doc or doc.get("type") == "final":
            form = "result"
    if form == "envelope":
        result, base = _envelope(faults, doc), "/result"
        if type(result) is not dict:
            result = details = _M  # nothing to read an ask from
    elif form == "result":
        result = doc
    version = ACS_VERSION
    request_id: Any = None
    reasoning: Any = None
    if type(result) is dict:
        details, version, request_id, reasoning = _result(faults, result, base)
        base += "/ask_details"
    parts = _details(faults, details, base, build) if details is not _M else None
    bound = _binding(faults, binding) if binding is not None else {}
    if request_id is not None and type(bound.get("request_id")) is str and bound["request_id"] != request_id:
        faults.append(
            Fault(
                "/binding/request_id",
                "binding.request_id differs from the result's request_id",
                "acs.request-id-mismatch",
            )
        )
    if not build:
        return faults
    if faults:
        versions_only = all(f.rule == "acs.unsupported-version" for f in faults)
        raise_if_faults(
            faults, "invalid ACS ask", code="unsupported_version" if versions_only else "invalid_request"
        )
    assert parts is not None
    approver, spec, deadline, notes = parts
    if reasoning is not None and "reasoning" not in bound:
        bound["reasoning"] = reasoning
    if request_id is not None and "request_id" not in bound:
        bound["request_id"] = request_id
    data = _ASK.copy()  # every field, the constant ones filled: see construct.template
    data["dialect_version"] = version
    data["prompt"] = details["question"]
    data["details"] = details.get("context")
    data["spec"] = spec
    data["respondent"] = approver
    data["deadline"] = deadline
    data["notes"] = notes
    data["original"] = doc
    if bound:
        data["external_id"] = bound.get("request_id")
        data["session_id"] = bound.get("session_id")
    data["binding"] = bound
    return make(Ask, data)


def parse_request_bytes(data: bytes | str, binding: Any = None, form: str = "auto") -> Ask:
    """Strict JSON text -> :func:`parse_request`; only ``AskgateError`` escapes."""
    return parse_request(loads_strict(data), binding=binding, form=form)


def _envelope(faults: list[Fault], doc: dict) -> Any:
    add = faults.append
    if doc.get("jsonrpc") != "2.0" or type(doc.get("jsonrpc")) is not str:
        add(Fault("/jsonrpc", 'jsonrpc must be "2.0"', "const"))
    if "id" not in doc:
        add(Fault("/id", 'the JSON-RPC envelope is missing required member "id"', "required"))
    else:
        rid = doc["id"]
        if not (rid is None or type(rid) is str or (type(rid) in (int, float))):
            add(Fault("/id", f"id must be a string, number or null, not {C.kind(rid)}", "type"))
    if not _ENVELOPE.issuperset(doc):
        C.unknown_members(faults, doc, _ENVELOPE, "", "the JSON-RPC envelope")
    if "error" in doc:
        add(Fault("/error", "the envelope carries a JSON-RPC error, not an ask", "acs.envelope-error"))
        if "result" in doc:
            add(Fault("/result", "an envelope holds exactly one of result and error", "oneOf"))
        return None
    if "result" not in doc:
        add(Fault("/result", 'the JSON-RPC envelope is missing required member "result"', "required"))
        return None
    result = doc["result"]
    if type(result) is not dict:
        add(Fault("/result", f"result must be an object, not {C.kind(result)}", "type"))
    return result


def _result(faults: list[Fault], result: dict, base: str) -> tuple[Any, str, Any, Any]:
    """Check the Guardian's ``ask`` result; return (ask_details or MISSING, version, request_id, reasoning)."""
    add = faults.append
    for name in ("type", "acs_version", "request_id", "decision", "reasoning", "ask_details"):
        if name not in result:
            add(Fault(f"{base}/{name}", f'the ask result is missing required member "{name}"', "required"))
    v = result.get("type", _M)
    if v is not _M and v != "final":
        add(Fault(f"{base}/type", 'result.type must be "final"', "const"))
    version = result.get("acs_version", _M)
    known = version is not _M and C.string(faults, version, f"{base}/acs_version", "acs_version")
    if known and not _VERSION.match(version):
        add(
            Fault(
                f"{base}/acs_version",
                f"acs_version {version!r} is not supported; askgate speaks ACS {ACS_VERSION}",
                "acs.unsupported-version",
            )
        )
    request_id = result.get("request_id", _M)
    if request_id is not _M:
        C.string(faults, request_id, f"{base}/request_id", "request_id", fmt="uuid")
    decision = result.get("decision", _M)
    if decision is not _M and decision != "ask":
        shown = decision if type(decision) is str else C.kind(decision)
        add(
            Fault(
                f"{base}/decision",
                f'decision must be "ask" for askgate to route it (got {shown!r})',
                "acs.not-ask",
            )
        )
    reasoning = result.get("reasoning", _M)
    if reasoning is not _M:
        C.string(faults, reasoning, f"{base}/reasoning", "reasoning")
    return (
        result.get("ask_details", _M),
        version if type(version) is str else ACS_VERSION,
        request_id if type(request_id) is str else None,
        reasoning if type(reasoning) is str else None,
    )


def _details(faults: list[Fault], d: Any, p: str, build: bool = True) -> Any:
    """Check ``ask_details``; return the canonical parts (respondent, spec, deadline, notes) when it is
    valid and ``build`` is set."""
    add = faults.append
    if type(d) is not dict:
        add(Fault(p, f"ask_details must be an object, not {C.kind(d)}", "type"))
        return None
    before = len(faults)
    g = d.get
    approver = g("approver", _M)
    if approver is _M:
        add(Fault(p + "/approver", 'ask_details is missing required member "approver"', "required"))
    else:
        _approver(faults, approver, p + "/approver")
    question = g("question", _M)
    if question is _M:
        add(Fault(p + "/question", 'ask_details is missing required member "question"', "required"))
    elif type(question) is not str:
        add(Fault(p + "/question", f"question must be a string, not {C.kind(question)}", "type"))
    elif not question:
        add(Fault(p + "/question", "question must not be empty", "acs.question-empty"))
    context = g("context", _M)
    if context is not _M and type(context) is not str:
        add(Fault(p + "/context", f"context must be a string, not {C.kind(context)}", "type"))
    options = g("options", _M)
    if options is not _M:
        if type(options) is not list:
            add(Fault(p + "/options", f"options must be an array, not {C.kind(options)}", "type"))
        else:
            for i, item in enumerate(options):
                if type(item) is not str:
                    add(
                        Fault(
                            f"{p}/options/{i}", f"options[{i}] must be a string, not {C.kind(item)}", "type"
                        )
                    )
    timeout = g("timeout_seconds", _M)
    if type(timeout) is int and 1 <= timeout <= C.MAX_SAFE_INTEGER:
        pass  # the common case, decided in one test
    elif timeout is _M:
        add(
            Fault(
                p + "/timeout_seconds", 'ask_details is missing required member "timeout_seconds"', "required"
            )
        )
    elif not C.is_integer(timeout):
        add(
            Fault(
                p + "/timeout_seconds", f"timeout_seconds must be an integer, not {C.kind(timeout)}", "type"
            )
        )
    elif timeout < 1:
        add(Fault(p + "/timeout_seconds", f"timeout_seconds must be at least 1 (got {timeout})", "minimum"))
    elif timeout > C.MAX_SAFE_INTEGER:
        add(
            Fault(
                p + "/timeout_seconds", "timeout_seconds must be at most 2^53-1", "acs.timeout-seconds-range"
            )
        )
    disposition = g("timeout_disposition", _M)
    if disposition is not _M and not (type(disposition) is str and disposition in _DISPOSITIONS):
        if type(disposition) is not str:
            add(
                Fault(
                    p + "/timeout_disposition",
                    f"timeout_disposition must be a string, not {C.kind(disposition)}",
                    "type",
                )
            )
        else:
            C.enum(
                faults,
                disposition,
                _DISPOSITIONS,
                DISPOSITIONS,
                p + "/timeout_disposition",
                "timeout_disposition",
            )
    ext = g("intent_extension", _M)
    if ext is not _M:
        faults.extend(check_intent_extension(ext, p + "/intent_extension"))
    if len(faults) != before or not build:
        return None

    notes: tuple[str, ...] = ()
    if not _DETAILS.issuperset(d):
        notes = tuple(
            f'ask_details member "{k}" ignored (unknown to ACS {ACS_VERSION})' for k in d if k not in _DETAILS
        )
    if ext is _M and not options:
        spec = _PLAIN_APPROVAL
    else:
        spec = make(
            ApprovalSpec,
            {
                "kind": "approval",
                "options": () if options is _M else tuple(options),
                "intent_extension": None if ext is _M else intent_extension_model(ext),
            },
        )
    auth = approver.get("auth")
    respondent = make(
        Respondent,
        {
            "kind": approver["type"],
            "id": approver["id"],
            "endpoint": approver.get("endpoint"),
            "auth_method": None if auth is None else auth.get("method"),
            "display_name": None,
        },
    )
    deadline = make(
        Deadline,
        {
            "expires_at": None,
            "timeout_seconds": float(timeout),
            "on_timeout": "deny" if disposition is _M else disposition,
        },
    )
    return respondent, spec, deadline, notes


def _approver(faults: list[Fault], a: Any, p: str) -> None:
    add = faults.append
    if type(a) is not dict:
        add(Fault(p, f"approver must be an object, not {C.kind(a)}", "type"))
        return
    kind = a.get("type", _M)
    if kind is _M:
        add(Fault(p + "/type", 'approver is missing required member "type"', "required"))
    elif type(kind) is not str:
        add(Fault(p + "/type", f"approver.type must be a string, not {C.kind(kind)}", "type"))
    elif kind not in _TYPES:
        C.enum(faults, kind, _TYPES, APPROVER_TYPES, p + "/type", "approver.type")
    ident = a.get("id", _M)
    if ident is _M:
        add(Fault(p + "/id", 'approver is missing required member "id"', "required"))
    elif type(ident) is not str:
        add(Fault(p + "/id", f"approver.id must be a string, not {C.kind(ident)}", "type"))
    endpoint = a.get("endpoint", _M)
    if endpoint is not _M and not (type(endpoint) is str and _is_uri(endpoint)):
        C.string(faults, endpoint, p + "/endpoint", "approver.endpoint", fmt="uri")
    auth = a.get("auth", _M)
    if auth is not _M:
        if type(auth) is not dict:
            add(Fault(p + "/auth", f"approver.auth must be an object, not {C.kind(auth)}", "type"))
        else:
            method = auth.get("method", _M)
            if method is not _M and not (type(method) is str and method in _AUTHS):
                if type(method) is not str:
                    add(
                        Fault(
                            p + "/auth/method",
                            f"approver.auth.method must be a string, not {C.kind(method)}",
                            "type",
                        )
                    )
                else:
                    C.enum(faults, method, _AUTHS, AUTH_METHODS, p + "/auth/method", "approver.auth.method")


def _binding(faults: list[Fault], binding: Any) -> dict[str, Any]:
    add = faults.append
    if type(binding) is not dict:
        add(Fault("/binding", f"binding must be an object, not {C.kind(binding)}", "type"))
        return {}
    if not _BINDING.issuperset(binding):
        C.unknown_members(faults, binding, _BINDING, "/binding", "binding")
    for name in BINDING_MEMBERS:
        v = binding.get(name, _M)
        if v is not _M and type(v) is not str:
            add(Fault(f"/binding/{name}", f"binding.{name} must be a string, not {C.kind(v)}", "type"))
    h = binding.get("request_hash")
    if type(h) is str and not _HASH.match(h):
        add(
            Fault(
                "/binding/request_hash",
                "binding.request_hash must be 64 lowercase hex digits (SHA-256)",
                "pattern",
            )
        )
    method = binding.get("method")
    if type(method) is str and not _ASK_ORIGIN.match(method):
        add(
            Fault(
                "/binding/method",
                f"ACS allows no ASK from {method!r}: only steps/toolCallRequest and wrapped MCP calls "
                "(protocols/MCP/*, wrapped:mcp-<version>/<method>)",
                "acs.ask-origin",
            )
        )
    return {k: v for k, v in binding.items() if k in _BINDING and type(v) is str}


# --------------------------------------------------------------------------------------------------
# Answers.
# --------------------------------------------------------------------------------------------------


def check_answer(
    ask: Ask, payload: Any, *, respondent: Respondent | None = None, answered_at: Any = None
) -> Answer:
    """The approver's decision (an ACS-shaped result, bare or in a JSON-RPC envelope) -> :class:`Answer`.

    Outcome ``accept`` with an :class:`ApprovalDecision` (``decided_by="approver"``) for both allow and
    deny. ``respondent`` is the *authenticated* approver, supplied by the caller (§4.4).
    """
    if not isinstance(ask.spec, ApprovalSpec):
        raise AskgateError(
            "not an ACS approval",
            [Fault("", "the ask is not an approval", "acs.not-approval")],
            code="invalid_answer",
        )
    faults: list[Fault] = []
    value, base = payload, ""
    if type(payload) is dict and "jsonrpc" in payload:
        value, base = _envelope(faults, payload), "/result"
    if value is not None or not faults:
        faults.extend(check_approval(ask.spec, value, base))
    if faults:
        code = (
            "capability_not_negotiated"
            if any(f.rule == "acs.approver-ask" for f in faults)
            else "invalid_answer"
        )
        raise_if_faults(faults, "invalid ACS approval", code=code)
    return Answer(
        outcome="accept", value=decision_model(value), respondent=respondent, answered_at=answered_at
    )


def render_answer(
    ask: Ask,
    answer: Answer,
    *,
    request_id: str,
    jsonrpc_id: str | int | None,
    chain_hash: str | None = None,
) -> dict[str, Any]:
    """Canonical Answer -> askgate's resolution envelope (§4.8).

    ``accept`` renders the approver's decision; ``decline`` renders a deny by the approver;
    ``timed_out``/``expired`` render the timeout disposition (``decided_by: "timeout"``, reason code
    ``ask_timeout``, no approver). ``cancel`` has no ACS rendering (``AskgateError(code="unsupported")``).
    ``chain_hash`` appears only when given.
    """
    faults: list[Fault] = []
    if type(request_id) is not str or not _is_uuid(request_id):
        faults.append(Fault("/result/request_id", f"request_id must be a uuid, got {request_id!r}", "format"))
    if chain_hash is not None and (type(chain_hash) is not str or not _HASH.match(chain_hash)):
        faults.append(Fault("/result/chain_hash", "chain_hash must be 64 lowercase hex digits", "pattern"))
    raise_if_faults(faults, "cannot render ACS resolution", code="invalid_answer")
    decision = _effective(ask, answer)
    by_approver = decision.decided_by == "approver"
    reasoning = decision.reasoning or _default_reasoning(ask, decision)
    askgate: dict[str, Any] = {}
    for key, name in (("ask_step_id", "step_id"), ("ask_request_id", "request_id")):
        if type(ask.binding.get(name)) is str:
            askgate[key] = ask.binding[name]
    askgate["decided_by"] = decision.decided_by
    if by_approver:
        who = answer.respondent or ask.respondent
        if who is not None:
            askgate["approver"] = {"type": who.kind, "id": who.id}
    if decision.selected_option is not None:
        askgate["selected_option"] = decision.selected_option
    if decision.intent_extension is not None:
        askgate["intent_extension"] = _extension_json(decision.intent_extension)
    result: dict[str, Any] = {
        "type": "final",
        "acs_version": ACS_VERSION,
        "request_id": request_id,
        "decision": decision.decision,
        "reasoning": reasoning,
        "reason_codes": ["approver_decision" if by_approver else "ask_timeout"],
        "policy_data": {"askgate": askgate},
    }
    if chain_hash is not None:
        result["chain_hash"] = chain_hash
    return {"jsonrpc": "2.0", "id": jsonrpc_id, "result": result}


def _effective(ask: Ask, answer: Answer) -> ApprovalDecision:
    value = answer.value
    if isinstance(value, dict):  # pydantic's smart union reads {"decision": "deny"} as a plain dict
        try:
            value = ApprovalDecision.model_validate(value)
        except ValueError:
            pass
    if answer.outcome == "accept":
        if not isinstance(value, ApprovalDecision):
            raise AskgateError(
                "cannot render ACS resolution",
                [
                    Fault(
                        "/result/decision",
                        "an accepted approval needs an ApprovalDecision value",
                        "acs.render",
                    )
                ],
                code="invalid_answer",
            )
        return value
    if answer.outcome == "decline":
        return ApprovalDecision(decision="deny", reasoning=answer.reason, decided_by="approver")
    if answer.outcome in ("timed_out", "expired"):
        if isinstance(value, ApprovalDecision):
            return value
        on_timeout = ask.deadline.on_timeout
        return ApprovalDecision(decision="allow" if on_timeout == "allow" else "deny", decided_by="timeout")
    raise AskgateError(
        "cannot render ACS resolution",
        [Fault("", "a cancelled ask has no ACS resolution: ACS defines no cancel", "acs.render")],
        code="unsupported",
    )


def _default_reasoning(ask: Ask, decision: ApprovalDecision) -> str:
    if decision.decided_by == "timeout":
        seconds = ask.deadline.timeout_seconds
        waited = f" within {seconds:g} s" if seconds is not None else ""
        return f"No approver answered{waited}; timeout disposition: {decision.decision}"
    return "Approved by the approver" if decision.decision == "allow" else "Denied by the approver"


def _extension_json(ext: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "capabilities": [cap.model_dump(mode="json", exclude_none=True) for cap in ext.capabilities],
        "scope": ext.scope,
    }
    if ext.provenance is not None:
        out["provenance"] = ext.provenance
    return out


def acs_error(code_name: str, message: str, jsonrpc_id: str | int | None, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error envelope with a code from the ACS registry or the JSON-RPC standard (§4.7)."""
    if code_name not in ERROR_CODES:
        raise AskgateError(
            f"unknown ACS error {code_name!r}",
            [
                Fault(
                    "",
                    f"unknown ACS error name {code_name!r}; expected one of {', '.join(ERROR_CODES)}",
                    "acs.error-name",
                )
            ],
            code="invalid_options",
        )
    error: dict[str, Any] = {"code": ERROR_CODES[code_name], "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": jsonrpc_id, "error": error}


def error_envelope(exc: AskgateError, jsonrpc_id: str | int | None) -> dict[str, Any]:
    """An :class:`AskgateError` as an ACS JSON-RPC error (faults in ``data``; INTERNAL_ERROR if unmapped)."""
    name = ERROR_NAMES.get(exc.code, "INTERNAL_ERROR")
    return acs_error(name, str(exc), jsonrpc_id, {"faults": [f.as_dict() for f in exc.faults]})


_PLAIN_APPROVAL = ApprovalSpec()
_ASK = template(
    Ask,
    id=None,
    dialect=DIALECT,
    external_id=None,
    purpose="approval",
    subject=None,
    consent=Ask.model_fields["consent"].default,
    timing="immediate",
    delivery=Ask.model_fields["delivery"].default,
    asker=None,
    session_id=None,
)
