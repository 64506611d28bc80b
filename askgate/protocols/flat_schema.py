"""The flat form schema shared by A2A ``elicitation/v1``, MCP elicitation and AQP ``structured``.

``parse_requested_schema`` is one hand-compiled pass over a ``requestedSchema``: it applies the seed
schema's closed keyword sets *and* the runtime rules of protocols.md §1.4 in the documented order, with
the reference runtime's exact messages, and collects every fault (the first one is what the reference
runtime would report). The MCP 2025-11-25 widening (§2.2: ``$schema``, titled ``oneOf``, multi-select
arrays, ``pattern``) is switched on by the profile. Only once the schema is known to be valid are the
canonical field models built (with ``askgate.core.construct``: the data is already checked), which keeps
request validation far cheaper than a generic JSON Schema engine. Valid, common schemas take the
optimistic fast path in ``flat_fast`` first; anything else runs :func:`full_pass`.

Rule names: a seed-schema keyword when the seed itself would reject the input (``additionalProperties``,
``const``, ``type``, ``minimum`` ...), ``elicitation.*`` for the runtime rules JSON Schema cannot express.
"""

from __future__ import annotations

import math
import re
from typing import Any

from askgate.core.construct import construct
from askgate.core.ecma_pattern import PatternError, translate
from askgate.core.formats import check_format
from askgate.core.model import (
    AnswerSpec,
    BooleanField,
    ChoiceField,
    ChoiceSpec,
    FormSpec,
    IntegerField,
    MultiChoiceField,
    NumberField,
    NumberSpec,
    Option,
    StringField,
    TextSpec,
    YesNoSpec,
)
from askgate.errors import AskgateError, Fault, pointer_join
from askgate.protocols.flat_fast import fast_form

PROFILES = ("a2a", "mcp-2025-06-18", "mcp-2025-11-25", "aqp")
MAX_SAFE_INTEGER = 2**53 - 1
FORMATS = ("email", "uri", "date", "date-time")
WRAPPED_FIELD = "answer"
"""The single field name used when a non-form answer spec is shown as a form (see :func:`as_form`)."""

# Rules that make askgate stricter than the seed schema (JSON Schema cannot express them).
RUNTIME_RULES = (
    "elicitation.safe-integer",
    "elicitation.length-order",
    "elicitation.enumNames-length",
    "elicitation.default-in-enum",
    "elicitation.finite",
    "elicitation.bounds-order",
    "elicitation.default-in-bounds",
    "elicitation.required-declared",
    "elicitation.secret",
    "elicitation.oneOf-shape",
    "elicitation.oneOf-duplicates",
    "elicitation.enum-and-oneOf",
    "elicitation.pattern",
    "elicitation.default-pattern",
    "elicitation.items",
    "elicitation.items-order",
    "elicitation.enum-unsatisfiable",
)

_TOP_KEYS = frozenset({"type", "properties", "required"})
_TOP_KEYS_WIDE = frozenset({"type", "properties", "required", "$schema"})
_STRING_KEYS = frozenset(
    {"type", "title", "description", "default", "minLength", "maxLength", "format", "enum", "enumNames"}
)
_STRING_KEYS_WIDE = _STRING_KEYS | {"oneOf", "pattern"}
_NUMBER_KEYS = frozenset({"type", "title", "description", "default", "minimum", "maximum"})
_BOOLEAN_KEYS = frozenset({"type", "title", "description", "default"})
_ARRAY_KEYS = frozenset({"type", "title", "description", "default", "minItems", "maxItems", "items"})
_PRIMITIVES = frozenset({"string", "number", "integer", "boolean"})
_PRIMITIVES_WIDE = _PRIMITIVES | {"array"}


def _wide(profile: str) -> bool:
    if profile not in PROFILES:
        raise AskgateError(
            f"unknown requestedSchema profile {profile!r}",
            [Fault("", f"unknown profile {profile!r}", "elicitation.profile")],
            code="unsupported",
        )
    return profile in ("mcp-2025-11-25", "aqp")


