"""An A2UI action event back to a canonical outcome and candidate answer (protocols.md §5.4, §5.6).

The event comes from a renderer askgate does not control, so nothing in it is trusted: its shape is
checked (all five action fields, a date-time timestamp, no extra keys), it must name this ask's surface,
one of this surface's actions and the button that carries it, its context may only hold the fields
that button sends, and every value is coerced as §5.6 "Reading the answer back" says and then checked
against the *ask* with :func:`askgate.core.answers.check_value` — never against the surface, whose
client-side checks are hints a hostile client can skip.

Every fault about a field points at ``/form/<prop>`` (the field's data path), so the inbox can re-render
the surface with the error next to the field (:func:`askgate.a2ui.surface.ask_to_surface` with
``faults=`` and ``values=typed_values(event, version)``). Faults about the event itself point into the
event (``/userAction/...`` or ``/action/...``).

Decisions where the spec is silent:

* An empty input (``""``, ``[]``, ``null``, or the key missing) means "not answered": the field is
  omitted, and a required field then fails with rule ``required``. This matches the client's
  ``required`` check, which treats empty as missing.
* Numbers typed into a text field are parsed from a decimal literal (surrounding spaces allowed); an
  integer field's ``3.0`` becomes ``3``. Booleans are never numbers and only ``true``/``false`` are booleans.
* A single choice arrives as a list (v0.8 ``MultipleChoice``, v0.9 ``ChoicePicker``): one element is
  the answer, more than one is a fault. A plain string is accepted too.
* A ``DateTimeInput`` value for a ``date`` field keeps its ``YYYY-MM-DD`` part; for a ``date-time``
  field a missing ``:ss`` is filled with ``:00``. No time zone is ever guessed, so a local time fails.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from askgate.a2ui.plan import (
    NO,
    YES,
    ActionPlan,
    FieldPlan,
    SurfacePlan,
    plan_ask,
)
from askgate.core.answers import check_value
from askgate.core.formats import is_date_time
from askgate.core.model import ApprovalSpec, Ask, FormSpec, Outcome
from askgate.errors import AskgateError, Fault, pointer_join, raise_if_faults

__all__ = ["action_to_payload", "parse_number", "typed_values"]

Version = Literal["0.8", "0.9"]
ACTION_FIELDS = ("name", "surfaceId", "sourceComponentId", "timestamp", "context")
_ABSENT = object()

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z", re.ASCII)
_INT = re.compile(r"[+-]?\d+\Z", re.ASCII)
_DATE_PREFIX = re.compile(
    r"(\d{4}-\d{2}-\d{2})(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?\Z", re.ASCII
)
_NO_SECONDS = re.compile(r"(\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2})((?:[Zz]|[+-]\d{2}:\d{2})?)\Z", re.ASCII)


def parse_number(text: str) -> int | float | None:
    """A decimal literal as an ``int`` (no point or exponent) or a finite ``float``; else ``None``."""
    s = text.strip()
    if len(s) > 400 or not _NUMBER.match(s):
        return None
    if _INT.match(s):
        return int(s)
    x = float(s)
    return x if math.isfinite(x) else None


def _what(v: Any) -> str:
    if v is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "text",
        list: "a list",
        dict: "an object",
    }.get(type(v), type(v).__name__)


# --------------------------------------------------------------------------------------------------
# The event envelope.
# --------------------------------------------------------------------------------------------------


def _unwrap(event: Any, version: str) -> tuple[dict[str, Any], str]:
    """The action object and its pointer, or an AskgateError with every envelope fault."""
    faults: list[Fault] = []
    if version not in ("0.8", "0.9"):
        raise AskgateError(
            f"unsupported A2UI version {version!r}",
            [Fault("", f"A2UI version must be 0.8 or 0.9, not {version!r}", "a2ui.version")],
            code="unsupported",
        )
    key = "userAction" if version == "0.8" else "action"
    base = "/" + key
    if not isinstance(event, dict):
        raise_if_faults(
            [Fault("", f"an A2UI client event must be an object, not {_what(event)}", "type")],
            "invalid A2UI action",
            code="invalid_answer",
        )
    if "error" in event:
        err = event.get("error")
        msg = err.get("message") if isinstance(err, dict) and isinstance(err.get("message"), str) else None
        faults.append(
            Fault(
                "/error",
                "the client reported an error instead of an answer" + (f": {msg}" if msg else ""),
                "a2ui.client-error",
            )
        )
    expected = {key} if version == "0.8" else {"version", key}
    for k in event:
        if k not in expected and k != "error":
            faults.append(
                Fault(
                    pointer_join("", k),
                    f"unexpected key {k!r} in a v{version} client event",
                    "additionalProperties",
                )
            )
    if version == "0.9" and event.get("version") != "v0.9":
        faults.append(Fault("/version", 'a v0.9 client event must have "version": "v0.9"', "const"))
    action = event.get(key)
    if key not in event:
        faults.append(Fault("", f"the client event has no {key!r}", "required"))
    elif not isinstance(action, dict):
        faults.append(Fault(base, f"{key!r} must be an object, not {_what(action)}", "type"))
    else:
        for name in ACTION_FIELDS:
            ptr = pointer_join(base, name)
            if name not in action:
                faults.append(Fault(base, f"{key!r} is missing {name!r}", "required"))
            elif name == "context":
                if not isinstance(action[name], dict):
                    faults.append(Fault(ptr, f"context must be an object, not {_what(action[name])}", "type"))
            elif not isinstance(action[name], str):
                faults.append(Fault(ptr, f"{name} must be a string, not {_what(action[name])}", "type"))
            elif name == "timestamp" and not is_date_time(action[name]):
                faults.append(Fault(ptr, "timestamp must be an RFC 3339 date-time", "format"))
        for k in action:
            if k not in ACTION_FIELDS:
                faults.append(
                    Fault(pointer_join(base, k), f"unexpected key {k!r} in {key!r}", "additionalProperties")
                )
    raise_if_faults(faults, "invalid A2UI action", code="invalid_answer")
    assert isinstance(action, dict)
    return action, base


def typed_values(event: Any, version: Version) -> dict[str, Any]:
    """What the person typed (the event's context, unchecked), to re-render after faults; ``{}`` if none."""
    key = "userAction" if version == "0.8" else "action"
    action = event.get(key) if isinstance(event, dict) else None
    context = action.get("context") if isinstance(action, dict) else None
    return dict(context) if isinstance(context, dict) else {}


# --------------------------------------------------------------------------------------------------
# Coercion per widget (§5.6 "Reading the answer back"): untrusted raw value -> candidate value.
# --------------------------------------------------------------------------------------------------


def _empty(v: Any) -> bool:
    return v is None or v == "" or (isinstance(v, list) and not v)


def _coerce(fp: FieldPlan, raw: Any) -> tuple[Any, str | None]:
    """(candidate or _ABSENT, problem message or None)."""
    if _empty(raw):
        return _ABSENT, None
    w = fp.widget
    if w in ("text", "longtext"):
        return (raw, None) if isinstance(raw, str) else (_ABSENT, f"expected text, got {_what(raw)}")
    if w in ("date", "datetime"):
        if not isinstance(raw, str):
            return _ABSENT, f"expected a date, got {_what(raw)}"
        if w == "date":
            m = _DATE_PREFIX.match(raw)
            return (m.group(1) if m else raw), None
        m = _NO_SECONDS.match(raw)
        return (f"{m.group(1)}:00{m.group(2)}" if m else raw), None
    if w in ("number", "integer", "slider"):
        integer = fp.field.kind == "integer"
        if isinstance(raw, bool):
            return _ABSENT, "expected a number, got a boolean"
        if isinstance(raw, str):
            x = parse_number(raw)
            if x is None:
                return _ABSENT, f"{raw[:40]!r} is not a number"
        elif isinstance(raw, (int, float)):
            if isinstance(raw, float) and not math.isfinite(raw):
                return _ABSENT, "expected a finite number"
            x = raw
        else:
            return _ABSENT, f"expected a number, got {_what(raw)}"
        if integer and isinstance(x, float) and x.is_integer():
            x = int(x)
        return x, None
    if w == "checkbox":
        return (
            (raw, None) if isinstance(raw, bool) else (_ABSENT, f"expected true or false, got {_what(raw)}")
        )
    if w == "choice":
        if isinstance(raw, list):
            if len(raw) > 1:
                return _ABSENT, "choose only one option"
            raw = raw[0]
        if not isinstance(raw, str):
            return _ABSENT, f"expected an option, got {_what(raw)}"
        if fp.yes_no:
            if raw == YES:
                return True, None
            if raw == NO:
                return False, None
            return _ABSENT, "choose yes or no"
        return raw, None
    # multi: a list of strings; item types are checked by check_value against the ask.
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        return _ABSENT, f"expected a list of options, got {_what(raw)}"
    return list(raw), None


def _read_fields(
    plan: SurfacePlan, action: ActionPlan, context: dict[str, Any]
) -> tuple[dict[str, Any], list[Fault], set[str]]:
    """Coerced values of the fields ``action`` sends, context faults, and the props already faulted."""
    faults: list[Fault] = []
    faulted: set[str] = set()
    values: dict[str, Any] = {}
    for key in context:
        if key not in action.context:
            faults.append(
                Fault(
                    pointer_join("/form", key),
                    f"{key!r} is not a field this button sends",
                    "additionalProperties",
                )
            )
    for prop in action.context:
        fp = plan.field(prop)
        assert fp is not None
        value, problem = _coerce(fp, context.get(prop))
        if problem is not None:
            faults.append(Fault(fp.path, f"{fp.field.title or prop}: {problem}", "type"))
            faulted.add(prop)
        elif value is not _ABSENT:
            values[prop] = value
    return values, faults, faulted


def _field_of(plan: SurfacePlan, pointer: str) -> str | None:
    for fp in sorted(plan.fields, key=lambda f: -len(f.path)):
        if pointer == fp.path or pointer.startswith(fp.path + "/"):
            return fp.prop
    return None


def _form(ask: Ask, plan: SurfacePlan, values: dict[str, Any], faulted: set[str]) -> tuple[Any, list[Fault]]:
    spec = ask.spec
    faults: list[Fault] = []
    for fp in plan.fields:
        if fp.required and fp.prop not in values and fp.prop not in faulted:
            faults.append(Fault(fp.path, f"{fp.field.title or fp.prop} is required", "required"))
    if isinstance(spec, FormSpec):
        checked = check_value(spec, values, "/form")
        for f in checked:
            if f.rule == "required" and f.pointer == "/form":
                continue  # reported above, at the field's own pointer
            prop = _field_of(plan, f.pointer)
            if prop is not None and prop in faulted:
                continue
            faults.append(f)
        return values, faults
    # Single-value specs: the one field is /form/value.
    fp = plan.fields[0]
    if fp.prop not in values:
        return None, faults
    value = values[fp.prop]
    faults.extend(check_value(spec, value, fp.path))
    return value, faults


_APPROVAL_FIELD = {"selected_option": "option", "reasoning": "reasoning", "intent_extension": "scope"}


def _approval(
    spec: ApprovalSpec, plan: SurfacePlan, action: ActionPlan, values: dict[str, Any], faulted: set[str]
) -> tuple[dict[str, Any], list[Fault]]:
    faults: list[Fault] = []
    decision: dict[str, Any] = {"decision": action.kind}
    if "reasoning" in values:
        decision["reasoning"] = values["reasoning"]
    option = values.get("option")
    if option is not None:
        decision["selected_option"] = option
        if option not in spec.options:
            faults.append(Fault("/form/option", "choose one of the offered options", "enum"))
    elif action.kind == "allow" and spec.options and "option" not in faulted:
        faults.append(Fault("/form/option", "choose an option to allow", "required"))
    ext = spec.intent_extension
    if action.kind == "allow" and ext is not None:
        scope = values.get("scope", ext.scope)
        allowed = ("session", "this_request") if ext.scope == "session" else ("this_request",)
        if scope not in allowed:
            faults.append(Fault("/form/scope", "the scope may only be narrowed to this request", "enum"))
        else:
            decision["intent_extension"] = ext.model_copy(update={"scope": scope}).model_dump(
                mode="json", exclude_none=True
            )
    if not faults:
        for f in check_value(spec, decision, ""):
            token = f.pointer.split("/")[1] if f.pointer.startswith("/") else ""
            prop = _APPROVAL_FIELD.get(token)
            faults.append(Fault("/form/" + prop if prop else "/form", f.message, f.rule))
    return decision, faults


def action_to_payload(ask: Ask, event: dict[str, Any], version: Version) -> tuple[Outcome, Any]:
    """The outcome and candidate value an action event carries for ``ask``.

    Returns ``("decline", None)`` / ``("cancel", None)``, ``("accept", value)`` with the value checked
    against ``ask.spec`` (a ``dict`` for a form, a ``str``/``bool``/number for a single-value spec, an
    ApprovalDecision-shaped ``dict`` for an approval, whose allow and deny are both ``accept``).
    Raises :class:`~askgate.errors.AskgateError` (code ``invalid_answer``) with every fault otherwise.
    """
    action, base = _unwrap(event, version)
    plan = plan_ask(ask)
    faults: list[Fault] = []
    if action["surfaceId"] != plan.surface_id:
        faults.append(
            Fault(
                base + "/surfaceId",
                f"this event is for surface {action['surfaceId']!r}, not this ask's {plan.surface_id!r}",
                "a2ui.surface",
            )
        )
    chosen = plan.action(action["name"])
    if chosen is None:
        names = ", ".join(a.name for a in plan.actions)
        faults.append(
            Fault(
                base + "/name",
                f"{action['name']!r} is not an action of this surface ({names})",
                "a2ui.action",
            )
        )
    elif action["sourceComponentId"] != chosen.id:
        faults.append(
            Fault(
                base + "/sourceComponentId",
                f"action {chosen.name!r} comes from component {chosen.id!r}, "
                f"not {action['sourceComponentId']!r}",
                "a2ui.action",
            )
        )
    raise_if_faults(faults, "invalid A2UI action", code="invalid_answer")
    assert chosen is not None
    values, faults, faulted = _read_fields(plan, chosen, action["context"])
    if chosen.kind in ("decline", "cancel"):
        raise_if_faults(faults, "invalid A2UI action", code="invalid_answer")
        outcome: Outcome = "decline" if chosen.kind == "decline" else "cancel"
        return outcome, None
    if plan.approval is not None:
        value, more = _approval(plan.approval, plan, chosen, values, faulted)
    else:
        value, more = _form(ask, plan, values, faulted)
    faults.extend(more)
    raise_if_faults(faults, "invalid answer", code="invalid_answer")
    return "accept", value
