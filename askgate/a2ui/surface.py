"""An ask as A2UI messages (v0.8 and v0.9): the elicitation-form mapping of protocols.md §5.6.

One surface per ask, ``elicit-<askId>``. Its values live under ``/form/<prop>`` (RFC 6901 escaped),
inputs have ids ``f_<prop>`` (made safe and unique, see :mod:`askgate.a2ui.plan`), and the root Card
holds a Column that starts with the prompt as an ``h3`` Text and ends with a Row of buttons:
``elicitation.accept`` / ``decline`` / ``cancel``, or ``approval.allow`` / ``deny`` for an approval.

Message order. v0.8: ``beginRendering``, ``dataModelUpdate``, ``surfaceUpdate`` — the data model goes
before the components so that a renderer that replaces ``/form`` on a ``dataModelUpdate`` cannot wipe
the selections a ``MultipleChoice`` seeds from its ``literalArray``. v0.9: ``createSurface``,
``updateComponents``, ``updateDataModel``. To re-render an existing v0.9 surface (after faults), send
the list without its first (``createSurface``) message, or ``deleteSurface`` first: re-creating a
surface is an error in v0.9.

Every trap of §5.6 is avoided: no ``label`` on v0.8 ``MultipleChoice`` / ``DateTimeInput`` (a separate
Text instead), v0.9 checks as ``{condition, message}``, no literal ``DateTimeInput.min``/``max``,
``ChoicePicker.value`` always a path, ``Slider.max`` always set, no ``email`` text variant, and
``and``/``or`` only with two or more values. Client-side checks are hints; the answer is checked
on the server against the ask (:mod:`askgate.a2ui.answer`).
"""

from __future__ import annotations

import functools
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

from askgate.a2ui.plan import ActionPlan, FieldPlan, SurfacePlan, finite, plan_ask
from askgate.core.model import Ask, IntegerField, MultiChoiceField, NumberField, StringField
from askgate.errors import AskgateError, Fault

__all__ = ["ask_to_surface", "basic_catalog_id"]

Version = Literal["0.8", "0.9"]
V09 = "v0.9"

# Client-side hints only (the server checks the real formats with askgate.core.formats).
EMAIL_RE = r"[^\s@]+@[^\s@]+"
URI_RE = r"[A-Za-z][A-Za-z0-9+.\-]*:\S*"
NUMBER_RE = r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*"
INTEGER_RE = r"\s*[+-]?\d+\s*"


@functools.cache
def basic_catalog_id(version: str) -> str | None:
    """The id of the basic catalog askgate loads for ``version`` (``None`` for v0.8's standard catalog,
    which has no ``catalogId``: omitting it from ``beginRendering`` means "the standard catalog")."""
    from askgate.a2ui.catalog import A2uiCatalog

    return A2uiCatalog.basic(version).catalog_id


# --------------------------------------------------------------------------------------------------
# Values shown in the data model: defaults, or what the person typed before (re-render after faults).
# --------------------------------------------------------------------------------------------------


def _num_text(x: Any) -> str | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return json.dumps(x)


def _to_number(x: Any) -> float | int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return x if finite(x) is not None else None
    if isinstance(x, str):
        from askgate.a2ui.answer import parse_number

        return parse_number(x)
    return None


def _shown(fp: FieldPlan, typed: Any) -> Any:
    """``typed`` (untrusted, as sent) as the widget can show it, or ``None`` when it cannot."""
    w = fp.widget
    if w in ("text", "longtext", "date", "datetime", "number", "integer"):
        if isinstance(typed, str):
            return typed
        return _num_text(typed)
    if w == "slider":
        return _to_number(typed)
    if w == "checkbox":
        return typed if isinstance(typed, bool) else None
    options = {o.value for o in fp.options}
    if isinstance(typed, str):
        typed = [typed]
    if isinstance(typed, (list, tuple)):
        picked = [x for x in typed if isinstance(x, str) and x in options]
        return list(dict.fromkeys(picked))
    return None