def _length_fault(v: Any) -> str | None:
    """Rule name if ``v`` is not a non-negative safe integer (``1.0`` counts), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "type"
    if isinstance(v, float) and not (math.isfinite(v) and v.is_integer()):
        return "type" if math.isfinite(v) else "elicitation.finite"
    if v < 0:
        return "minimum"
    if v > MAX_SAFE_INTEGER:
        return "elicitation.safe-integer"
    return None


def _numeric_fault(v: Any, integer: bool) -> str | None:
    """Rule name if ``v`` is not a finite number (whole and safe for ``integer``), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "type"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "elicitation.finite"
        if integer and not v.is_integer():
            return "type"
    if integer and abs(v) > MAX_SAFE_INTEGER:
        return "elicitation.safe-integer"
    return None


def _whole(v: Any) -> Any:
    return int(v) if isinstance(v, float) else v


# --------------------------------------------------------------------------------------------------
# Secrets (§2.5): names or titles that plainly ask for a credential are refused; borderline ones noted.
# --------------------------------------------------------------------------------------------------

_WORD_SPLIT = re.compile(r"[^0-9a-z]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SECRET_WORDS = {
    "password": "password", "passwords": "password", "passwd": "password", "passphrase": "password",
    "pwd": "password", "token": "token", "tokens": "token", "accesstoken": "token", "authtoken": "token",
    "secret": "secret", "secrets": "secret", "apikey": "api key", "privatekey": "private key",
    "cardnumber": "card number", "creditcard": "card number",
}
_SECRET_PAIRS = {
    ("api", "key"): "api key", ("api", "keys"): "api key", ("private", "key"): "private key",
    ("card", "number"): "card number", ("credit", "card"): "card number", ("access", "key"): "api key",
}
_BORDERLINE_WORDS = frozenset({"pin", "ssn", "cvv", "cvc", "otp", "credential", "credentials", "iban", "mfa", "2fa"})


# Every secret word or pair above contains one of these, and every borderline word one of the next:
# a cheap necessary test on the lowered text that spares the word split for almost every name.
_SECRET_HINT = re.compile("pass|pwd|token|secret|key|card").search
_BORDERLINE_HINT = re.compile("pin|ssn|cvv|cvc|otp|credential|iban|mfa|2fa").search


def _words(text: str) -> tuple[str, ...]:
    return tuple(w for w in _WORD_SPLIT.split(_CAMEL.sub(" ", text).lower()) if w)


def _borderline(text: str) -> bool:
    if _BORDERLINE_HINT(text.lower()) is None:
        return False
    return any(w in _BORDERLINE_WORDS for w in _words(text))


def secret_target(text: str) -> str | None:
    """The kind of secret ``text`` (a property name or title) plainly asks for, or None."""
    if _SECRET_HINT(text.lower()) is None:
        return None
    words = _words(text)
    for i, w in enumerate(words):
        if w in _SECRET_WORDS:
            return _SECRET_WORDS[w]
        if i + 1 < len(words) and (w, words[i + 1]) in _SECRET_PAIRS:
            return _SECRET_PAIRS[(w, words[i + 1])]
    return None


def borderline_secret_notes(spec: FormSpec) -> tuple[str, ...]:
    """Notes for the operator about fields that might ask for sensitive data (not refused)."""
    notes = []
    for f in spec.fields:
        note = _field_note(f.name, f.title, f.description)
        if note is not None:
            notes.append(note)
    return tuple(notes)


def _field_note(name: str, title: str | None, description: str | None) -> str | None:
    if _borderline(name) or (title and _borderline(title)) or (description and _borderline(description)):
        return f'field "{name}" may ask for sensitive data'
    if description and secret_target(description):
        return f'field "{name}" description mentions a secret'
    return None


# --------------------------------------------------------------------------------------------------
# Parsing.
# --------------------------------------------------------------------------------------------------


class _Ctx:
    __slots__ = ("faults", "wide", "profile", "secrets")

    def __init__(self, wide: bool, profile: str) -> None:
        self.faults: list[Fault] = []
        self.secrets: list[Fault] = []
        self.wide = wide
        self.profile = profile

    def add(self, pointer: str, message: str, rule: str) -> None:
        self.faults.append(Fault(pointer, message, rule))


def parse_requested_schema(schema: Any, *, profile: str, pointer: str) -> tuple[FormSpec, list[Fault]]:
    """Validate a ``requestedSchema`` and build the canonical :class:`FormSpec`.

    Returns ``(spec, faults)``; when ``faults`` is non-empty ``spec`` is an empty form and must not be
    used. ``pointer`` is where the schema sits in the enclosing document (e.g. ``/requestedSchema``).
    """
    wide = _wide(profile)
    fast = fast_form(schema, wide, secret_target)
    if fast is not None:
        return fast, []
    return full_pass(schema, profile=profile, pointer=pointer)


