"""AQP ``QueryRequest`` (protocol 2026-07-30) <-> canonical Ask / Answer; QueryResponse out.

Only the seed schema of AQP is public (protocols.md §3.1); everything about answers, intake rules and
the QueryResponse is askgate's own proposal (§3.4) and lives in this module so it can change in one
place.

Request validation is one hand-compiled pass implementing every keyword of the seed (including the
``if``/``then`` conditionals, with the "vacuous if" noise of §3.3 suppressed: a missing ``format`` or
``consentMode`` is reported as ``required`` and the conditionals that hinge on it stay silent). The
``subject`` ``$ref`` resolves to askgate's stand-in (``schemas/aqp-query-subject.schema.json``): any JSON
value, at most 16 KiB serialised.

Rules askgate adds beyond the seed (all [ours]):

- ``aqp.subject-too-large``: the subject's compact UTF-8 JSON exceeds 16384 bytes.
- ``aqp.unsupported_json_schema``: a ``structured`` ``jsonSchema`` outside the renderable flat subset
  (§1.4 widened as MCP 2025-11-25); applied always, because no canonical answer spec can be built.
- With ``now=``: ``aqp.already_expired`` (``expiresAt <= now``) and ``aqp.endpoint_required`` (https
  binding without an https endpoint; mcp without endpoint and operation).

The error code is ``invalid_request`` when any seed keyword fails, otherwise the intake code of the
first intake fault (``already_expired``, ``endpoint_required``, ``unsupported_json_schema``).

``Ask.original`` is the document as received except that ``delivery.authorization`` is masked: the
credential lives only in ``Ask.delivery.authorization`` (a ``SecretStr``) so that logging or auditing the
ask never leaks it (§3.4).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from pydantic import SecretStr

from askgate.core import formats
from askgate.core.construct import make, template
from askgate.core.formats import check_format
from askgate.core.model import (
    Answer,
    Ask,
    ChoiceSpec,
    Consent,
    Deadline,
    Delivery,
    Dialect,
    FormSpec,
    NumberSpec,
    Respondent,
    TextSpec,
    YesNoSpec,
)
from askgate.errors import Fault, raise_if_faults
from askgate.jsonload import loads_strict
from askgate.protocols import _checks as C
from askgate.protocols.flat_schema import parse_requested_schema

DIALECT = Dialect.AQP
PROTOCOL_VERSION = "2026-07-30"
SUBJECT_MAX_BYTES = 16 * 1024
TEXT_DEFAULT_MAX = 16000
MASK = "**********"

TYPES = (
    "feedback",
    "evaluation",
    "clarification",
    "approval",
    "status",
    "preference",
    "correction",
    "survey",
    "custom",
)
TIMINGS = ("immediate", "after_outcome_known", "after_task_complete", "deferred")
CONSENT_MODES = ("not_required", "ask_once", "ask_always")
FORMATS = ("text", "structured", "choice", "boolean", "number")
BINDINGS = ("https", "mcp", "a2a", "other")
STATUSES = ("answered", "declined", "cancelled", "expired")
RESPONDENT_KINDS = ("human", "agent", "service")
CONSENT_BASES = ("not_required", "granted_now", "stored_grant")

#: Rules by which askgate is stricter than the seed schema (the differential test allows exactly these).
RUNTIME_RULES = ("aqp.subject-too-large", "aqp.unsupported_json_schema")
#: Intake rules applied only when the caller passes ``now`` (§3.4 "valid but unserviceable").
INTAKE_RULES = ("aqp.already_expired", "aqp.endpoint_required", "aqp.unsupported_json_schema")

_TYPES, _TIMINGS, _MODES = frozenset(TYPES), frozenset(TIMINGS), frozenset(CONSENT_MODES)
_FORMATS, _BINDINGS = frozenset(FORMATS), frozenset(BINDINGS)
_REQUIRED = (
    "protocolVersion", "queryId", "type", "subject", "prompt", "timing", "consentMode", "response", "delivery", "expiresAt",
)  # fmt: skip
_REQUIRED_SET = frozenset(_REQUIRED)
_TOP = frozenset((*_REQUIRED, "instructions", "dataPolicy", "consentScope"))
_RESPONSE = frozenset(("format", "jsonSchema", "choices", "maxLength"))
_DELIVERY = frozenset(("binding", "endpoint", "authorization", "operation"))
_MEMBER_FORMAT = {"maxLength": "text", "jsonSchema": "structured", "choices": "choice"}
_SPEC_FORMAT = {
    "text": "text",
    "form": "structured",
    "choice": "choice",
    "yes_no": "boolean",
    "number": "number",
}
_M = C.MISSING
# formats.is_uuid's pattern, bound once: the hot path saves a call layer per document.
_is_uuid = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z", re.ASCII
).match
_is_uri = formats.is_uri
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


# --------------------------------------------------------------------------------------------------
# Requests.
# --------------------------------------------------------------------------------------------------


def parse_request(doc: Any, now: datetime | str | None = None) -> Ask:
    """A decoded QueryRequest -> canonical :class:`Ask`, or ``AskgateError`` with every fault.

    ``now`` (an aware datetime or RFC 3339 string; the caller's clock) switches on the intake rules of
    §3.4. Without it only the seed schema and askgate's structural rules apply.
    """
    return _run(doc, now, True)


def validate_request(doc: Any, now: datetime | str | None = None) -> list[Fault]:
    """Every fault :func:`parse_request` would raise (empty: valid), without building the :class:`Ask`.

    For callers that only need the verdict (``askgate validate``, benchmarks): the checks are the same
    single pass, only the canonical models are not constructed.
    """
    return _run(doc, now, False)


def _run(doc: Any, now: datetime | str | None, build: bool) -> Any:
    faults: list[Fault] = []
    intake: list[Fault] = []
    if type(doc) is not dict:
        top = [Fault("", f"a QueryRequest must be a JSON object, not {C.kind(doc)}", "type")]
        if not build:
            return top
        raise_if_faults(top, "invalid AQP QueryRequest", code="invalid_request")
    add = faults.append
    g = doc.get
    # Fast path first: each check is one inline test; the helpers run only to word the fault.
    if not _REQUIRED_SET.issubset(doc):
        C.required(faults, doc, _REQUIRED, "", "QueryRequest")
    if not _TOP.issuperset(doc):
        C.unknown_members(faults, doc, _TOP, "", "QueryRequest")

    v = g("protocolVersion", _M)
    if v is not _M and not (type(v) is str and v == PROTOCOL_VERSION):
        add(Fault("/protocolVersion", f'protocolVersion must be "{PROTOCOL_VERSION}"', "const"))
    query_id = g("queryId", _M)
    if query_id is not _M and not (type(query_id) is str and _is_uuid(query_id)):
        C.string(faults, query_id, "/queryId", "queryId", fmt="uuid")
    purpose = g("type", _M)
    if purpose is not _M and not (type(purpose) is str and purpose in _TYPES):
        C.enum(faults, purpose, _TYPES, TYPES, "/type", "type")
    subject = g("subject", _M)
    if subject is not _M:
        _subject(faults, subject)
    prompt = g("prompt", _M)
    if prompt is not _M and not (type(prompt) is str and 0 < len(prompt) <= 4000):
        C.string(faults, prompt, "/prompt", "prompt", 1, 4000)
    instructions = g("instructions", _M)
    if instructions is not _M and not (type(instructions) is str and 0 < len(instructions) <= 4000):
        C.string(faults, instructions, "/instructions", "instructions", 1, 4000)
    timing = g("timing", _M)
    if timing is not _M and not (type(timing) is str and timing in _TIMINGS):
        C.enum(faults, timing, _TIMINGS, TIMINGS, "/timing", "timing")
    mode = g("consentMode", _M)
    mode_ok = type(mode) is str and mode in _MODES
    if mode is not _M and not mode_ok:
        C.enum(faults, mode, _MODES, CONSENT_MODES, "/consentMode", "consentMode")
    data_policy = g("dataPolicy", _M)
    if data_policy is not _M and not (type(data_policy) is str and 0 < len(data_policy) <= 1000):
        C.string(faults, data_policy, "/dataPolicy", "dataPolicy", 1, 1000)
    scope = g("consentScope", _M)
    if scope is not _M and not (type(scope) is str and 8 <= len(scope) <= 256):
        C.string(faults, scope, "/consentScope", "consentScope", 8, 256)
    if mode_ok:  # a missing or invalid consentMode leaves both conditionals silent (§3.3)
        if mode == "ask_once":
            if scope is _M:
                add(
                    Fault(
                        "/consentScope",
                        'consentMode "ask_once" requires consentScope',
                        "aqp.consentScope-required",
                    )
                )
        elif scope is not _M:
            add(
                Fault(
                    "/consentScope",
                    f'consentScope is not allowed with consentMode "{mode}"',
                    "aqp.consentScope-forbidden",
                )
            )
    expires = g("expiresAt", _M)
    expires_at = C.parse_date_time(expires) if type(expires) is str else None
    if expires is not _M and expires_at is None:
        C.string(faults, expires, "/expiresAt", "expiresAt", fmt="date-time")

    response = g("response", _M)
    fmt = _response(faults, response) if response is not _M else None
    delivery = g("delivery", _M)
    binding = _delivery(faults, delivery) if delivery is not _M else None

    spec: Any = None
    if fmt == "structured" and type(response.get("jsonSchema")) is dict:
        spec = _structured(intake, response["jsonSchema"])
    if now is not None:
        if expires_at is not None and expires_at <= C.as_aware(now):
            intake.append(
                Fault("/expiresAt", f"expiresAt {expires} is not in the future", "aqp.already_expired")
            )
        if binding is not None:
            _endpoint_rule(intake, delivery, binding)

    if not build:
        return faults + intake
    if faults or intake:
        code = "invalid_request" if faults else intake[0].rule.removeprefix("aqp.")
        raise_if_faults(faults + intake, "invalid AQP QueryRequest", code=code)

    notes: list[str] = []
    if spec is None:
        spec = _simple_spec(fmt, response)
    if len(response) > 1:
        for member in response:
            owner = _MEMBER_FORMAT.get(member)
            if owner is not None and owner != fmt:
                notes.append(f'response.{member} ignored: it does not apply to format "{fmt}"')
    if binding == "other":
        for member in ("endpoint", "authorization", "operation"):
            if member in delivery:
                notes.append(f'delivery.{member} ignored: binding "other" is pull-only')
    data = _ASK.copy()  # every field, the constant ones filled: see construct.template
    data["external_id"] = query_id
    data["purpose"] = purpose
    data["prompt"] = prompt
    if instructions is not _M:
        data["details"] = instructions
    data["subject"] = subject
    data["spec"] = spec
    data["deadline"] = make(
        Deadline, {"expires_at": expires_at, "timeout_seconds": None, "on_timeout": "expire"}
    )
    if mode != "not_required" or data_policy is not _M:
        data["consent"] = make(
            Consent,
            {
                "mode": mode,
                "scope": None if scope is _M else scope,
                "data_policy": None if data_policy is _M else data_policy,
            },
        )
    data["timing"] = timing
    data["binding"] = {}
    data["notes"] = tuple(notes) if notes else ()
    data["original"] = doc
    if len(delivery) == 1:  # the binding alone: one shared model per binding
        data["delivery"] = _BINDING_ONLY[binding]
    else:
        auth = delivery.get("authorization")
        if auth is not None:  # the credential lives only in the SecretStr (module docstring)
            original = data["original"] = dict(doc)
            original["delivery"] = {**delivery, "authorization": MASK}
        data["delivery"] = make(
            Delivery,
            {
                "binding": binding,
                "endpoint": delivery.get("endpoint"),
                "authorization": None if auth is None else SecretStr(auth),
                "operation": delivery.get("operation"),
            },
        )
    return make(Ask, data)


def parse_request_bytes(data: bytes | str, now: datetime | str | None = None) -> Ask:
    """Strict JSON text -> :func:`parse_request`; only ``AskgateError`` escapes."""
    return parse_request(loads_strict(data), now=now)


def _subject(faults: list[Fault], subject: Any) -> None:
    if C.json_size_fits(subject, SUBJECT_MAX_BYTES):
        return
    try:
        text = _encode(subject)
    except (TypeError, ValueError, RecursionError):
        faults.append(Fault("/subject", "subject must be a JSON value", "type"))
        return
    if len(text) * 4 > SUBJECT_MAX_BYTES and (size := len(text.encode("utf-8"))) > SUBJECT_MAX_BYTES:
        faults.append(
            Fault(
                "/subject",
                f"subject is {size} bytes as JSON; at most {SUBJECT_MAX_BYTES} allowed",
                "aqp.subject-too-large",
            )
        )


def _response(faults: list[Fault], response: Any) -> str | None:
    """Check ``response``; return its format when the whole object is valid, else ``None``."""
    add = faults.append
    if type(response) is not dict:
        add(Fault("/response", f"response must be an object, not {C.kind(response)}", "type"))
        return None
    before = len(faults)
    fmt = response.get("format", _M)
    if fmt is _M:
        add(Fault("/response/format", 'response is missing required member "format"', "required"))
    else:
        C.enum(faults, fmt, _FORMATS, FORMATS, "/response/format", "response.format")
    if not _RESPONSE.issuperset(response):
        C.unknown_members(faults, response, _RESPONSE, "/response", "response")
    schema = response.get("jsonSchema", _M)
    if schema is not _M and type(schema) is not dict:
        add(
            Fault(
                "/response/jsonSchema", f"response.jsonSchema must be an object, not {C.kind(schema)}", "type"
            )
        )
    choices = response.get("choices", _M)
    if choices is not _M:
        _choices(faults, choices)
    max_length = response.get("maxLength", _M)
    if max_length is not _M:
        if not C.is_integer(max_length):
            add(
                Fault(
                    "/response/maxLength",
                    f"response.maxLength must be an integer, not {C.kind(max_length)}",
                    "type",
                )
            )
        elif max_length < 1:
            add(Fault("/response/maxLength", "response.maxLength must be at least 1", "minimum"))
        elif max_length > 16000:
            add(Fault("/response/maxLength", "response.maxLength must be at most 16000", "maximum"))
    # The conditionals only speak once format is a known value (a missing format is vacuous, §3.3).
    if fmt == "structured" and schema is _M:
        add(
            Fault(
                "/response/jsonSchema",
                'response.format "structured" requires response.jsonSchema',
                "aqp.jsonSchema-required",
            )
        )
    elif fmt == "choice" and choices is _M:
        add(
            Fault(
                "/response/choices",
                'response.format "choice" requires response.choices',
                "aqp.choices-required",
            )
        )
    return fmt if len(faults) == before else None


def _choices(faults: list[Fault], choices: Any) -> None:
    add = faults.append
    if type(choices) is not list:
        add(Fault("/response/choices", f"response.choices must be an array, not {C.kind(choices)}", "type"))
        return
    n = len(choices)
    if n < 1:
        add(Fault("/response/choices", "response.choices must not be empty", "minItems"))
    elif n > 64:
        add(Fault("/response/choices", f"response.choices holds {n} items; at most 64 allowed", "maxItems"))
    seen: set[Any] = set()
    for i, item in enumerate(choices):
        if type(item) is str:
            if not 1 <= len(item) <= 256:
                C.string(faults, item, f"/response/choices/{i}", f"response.choices[{i}]", 1, 256)
            key: Any = item
        else:
            add(
                Fault(
                    f"/response/choices/{i}",
                    f"response.choices[{i}] must be a string, not {C.kind(item)}",
                    "type",
                )
            )
            key = C.freeze(item)
        if key in seen:
            add(
                Fault(
                    f"/response/choices/{i}",
                    f"response.choices[{i}] repeats an earlier choice",
                    "uniqueItems",
                )
            )
        seen.add(key)


def _delivery(faults: list[Fault], delivery: Any) -> str | None:
    """Check ``delivery``; return its binding when the whole object is valid, else ``None``."""
    if type(delivery) is not dict:
        faults.append(Fault("/delivery", f"delivery must be an object, not {C.kind(delivery)}", "type"))
        return None
    before = len(faults)
    binding = delivery.get("binding", _M)
    if binding is _M:
        faults.append(Fault("/delivery/binding", 'delivery is missing required member "binding"', "required"))
    else:
        C.enum(faults, binding, _BINDINGS, BINDINGS, "/delivery/binding", "delivery.binding")
    if not _DELIVERY.issuperset(delivery):
        C.unknown_members(faults, delivery, _DELIVERY, "/delivery", "delivery")
    v = delivery.get("endpoint", _M)
    if v is not _M and not (type(v) is str and len(v) <= 2048 and _is_uri(v)):
        C.string(faults, v, "/delivery/endpoint", "delivery.endpoint", 0, 2048, fmt="uri")
    v = delivery.get("authorization", _M)
    if v is not _M:
        if type(v) is str:  # never echo a credential in a message
            if not 1 <= len(v) <= 4096:
                rule = "minLength" if not v else "maxLength"
                faults.append(
                    Fault("/delivery/authorization", "delivery.authorization must be 1-4096 characters", rule)
                )
        else:
            faults.append(
                Fault(
                    "/delivery/authorization",
                    f"delivery.authorization must be a string, not {C.kind(v)}",
                    "type",
                )
            )
    v = delivery.get("operation", _M)
    if v is not _M and not (type(v) is str and 0 < len(v) <= 128):
        C.string(faults, v, "/delivery/operation", "delivery.operation", 1, 128)
    return binding if len(faults) == before else None


def _endpoint_rule(intake: list[Fault], delivery: dict, binding: str) -> None:
    endpoint = delivery.get("endpoint")
    if binding == "https":
        if endpoint is None or endpoint[:6].lower() != "https:":
            intake.append(
                Fault(
                    "/delivery/endpoint",
                    'binding "https" needs an https endpoint to deliver to',
                    "aqp.endpoint_required",
                )
            )
    elif binding == "mcp":
        for member in ("endpoint", "operation"):
            if member not in delivery:
                intake.append(
                    Fault(
                        f"/delivery/{member}",
                        f'binding "mcp" needs delivery.{member}',
                        "aqp.endpoint_required",
                    )
                )


def _structured(intake: list[Fault], schema: dict) -> FormSpec | None:

    form, problems = parse_requested_schema(schema, profile="aqp", pointer="/response/jsonSchema")
    if problems:
        intake.append(
            Fault(
                "/response/jsonSchema",
                "response.jsonSchema cannot be rendered: askgate supports flat forms only (see the following faults)",
                "aqp.unsupported_json_schema",
            )
        )
        intake.extend(problems)
        return None
    return form


_YES_NO = YesNoSpec()
_NUMBER = NumberSpec()
_TEXT = TextSpec(max_length=TEXT_DEFAULT_MAX)
_BINDING_ONLY = {b: Delivery(binding=b) for b in BINDINGS}
_ASK = template(
    Ask,
    id=None,
    dialect=DIALECT,
    dialect_version=PROTOCOL_VERSION,
    details=None,
    respondent=None,
    consent=Consent(),
    asker=None,
    session_id=None,
)


def _simple_spec(fmt: str, response: dict) -> Any:
    if fmt == "text":
        if "maxLength" not in response:
            return _TEXT
        return make(
            TextSpec,
            {"kind": "text", "min_length": 1, "max_length": int(response.get("maxLength", TEXT_DEFAULT_MAX))},
        )
    if fmt == "choice":
        return make(ChoiceSpec, {"kind": "choice", "choices": tuple(response["choices"])})
    return _YES_NO if fmt == "boolean" else _NUMBER


# --------------------------------------------------------------------------------------------------
# Answers.
# --------------------------------------------------------------------------------------------------

_RESPONSE_MEMBERS = frozenset(
    ("protocolVersion", "queryId", "status", "answer", "respondent", "answeredAt", "consent", "issuedAt")
)


def response_format(ask: Ask) -> str:
    """The AQP ``response.format`` an ask's spec came from."""
    return _SPEC_FORMAT[ask.spec.kind]


def check_answer(
    ask: Ask,
    payload: Any,
    *,
    respondent: Respondent | None = None,
    answered_at: datetime | None = None,
) -> Answer:
    """A respondent's answer -> canonical :class:`Answer`.

    ``payload`` is the QueryResponse ``answer`` object ``{"format", "value"}`` or a QueryResponse-like
    object ``{"status": "answered" | "declined", "answer"?}`` (a respondent can answer or decline;
    ``cancelled`` and ``expired`` are the asker's and the clock's, never a respondent's). The value is
    checked against ``ask.spec`` with :func:`askgate.core.answers.check_value`.
    """
    from askgate.core.answers import check_value, normalise_value

    faults: list[Fault] = []
    fmt = response_format(ask)
    if type(payload) is not dict:
        raise_if_faults(
            [Fault("", f"an AQP answer must be a JSON object, not {C.kind(payload)}", "type")],
            "invalid AQP answer",
            code="invalid_answer",
        )
    if "status" in payload:
        C.unknown_members(faults, payload, _RESPONSE_MEMBERS, "", "QueryResponse")
        status = payload["status"]
        if C.enum(faults, status, frozenset(STATUSES), STATUSES, "/status", "status") and status not in (
            "answered",
            "declined",
        ):
            faults.append(
                Fault("/status", f'a respondent cannot report status "{status}"', "aqp.answer-status")
            )
        version = payload.get("protocolVersion", _M)
        if version is not _M and version != PROTOCOL_VERSION:
            faults.append(Fault("/protocolVersion", f'protocolVersion must be "{PROTOCOL_VERSION}"', "const"))
        qid = payload.get("queryId", _M)
        if qid is not _M and (type(qid) is not str or qid != ask.external_id):
            faults.append(Fault("/queryId", "queryId does not name this query", "aqp.queryId-mismatch"))
        _response_members(faults, payload)
        answer = payload.get("answer", _M)
        if status == "answered" and answer is _M:
            faults.append(Fault("/answer", 'status "answered" requires answer', "required"))
        elif status != "answered" and answer is not _M:
            faults.append(
                Fault("/answer", 'answer is only allowed with status "answered"', "aqp.answer-forbidden")
            )
        if status == "declined":
            raise_if_faults(faults, "invalid AQP answer", code="invalid_answer")
            return Answer(outcome="decline", respondent=respondent, answered_at=answered_at)
        base = "/answer"
    else:
        answer, base = payload, ""
    value = _M
    if answer is not _M:
        if type(answer) is not dict:
            faults.append(Fault(base, f"answer must be an object, not {C.kind(answer)}", "type"))
        else:
            C.required(faults, answer, ("format", "value"), base, "answer")
            C.unknown_members(faults, answer, frozenset(("format", "value")), base, "answer")
            got = answer.get("format", _M)
            known = got is not _M and C.enum(
                faults, got, _FORMATS, FORMATS, base + "/format", "answer.format"
            )
            if known and got != fmt:
                faults.append(
                    Fault(
                        base + "/format",
                        f'answer.format must repeat the query\'s format "{fmt}"',
                        "aqp.answer-format",
                    )
                )
            value = answer.get("value", _M)
            if value is not _M:
                faults.extend(check_value(ask.spec, value, base + "/value"))
    raise_if_faults(faults, "invalid AQP answer", code="invalid_answer")
    return Answer(
        outcome="accept",
        value=normalise_value(ask.spec, value),
        respondent=respondent,
        answered_at=answered_at,
    )


_RESPONDENT = frozenset(("id", "kind"))
_CONSENT = frozenset(("mode", "basis"))


def _response_members(faults: list[Fault], payload: dict) -> None:
    """The QueryResponse members a respondent may echo are shape-checked (askgate's response schema),
    though the broker, not the payload, decides who answered, when, and on which consent."""
    who = payload.get("respondent", _M)
    if who is not _M:
        if type(who) is not dict:
            faults.append(Fault("/respondent", f"respondent must be an object, not {C.kind(who)}", "type"))
        else:
            C.required(faults, who, ("id", "kind"), "/respondent", "respondent")
            C.unknown_members(faults, who, _RESPONDENT, "/respondent", "respondent")
            if "id" in who:
                C.string(faults, who["id"], "/respondent/id", "respondent.id", 1)
            if "kind" in who:
                C.enum(
                    faults,
                    who["kind"],
                    frozenset(RESPONDENT_KINDS),
                    RESPONDENT_KINDS,
                    "/respondent/kind",
                    "respondent.kind",
                )
    consent = payload.get("consent", _M)
    if consent is not _M:
        if type(consent) is not dict:
            faults.append(Fault("/consent", f"consent must be an object, not {C.kind(consent)}", "type"))
        else:
            C.required(faults, consent, ("mode", "basis"), "/consent", "consent")
            C.unknown_members(faults, consent, _CONSENT, "/consent", "consent")
            if "mode" in consent:
                C.enum(faults, consent["mode"], _MODES, CONSENT_MODES, "/consent/mode", "consent.mode")
            if "basis" in consent:
                C.enum(
                    faults,
                    consent["basis"],
                    frozenset(CONSENT_BASES),
                    CONSENT_BASES,
                    "/consent/basis",
                    "consent.basis",
                )
    for member in ("answeredAt", "issuedAt"):
        stamp = payload.get(member, _M)
        if stamp is not _M:
            C.string(faults, stamp, f"/{member}", member, fmt="date-time")


def render_answer(
    ask: Ask,
    answer: Answer,
    *,
    issued_at: datetime | str,
    consent_basis: str | None = None,
) -> dict[str, Any]:
    """Canonical Answer -> askgate's proposed QueryResponse (§3.4).

    ``answered`` carries ``answer``, ``respondent`` (the answer's, else the ask's), ``answeredAt`` and
    ``consent {mode, basis}``; every other status carries none of them, so a consent refusal and an
    explicit decline look the same to the asker. ``consent_basis`` (else ``answer.consent_basis``)
    defaults to ``not_required`` only for ``consentMode: not_required``. ``timed_out`` renders as
    ``expired``. Raises ``AskgateError(code="invalid_answer")`` when an ``answered`` response would be
    incomplete or inconsistent.
    """
    faults: list[Fault] = []
    status = {"accept": "answered", "decline": "declined", "cancel": "cancelled"}.get(
        answer.outcome, "expired"
    )
    if isinstance(issued_at, str):
        issued = issued_at
        if not check_format("date-time", issued):
            faults.append(Fault("/issuedAt", f"issued_at is not an RFC 3339 date-time: {issued!r}", "format"))
    else:
        issued = C.rfc3339(issued_at)
    out: dict[str, Any] = {"protocolVersion": PROTOCOL_VERSION, "queryId": ask.external_id, "status": status}
    if ask.external_id is None:
        faults.append(Fault("/queryId", "the ask has no queryId", "aqp.render"))
    if status == "answered":
        who = answer.respondent or ask.respondent
        basis = consent_basis or answer.consent_basis
        mode = ask.consent.mode
        if basis is None and mode == "not_required":
            basis = "not_required"
        if who is None:
            faults.append(Fault("/respondent", "an answered QueryResponse needs a respondent", "aqp.render"))
        if answer.answered_at is None:
            faults.append(Fault("/answeredAt", "an answered QueryResponse needs answeredAt", "aqp.render"))
        if (
            basis not in CONSENT_BASES
            or (mode == "not_required") != (basis == "not_required")
            or (mode == "ask_always" and basis == "stored_grant")
        ):
            faults.append(
                Fault(
                    "/consent/basis",
                    f'consent basis {basis!r} does not fit consentMode "{mode}"',
                    "aqp.render",
                )
            )
        if answer.value is None:
            faults.append(Fault("/answer/value", "an answered QueryResponse needs a value", "aqp.render"))
        raise_if_faults(faults, "cannot render AQP QueryResponse", code="invalid_answer")
        out["answer"] = {"format": response_format(ask), "value": _json_value(answer.value)}
        out["respondent"] = {"id": who.id, "kind": who.kind}
        out["answeredAt"] = C.rfc3339(answer.answered_at)
        out["consent"] = {"mode": mode, "basis": basis}
    raise_if_faults(faults, "cannot render AQP QueryResponse", code="invalid_answer")
    out["issuedAt"] = issued
    return out


def _json_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: list(v) if isinstance(v, tuple) else v for k, v in value.items()}
    if isinstance(value, tuple):
        return list(value)
    return value
