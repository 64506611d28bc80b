"""Checks on an approver's decision against the ASK it answers (protocols.md §4.3, §4.5, §4.8) [ours].

ACS defines no approval-response message; askgate's is an ACS-shaped result ``{decision: allow|deny,
reasoning?, selected_option?, intent_extension?}``. Beyond its shape, three rules keep an approver
from granting more than was asked:

- ``acs.approver-ask``: an approver returns ``allow`` or ``deny``, never ``ask`` (ACS is single-hop;
  the codec maps this to error code ``capability_not_negotiated`` / JSON-RPC ``-32003``).
- ``acs.option-required`` / ``acs.option-unknown``: when the ASK lists ``options``, an ``allow`` names
  exactly one of them (exact match) and a ``deny`` may; without options none may be named.
- ``acs.extension-*``: an intent extension comes only with ``allow``, only when one was proposed, and
  never wider than the proposal: every granted capability is one of the proposed ones, and the scope
  may narrow ``session`` -> ``this_request`` but never widen.

The shape of an intent extension (shared with request validation) is :func:`check_intent_extension`.
"""

from __future__ import annotations

import json
from typing import Any

from askgate.core.construct import make
from askgate.core.model import ApprovalDecision, ApprovalSpec, Capability, IntentExtension
from askgate.errors import Fault, pointer_join

DECISIONS = ("allow", "deny")
SCOPES = ("this_request", "session")
ORIGINS = ("user_input", "system", "tool_output", "retrieved", "agent_generated", "a2a_inbound", "external")
CAPABILITY_MEMBERS = ("tool", "operation", "resource")
_SCOPES = frozenset(SCOPES)
_CAPABILITY_SET = frozenset(CAPABILITY_MEMBERS)
_ORIGINS = frozenset(ORIGINS)

#: Rules by which askgate is stricter than any schema (documented above).
RULES = (
    "acs.approver-ask",
    "acs.option-required",
    "acs.option-unknown",
    "acs.extension-with-deny",
    "acs.extension-not-proposed",
    "acs.extension-wider-capabilities",
    "acs.extension-wider-scope",
)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def check_intent_extension(value: Any, pointer: str, label: str = "intent_extension") -> list[Fault]:
    """The seed's ``intent_extension`` shape plus askgate's provenance stand-in (§4.2, §3.3).

    ``capabilities`` (>= 1 objects whose ``tool``/``operation``/``resource`` are strings when present,
    other members allowed) and ``scope`` are required; ``provenance``, when present, is an object with
    string ``provenance_id``, an ``origin`` from the ACS list, optional string ``source_id`` and an
    optional array of string ``derived_from``. Unknown members pass, as ACS asks.
    """
    if _extension_ok(value):
        return []
    faults: list[Fault] = []
    add = faults.append
    if type(value) is not dict:
        add(Fault(pointer, f"{label} must be an object, not {_kind(value)}", "type"))
        return faults
    caps = value.get("capabilities", _ABSENT)
    if caps is _ABSENT:
        add(
            Fault(
                pointer_join(pointer, "capabilities"),
                f'{label} is missing required member "capabilities"',
                "required",
            )
        )
    elif type(caps) is not list:
        add(
            Fault(
                pointer_join(pointer, "capabilities"),
                f"{label}.capabilities must be an array, not {_kind(caps)}",
                "type",
            )
        )
    else:
        if not caps:
            add(
                Fault(
                    pointer_join(pointer, "capabilities"),
                    f"{label}.capabilities must not be empty",
                    "minItems",
                )
            )
        for i, cap in enumerate(caps):
            where = pointer_join(pointer_join(pointer, "capabilities"), i)
            if type(cap) is not dict:
                add(Fault(where, f"{label}.capabilities[{i}] must be an object, not {_kind(cap)}", "type"))
                continue
            for member in CAPABILITY_MEMBERS:
                v = cap.get(member, _ABSENT)
                if v is not _ABSENT and type(v) is not str:
                    add(
                        Fault(
                            pointer_join(where, member),
                            f"{label}.capabilities[{i}].{member} must be a string, not {_kind(v)}",
                            "type",
                        )
                    )
    scope = value.get("scope", _ABSENT)
    if scope is _ABSENT:
        add(Fault(pointer_join(pointer, "scope"), f'{label} is missing required member "scope"', "required"))
    elif type(scope) is not str:
        add(
            Fault(
                pointer_join(pointer, "scope"), f"{label}.scope must be a string, not {_kind(scope)}", "type"
            )
        )
    elif scope not in SCOPES:
        add(
            Fault(
                pointer_join(pointer, "scope"),
                f"{label}.scope must be one of this_request, session (got {scope!r})",
                "enum",
            )
        )
    prov = value.get("provenance", _ABSENT)
    if prov is not _ABSENT:
        faults.extend(check_provenance(prov, pointer_join(pointer, "provenance"), f"{label}.provenance"))
    return faults