def full_pass(schema: Any, *, profile: str, pointer: str) -> tuple[FormSpec, list[Fault]]:
    """Every rule in the documented order, collecting every fault (the path for anything unusual)."""
    wide = _wide(profile)
    ctx = _Ctx(wide, profile)
    if type(schema) is not dict:
        ctx.add(pointer, "requestedSchema must be an object", "type")
        return FormSpec(), ctx.faults
    allowed_top = _TOP_KEYS_WIDE if wide else _TOP_KEYS
    for key in schema:
        if key not in allowed_top:
            ctx.add(pointer_join(pointer, key), f'requestedSchema has unsupported keyword "{key}"', "additionalProperties")
    if "type" not in schema:
        ctx.add(pointer, "requestedSchema.type must be object", "required")
    elif schema["type"] != "object" or type(schema["type"]) is not str:
        ctx.add(f"{pointer}/type", "requestedSchema.type must be object", "const")
    if wide and "$schema" in schema and type(schema["$schema"]) is not str:
        ctx.add(f"{pointer}/$schema", "requestedSchema.$schema must be a string", "type")
    props = schema.get("properties")
    builders: list[tuple[str, Any]] = []
    if "properties" not in schema:
        ctx.add(pointer, "requestedSchema.properties must be an object", "required")
    elif type(props) is not dict:
        ctx.add(f"{pointer}/properties", "requestedSchema.properties must be an object", "type")
    else:
        base = f"{pointer}/properties"
        for name, prop in props.items():
            built = _property(ctx, name, prop, pointer_join(base, name))
            if built is not None:
                builders.append((name, built))
    required_names = _required(ctx, schema, props if type(props) is dict else None, pointer)
    faults = ctx.faults
    if ctx.secrets:
        faults.extend(ctx.secrets)
    if faults:
        return FormSpec(), faults
    fields = tuple([make(name, name in required_names) for name, make in builders])
    return construct(FormSpec, fields=fields), faults


def _required(ctx: _Ctx, schema: dict, props: dict | None, pointer: str) -> frozenset[str]:
    if "required" not in schema:
        return frozenset()
    req = schema["required"]
    ptr = f"{pointer}/required"
    if type(req) is not list:
        ctx.add(ptr, "requestedSchema.required must name declared properties", "type")
        return frozenset()
    seen: set[str] = set()
    dups: list[int] = []
    for i, name in enumerate(req):
        if type(name) is not str:
            ctx.add(f"{ptr}/{i}", "requestedSchema.required must name declared properties", "type")
            continue
        if props is not None and name not in props:
            ctx.add(f"{ptr}/{i}", "requestedSchema.required must name declared properties", "elicitation.required-declared")
        if name in seen:
            dups.append(i)
        seen.add(name)
    for i in dups:
        ctx.add(f"{ptr}/{i}", "requestedSchema.required must not contain duplicates", "uniqueItems")
    return frozenset(seen)


def _common(ctx: _Ctx, name: str, prop: dict, ptr: str, label: str) -> bool:
    """Title and description checks (rule 5) and the secrets rule; False if title/description bad."""
    ok = True
    title = prop.get("title")
    if "title" in prop and type(title) is not str:
        ctx.add(f"{ptr}/title", f"{label} has an invalid title", "type")
        ok = False
    if "description" in prop and type(prop["description"]) is not str:
        ctx.add(f"{ptr}/description", f"{label} has an invalid description", "type")
        ok = False
    kind = secret_target(name) or (secret_target(title) if type(title) is str else None)
    if kind is not None:
        ctx.secrets.append(
            Fault(ptr, f"{label} appears to request a secret ({kind}); elicitation must not ask for sensitive data",
                  "elicitation.secret")
        )
    return ok


def _allow(ctx: _Ctx, prop: dict, allowed: frozenset[str], ptr: str, label: str) -> None:
    for key in prop:
        if key not in allowed:
            ctx.add(pointer_join(ptr, key), f'{label} has unsupported keyword "{key}"', "additionalProperties")


