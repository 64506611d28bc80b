"""The optimistic fast path of :func:`askgate.protocols.flat_schema.parse_requested_schema`.

Most asks are valid and use the common keywords, so they are first tried by this lean pass: C-level key
set comparisons, exact type checks, no fault bookkeeping, and the field models built as it goes. Anything
unusual or wrong (a fault, a whole float such as ``1.0``, ``oneOf``, arrays, ``pattern``, a secret-looking
name) returns ``None`` and the full rule-by-rule pass runs instead, so messages and fault order come from
one place. The fast path must never accept what the full pass refuses: it accepts a strict subset (tested
by ``tests/protocols/test_flat_fast.py`` against the full pass).
"""

from __future__ import annotations

import math
from typing import Any

from askgate.core.construct import make, option
from askgate.core.model import BooleanField, ChoiceField, FormSpec, IntegerField, NumberField, StringField

MAX_SAFE = 2**53 - 1
_FORMATS = frozenset({"email", "uri", "date", "date-time"})
_TOP = frozenset({"type", "properties", "required"})
_TOP_WIDE = _TOP | {"$schema"}
_STRING = frozenset({"type", "title", "description", "default", "minLength", "maxLength", "format", "enum", "enumNames"})
_NUMBER = frozenset({"type", "title", "description", "default", "minimum", "maximum"})
_BOOLEAN = frozenset({"type", "title", "description", "default"})


def _text_ok(p: dict) -> bool:
    for key in ("title", "description"):
        if key in p and type(p[key]) is not str:
            return False
    return True


def _string(name: str, p: dict, required: bool) -> Any:
    if not p.keys() <= _STRING or not _text_ok(p):
        return None
    lo = p.get("minLength")
    hi = p.get("maxLength")
    if lo is not None and not (type(lo) is int and 0 <= lo <= MAX_SAFE):
        return None
    if hi is not None and not (type(hi) is int and 0 <= hi <= MAX_SAFE):
        return None
    if ("minLength" in p and lo is None) or ("maxLength" in p and hi is None):
        return None
    if lo is not None and hi is not None and lo > hi:
        return None
    fmt = p.get("format")
    if "format" in p and (type(fmt) is not str or fmt not in _FORMATS):
        return None
    default = p.get("default")
    if "default" in p and type(default) is not str:
        return None
    title = p.get("title")
    description = p.get("description")
    if "enum" not in p:
        if "enumNames" in p:
            return None
        return make(StringField, {"name": name, "title": title, "description": description, "required": required,
                                  "kind": "string", "min_length": lo, "max_length": hi, "format": fmt, "pattern": None,
                                  "default": default})
    if lo is not None or hi is not None or fmt is not None:
        return None  # enum values must then be checked against the constraints: the full pass does it
    enum = p["enum"]
    if type(enum) is not list or not enum:
        return None
    for v in enum:
        if type(v) is not str:
            return None
    if len(set(enum)) != len(enum) or (default is not None and default not in enum):
        return None
    names = p.get("enumNames")
    if "enumNames" in p:
        if type(names) is not list or len(names) != len(enum):
            return None
        for v in names:
            if type(v) is not str:
                return None
        options = tuple([option(v, names[i]) for i, v in enumerate(enum)])
    else:
        options = tuple([option(v, None) for v in enum])
    return make(ChoiceField, {"name": name, "title": title, "description": description, "required": required,
                              "kind": "choice", "options": options, "default": default, "titled": False})


def _number_ok(v: Any, integer: bool) -> bool:
    t = type(v)
    if t is int:
        return not integer or -MAX_SAFE <= v <= MAX_SAFE
    return t is float and not integer and math.isfinite(v)


def _numeric(name: str, p: dict, required: bool, integer: bool) -> Any:
    if not p.keys() <= _NUMBER or not _text_ok(p):
        return None
    lo = p.get("minimum")
    hi = p.get("maximum")
    default = p.get("default")
    for key, v in (("minimum", lo), ("maximum", hi), ("default", default)):
        if key in p and not _number_ok(v, integer):
            return None
    if lo is not None and hi is not None and lo > hi:
        return None
    if default is not None and ((lo is not None and default < lo) or (hi is not None and default > hi)):
        return None
    if integer:
        return make(IntegerField, {"name": name, "title": p.get("title"), "description": p.get("description"),
                                   "required": required, "kind": "integer", "minimum": lo, "maximum": hi,
                                   "default": default})
    return make(NumberField, {"name": name, "title": p.get("title"), "description": p.get("description"),
                              "required": required, "kind": "number", "minimum": lo, "maximum": hi, "default": default})


def _boolean(name: str, p: dict, required: bool) -> Any:
    if not p.keys() <= _BOOLEAN or not _text_ok(p):
        return None
    default = p.get("default")
    if "default" in p and type(default) is not bool:
        return None
    return make(BooleanField, {"name": name, "title": p.get("title"), "description": p.get("description"),
                               "required": required, "kind": "boolean", "default": default})


def fast_form(schema: Any, wide: bool, secret_target: Any) -> FormSpec | None:
    """The FormSpec of a valid, common ``requestedSchema``; ``None`` means "run the full pass"."""
    if type(schema) is not dict or not schema.keys() <= (_TOP_WIDE if wide else _TOP):
        return None
    kind = schema.get("type")
    props = schema.get("properties")
    if type(kind) is not str or kind != "object" or type(props) is not dict:
        return None
    if "$schema" in schema and type(schema["$schema"]) is not str:
        return None
    required: Any = ()
    if "required" in schema:
        required = schema["required"]
        if type(required) is not list:
            return None
        for n in required:
            if type(n) is not str or n not in props:
                return None
        if len(set(required)) != len(required):
            return None
    fields = []
    for name, p in props.items():
        if type(p) is not dict:
            return None
        t = p.get("type")
        if t == "string":
            field = _string(name, p, name in required)
        elif t == "integer":
            field = _numeric(name, p, name in required, True)
        elif t == "number":
            field = _numeric(name, p, name in required, False)
        elif t == "boolean":
            field = _boolean(name, p, name in required)
        else:
            return None
        if field is None or type(t) is not str:
            return None
        title = p.get("title")
        if secret_target(name) is not None or (title is not None and secret_target(title) is not None):
            return None
        fields.append(field)
    return make(FormSpec, {"kind": "form", "fields": tuple(fields)})