def _extension_ok(value: Any) -> bool:
    """The verdict of :func:`check_intent_extension` without building a single pointer (hot path)."""
    if type(value) is not dict:
        return False
    caps = value.get("capabilities")
    scope = value.get("scope")
    if type(caps) is not list or not caps or type(scope) is not str or scope not in _SCOPES:
        return False
    for cap in caps:
        if type(cap) is not dict:
            return False
        for member in CAPABILITY_MEMBERS:
            v = cap.get(member, "")
            if type(v) is not str:
                return False
    prov = value.get("provenance", _ABSENT)
    if prov is _ABSENT:
        return True
    origin = prov.get("origin") if type(prov) is dict else None
    if type(origin) is not str or origin not in _ORIGINS or type(prov.get("provenance_id")) is not str:
        return False
    if type(prov.get("source_id", "")) is not str:
        return False
    derived = prov.get("derived_from", _ABSENT)
    return derived is _ABSENT or (type(derived) is list and all(type(x) is str for x in derived))


def check_provenance(value: Any, pointer: str, label: str = "provenance") -> list[Fault]:
    """askgate's ACS provenance schema (``askgate/protocols/schemas/acs-provenance.schema.json``)."""
    faults: list[Fault] = []
    add = faults.append
    if type(value) is not dict:
        add(Fault(pointer, f"{label} must be an object, not {_kind(value)}", "type"))
        return faults
    for member in ("provenance_id", "origin"):
        if member not in value:
            add(
                Fault(
                    pointer_join(pointer, member),
                    f'{label} is missing required member "{member}"',
                    "required",
                )
            )
    for member in ("provenance_id", "origin", "source_id"):
        v = value.get(member, _ABSENT)
        if v is not _ABSENT and type(v) is not str:
            add(
                Fault(
                    pointer_join(pointer, member),
                    f"{label}.{member} must be a string, not {_kind(v)}",
                    "type",
                )
            )
    origin = value.get("origin")
    if type(origin) is str and origin not in ORIGINS:
        add(
            Fault(
                pointer_join(pointer, "origin"),
                f"{label}.origin must be one of {', '.join(ORIGINS)} (got {origin!r})",
                "enum",
            )
        )
    derived = value.get("derived_from", _ABSENT)
    if derived is not _ABSENT:
        if type(derived) is not list:
            add(
                Fault(
                    pointer_join(pointer, "derived_from"),
                    f"{label}.derived_from must be an array, not {_kind(derived)}",
                    "type",
                )
            )
        else:
            for i, item in enumerate(derived):
                if type(item) is not str:
                    add(
                        Fault(
                            pointer_join(pointer_join(pointer, "derived_from"), i),
                            f"{label}.derived_from[{i}] must be a string, not {_kind(item)}",
                            "type",
                        )
                    )
    return faults


_ABSENT: Any = object()


def intent_extension_model(value: dict[str, Any]) -> IntentExtension:
    """A checked ``intent_extension`` object -> :class:`IntentExtension` (extra capability members kept)."""
    prov = value.get("provenance", _ABSENT)
    return make(
        IntentExtension,
        {
            "capabilities": tuple([capability_model(cap) for cap in value["capabilities"]]),
            "scope": value["scope"],
            "provenance": None if prov is _ABSENT else prov,
        },
        fields_set=_EXTENSION_SET if prov is _ABSENT else _EXTENSION_PROV_SET,
    )


def capability_model(cap: dict[str, Any]) -> Capability:
    """A checked capability object -> :class:`Capability` (members beyond tool/operation/resource kept)."""
    g = cap.get
    data = {"tool": g("tool"), "operation": g("operation"), "resource": g("resource")}
    if len(cap) == 3 and _CAPABILITY_SET.issuperset(cap):  # the common case: one shared fields set
        return make(Capability, data, extra={}, fields_set=_CAPABILITY_FIELDS)
    extra = {k: v for k, v in cap.items() if k not in _CAPABILITY_SET}
    return make(Capability, data, extra=extra, fields_set=set(cap))


# Shared fields sets (models built by make are frozen; pydantic copies the set before changing it).
_EXTENSION_SET = {"capabilities", "scope"}
_EXTENSION_PROV_SET = {"capabilities", "scope", "provenance"}
_CAPABILITY_FIELDS = set(CAPABILITY_MEMBERS)


def _capability_key(cap: Capability | dict[str, Any]) -> str:
    model = cap if isinstance(cap, Capability) else Capability.model_validate(cap)
    return json.dumps(model.model_dump(mode="json"), sort_keys=True)