def _property(ctx: _Ctx, name: str, prop: Any, ptr: str) -> Any:
    """Check one property in the documented order; return a field builder or None."""
    label = f'requestedSchema property "{name}"'
    if type(prop) is not dict:
        ctx.add(ptr, f"{label} must have a primitive type", "type")
        return None
    if "type" not in prop:
        ctx.add(ptr, f"{label} must have a primitive type", "required")
        return None
    ptype = prop["type"]
    if type(ptype) is not str or ptype not in (_PRIMITIVES_WIDE if ctx.wide else _PRIMITIVES):
        ctx.add(f"{ptr}/type", f"{label} must have a primitive type", "const")
        return None
    n0 = len(ctx.faults)
    _common(ctx, name, prop, ptr, label)
    if ptype == "string":
        make = _string(ctx, prop, ptr, label)
    elif ptype == "boolean":
        make = _boolean(ctx, prop, ptr, label)
    elif ptype == "array":
        make = _array(ctx, prop, ptr, label)
    else:
        make = _numeric(ctx, prop, ptr, label, ptype == "integer")
    return make if len(ctx.faults) == n0 else None


def _string(ctx: _Ctx, prop: dict, ptr: str, label: str) -> Any:
    add = ctx.add
    n_start = len(ctx.faults)
    _allow(ctx, prop, _STRING_KEYS_WIDE if ctx.wide else _STRING_KEYS, ptr, label)
    lengths: dict[str, int] = {}
    for key in ("minLength", "maxLength"):
        if key in prop:
            v = prop[key]
            if type(v) is int and 0 <= v <= MAX_SAFE_INTEGER:  # the common case, without a call
                lengths[key] = v
                continue
            rule = _length_fault(v)
            if rule:
                add(f"{ptr}/{key}", f"{label} has an invalid {key}", rule)
            else:
                lengths[key] = int(v)
    if len(lengths) == 2 and lengths["minLength"] > lengths["maxLength"]:
        add(f"{ptr}/minLength", f"{label} minLength must not exceed maxLength", "elicitation.length-order")
    fmt = prop.get("format")
    if "format" in prop and (type(fmt) is not str or fmt not in FORMATS):
        add(f"{ptr}/format", f"{label} has an invalid format", "enum")
    default = prop.get("default")
    default_ok = "default" in prop and type(default) is str
    if "default" in prop and not default_ok:
        add(f"{ptr}/default", f"{label} has an invalid default", "type")
    # enum rules 11-15
    enum = prop.get("enum")
    names = prop.get("enumNames")
    if "enumNames" in prop and "enum" not in prop:
        add(f"{ptr}/enumNames", f"{label} enumNames requires enum", "dependentRequired")
    enum_ok = False
    if "enum" in prop:
        if type(enum) is not list:
            add(f"{ptr}/enum", f"{label} has an invalid string enum", "type")
        elif not enum:
            add(f"{ptr}/enum", f"{label} has an invalid string enum", "minItems")
        else:
            enum_ok = True
            for i, v in enumerate(enum):
                if type(v) is not str:
                    add(f"{ptr}/enum/{i}", f"{label} has an invalid string enum", "type")
                    enum_ok = False
    if "enumNames" in prop:
        if type(names) is not list:
            add(f"{ptr}/enumNames", f"{label} enumNames must match enum", "type")
        else:
            for i, v in enumerate(names):
                if type(v) is not str:
                    add(f"{ptr}/enumNames/{i}", f"{label} enumNames must match enum", "type")
            if type(enum) is list and enum and len(names) != len(enum):
                add(f"{ptr}/enumNames", f"{label} enumNames must match enum", "elicitation.enumNames-length")
    if type(enum) is list:
        _duplicates(ctx, enum, f"{ptr}/enum", f"{label} enum must not contain duplicates", "uniqueItems")
        if default_ok and enum and default not in enum:
            add(f"{ptr}/default", f"{label} default must be in enum", "elicitation.default-in-enum")
    options: tuple[Option, ...] | None = None
    titled = False
    if ctx.wide and "oneOf" in prop:
        if "enum" in prop:
            add(f"{ptr}/oneOf", f"{label} must not combine enum and oneOf", "elicitation.enum-and-oneOf")
        options = _titled_options(ctx, prop["oneOf"], f"{ptr}/oneOf", label, "oneOf")
        titled = True
        if options is not None and default_ok and default not in {o.value for o in options}:
            add(f"{ptr}/default", f"{label} default must be one of the oneOf consts", "elicitation.default-in-enum")
    pattern = prop.get("pattern")
    if ctx.wide and "pattern" in prop:
        compiled = None
        if type(pattern) is not str:
            add(f"{ptr}/pattern", f"{label} has an invalid pattern", "type")
        else:
            try:
                compiled = re.compile(translate(pattern))
            except PatternError:
                add(f"{ptr}/pattern", f"{label} has an invalid pattern", "elicitation.pattern")
        if compiled is not None and default_ok and compiled.search(default) is None:
            add(f"{ptr}/default", f"{label} default must match pattern", "elicitation.default-pattern")

    if len(ctx.faults) == n_start and (lengths or fmt is not None):  # only for an otherwise valid property
        values = [o.value for o in options] if options is not None else (enum if enum_ok else [])
        kw = "oneOf" if options is not None else "enum"
        for i, v in enumerate(values):
            n = len(v)
            if (n < lengths.get("minLength", 0) or n > lengths.get("maxLength", n)
                    or (fmt is not None and not check_format(fmt, v))):
                add(f"{ptr}/{kw}/{i}", f'{label} {kw} value "{v}" does not satisfy its constraints',
                    "elicitation.enum-unsatisfiable")

    def make(name: str, required: bool) -> Any:
        opts = options
        if not titled and enum_ok:  # only reached when the property had no faults
            labels = names if type(names) is list else None
            opts = tuple(construct(Option, value=v, label=labels[i] if labels else None) for i, v in enumerate(enum))
        if opts is not None:
            return construct(ChoiceField,
                name=name, required=required, options=opts, default=default, titled=titled, title=prop.get("title"), description=prop.get("description")
            )
        return construct(StringField,
            name=name, required=required, min_length=lengths.get("minLength"), max_length=lengths.get("maxLength"),
            format=fmt, pattern=pattern, default=default, title=prop.get("title"), description=prop.get("description"),
        )

    return make


