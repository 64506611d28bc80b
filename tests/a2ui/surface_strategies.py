"""Hypothesis strategies for canonical asks (every answer spec and field kind) and for valid answers to them.

Also a tiny simulated A2UI renderer (:class:`SimRenderer`): it applies the surface's data-model seeds,
lets a "person" write values to the paths the inputs are bound to, and builds the action event a
renderer sends when a button is pressed, by resolving that button's context bindings. The round-trip
tests use it so that the event is derived from the surface itself, not from askgate's plan.
"""

from __future__ import annotations

import json
import math
from datetime import UTC
from typing import Any

from hypothesis import strategies as st

from askgate.core.model import (
    ApprovalSpec,
    Ask,
    BooleanField,
    Capability,
    ChoiceField,
    ChoiceSpec,
    FormSpec,
    IntegerField,
    IntentExtension,
    MultiChoiceField,
    NumberField,
    NumberSpec,
    Option,
    StringField,
    TextSpec,
    YesNoSpec,
)

ODD_NAMES = [
    "__proto__",
    "constructor",
    "a/b",
    "~",
    "~0",
    "~1",
    "a~1b",
    "/",
    "",
    " ",
    "root",
    "value",
    "f_x",
    "x-label",
    "名前",
    "😀",
    "other",
    "a.b",
    "$ref",
    "0",
    "title",
    "btn-accept",
]

names = st.one_of(st.sampled_from(ODD_NAMES), st.text(max_size=10))
short_text = st.text(max_size=20)
maybe_text = st.none() | short_text
finite_floats = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)
numbers = st.one_of(st.integers(-(10**6), 10**6), finite_floats)
PATTERNS = ["^[a-z]+$", "\\d", "^a", "^[A-Z][a-z]*$", "b$"]


def _common(draw: st.DrawFn, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "title": draw(maybe_text),
        "description": draw(maybe_text),
        "required": draw(st.booleans()),
    }


@st.composite
def string_fields(draw: st.DrawFn, name: str) -> StringField:
    fmt = draw(st.sampled_from([None, None, "email", "uri", "date", "date-time"]))
    lo = draw(st.none() | st.integers(0, 400))
    hi = draw(st.none() | st.integers(lo or 0, 500))
    pattern = draw(st.none() | st.sampled_from(PATTERNS)) if fmt is None else None
    default = draw(st.none() | short_text)
    return StringField(
        **_common(draw, name), min_length=lo, max_length=hi, format=fmt, pattern=pattern, default=default
    )


@st.composite
def bounds(draw: st.DrawFn, values: st.SearchStrategy[Any]) -> tuple[Any, Any]:
    lo = draw(st.none() | values)
    hi = draw(st.none() | values)
    if lo is not None and hi is not None and lo > hi and draw(st.booleans()):
        lo, hi = hi, lo
    return lo, hi


@st.composite
def number_fields(draw: st.DrawFn, name: str) -> NumberField:
    lo, hi = draw(bounds(numbers))
    return NumberField(**_common(draw, name), minimum=lo, maximum=hi, default=draw(st.none() | numbers))


@st.composite
def integer_fields(draw: st.DrawFn, name: str) -> IntegerField:
    ints = st.integers(-(10**9), 10**9)
    lo, hi = draw(bounds(ints))
    return IntegerField(**_common(draw, name), minimum=lo, maximum=hi, default=draw(st.none() | ints))


@st.composite
def boolean_fields(draw: st.DrawFn, name: str) -> BooleanField:
    return BooleanField(**_common(draw, name), default=draw(st.none() | st.booleans()))


options = st.lists(
    st.builds(Option, value=st.one_of(st.sampled_from(ODD_NAMES), st.text(max_size=8)), label=maybe_text),
    min_size=1,
    max_size=5,
    unique_by=lambda o: o.value,
)


@st.composite
def choice_fields(draw: st.DrawFn, name: str) -> ChoiceField:
    opts = draw(options)
    default = draw(st.none() | st.sampled_from([o.value for o in opts]))
    return ChoiceField(
        **_common(draw, name), options=tuple(opts), default=default, titled=draw(st.booleans())
    )


@st.composite
def multi_fields(draw: st.DrawFn, name: str) -> MultiChoiceField:
    opts = draw(options)
    lo = draw(st.none() | st.integers(0, len(opts)))
    hi = draw(st.none() | st.integers(lo or 0, len(opts)))
    values = [o.value for o in opts]
    default = draw(st.none() | st.lists(st.sampled_from(values), unique=True).map(tuple))
    return MultiChoiceField(
        **_common(draw, name), options=tuple(opts), min_items=lo, max_items=hi, default=default
    )


FIELD_KINDS = [string_fields, number_fields, integer_fields, boolean_fields, choice_fields, multi_fields]


@st.composite
def form_specs(draw: st.DrawFn, max_fields: int = 8) -> FormSpec:
    field_names = draw(st.lists(names, max_size=max_fields, unique=True))
    return FormSpec(fields=tuple(draw(draw(st.sampled_from(FIELD_KINDS))(n)) for n in field_names))