def _seed(fp: FieldPlan, values: dict[str, Any] | None) -> Any:
    """The value to put at the field's path, or ``None`` for "leave unset"."""
    if values is not None and fp.prop in values:
        shown = _shown(fp, values[fp.prop])
        if shown is not None:
            return shown
    f, w = fp.field, fp.widget
    default = getattr(f, "default", None)
    if w in ("choice", "multi"):
        if default is None:
            return []
        return _shown(fp, list(default) if isinstance(default, tuple) else default) or []
    if w == "checkbox":
        return default if default is not None else (False if f.required else None)
    if w == "slider":
        return _to_number(default)
    if default is None:
        return ""
    return _shown(fp, default) or ""


# --------------------------------------------------------------------------------------------------
# v0.9 checks: {condition, message}, never the flat {call, args, message} form (trap 1).
# --------------------------------------------------------------------------------------------------


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"call": name, "args": args}


def _constraints_09(fp: FieldPlan) -> list[tuple[dict[str, Any], str]]:
    """(condition, message) pairs a non-empty value must satisfy."""
    f, w, ref = fp.field, fp.widget, {"path": fp.path}
    name = f.title or f.name
    out: list[tuple[dict[str, Any], str]] = []
    if isinstance(f, StringField) and w in ("text", "longtext"):
        lo = f.min_length if f.min_length is not None and f.min_length >= 0 else None
        hi = f.max_length if f.max_length is not None and f.max_length >= 0 else None
        if lo or hi is not None:
            bounds = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
            out.append((_call("length", value=ref, **bounds), f"{name}: {_length_words(lo, hi)}."))
        if f.format == "email":
            out.append((_call("email", value=ref), f"{name} must be an email address."))
        elif f.format == "uri":
            out.append((_call("regex", value=ref, pattern=f"^{URI_RE}$"), f"{name} must be a URI."))
        if f.pattern is not None:
            out.append((_call("regex", value=ref, pattern=f.pattern), f"{name} must match {f.pattern}."))
    elif w in ("number", "integer"):
        pattern = INTEGER_RE if w == "integer" else NUMBER_RE
        kind = "a whole number" if w == "integer" else "a number"
        out.append((_call("regex", value=ref, pattern=f"^{pattern}$"), f"{name} must be {kind}."))
        assert isinstance(f, (NumberField, IntegerField))
        pairs: tuple[tuple[str, float | None], ...] = (("min", finite(f.minimum)), ("max", finite(f.maximum)))
        limits = {k: v for k, v in pairs if v is not None}
        if limits:
            out.append((_call("numeric", value=ref, **limits), f"{name} must be {_range_words(limits)}."))
    return out


def _length_words(lo: int | None, hi: int | None) -> str:
    if lo and hi is not None:
        return f"between {lo} and {hi} characters"
    return f"at least {lo} characters" if lo else f"at most {hi} characters"


def _range_words(bounds: dict[str, Any]) -> str:
    if "min" in bounds and "max" in bounds:
        return f"between {bounds['min']} and {bounds['max']}"
    return f"at least {bounds['min']}" if "min" in bounds else f"at most {bounds['max']}"


def _required_09(fp: FieldPlan) -> dict[str, Any]:
    return _call("required", value={"path": fp.path})


def _checks_09(fp: FieldPlan) -> list[dict[str, Any]]:
    checks = []
    if fp.required and fp.widget != "checkbox":
        checks.append(
            {"condition": _required_09(fp), "message": f"{fp.field.title or fp.field.name} is required."}
        )
    for cond, msg in _constraints_09(fp):
        if not fp.required:  # an empty optional field passes: or(not(required(v)), constraint)
            cond = _call("or", values=[_call("not", value=_required_09(fp)), cond])
        checks.append({"condition": cond, "message": msg})
    return checks


# --------------------------------------------------------------------------------------------------
# v0.8 validationRegexp: one regex carrying length, format, pattern and number hints as lookaheads.
# --------------------------------------------------------------------------------------------------