def _duplicates(ctx: _Ctx, items: list, ptr: str, message: str, rule: str) -> None:
    seen: set = set()
    for i, v in enumerate(items):
        if type(v) is not str:
            continue
        if v in seen:
            ctx.add(f"{ptr}/{i}", message, rule)
        seen.add(v)


def _titled_options(ctx: _Ctx, items: Any, ptr: str, label: str, keyword: str) -> tuple[Option, ...] | None:
    """``[{const, title}, ...]``: non-empty, closed items, unique non-empty string consts."""
    message = f"{label} has an invalid {keyword}"
    if type(items) is not list or not items:
        ctx.add(ptr, message, "elicitation.oneOf-shape")
        return None
    ok = True
    seen: set[str] = set()
    out = []
    for i, item in enumerate(items):
        iptr = f"{ptr}/{i}"
        if (
            type(item) is not dict
            or set(item) != {"const", "title"}
            or type(item["const"]) is not str
            or not item["const"]
            or type(item["title"]) is not str
        ):
            ctx.add(iptr, message, "elicitation.oneOf-shape")
            ok = False
            continue
        if item["const"] in seen:
            ctx.add(f"{iptr}/const", f"{label} {keyword} must not contain duplicate consts", "elicitation.oneOf-duplicates")
            ok = False
        seen.add(item["const"])
        out.append(construct(Option, value=item["const"], label=item["title"]))
    return tuple(out) if ok else None


def _numeric(ctx: _Ctx, prop: dict, ptr: str, label: str, integer: bool) -> Any:
    add = ctx.add
    _allow(ctx, prop, _NUMBER_KEYS, ptr, label)
    vals: dict[str, Any] = {}
    for key in ("minimum", "maximum", "default"):
        if key in prop:
            v = prop[key]
            if type(v) is int and (not integer or -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER):
                vals[key] = v  # the common case, without a call
                continue
            rule = _numeric_fault(v, integer)
            if rule:
                add(f"{ptr}/{key}", f"{label} has an invalid {key}", rule)
            else:
                vals[key] = _whole(v) if integer else v
    lo, hi, default = vals.get("minimum"), vals.get("maximum"), vals.get("default")
    if lo is not None and hi is not None and lo > hi:
        add(f"{ptr}/minimum", f"{label} minimum must not exceed maximum", "elicitation.bounds-order")
    if default is not None and ((lo is not None and default < lo) or (hi is not None and default > hi)):
        add(f"{ptr}/default", f"{label} default must satisfy its bounds", "elicitation.default-in-bounds")
    cls = IntegerField if integer else NumberField

    def make(name: str, required: bool) -> Any:
        return construct(cls, name=name, required=required, minimum=lo, maximum=hi, default=default, title=prop.get("title"), description=prop.get("description"))

    return make


