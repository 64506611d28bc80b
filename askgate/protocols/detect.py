"""Telling which dialect a request document is written in.

Detection looks only at *shape* (keys and a few constant values), never at validity: a broken AQP
request is still AQP, so the user gets AQP's faults rather than "unknown dialect". Evidence comes in two
strengths:

- **markers**, which only one dialect uses: MCP's JSON-RPC ``method: "elicitation/create"``; the A2A
  ``{"elicitation/v1": {...}}`` data-part payload (also inside an A2A message's ``parts``); AQP's
  ``protocolVersion: "2026-07-30"``; an ACS Guardian ``ask`` result (``decision: "ask"`` or
  ``ask_details``), bare or in its JSON-RPC envelope.
- **signatures**, key sets typical of one dialect: three or more of AQP's ten required keys, or an
  AQP-only key (``queryId``, ``consentMode``, ``consentScope``, ``expiresAt``, ``dataPolicy``); an ACS
  ``ask_details`` key (``approver``, ``question``, ``timeout_seconds``, ``timeout_disposition``,
  ``intent_extension``); MCP params keys (``mode``, ``url``, ``elicitationId``, ``_meta``), a
  ``$schema`` in ``requestedSchema`` or a 2025-11-25-only keyword in a property (``oneOf``, ``anyOf``,
  ``items``, ``minItems``, ``maxItems``, ``pattern``, ``type: "array"``).

Markers win over signatures. Evidence for two dialects at the same strength is *ambiguous* and refused.

**The bare ``{message, requestedSchema}`` form** is both an A2A ``elicitation/v1`` payload and MCP
``elicitation/create`` params. askgate's decision: it is **a2a-elicitation** when every key in it fits the
closed ``elicitation/v1`` keyword sets (top level ``message``/``requestedSchema``; schema ``type``/
``properties``/``required``; per-type property keywords of the seed), because that profile is the
stricter one (its runtime rules are a superset of what MCP checks on those keywords); anything outside
those sets (an unknown or MCP-only keyword, a non-primitive property type) makes it **mcp-elicitation**,
whose own validator then reports what is wrong. Pass ``--as`` / an explicit dialect to override.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from askgate.core.model import Dialect
from askgate.errors import AskgateError, Fault

__all__ = ["detect_dialect", "detection_evidence"]

_AQP_VERSION = "2026-07-30"
_AQP_REQUIRED = frozenset(
    {
        "protocolVersion", "queryId", "type", "subject", "prompt",
        "timing", "consentMode", "response", "delivery", "expiresAt",
    }
)  # fmt: skip
_AQP_ONLY = frozenset({"queryId", "consentMode", "consentScope", "expiresAt", "dataPolicy"})
_ACS_KEYS = frozenset({"approver", "question", "timeout_seconds", "timeout_disposition", "intent_extension"})
_MCP_PARAM_KEYS = frozenset({"mode", "url", "elicitationId", "_meta"})
_MCP_PROPERTY_KEYWORDS = frozenset({"oneOf", "anyOf", "items", "minItems", "maxItems", "pattern"})

_A2A_TOP = frozenset({"message", "requestedSchema"})
_A2A_SCHEMA = frozenset({"type", "properties", "required"})
_A2A_COMMON = frozenset({"type", "title", "description", "default"})
_A2A_PROPERTY: dict[str, frozenset[str]] = {
    "string": _A2A_COMMON | {"minLength", "maxLength", "format", "enum", "enumNames"},
    "number": _A2A_COMMON | {"minimum", "maximum"},
    "integer": _A2A_COMMON | {"minimum", "maximum"},
    "boolean": _A2A_COMMON,
}
_ELICITATION_KEY = "elicitation/v1"
_MCP_METHOD = "elicitation/create"


def _markers(doc: Mapping[str, Any]) -> dict[Dialect, list[str]]:
    found: dict[Dialect, list[str]] = {}

    def add(dialect: Dialect, why: str) -> None:
        found.setdefault(dialect, []).append(why)

    if doc.get("method") == _MCP_METHOD:
        add(Dialect.MCP_ELICITATION, f'JSON-RPC method "{_MCP_METHOD}"')
    if _ELICITATION_KEY in doc:
        add(Dialect.A2A_ELICITATION, f'"{_ELICITATION_KEY}" payload key')
    parts = doc.get("parts")
    if isinstance(parts, list) and any(
        isinstance(p, Mapping) and isinstance(p.get("data"), Mapping) and _ELICITATION_KEY in p["data"]
        for p in parts
    ):
        add(Dialect.A2A_ELICITATION, f'A2A message with an "{_ELICITATION_KEY}" data part')
    if doc.get("protocolVersion") == _AQP_VERSION:
        add(Dialect.AQP, f'protocolVersion "{_AQP_VERSION}"')
    if "ask_details" in doc or doc.get("decision") == "ask":
        add(Dialect.ACS, 'an ACS "ask" result (decision "ask" / ask_details)')
    result = doc.get("result")
    if isinstance(result, Mapping) and (result.get("decision") == "ask" or "ask_details" in result):
        add(Dialect.ACS, 'a JSON-RPC envelope holding an ACS "ask" result')
    return found


def _fits_a2a(doc: Mapping[str, Any]) -> str | None:
    """``None`` if every key fits ``elicitation/v1``'s closed keyword sets, else the first misfit."""
    for key in doc:
        if key not in _A2A_TOP:
            return f'top-level key "{key}"'
    schema = doc.get("requestedSchema")
    if not isinstance(schema, Mapping):
        return None
    for key in schema:
        if key not in _A2A_SCHEMA:
            return f'requestedSchema keyword "{key}"'
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            continue
        allowed = _A2A_PROPERTY.get(prop.get("type")) if isinstance(prop.get("type"), str) else None
        if allowed is None:
            return f'property "{name}" type {prop.get("type")!r}'
        for key in prop:
            if key not in allowed:
                return f'property "{name}" keyword "{key}"'
    return None