def _regexp_08(fp: FieldPlan) -> str | None:
    f, w = fp.field, fp.widget
    parts: list[str] = []
    if isinstance(f, StringField) and w in ("text", "longtext"):
        lo = f.min_length if f.min_length is not None and f.min_length >= 0 else 0
        hi = f.max_length if f.max_length is not None and f.max_length >= 0 else None
        if lo or hi is not None:
            parts.append(f"(?=[\\s\\S]{{{lo},{'' if hi is None else hi}}}$)")
        if f.format == "email":
            parts.append(f"(?={EMAIL_RE}$)")
        elif f.format == "uri":
            parts.append(f"(?={URI_RE}$)")
        if f.pattern is not None:
            parts.append(f"(?=[\\s\\S]*?(?:{f.pattern}))")
    elif w == "integer":
        parts.append(f"(?={INTEGER_RE}$)")
    elif w == "number":
        parts.append(f"(?={NUMBER_RE}$)")
    if not parts:
        return None
    body = "".join(parts) + "[\\s\\S]*"
    return f"^{body}$" if fp.required else f"^(?:{body})?$"


# --------------------------------------------------------------------------------------------------
# The two emitters share one walk over the plan.
# --------------------------------------------------------------------------------------------------


class _Emitter(ABC):
    """Walks the plan once; subclasses spell each primitive in their version's wire shape."""

    version: str

    def __init__(self, plan: SurfacePlan, values: dict[str, Any] | None, faults: Sequence[Fault]) -> None:
        self.plan = plan
        self.values = values
        self.components: list[dict[str, Any]] = []
        self.field_errors, self.general_errors = _sort_faults(plan, faults)

    # primitives, per version
    @abstractmethod
    def text(self, id: str, text: str, style: str) -> dict[str, Any]: ...

    @abstractmethod
    def input(self, fp: FieldPlan, seed: Any) -> list[dict[str, Any]]: ...

    @abstractmethod
    def button(self, a: ActionPlan) -> dict[str, Any]: ...

    @abstractmethod
    def container(self, id: str, kind: str, children: list[str]) -> dict[str, Any]: ...

    @abstractmethod
    def card(self, id: str, child: str) -> dict[str, Any]: ...

    @abstractmethod
    def messages(self, components: list[dict[str, Any]], seeds: dict[str, Any]) -> list[dict[str, Any]]: ...

    def build(self) -> list[dict[str, Any]]:
        p = self.plan
        comps: list[dict[str, Any]] = [self.card("root", "body")]
        body: list[str] = []
        rest: list[dict[str, Any]] = []

        def add(c: dict[str, Any]) -> None:
            body.append(c["id"])
            rest.append(c)

        for t in (p.title, *p.texts):
            add(self.text(t.id, t.text, t.style))
        for i, msg in enumerate(self.general_errors):
            add(self.text(f"error-{i}", "⚠ " + msg, "caption"))
        seeds: dict[str, Any] = {}
        for fp in p.fields:
            seed = _seed(fp, self.values)
            if seed is not None:
                seeds[fp.prop] = seed
            for c in self.input(fp, seed):
                add(c)
            if fp.field.description:
                add(self.text(f"{fp.id}-desc", fp.field.description, "caption"))
            for i, msg in enumerate(self.field_errors.get(fp.prop, [])):
                add(self.text(f"{fp.id}-err-{i}", "⚠ " + msg, "caption"))
        buttons: list[dict[str, Any]] = []
        for a in p.actions:
            buttons.append(self.button(a))
            buttons.append(self.text(f"{a.id}-label", a.label, "body"))
        add(self.container("actions", "Row", [a.id for a in p.actions]))
        comps.append(self.container("body", "Column", body))
        return self.messages(comps + rest + buttons, seeds)


def _sort_faults(plan: SurfacePlan, faults: Sequence[Fault]) -> tuple[dict[str, list[str]], list[str]]:
    """Faults whose pointer is (under) ``/form/<prop>`` go next to that field; the rest go on top."""
    by_path = sorted(((fp.path, fp.prop) for fp in plan.fields), key=lambda x: -len(x[0]))
    per: dict[str, list[str]] = {}
    general: list[str] = []
    for f in faults:
        for path, prop in by_path:
            if f.pointer == path or f.pointer.startswith(path + "/"):
                per.setdefault(prop, []).append(f.message)
                break
        else:
            general.append(f.message)
    return per, general