def _boolean(ctx: _Ctx, prop: dict, ptr: str, label: str) -> Any:
    _allow(ctx, prop, _BOOLEAN_KEYS, ptr, label)
    if "default" in prop and type(prop["default"]) is not bool:
        ctx.add(f"{ptr}/default", f"{label} has an invalid default", "type")

    def make(name: str, required: bool) -> Any:
        return construct(BooleanField, name=name, required=required, default=prop.get("default"), title=prop.get("title"), description=prop.get("description"))

    return make


def _array(ctx: _Ctx, prop: dict, ptr: str, label: str) -> Any:
    """MCP 2025-11-25 multi-select: items ``{type: string, enum}`` or ``{anyOf: [{const, title}]}``."""
    add = ctx.add
    _allow(ctx, prop, _ARRAY_KEYS, ptr, label)
    counts: dict[str, int] = {}
    for key in ("minItems", "maxItems"):
        if key in prop:
            rule = _length_fault(prop[key])
            if rule:
                add(f"{ptr}/{key}", f"{label} has an invalid {key}", rule)
            else:
                counts[key] = int(prop[key])
    if len(counts) == 2 and counts["minItems"] > counts["maxItems"]:
        add(f"{ptr}/minItems", f"{label} minItems must not exceed maxItems", "elicitation.items-order")
    items = prop.get("items")
    iptr = f"{ptr}/items"
    options: tuple[Option, ...] | None = None
    titled = False
    if type(items) is not dict:
        add(iptr if "items" in prop else ptr, f"{label} has an invalid items", "elicitation.items")
    elif "anyOf" in items:
        titled = True
        if set(items) != {"anyOf"}:
            add(iptr, f"{label} has an invalid items", "elicitation.items")
        options = _titled_options(ctx, items["anyOf"], f"{iptr}/anyOf", label, "anyOf")
    else:
        enum = items.get("enum")
        if set(items) != {"type", "enum"} or items.get("type") != "string" or type(enum) is not list or not enum \
                or any(type(v) is not str for v in enum):
            add(iptr, f"{label} has an invalid items", "elicitation.items")
        else:
            n0 = len(ctx.faults)
            _duplicates(ctx, enum, f"{iptr}/enum", f"{label} enum must not contain duplicates", "uniqueItems")
            if len(ctx.faults) == n0:
                options = tuple(construct(Option, value=v, label=None) for v in enum)
    default = prop.get("default")
    if "default" in prop:
        if type(default) is not list or any(type(v) is not str for v in default):
            add(f"{ptr}/default", f"{label} has an invalid default", "type")
        else:
            if options is not None:
                allowed = {o.value for o in options}
                if any(v not in allowed for v in default):
                    add(f"{ptr}/default", f"{label} default must be in enum", "elicitation.default-in-enum")
            if len(set(default)) != len(default):
                add(f"{ptr}/default", f"{label} default must not contain duplicates", "uniqueItems")
            lo, hi = counts.get("minItems"), counts.get("maxItems")
            if (lo is not None and len(default) < lo) or (hi is not None and len(default) > hi):
                add(f"{ptr}/default", f"{label} default must satisfy its bounds", "elicitation.default-in-bounds")

    def make(name: str, required: bool) -> Any:
        return construct(MultiChoiceField,
            name=name, required=required, options=options, min_items=counts.get("minItems"),
            max_items=counts.get("maxItems"), default=tuple(default) if type(default) is list else None,
            titled=titled, title=prop.get("title"), description=prop.get("description"),
        )

    return make


# --------------------------------------------------------------------------------------------------
# Rendering: canonical -> wire.
# --------------------------------------------------------------------------------------------------


def _unsupported(message: str, rule: str, pointer: str = "") -> AskgateError:
    return AskgateError(message, [Fault(pointer, message, rule)], code="unsupported")