def _mcp_schema_evidence(doc: Mapping[str, Any]) -> list[str]:
    schema = doc.get("requestedSchema")
    if not isinstance(schema, Mapping):
        return []
    out = []
    if "$schema" in schema:
        out.append('"$schema" in requestedSchema (MCP 2025-11-25)')
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, prop in properties.items():
            if not isinstance(prop, Mapping):
                continue
            extra = sorted(k for k in prop if k in _MCP_PROPERTY_KEYWORDS)
            if prop.get("type") == "array":
                extra.append('type "array"')
            if extra:
                out.append(f'property "{name}" uses MCP 2025-11-25 keyword(s) {", ".join(extra)}')
    return out


def _signatures(doc: Mapping[str, Any]) -> dict[Dialect, list[str]]:
    found: dict[Dialect, list[str]] = {}
    keys = set(doc)
    aqp_required = keys & _AQP_REQUIRED
    aqp_only = keys & _AQP_ONLY
    if len(aqp_required) >= 3 or aqp_only:
        found[Dialect.AQP] = [f"AQP keys {', '.join(sorted(aqp_required | aqp_only))}"]
    acs = keys & _ACS_KEYS
    if acs:
        found[Dialect.ACS] = [f"ACS ask_details keys {', '.join(sorted(acs))}"]
    mcp = [f'MCP params key "{k}"' for k in sorted(keys & _MCP_PARAM_KEYS)] + _mcp_schema_evidence(doc)
    if mcp:
        found[Dialect.MCP_ELICITATION] = mcp
    elif keys & _A2A_TOP:
        misfit = _fits_a2a(doc)
        if misfit is None:
            found[Dialect.A2A_ELICITATION] = [
                "bare {message, requestedSchema} within the elicitation/v1 keyword sets"
            ]
        else:
            found[Dialect.MCP_ELICITATION] = [
                f"bare {{message, requestedSchema}} outside elicitation/v1: {misfit}"
            ]
    return found


def detection_evidence(doc: Any) -> tuple[dict[Dialect, list[str]], dict[Dialect, list[str]]]:
    """The (markers, signatures) found in ``doc``, each dialect -> reasons. For diagnostics."""
    if not isinstance(doc, Mapping):
        return {}, {}
    return _markers(doc), _signatures(doc)


def _hint(doc: Mapping[str, Any]) -> str:
    keys = set(doc)
    if "action" in keys and keys <= {"action", "content", "_meta"}:
        return " It looks like an elicitation answer ({action, content}); only requests are detected."
    if "jsonrpc" in keys and "method" in keys:
        return f' JSON-RPC method {doc.get("method")!r} is not an ask (MCP asks use "{_MCP_METHOD}").'
    return ""


def _refuse(message: str, rule: str) -> AskgateError:
    return AskgateError(message, [Fault("", message, rule)], code="unknown_dialect")


def _describe(found: dict[Dialect, list[str]]) -> str:
    return "; ".join(f"{d.value} ({', '.join(why)})" for d, why in found.items())


def detect_dialect(doc: Any) -> Dialect:
    """The dialect of request document ``doc`` (decoded JSON).

    Raises ``AskgateError(code="unknown_dialect")`` when nothing identifies the document or when it
    carries evidence for more than one dialect; the fault says what was found.
    """
    if not isinstance(doc, Mapping):
        kind = "an array" if isinstance(doc, list) else type(doc).__name__ if doc is not None else "null"
        raise _refuse(f"cannot tell the dialect: a request is a JSON object, not {kind}", "detect.not-object")
    markers, signatures = _markers(doc), _signatures(doc)
    for found in (markers, signatures):
        if len(found) == 1:
            return next(iter(found))
        if len(found) > 1:
            raise _refuse(
                f"cannot tell the dialect: evidence for several: {_describe(found)}", "detect.ambiguous"
            )
    keys = ", ".join(sorted(map(str, doc))[:12]) or "none"
    raise _refuse(
        f"cannot tell the dialect: no a2a-elicitation, mcp-elicitation, aqp or acs request shape "
        f"(top-level keys: {keys}).{_hint(doc)}",
        "detect.unknown",
    )