capabilities = st.builds(Capability, tool=maybe_text, operation=maybe_text, resource=maybe_text)
intent_extensions = st.builds(
    IntentExtension,
    capabilities=st.lists(capabilities, min_size=1, max_size=3).map(tuple),
    scope=st.sampled_from(["this_request", "session"]),
)
approval_specs = st.builds(
    ApprovalSpec,
    options=st.lists(st.text(max_size=8), max_size=4, unique=True).map(tuple),
    intent_extension=st.none() | intent_extensions,
)


@st.composite
def text_specs(draw: st.DrawFn) -> TextSpec:
    lo = draw(st.integers(0, 50))
    return TextSpec(min_length=lo, max_length=draw(st.integers(max(lo, 1), 16000)))


@st.composite
def number_specs(draw: st.DrawFn) -> NumberSpec:
    lo, hi = draw(bounds(numbers))
    return NumberSpec(minimum=lo, maximum=hi)


specs = st.one_of(
    form_specs(),
    text_specs(),
    st.builds(
        ChoiceSpec, choices=st.lists(st.text(max_size=8), min_size=1, max_size=5, unique=True).map(tuple)
    ),
    st.just(YesNoSpec()),
    number_specs(),
    approval_specs,
)

subjects = st.none() | short_text | st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)


@st.composite
def asks(draw: st.DrawFn, spec: st.SearchStrategy[Any] = specs) -> Ask:
    return Ask(
        id=draw(st.one_of(st.sampled_from(["a1", "x/y", "~", "é"]), st.text(min_size=1, max_size=12))),
        dialect="canonical",
        prompt=draw(st.text(max_size=40)),
        details=draw(maybe_text),
        subject=draw(subjects),
        spec=draw(spec),
    )


# --------------------------------------------------------------------------------------------------
# Valid, non-empty answers for round trips: asks whose constraints are satisfiable, with a value.
# --------------------------------------------------------------------------------------------------

EMAILS = ["a@b.co", "x.y@host", "user+tag@example.org", "o'neil@localhost"]
URIS = ["https://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:a@b.c", "file:///tmp/x"]


@st.composite
def answerable_field(draw: st.DrawFn, name: str) -> tuple[Any, Any]:
    """(field, a valid non-empty value for it)."""
    kind = draw(
        st.sampled_from(
            [
                "string",
                "email",
                "uri",
                "date",
                "date-time",
                "pattern",
                "number",
                "integer",
                "boolean",
                "choice",
                "multi",
            ]
        )
    )
    common = _common(draw, name)
    if kind == "string":
        lo = draw(st.integers(0, 5))
        hi = draw(st.none() | st.integers(max(lo, 1), 400))
        value = draw(st.text(min_size=max(lo, 1), max_size=min(hi or 30, 30)))
        return StringField(**common, min_length=lo or None, max_length=hi), value
    if kind in ("email", "uri"):
        value = draw(st.sampled_from(EMAILS if kind == "email" else URIS))
        return StringField(**common, format=kind), value
    if kind == "date":
        return StringField(**common, format="date"), draw(st.dates()).isoformat()
    if kind == "date-time":
        dt = draw(st.datetimes(timezones=st.just(UTC)))
        return StringField(**common, format="date-time"), dt.isoformat()
    if kind == "pattern":
        return StringField(**common, pattern="^[a-z]+$"), draw(st.from_regex(r"\A[a-z]{1,12}\Z"))
    if kind in ("number", "integer"):
        vals = st.integers(-(10**12), 10**12) if kind == "integer" else numbers
        lo, hi = draw(bounds(vals))
        if lo is not None and hi is not None and lo > hi:
            lo, hi = hi, lo
        if kind == "integer":
            value = draw(st.integers(lo if lo is not None else -(10**15), hi if hi is not None else 10**15))
            return IntegerField(**common, minimum=lo, maximum=hi), value
        value = draw(
            st.one_of(
                st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False),
                st.integers(
                    math.ceil(lo) if lo is not None else None, math.floor(hi) if hi is not None else None
                )
                if lo is None or hi is None or math.ceil(lo) <= math.floor(hi)
                else st.nothing(),
            )
        )
        return NumberField(**common, minimum=lo, maximum=hi), value
    if kind == "boolean":
        return BooleanField(**common), draw(st.booleans())
    opts = draw(options)
    values = [o.value for o in opts]
    if kind == "choice":
        return ChoiceField(**common, options=tuple(opts)), draw(st.sampled_from(values))
    picked = draw(st.lists(st.sampled_from(values), min_size=1, unique=True))
    lo = draw(st.none() | st.integers(0, len(picked)))
    hi = draw(st.none() | st.integers(len(picked), len(opts)))
    return MultiChoiceField(**common, options=tuple(opts), min_items=lo, max_items=hi), picked


