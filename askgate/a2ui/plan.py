"""The version-neutral plan of an ask's surface: which inputs, where their values live, which buttons.

Rendering (:mod:`askgate.a2ui.surface`) and reading the answer back (:mod:`askgate.a2ui.answer`) must
agree on every id, data path and action name, so both derive them from one :func:`plan_ask`. The plan
knows nothing about v0.8 or v0.9 wire shapes.

Every answer spec is planned as a flat list of input fields under ``/form``:

* a :class:`FormSpec` contributes its fields as they are;
* :class:`TextSpec`, :class:`ChoiceSpec`, :class:`YesNoSpec` and :class:`NumberSpec` become one required
  field named ``value`` (``/form/value``);
* an :class:`ApprovalSpec` becomes an optional ``option`` choice (when options exist), a ``scope``
  choice (when a session-wide intent extension is proposed, so the approver can narrow it to this
  request), an optional ``reasoning`` text, and allow / deny buttons.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal

from askgate.core.model import (
    ApprovalSpec,
    Ask,
    BooleanField,
    Capability,
    ChoiceField,
    ChoiceSpec,
    FormField,
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

__all__ = [
    "FORM_PATH",
    "SURFACE_PREFIX",
    "ActionPlan",
    "FieldPlan",
    "SurfacePlan",
    "TextPlan",
    "Widget",
    "plan_ask",
    "surface_id",
]

SURFACE_PREFIX = "elicit-"
FORM_PATH = "/form"
LONG_TEXT_OVER = 200
"""A string field whose ``max_length`` exceeds this renders as a multi-line (``longText``) input."""

VALUE_PROP = "value"
YES, NO = "yes", "no"

Widget = Literal[
    "text", "longtext", "number", "integer", "checkbox", "choice", "multi", "slider", "date", "datetime"
]
Style = Literal["h3", "body", "caption"]
ActionKind = Literal["accept", "decline", "cancel", "allow", "deny"]

ACCEPT, DECLINE, CANCEL = "elicitation.accept", "elicitation.decline", "elicitation.cancel"
ALLOW, DENY = "approval.allow", "approval.deny"


@dataclass(frozen=True)
class FieldPlan:
    """One input: the canonical field it answers, its widget, component id and data path."""

    prop: str
    field: FormField
    widget: Widget
    id: str
    path: str
    label: str
    yes_no: bool = False  # a YesNoSpec's yes/no choice, read back as a boolean

    @property
    def required(self) -> bool:
        return self.field.required

    @property
    def options(self) -> tuple[Option, ...]:
        """The choices of a choice or multi-choice field (empty for other kinds)."""
        return getattr(self.field, "options", ())

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        """``(minimum, maximum)`` of a number or integer field (``None`` for other kinds)."""
        return getattr(self.field, "minimum", None), getattr(self.field, "maximum", None)


@dataclass(frozen=True)
class TextPlan:
    """A static line of text (title, details, subject, proposed capabilities)."""

    id: str
    text: str
    style: Style = "body"


@dataclass(frozen=True)
class ActionPlan:
    """One button: its action name, what it means, and which fields its context sends."""

    name: str
    kind: ActionKind
    id: str
    label: str
    primary: bool
    context: tuple[str, ...] = ()  # props whose /form values the button sends
    requires: tuple[str, ...] = ()  # props that must be filled before the button enables (v0.9 checks)


@dataclass(frozen=True)
class SurfacePlan:
    surface_id: str
    title: TextPlan
    texts: tuple[TextPlan, ...]
    fields: tuple[FieldPlan, ...]
    actions: tuple[ActionPlan, ...]
    approval: ApprovalSpec | None = None
    _by_prop: dict[str, FieldPlan] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_prop.update({f.prop: f for f in self.fields})

    def field(self, prop: str) -> FieldPlan | None:
        return self._by_prop.get(prop)

    def path(self, prop: str) -> str:
        """The data path of a planned field (``KeyError`` for an unknown one)."""
        return self._by_prop[prop].path

    def action(self, name: str) -> ActionPlan | None:
        for a in self.actions:
            if a.name == name:
                return a
        return None


def surface_id(ask: Ask) -> str:
    """``elicit-<askId>`` for every kind of ask: one surface per ask (protocols.md §5.6).

    The ask must have been given its id (stored) first: the id is how an action event finds its ask.
    """
    if not ask.id:
        raise AskgateError(
            "an ask needs an id before it can be shown as a surface",
            [Fault("/id", "the ask has no id; store it before rendering it", "a2ui.surface-id")],
            code="invalid_request",
        )
    return SURFACE_PREFIX + ask.id


def field_path(prop: str) -> str:
    """``/form/<prop>`` with ``~`` and ``/`` escaped (RFC 6901)."""
    return pointer_join(FORM_PATH, prop)


_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_]")
_ID_MAX = 48


def _base_ids(props: list[str]) -> list[str]:
    """``f_<prop>`` made safe (ASCII letters, digits, ``_``) and unique.

    Derived ids append ``-label``, ``-desc``, ``-err-<n>``: base ids never contain ``-``, so a derived
    id can never collide with another field's base id, and static ids (``root``, ``title``, ``btn-...``)
    never start with ``f_``.
    """
    taken: set[str] = set()
    out = []
    for prop in props:
        base = "f_" + _ID_UNSAFE.sub("_", prop)[:_ID_MAX]
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}_{n}"
        taken.add(candidate)
        out.append(candidate)
    return out


def finite(x: float | None) -> float | int | None:
    """``x`` when it is a usable bound (finite), else ``None``."""
    if x is None or isinstance(x, bool):
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def widget_for(f: FormField) -> Widget:
    """The input for a canonical field, per the elicitation-form mapping (protocols.md §5.6)."""
    if isinstance(f, StringField):
        if f.format == "date":
            return "date"
        if f.format == "date-time":
            return "datetime"
        if f.max_length is not None and f.max_length > LONG_TEXT_OVER:
            return "longtext"
        return "text"
    if isinstance(f, (NumberField, IntegerField)):
        lo, hi = finite(f.minimum), finite(f.maximum)
        if lo is not None and hi is not None and lo <= hi:
            return "slider"
        return "integer" if isinstance(f, IntegerField) else "number"
    if isinstance(f, BooleanField):
        return "checkbox"
    if isinstance(f, ChoiceField):
        return "choice"
    if isinstance(f, MultiChoiceField):
        return "multi"
    raise TypeError(f"unknown field kind {type(f).__name__}")


def label_of(f: FormField) -> str:
    """The visible label: the title (or the name), with `` *`` for a required field."""
    text = f.title if f.title else f.name
    return text + " *" if f.required else text


def _fields_for(ask: Ask) -> list[tuple[FormField, bool, Widget | None]]:
    spec = ask.spec
    if isinstance(spec, FormSpec):
        return [(f, False, None) for f in spec.fields]
    if isinstance(spec, TextSpec):
        f = StringField(
            name=VALUE_PROP,
            title="Your answer",
            required=True,
            min_length=spec.min_length,
            max_length=spec.max_length,
        )
        return [(f, False, "longtext")]
    if isinstance(spec, ChoiceSpec):
        opts = tuple(Option(value=c) for c in spec.choices)
        return [(ChoiceField(name=VALUE_PROP, title="Your answer", required=True, options=opts), False, None)]
    if isinstance(spec, YesNoSpec):
        opts = (Option(value=YES, label="Yes"), Option(value=NO, label="No"))
        return [(ChoiceField(name=VALUE_PROP, title="Your answer", required=True, options=opts), True, None)]
    if isinstance(spec, NumberSpec):
        number = NumberField(
            name=VALUE_PROP, title="Your answer", required=True, minimum=spec.minimum, maximum=spec.maximum
        )
        return [(number, False, None)]
    if isinstance(spec, ApprovalSpec):
        out: list[tuple[FormField, bool, Widget | None]] = []
        if spec.options:
            opts = tuple(Option(value=o) for o in dict.fromkeys(spec.options))
            out.append((ChoiceField(name="option", title="Option", options=opts), False, None))
        ext = spec.intent_extension
        if ext is not None and ext.scope == "session":
            opts = (
                Option(value="session", label="This session"),
                Option(value="this_request", label="This request only"),
            )
            out.append(
                (
                    ChoiceField(
                        name="scope",
                        title="Grant the extra capabilities for",
                        options=opts,
                        default="session",
                    ),
                    False,
                    None,
                )
            )
        out.append((StringField(name="reasoning", title="Reason (optional)"), False, "longtext"))
        return out
    raise TypeError(f"unknown answer spec {type(spec).__name__}")


def _capability_text(cap: Capability) -> str:
    data = cap.model_dump(exclude_none=True)
    parts = [str(data.pop(k)) for k in ("tool", "operation", "resource") if k in data]
    parts += [f"{k}={v}" for k, v in data.items()]
    return "• " + (" · ".join(parts) if parts else "(any)")


def _texts_for(ask: Ask) -> list[TextPlan]:
    texts: list[TextPlan] = []
    if ask.details:
        texts.append(TextPlan("details", ask.details))
    if ask.subject is not None:
        import json

        subject = (
            ask.subject
            if isinstance(ask.subject, str)
            else json.dumps(ask.subject, ensure_ascii=False, default=str)
        )
        texts.append(TextPlan("subject", subject, "caption"))
    spec = ask.spec
    if isinstance(spec, ApprovalSpec) and spec.intent_extension is not None:
        ext = spec.intent_extension
        texts.append(TextPlan("intent", "Allowing also grants these capabilities:"))
        texts.extend(TextPlan(f"intent-{i}", _capability_text(c)) for i, c in enumerate(ext.capabilities))
        scope = "this session" if ext.scope == "session" else "this request only"
        texts.append(TextPlan("intent-scope", f"Proposed scope: {scope}", "caption"))
    return texts


def plan_ask(ask: Ask) -> SurfacePlan:
    """The surface plan of one ask (see the module docstring)."""
    sid = surface_id(ask)
    raw = _fields_for(ask)
    ids = _base_ids([f.name for f, _, _ in raw])
    fields = tuple(
        FieldPlan(
            prop=f.name,
            field=f,
            widget=w or widget_for(f),
            id=i,
            path=field_path(f.name),
            label=label_of(f),
            yes_no=yn,
        )
        for (f, yn, w), i in zip(raw, ids)
    )
    props = tuple(f.prop for f in fields)
    actions: tuple[ActionPlan, ...]
    if isinstance(ask.spec, ApprovalSpec):
        option = ("option",) if ask.spec.options else ()
        scope = ("scope",) if any(f.prop == "scope" for f in fields) else ()
        actions = (
            ActionPlan(ALLOW, "allow", "btn-allow", "Allow", True, option + scope + ("reasoning",), option),
            ActionPlan(DENY, "deny", "btn-deny", "Deny", False, option + ("reasoning",)),
        )
    else:
        required = tuple(f.prop for f in fields if f.required and f.widget != "checkbox")
        actions = (
            ActionPlan(ACCEPT, "accept", "btn-accept", "Submit", True, props, required),
            ActionPlan(DECLINE, "decline", "btn-decline", "Decline", False),
            ActionPlan(CANCEL, "cancel", "btn-cancel", "Cancel", False),
        )
    return SurfacePlan(
        surface_id=sid,
        title=TextPlan("title", ask.prompt, "h3"),
        texts=tuple(_texts_for(ask)),
        fields=fields,
        actions=actions,
        approval=ask.spec if isinstance(ask.spec, ApprovalSpec) else None,
    )
