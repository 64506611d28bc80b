"""Dialect-neutral answer checks: is this value a valid answer to that answer spec?

Every codec's ``check_answer`` calls :func:`check_value` after checking its own envelope, so a form
answer is judged the same way whether it came as an A2A elicitation response, an MCP ``ElicitResult``
or an AQP ``structured`` value (protocols.md §1.5, §2.3 and the AQP format table in §3.4). All faults
are collected; pointers are relative to the caller's ``pointer`` (where the value sits in its document).
"""

from __future__ import annotations

import math
from typing import Any

from askgate.core.ecma_pattern import PatternError, pattern_matches
from askgate.core.formats import check_format
from askgate.core.model import (
    AnswerSpec,
    ApprovalSpec,
    ChoiceSpec,
    FormSpec,
    NumberSpec,
    TextSpec,
    YesNoSpec,
)
from askgate.errors import Fault, pointer_join

OTHER = "other"
"""The "other" convention (§1.4): choosing the option ``other`` makes a string field named ``other`` required."""

_JSON_TYPES = {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "an array",
               tuple: "an array", dict: "an object", type(None): "null"}


def _what(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number_faults(value: Any, ptr: str, label: str, minimum: Any, maximum: Any, integer: bool) -> list[Fault]:
    if not _is_number(value):
        return [Fault(ptr, f"{label} must be {'an integer' if integer else 'a number'}, not {_what(value)}", "type")]
    if isinstance(value, float) and not math.isfinite(value):
        return [Fault(ptr, f"{label} must be a finite number", "type")]
    if integer and isinstance(value, float) and not value.is_integer():
        return [Fault(ptr, f"{label} must be a whole number", "type")]
    out = []
    if minimum is not None and value < minimum:
        out.append(Fault(ptr, f"{label} must be at least {minimum}", "minimum"))
    if maximum is not None and value > maximum:
        out.append(Fault(ptr, f"{label} must be at most {maximum}", "maximum"))
    return out


def _string_faults(f: Any, value: Any, ptr: str, label: str) -> list[Fault]:
    if type(value) is not str:
        return [Fault(ptr, f"{label} must be a string, not {_what(value)}", "type")]
    out = []
    n = len(value)  # Python str length counts code points, as JSON Schema does
    if f.min_length is not None and n < f.min_length:
        out.append(Fault(ptr, f"{label} must be at least {f.min_length} characters long", "minLength"))
    if f.max_length is not None and n > f.max_length:
        out.append(Fault(ptr, f"{label} must be at most {f.max_length} characters long", "maxLength"))
    if f.format is not None and not check_format(f.format, value):
        out.append(Fault(ptr, f"{label} is not a valid {f.format}", "format"))
    if f.pattern is not None:
        try:
            matched = pattern_matches(f.pattern, value)
        except PatternError:
            matched = False
        if not matched:
            out.append(Fault(ptr, f"{label} does not match the pattern {f.pattern}", "pattern"))
    return out


def _choice_faults(f: Any, value: Any, ptr: str, label: str) -> list[Fault]:
    if type(value) is not str:
        return [Fault(ptr, f"{label} must be a string, not {_what(value)}", "type")]
    if not any(o.value == value for o in f.options):
        rule = "oneOf" if f.titled else "enum"
        return [Fault(ptr, f"{label} must be one of the offered options", rule)]
    return []


def _multi_faults(f: Any, value: Any, ptr: str, label: str) -> list[Fault]:
    if type(value) not in (list, tuple):
        return [Fault(ptr, f"{label} must be a list of options, not {_what(value)}", "type")]
    allowed = {o.value for o in f.options}
    out = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        iptr = pointer_join(ptr, i)
        if type(item) is not str:
            out.append(Fault(iptr, f"{label} items must be strings, not {_what(item)}", "type"))
            continue
        if item not in allowed:
            out.append(Fault(iptr, f"{label} item {item!r} is not one of the offered options", "enum"))
        if item in seen:
            out.append(Fault(iptr, f"{label} must not repeat {item!r}", "uniqueItems"))
        seen.add(item)
    if f.min_items is not None and len(value) < f.min_items:
        out.append(Fault(ptr, f"{label} needs at least {f.min_items} selections", "minItems"))
    if f.max_items is not None and len(value) > f.max_items:
        out.append(Fault(ptr, f"{label} allows at most {f.max_items} selections", "maxItems"))
    return out


def _field_faults(f: Any, value: Any, ptr: str) -> list[Fault]:
    label = f'property "{f.name}"'
    kind = f.kind
    if kind == "string":
        return _string_faults(f, value, ptr, label)
    if kind == "choice":
        return _choice_faults(f, value, ptr, label)
    if kind == "number" or kind == "integer":
        return _number_faults(value, ptr, label, f.minimum, f.maximum, kind == "integer")
    if kind == "boolean":
        if type(value) is not bool:
            return [Fault(ptr, f"{label} must be true or false, not {_what(value)}", "type")]
        return []
    return _multi_faults(f, value, ptr, label)


def _form_faults(spec: FormSpec, value: Any, pointer: str) -> list[Fault]:
    if type(value) is not dict:
        return [Fault(pointer, f"content must be an object, not {_what(value)}", "type")]
    out: list[Fault] = []
    by_name = {f.name: f for f in spec.fields}
    for f in spec.fields:
        if f.required and f.name not in value:
            out.append(Fault(pointer, f'content is missing required property "{f.name}"', "required"))
    for key, item in value.items():
        ptr = pointer_join(pointer, key)
        f = by_name.get(key)
        if f is None:
            out.append(Fault(ptr, f'content has undeclared property "{key}"', "additionalProperties"))
        elif item is None:
            out.append(Fault(ptr, f'property "{key}" must not be null; omit an optional answer instead', "type"))
        else:
            out.extend(_field_faults(f, item, ptr))
    out.extend(_other_faults(spec, value, pointer))
    return out


def _other_faults(spec: FormSpec, value: dict, pointer: str) -> list[Fault]:
    """The "other" convention: picking ``other`` requires the text of a string field named ``other``."""
    if not any(f.name == OTHER and f.kind == "string" for f in spec.fields):
        return []
    text = value.get(OTHER)
    if type(text) is str and text.strip():
        return []
    for f in spec.fields:
        if f.kind not in ("choice", "multi_choice") or not any(o.value == OTHER for o in f.options):
            continue
        picked = value.get(f.name)
        chose = picked == OTHER if f.kind == "choice" else (type(picked) in (list, tuple) and OTHER in picked)
        if chose:
            return [Fault(pointer_join(pointer, OTHER),
                          f'property "{f.name}" is "other", so property "other" must say what',
                          "elicitation.other-required")]
    return []


def check_value(spec: AnswerSpec, value: Any, pointer: str = "") -> list[Fault]:
    """Every reason ``value`` is not a valid accepted answer to ``spec`` (empty list: valid)."""
    if isinstance(spec, FormSpec):
        return _form_faults(spec, value, pointer)
    if isinstance(spec, TextSpec):
        if type(value) is not str:
            return [Fault(pointer, f"answer must be a string, not {_what(value)}", "type")]
        n = len(value)
        if n < spec.min_length:
            return [Fault(pointer, f"answer must be at least {spec.min_length} characters long", "minLength")]
        if n > spec.max_length:
            return [Fault(pointer, f"answer must be at most {spec.max_length} characters long", "maxLength")]
        return []
    if isinstance(spec, ChoiceSpec):
        if type(value) is not str:
            return [Fault(pointer, f"answer must be a string, not {_what(value)}", "type")]
        if value not in spec.choices:
            return [Fault(pointer, "answer must be exactly one of the choices", "enum")]
        return []
    if isinstance(spec, YesNoSpec):
        if type(value) is not bool:
            return [Fault(pointer, f"answer must be true or false, not {_what(value)}", "type")]
        return []
    if isinstance(spec, NumberSpec):
        return _number_faults(value, pointer, "answer", spec.minimum, spec.maximum, False)
    if isinstance(spec, ApprovalSpec):
        from askgate.core.approval import check_approval  # owned by the ACS engineer; imported lazily

        return check_approval(spec, value, pointer)
    return [Fault(pointer, f"unknown answer spec {type(spec).__name__}", "spec")]


def normalise_value(spec: AnswerSpec, value: Any) -> Any:
    """The canonical form of an already checked value: a fresh dict for forms, tuples for multi-selects.

    Numbers are kept exactly as sent (an integer field's ``1.0`` stays ``1.0``).
    """
    if isinstance(spec, FormSpec):
        multi = {f.name for f in spec.fields if f.kind == "multi_choice"}
        return {k: (tuple(v) if k in multi and type(v) in (list, tuple) else v) for k, v in value.items()}
    if isinstance(spec, ApprovalSpec):
        try:
            from askgate.core import approval
        except ImportError:
            return value
        norm = getattr(approval, "normalise_approval", None)
        return norm(spec, value) if norm is not None else value
    return value