@st.composite
def answered_forms(draw: st.DrawFn) -> tuple[FormSpec, dict[str, Any]]:
    """A form and a valid answer: every required field and a random subset of the optional ones."""
    field_names = draw(st.lists(names, max_size=6, unique=True))
    fields, values = [], {}
    for n in field_names:
        f, v = draw(answerable_field(n))
        fields.append(f)
        if f.required or draw(st.booleans()):
            values[n] = v
    return FormSpec(fields=tuple(fields)), values


# --------------------------------------------------------------------------------------------------
# A simulated renderer: data model + bound inputs + button events, straight from the messages.
# --------------------------------------------------------------------------------------------------

_MISSING = object()


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def split_pointer(path: str) -> list[str]:
    assert path.startswith("/"), path
    return [unescape(t) for t in path[1:].split("/")]


class SimRenderer:
    """Just enough of an A2UI renderer to fill in a surface and press a button."""

    def __init__(self, messages: list[dict[str, Any]], version: str) -> None:
        self.version = version
        self.model: dict[str, Any] = {}
        self.components: dict[str, dict[str, Any]] = {}
        self.surface_id = None
        for m in messages:
            self._apply(m)

    def _apply(self, m: dict[str, Any]) -> None:
        if "dataModelUpdate" in m:
            u = m["dataModelUpdate"]
            contents = {}
            for e in u["contents"]:
                (vk,) = [k for k in e if k != "key"]
                contents[e["key"]] = e[vk]
            self.set(u.get("path", "/"), contents)
        elif "updateDataModel" in m:
            u = m["updateDataModel"]
            self.set(u.get("path", "/"), u["value"])
        elif "surfaceUpdate" in m or "updateComponents" in m:
            u = m.get("surfaceUpdate") or m["updateComponents"]
            for c in u["components"]:
                if self.version == "0.8":
                    ((type_, props),) = c["component"].items()
                else:
                    type_, props = (
                        c["component"],
                        {k: v for k, v in c.items() if k not in ("id", "component")},
                    )
                self.components[c["id"]] = {"type": type_, **props}
                sel = props.get("selections") if type_ == "MultipleChoice" else None
                if sel and "literalArray" in sel and "path" in sel:
                    self.set(sel["path"], list(sel["literalArray"]))
        for k in ("beginRendering", "createSurface", "surfaceUpdate", "updateComponents"):
            if k in m:
                self.surface_id = m[k]["surfaceId"]

    def set(self, path: str, value: Any) -> None:
        if path in ("", "/"):
            self.model = value
            return
        node = self.model
        tokens = split_pointer(path)
        for t in tokens[:-1]:
            node = node.setdefault(t, {})
        node[tokens[-1]] = value

    def get(self, path: str) -> Any:
        node: Any = self.model
        for t in split_pointer(path):
            if not isinstance(node, dict) or t not in node:
                return _MISSING
            node = node[t]
        return node

    def input_at(self, path: str) -> dict[str, Any]:
        """The input component bound to ``path``."""
        for c in self.components.values():
            for key in ("text", "value", "selections"):
                b = c.get(key)
                if c["type"] != "Text" and isinstance(b, dict) and b.get("path") == path:
                    return c
        raise KeyError(path)

    def type_value(self, path: str, value: Any) -> None:
        """A person enters ``value`` into the input bound at ``path``, as that input would store it."""
        c = self.input_at(path)
        t = c["type"]
        if t == "TextField":
            self.set(path, value if isinstance(value, str) else json.dumps(value))
        elif t in ("MultipleChoice", "ChoicePicker"):
            self.set(path, list(value) if isinstance(value, (list, tuple)) else [value])
        else:
            self.set(path, value)

    def button(self, name: str) -> dict[str, Any]:
        for cid, c in self.components.items():
            if c["type"] != "Button":
                continue
            action = c["action"]
            event = action["name"] if self.version == "0.8" else action["event"]["name"]
            if event == name:
                return {"id": cid, **c}
        raise KeyError(name)

    def click(self, name: str, timestamp: str = "2026-01-01T12:00:00Z") -> dict[str, Any]:
        """The client event a press of the button with action ``name`` sends."""
        b = self.button(name)
        context: dict[str, Any] = {}
        if self.version == "0.8":
            for item in b["action"].get("context", []):
                v = item["value"]
                resolved = self.get(v["path"]) if "path" in v else next(iter(v.values()))
                if resolved is not _MISSING:
                    context[item["key"]] = resolved
        else:
            for key, v in b["action"]["event"].get("context", {}).items():
                resolved = self.get(v["path"]) if isinstance(v, dict) and "path" in v else v
                if resolved is not _MISSING:
                    context[key] = resolved
        action = {
            "name": name,
            "surfaceId": self.surface_id,
            "sourceComponentId": b["id"],
            "timestamp": timestamp,
            "context": context,
        }
        return {"userAction": action} if self.version == "0.8" else {"version": "v0.9", "action": action}