class _V08(_Emitter):
    version = "0.8"

    @staticmethod
    def _wrap(id: str, type_: str, props: dict[str, Any]) -> dict[str, Any]:
        return {"id": id, "component": {type_: props}}

    def text(self, id: str, text: str, style: str) -> dict[str, Any]:
        return self._wrap(id, "Text", {"text": {"literalString": text}, "usageHint": style})

    def input(self, fp: FieldPlan, seed: Any) -> list[dict[str, Any]]:
        w, label, path = fp.widget, {"literalString": fp.label}, {"path": fp.path}
        if w in ("text", "longtext", "number", "integer"):
            props: dict[str, Any] = {
                "label": label,
                "text": path,
                "textFieldType": {"text": "shortText", "longtext": "longText"}.get(w, "number"),
            }
            rx = _regexp_08(fp)
            if rx is not None:
                props["validationRegexp"] = rx
            return [self._wrap(fp.id, "TextField", props)]
        if w == "checkbox":
            return [self._wrap(fp.id, "CheckBox", {"label": label, "value": path})]
        if w == "slider":
            lo, hi = fp.bounds
            props = {"label": label, "value": path, "minValue": lo, "maxValue": hi}
            return [self._wrap(fp.id, "Slider", props)]
        # No label on v0.8 MultipleChoice / DateTimeInput (trap 7): a separate Text carries it.
        caption = self.text(f"{fp.id}-label", fp.label, "body")
        if w in ("date", "datetime"):
            props = {"value": path, "enableDate": True, "enableTime": w == "datetime"}
            return [caption, self._wrap(fp.id, "DateTimeInput", props)]
        f = fp.field
        props = {
            # Arrays can only be seeded through literalArray + path (§5.2).
            "selections": {"path": fp.path, "literalArray": list(seed or [])},
            "options": [
                {"label": {"literalString": o.label or o.value}, "value": o.value} for o in fp.options
            ],
        }
        if w == "choice":
            props["maxAllowedSelections"] = 1
        elif isinstance(f, MultiChoiceField) and f.max_items is not None and f.max_items >= 0:
            props["maxAllowedSelections"] = f.max_items
        return [caption, self._wrap(fp.id, "MultipleChoice", props)]

    def button(self, a: ActionPlan) -> dict[str, Any]:
        action: dict[str, Any] = {"name": a.name}
        if a.context:
            action["context"] = [{"key": prop, "value": {"path": self.plan.path(prop)}} for prop in a.context]
        return self._wrap(a.id, "Button", {"child": f"{a.id}-label", "primary": a.primary, "action": action})

    def container(self, id: str, kind: str, children: list[str]) -> dict[str, Any]:
        return self._wrap(id, kind, {"children": {"explicitList": children}})

    def card(self, id: str, child: str) -> dict[str, Any]:
        return self._wrap(id, "Card", {"child": child})

    def messages(self, components: list[dict[str, Any]], seeds: dict[str, Any]) -> list[dict[str, Any]]:
        sid = self.plan.surface_id
        begin: dict[str, Any] = {"surfaceId": sid, "root": "root"}
        cid = basic_catalog_id("0.8")
        if cid is not None:
            begin["catalogId"] = cid
        contents = []
        for key, v in seeds.items():
            if isinstance(v, bool):
                contents.append({"key": key, "valueBoolean": v})
            elif isinstance(v, (int, float)):
                contents.append({"key": key, "valueNumber": v})
            elif isinstance(v, str):
                contents.append({"key": key, "valueString": v})
            # lists (selections) are seeded by the MultipleChoice's literalArray
        return [
            {"beginRendering": begin},
            {"dataModelUpdate": {"surfaceId": sid, "path": "/form", "contents": contents}},
            {"surfaceUpdate": {"surfaceId": sid, "components": components}},
        ]