def check_approval(spec: ApprovalSpec, value: Any, pointer: str = "") -> list[Fault]:
    """Every fault in an approver's decision ``value`` against the ASK's :class:`ApprovalSpec`.

    ``value`` is the decision object in JSON form (``{"decision", "reasoning"?, "selected_option"?,
    "intent_extension"?}``; other members pass, as in any ACS result) or an :class:`ApprovalDecision`.
    """
    if isinstance(value, ApprovalDecision):
        value = value.model_dump(mode="json", exclude_none=True, exclude={"decided_by"})
    faults: list[Fault] = []
    add = faults.append
    if type(value) is not dict:
        return [Fault(pointer, f"an approval decision must be an object, not {_kind(value)}", "type")]
    decision = value.get("decision", _ABSENT)
    if decision is _ABSENT:
        add(
            Fault(
                pointer_join(pointer, "decision"),
                'the decision object is missing required member "decision"',
                "required",
            )
        )
    elif decision == "ask" and type(decision) is str:
        add(
            Fault(
                pointer_join(pointer, "decision"),
                'an approver must decide "allow" or "deny"; "ask" is not allowed (ACS is single-hop)',
                "acs.approver-ask",
            )
        )
    elif type(decision) is not str or decision not in DECISIONS:
        shown = decision if type(decision) is str else _kind(decision)
        add(
            Fault(
                pointer_join(pointer, "decision"), f"decision must be allow or deny (got {shown!r})", "enum"
            )
        )
    reasoning = value.get("reasoning", _ABSENT)
    if reasoning is not _ABSENT and type(reasoning) is not str:
        add(
            Fault(
                pointer_join(pointer, "reasoning"),
                f"reasoning must be a string, not {_kind(reasoning)}",
                "type",
            )
        )

    option = value.get("selected_option", _ABSENT)
    if option is not _ABSENT:
        if type(option) is not str:
            add(
                Fault(
                    pointer_join(pointer, "selected_option"),
                    f"selected_option must be a string, not {_kind(option)}",
                    "type",
                )
            )
        elif not spec.options:
            add(
                Fault(
                    pointer_join(pointer, "selected_option"),
                    "selected_option is not allowed: the ASK offers no options",
                    "acs.option-unknown",
                )
            )
        elif option not in spec.options:
            add(
                Fault(
                    pointer_join(pointer, "selected_option"),
                    f"selected_option {option!r} is not one of the ASK's options ({', '.join(spec.options)})",
                    "acs.option-unknown",
                )
            )
    elif decision == "allow" and spec.options:
        add(
            Fault(
                pointer_join(pointer, "selected_option"),
                f"an allow must name one of the ASK's options ({', '.join(spec.options)})",
                "acs.option-required",
            )
        )

    ext = value.get("intent_extension", _ABSENT)
    if ext is not _ABSENT:
        where = pointer_join(pointer, "intent_extension")
        shape = check_intent_extension(ext, where)
        faults.extend(shape)
        if decision == "deny":
            add(Fault(where, "an intent extension can only be granted with allow", "acs.extension-with-deny"))
        elif spec.intent_extension is None:
            add(
                Fault(
                    where,
                    "the ASK proposed no intent extension, so none can be granted",
                    "acs.extension-not-proposed",
                )
            )
        elif not shape:
            _no_wider(faults, spec.intent_extension, ext, where)
    return faults


def _no_wider(faults: list[Fault], proposal: IntentExtension, granted: dict[str, Any], where: str) -> None:
    proposed = {_capability_key(cap) for cap in proposal.capabilities}
    for i, cap in enumerate(granted["capabilities"]):
        if _capability_key(cap) not in proposed:
            faults.append(
                Fault(
                    pointer_join(pointer_join(where, "capabilities"), i),
                    f"capability {i} was not proposed by the ASK; an approver may narrow the proposal, never widen it",
                    "acs.extension-wider-capabilities",
                )
            )
    if granted["scope"] == "session" and proposal.scope == "this_request":
        faults.append(
            Fault(
                pointer_join(where, "scope"),
                'scope "session" is wider than the proposed "this_request"',
                "acs.extension-wider-scope",
            )
        )


def decision_model(value: Any, *, decided_by: str = "approver") -> ApprovalDecision:
    """A decision object that passed :func:`check_approval` -> :class:`ApprovalDecision`."""
    if isinstance(value, ApprovalDecision):
        return value
    ext = value.get("intent_extension")
    return ApprovalDecision(
        decision=value["decision"],
        reasoning=value.get("reasoning"),
        selected_option=value.get("selected_option"),
        intent_extension=None if ext is None else intent_extension_model(ext),
        decided_by=decided_by,  # type: ignore[arg-type]
    )


def normalise_approval(spec: ApprovalSpec, value: Any) -> ApprovalDecision:
    """The canonical value of a checked decision (``askgate.core.answers.normalise_value`` calls this)."""
    return decision_model(value)