def render_requested_schema(spec: FormSpec, *, profile: str) -> dict:
    """Canonical :class:`FormSpec` -> a ``requestedSchema`` for ``profile``.

    For ``a2a`` and ``mcp-2025-06-18`` titled single-selects are downgraded to ``enum`` + ``enumNames``;
    multi-selects and ``pattern`` have no equivalent there and raise ``AskgateError(code="unsupported")``.
    ``mcp-2025-06-18`` only carries boolean defaults (its schema allows no others).
    """
    wide = _wide(profile)
    if not isinstance(spec, FormSpec):
        raise _unsupported(f"a {getattr(spec, 'kind', type(spec).__name__)} answer spec is not a form", "elicitation.not-a-form")
    props: dict[str, dict] = {}
    required: list[str] = []
    for f in spec.fields:
        out: dict[str, Any] = {}
        kind = f.kind
        if kind == "multi_choice":
            if not wide:
                raise _unsupported(
                    f'field "{f.name}" is a multi-select, which {profile} cannot express', "elicitation.multi-select-unsupported",
                    pointer_join("/properties", f.name),
                )
            out["type"] = "array"
        else:
            out["type"] = "string" if kind in ("string", "choice") else kind
        if f.title is not None:
            out["title"] = f.title
        if f.description is not None:
            out["description"] = f.description
        if kind == "string":
            if f.min_length is not None:
                out["minLength"] = f.min_length
            if f.max_length is not None:
                out["maxLength"] = f.max_length
            if f.format is not None:
                out["format"] = f.format
            if f.pattern is not None:
                if not wide:
                    raise _unsupported(
                        f'field "{f.name}" has a pattern, which {profile} cannot express', "elicitation.pattern-unsupported",
                        pointer_join("/properties", f.name),
                    )
                out["pattern"] = f.pattern
        elif kind in ("number", "integer"):
            if f.minimum is not None:
                out["minimum"] = f.minimum
            if f.maximum is not None:
                out["maximum"] = f.maximum
        elif kind == "choice":
            if f.titled and wide:
                out["oneOf"] = [{"const": o.value, "title": o.label if o.label is not None else o.value} for o in f.options]
            else:
                out["enum"] = [o.value for o in f.options]
                if any(o.label is not None for o in f.options):
                    out["enumNames"] = [o.label if o.label is not None else o.value for o in f.options]
        elif kind == "multi_choice":
            if f.min_items is not None:
                out["minItems"] = f.min_items
            if f.max_items is not None:
                out["maxItems"] = f.max_items
            if f.titled:
                out["items"] = {"anyOf": [{"const": o.value, "title": o.label if o.label is not None else o.value}
                                          for o in f.options]}
            else:
                out["items"] = {"type": "string", "enum": [o.value for o in f.options]}
        if f.default is not None and (profile != "mcp-2025-06-18" or kind == "boolean"):
            out["default"] = list(f.default) if kind == "multi_choice" else f.default
        props[f.name] = out
        if f.required:
            required.append(f.name)
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def as_form(spec: AnswerSpec) -> tuple[FormSpec, bool]:
    """Show any non-approval answer spec as a flat form: ``(form, wrapped)``.

    A form is returned unchanged (``wrapped=False``). Text, choice, yes/no and number specs become a
    one-field form whose single required field is named :data:`WRAPPED_FIELD` (``wrapped=True``), so an
    AQP ask can be put to an elicitation respondent and the answer unwrapped again.
    """
    if isinstance(spec, FormSpec):
        return spec, False
    if isinstance(spec, TextSpec):
        field: Any = StringField(name=WRAPPED_FIELD, required=True, min_length=spec.min_length, max_length=spec.max_length)
    elif isinstance(spec, ChoiceSpec):
        field = ChoiceField(name=WRAPPED_FIELD, required=True, options=tuple(Option(value=c) for c in spec.choices))
    elif isinstance(spec, YesNoSpec):
        field = BooleanField(name=WRAPPED_FIELD, required=True)
    elif isinstance(spec, NumberSpec):
        field = NumberField(name=WRAPPED_FIELD, required=True, minimum=spec.minimum, maximum=spec.maximum)
    else:
        raise _unsupported(f"a {spec.kind} answer spec cannot be shown as an elicitation form", "elicitation.not-a-form")
    return FormSpec(fields=(field,)), True