class _V09(_Emitter):
    version = "0.9"

    def text(self, id: str, text: str, style: str) -> dict[str, Any]:
        return {"id": id, "component": "Text", "text": text, "variant": style}

    def input(self, fp: FieldPlan, seed: Any) -> list[dict[str, Any]]:
        w, f, path = fp.widget, fp.field, {"path": fp.path}
        c: dict[str, Any] = {"id": fp.id}
        if w in ("text", "longtext", "number", "integer"):
            # No "email"/"date" variant exists (trap 5): formats become checks.
            c.update(
                component="TextField",
                label=fp.label,
                value=path,
                variant={"text": "shortText", "longtext": "longText"}.get(w, "number"),
            )
        elif w == "checkbox":
            c.update(component="CheckBox", label=fp.label, value=path)
        elif w == "slider":
            # max is required (trap 4); both bounds are finite here by construction.
            lo, hi = fp.bounds
            c.update(component="Slider", label=fp.label, min=lo, max=hi, value=path)
        elif w in ("date", "datetime"):
            # min/max are never literal dates (trap 2); both flags default to false, so set both.
            c.update(
                component="DateTimeInput",
                label=fp.label,
                value=path,
                enableDate=True,
                enableTime=w == "datetime",
            )
        else:
            # value is always a path, never a plain string (trap 3).
            c.update(
                component="ChoicePicker",
                label=fp.label,
                variant="mutuallyExclusive" if w == "choice" else "multipleSelection",
                options=[{"label": o.label or o.value, "value": o.value} for o in fp.options],
                value=path,
            )
        checks = _checks_09(fp)
        if checks:
            c["checks"] = checks
        if f.description:
            c["accessibility"] = {"description": f.description}
        return [c]

    def button(self, a: ActionPlan) -> dict[str, Any]:
        event: dict[str, Any] = {"name": a.name}
        if a.context:
            event["context"] = {prop: {"path": self.plan.path(prop)} for prop in a.context}
        c: dict[str, Any] = {
            "id": a.id,
            "component": "Button",
            "child": f"{a.id}-label",
            "variant": "primary" if a.primary else "default",
            "action": {"event": event},
        }
        conds = [_call("required", value={"path": self.plan.path(p)}) for p in a.requires]
        if conds:
            # A single check is used directly: and/or need at least two values (trap 6).
            cond = conds[0] if len(conds) == 1 else _call("and", values=conds)
            c["checks"] = [{"condition": cond, "message": "Fill in every required field."}]
        return c

    def container(self, id: str, kind: str, children: list[str]) -> dict[str, Any]:
        return {"id": id, "component": kind, "children": children}

    def card(self, id: str, child: str) -> dict[str, Any]:
        return {"id": id, "component": "Card", "child": child}

    def messages(self, components: list[dict[str, Any]], seeds: dict[str, Any]) -> list[dict[str, Any]]:
        sid = self.plan.surface_id
        cid = basic_catalog_id("0.9")
        if cid is None:  # pragma: no cover - the basic v0.9 catalog always has an id
            raise AskgateError("the basic v0.9 catalog has no catalogId", code="a2ui_catalog")
        return [
            {"version": V09, "createSurface": {"surfaceId": sid, "catalogId": cid}},
            {"version": V09, "updateComponents": {"surfaceId": sid, "components": components}},
            {"version": V09, "updateDataModel": {"surfaceId": sid, "path": "/form", "value": seeds}},
        ]


def ask_to_surface(
    ask: Ask,
    version: Version,
    *,
    values: dict[str, Any] | None = None,
    faults: Sequence[Fault] = (),
) -> list[dict[str, Any]]:
    """The A2UI messages that show ``ask`` as one surface.

    ``values`` (field name -> what the person typed, as sent; see
    :func:`askgate.a2ui.answer.typed_values`) replace the defaults so a re-render loses nothing typed;
    ``faults`` (from :func:`askgate.a2ui.answer.action_to_payload`) appear as error Text under the field
    their pointer names (``/form/<prop>...``), or at the top of the form.
    """
    plan = plan_ask(ask)
    if version == "0.8":
        return _V08(plan, values, faults).build()
    if version == "0.9":
        return _V09(plan, values, faults).build()
    raise AskgateError(
        f"unsupported A2UI version {version!r}",
        [Fault("", f"A2UI version must be 0.8 or 0.9, not {version!r}", "a2ui.version")],
        code="unsupported",
    )
