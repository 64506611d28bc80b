"""A2UI surface messages (v0.8 or v0.9) -> accessible HTML, and an HTML form post -> the A2UI action event.

The web inbox shows a person *the very surface* an external A2UI client would get from
:func:`askgate.a2ui.surface.ask_to_surface`: this module renders those messages, not the ask. It is a
pure server-side renderer for the basic/standard catalog components askgate's surfaces use (Card,
Column, Row, Text, TextField, CheckBox, Slider, DateTimeInput, ChoicePicker / MultipleChoice, Button,
Divider); unknown components render as an empty ``div`` so a newer surface never breaks the page.

Accessibility, by construction:

* every input has a ``<label for=...>`` (choice groups a ``<fieldset>`` with a ``<legend>``; v0.8's
  ``MultipleChoice`` / ``DateTimeInput`` take their label from the ``<id>-label`` Text that
  :mod:`askgate.a2ui.surface` places before them);
* descriptions (``<id>-desc``) and errors (``<id>-err-<n>``) are tied to their input with
  ``aria-describedby``; a field with errors is ``aria-invalid``; required fields (a ``required`` check
  or a label ending in `` *``) are ``aria-required`` — the check itself stays on the server, so the
  browser never blocks a submission the server should explain (the form is ``novalidate``);
* native controls only (keyboard use and focus come for free; the page's CSS makes focus visible).

Every string from the surface is escaped (``html.escape`` with quotes): prompts, labels, option values,
field names inside data paths. DOM ids are the component ids with a prefix (surface component ids are
made safe by :mod:`askgate.a2ui.plan`; others are escaped like any attribute).

Submitting. Each input's ``name`` is its data path, and each button is a submit button named
``a2ui_source`` carrying its component id, with its action's name and context bindings in data
attributes. The page's script builds the action event from those; without a script the browser posts
the form and :func:`form_to_event` turns it into the same event.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from askgate.errors import pointer_join

__all__ = ["SOURCE_FIELD", "Surface", "form_to_event", "parse_surface", "render_surface"]

SOURCE_FIELD = "a2ui_source"
"""The form field that names the pressed button (its component id)."""

Kind = Literal[
    "text",
    "longtext",
    "number",
    "secret",
    "checkbox",
    "slider",
    "date",
    "datetime",
    "time",
    "choice",
    "multi",
]
_MAX_DEPTH = 64


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x), quote=True)


# --------------------------------------------------------------------------------------------------
# Parsing: both versions to one neutral shape.
# --------------------------------------------------------------------------------------------------


@dataclass
class Node:
    """One component in a version-neutral shape (v0.9 property names)."""

    id: str
    type: str
    props: dict[str, Any]


@dataclass
class Surface:
    """A surface as the messages built it: components by id, the data model by JSON pointer."""

    surface_id: str = ""
    version: str = "0.9"
    root: str = "root"
    nodes: dict[str, Node] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)

    def value(self, binding: Any) -> Any:
        """A bound value: a literal, ``{"path"}`` (looked up), or v0.8 ``literalString`` etc."""
        if isinstance(binding, dict):
            if "path" in binding and isinstance(binding["path"], str):
                return self.data.get(binding["path"], _literal(binding))
            return _literal(binding)
        return binding

    def text(self, binding: Any) -> str:
        v = self.value(binding)
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (str, int, float)):
            return str(v)
        return json.dumps(v, ensure_ascii=False)


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


def _literal(b: dict[str, Any]) -> Any:
    for k in ("literalString", "literalNumber", "literalBoolean", "literalArray"):
        if k in b:
            return b[k]
    return None


def _path_of(binding: Any) -> str | None:
    if isinstance(binding, dict) and isinstance(binding.get("path"), str):
        return binding["path"]
    return None


def _put_data(s: Surface, path: Any, value: Any) -> None:
    base = path if isinstance(path, str) and path not in ("", "/") else ""
    if base:
        s.data[base] = value
    if isinstance(value, dict):
        for k, v in value.items():
            _put_data(s, pointer_join(base, str(k)), v)


def _v08_value(entry: dict[str, Any]) -> Any:
    for k in ("valueString", "valueNumber", "valueBoolean"):
        if k in entry:
            return entry[k]
    if isinstance(entry.get("valueMap"), list):
        return {e.get("key"): _v08_value(e) for e in entry["valueMap"] if isinstance(e, dict)}
    return None


def _from_v08(type_: str, p: dict[str, Any]) -> dict[str, Any]:
    """v0.8 property names -> v0.9's (only what the renderer reads)."""
    out = dict(p)
    if type_ in ("Row", "Column", "List") and isinstance(p.get("children"), dict):
        out["children"] = p["children"].get("explicitList", [])
    if type_ == "Text":
        out["variant"] = p.get("usageHint", "body")
    elif type_ == "TextField":
        out["value"] = p.get("text")
        out["variant"] = p.get("textFieldType", "shortText")
    elif type_ == "Slider":
        out["min"], out["max"] = p.get("minValue"), p.get("maxValue")
    elif type_ == "MultipleChoice":
        sel = p.get("selections")
        out["value"] = sel
        out["variant"] = "mutuallyExclusive" if p.get("maxAllowedSelections") == 1 else "multipleSelection"
        out["options"] = [
            {"label": o.get("label"), "value": o.get("value")}
            for o in p.get("options", [])
            if isinstance(o, dict)
        ]
    elif type_ == "Button":
        out["variant"] = "primary" if p.get("primary") else "default"
        action = _dict(p.get("action"))
        ctx = _list(action.get("context"))
        out["action"] = {
            "event": {
                "name": action.get("name"),
                "context": {c.get("key"): c.get("value") for c in ctx if isinstance(c, dict)},
            }
        }
    return out


def parse_surface(messages: Iterable[Any]) -> Surface:
    """Fold a list of v0.8 or v0.9 server-to-client messages into one :class:`Surface`.

    Lenient by design: the messages were produced (and validated) by askgate; anything odd is skipped.
    """
    s = Surface()
    for m in messages:
        if not isinstance(m, dict):
            continue
        if "version" in m:
            s.version = "0.9"
        if isinstance(m.get("createSurface"), dict):
            s.surface_id = str(m["createSurface"].get("surfaceId", ""))
        elif isinstance(m.get("beginRendering"), dict):
            s.version = "0.8"
            s.surface_id = str(m["beginRendering"].get("surfaceId", ""))
            s.root = str(m["beginRendering"].get("root", "root"))
        elif isinstance(m.get("updateComponents"), dict):
            for c in m["updateComponents"].get("components", []):
                if (
                    isinstance(c, dict)
                    and isinstance(c.get("id"), str)
                    and isinstance(c.get("component"), str)
                ):
                    props = {k: v for k, v in c.items() if k not in ("id", "component")}
                    s.nodes[c["id"]] = Node(c["id"], c["component"], props)
        elif isinstance(m.get("surfaceUpdate"), dict):
            s.version = "0.8"
            s.surface_id = s.surface_id or str(m["surfaceUpdate"].get("surfaceId", ""))
            for c in m["surfaceUpdate"].get("components", []):
                if not (
                    isinstance(c, dict)
                    and isinstance(c.get("id"), str)
                    and isinstance(c.get("component"), dict)
                ):
                    continue
                for type_, props in c["component"].items():
                    if isinstance(props, dict):
                        s.nodes[c["id"]] = Node(c["id"], type_, _from_v08(type_, props))
                        if type_ == "MultipleChoice":
                            sel = _dict(props.get("selections"))
                            path = _path_of(sel)
                            if path is not None and isinstance(sel.get("literalArray"), list):
                                s.data.setdefault(path, list(sel["literalArray"]))
        elif isinstance(m.get("updateDataModel"), dict):
            u = m["updateDataModel"]
            if "value" in u:
                _put_data(s, u.get("path", "/"), u["value"])
        elif isinstance(m.get("dataModelUpdate"), dict):
            u = m["dataModelUpdate"]
            base = u.get("path") if isinstance(u.get("path"), str) else ""
            for entry in u.get("contents", []):
                if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                    _put_data(s, pointer_join(base if base != "/" else "", entry["key"]), _v08_value(entry))
    return s


# --------------------------------------------------------------------------------------------------
# Inputs: which kind of control each component is.
# --------------------------------------------------------------------------------------------------


def input_kind(node: Node) -> Kind | None:
    """The control a component is, or ``None`` for a non-input."""
    t, p = node.type, node.props
    if t == "TextField":
        variants: dict[str, Kind] = {"longText": "longtext", "number": "number", "obscured": "secret"}
        return variants.get(str(p.get("variant")), "text")
    if t == "CheckBox":
        return "checkbox"
    if t == "Slider":
        return "slider"
    if t == "DateTimeInput":
        date, time = bool(p.get("enableDate")), bool(p.get("enableTime"))
        return "datetime" if date and time else "time" if time else "date"
    if t in ("ChoicePicker", "MultipleChoice"):
        return "choice" if p.get("variant") == "mutuallyExclusive" else "multi"
    return None


def _bound_path(node: Node) -> str | None:
    return _path_of(node.props.get("value"))


def _is_required(node: Node, label: str) -> bool:
    for c in node.props.get("checks", []) or []:
        cond = c.get("condition") if isinstance(c, dict) else None
        if isinstance(cond, dict) and cond.get("call") == "required":
            return True
    return label.endswith(" *")


# --------------------------------------------------------------------------------------------------
# Rendering.
# --------------------------------------------------------------------------------------------------


class _Renderer:
    def __init__(
        self, s: Surface, prefix: str, heading_shift: int, hints: Mapping[str, Mapping[str, Any]]
    ) -> None:
        self.s = s
        self.prefix = prefix
        self.shift = heading_shift
        self.hints = hints
        self.consumed: set[str] = set()  # label Texts shown as their input's label, and everything rendered once
        for n in s.nodes.values():
            if (
                n.type in ("MultipleChoice", "DateTimeInput")
                and f"{n.id}-label" in s.nodes
                and "label" not in n.props
            ):
                self.consumed.add(f"{n.id}-label")

    def dom(self, cid: str) -> str:
        return self.prefix + cid

    def described_by(self, cid: str) -> tuple[list[str], bool]:
        ids: list[str] = []
        if f"{cid}-desc" in self.s.nodes:
            ids.append(self.dom(f"{cid}-desc"))
        n, errors = 0, False
        while f"{cid}-err-{n}" in self.s.nodes:
            ids.append(self.dom(f"{cid}-err-{n}"))
            errors = True
            n += 1
        return ids, errors

    def render(self, cid: str, depth: int = 0, seen: frozenset[str] = frozenset()) -> str:
        node = self.s.nodes.get(cid)
        if node is None or cid in seen or depth > _MAX_DEPTH or cid in self.consumed:
            return ""
        self.consumed.add(cid)  # a component appears once: a second reference (or a cycle) renders nothing
        seen = seen | {cid}
        t, p = node.type, node.props
        if t in ("Column", "Row", "List"):
            kids = _list(p.get("children"))
            inner = "".join(self.render(k, depth + 1, seen) for k in kids if isinstance(k, str))
            cls = {"Column": "a2ui-column", "Row": "a2ui-row", "List": "a2ui-column"}[t]
            return f'<div class="{cls}" id="{_e(self.dom(cid))}">{inner}</div>'
        if t == "Card":
            child = p.get("child")
            inner = self.render(child, depth + 1, seen) if isinstance(child, str) else ""
            return f'<div class="a2ui-card" id="{_e(self.dom(cid))}">{inner}</div>'
        if t == "Divider":
            return '<hr class="a2ui-divider">'
        if t == "Text":
            return self.text(node)
        if t == "Button":
            return self.button(node, depth, seen)
        kind = input_kind(node)
        if kind is not None:
            return self.field(node, kind)
        return f'<div class="a2ui-unknown" id="{_e(self.dom(cid))}" data-a2ui-component="{_e(t)}"></div>'

    def text(self, node: Node) -> str:
        body = _e(self.s.text(node.props.get("text")))
        variant = str(node.props.get("variant", "body"))
        dom = _e(self.dom(node.id))
        if re.fullmatch(r"h[1-5]", variant):
            level = min(6, max(1, int(variant[1]) + self.shift))
            return f'<h{level} class="a2ui-heading" id="{dom}">{body}</h{level}>'
        if "-err-" in node.id or node.id.startswith("error-"):
            return f'<p class="a2ui-error" id="{dom}">{body}</p>'
        cls = "a2ui-caption" if variant == "caption" else "a2ui-text"
        return f'<p class="{cls}" id="{dom}">{body}</p>'

    def button(self, node: Node, depth: int, seen: frozenset[str]) -> str:
        p = node.props
        child = p.get("child")
        label_node = self.s.nodes.get(child) if isinstance(child, str) else None
        label = (
            self.s.text(label_node.props.get("text"))
            if label_node is not None and label_node.type == "Text"
            else (self.render(child, depth + 1, seen) if isinstance(child, str) else "")
        )
        event = (p.get("action") or {}).get("event") if isinstance(p.get("action"), dict) else None
        name = event.get("name") if isinstance(event, dict) else None
        ctx = _dict(_dict(event).get("context"))
        paths = {k: _path_of(v) for k, v in ctx.items()}
        primary = p.get("variant") == "primary"
        label_html = _e(label) if label_node is not None and label_node.type == "Text" else label
        return (
            f'<button type="submit" class="a2ui-button{" primary" if primary else ""}" id="{_e(self.dom(node.id))}" '
            f'name="{SOURCE_FIELD}" value="{_e(node.id)}" data-a2ui-action="{_e(name or "")}" '
            f"data-a2ui-context='{_e(json.dumps(paths, ensure_ascii=False))}'>{label_html}</button>"
        )

    def label_of(self, node: Node) -> str:
        text = node.id
        if "label" in node.props:
            text = self.s.text(node.props["label"])
        else:
            helper = self.s.nodes.get(f"{node.id}-label")
            if helper is not None and helper.type == "Text":
                text = self.s.text(helper.props.get("text"))
        if not text.removesuffix(" *").strip():  # a field named "" or " ": never an empty label
            return "Unnamed field" + (" *" if text.endswith(" *") else "")
        return text

    @staticmethod
    def label_html(label: str, required: bool) -> str:
        if required and label.endswith(" *"):
            return f'{_e(label[:-2])}<span class="a2ui-req" aria-hidden="true"> *</span>'
        return _e(label)

    def field(self, node: Node, kind: Kind) -> str:
        cid, dom = node.id, self.dom(node.id)
        label = self.label_of(node)
        required = _is_required(node, label)
        path = _bound_path(node) or ""
        value = self.s.data.get(path) if path else None
        described, invalid = self.described_by(cid)
        hint = self.hints.get(cid, {})
        aria = ""
        if described:
            aria += f' aria-describedby="{_e(" ".join(described))}"'
        if invalid:
            aria += ' aria-invalid="true"'
        req = ' aria-required="true"' if required else ""
        wrap = f'data-a2ui-kind="{kind}" data-a2ui-path="{_e(path)}" data-a2ui-id="{_e(cid)}"'
        lab = f'<label for="{_e(dom)}">{self.label_html(label, required)}</label>'
        common = f'id="{_e(dom)}" name="{_e(path)}"{aria}{req}'
        if kind in ("choice", "multi"):
            return self.choices(node, kind, label, required, value, described, invalid, wrap)
        if kind == "checkbox":
            checked = " checked" if value is True else ""
            return (
                f'<div class="a2ui-field a2ui-check" {wrap}>'
                f'<input type="hidden" name="{_e(path)}" value="false">'
                f'<input type="checkbox" {common} value="true"{checked}>{lab}</div>'
            )
        if kind == "longtext":
            # The newline after <textarea> is eaten by every HTML parser, so a value's own leading newline survives.
            return (
                f'<div class="a2ui-field" {wrap}>{lab}<textarea {common} rows="4">\n{_e(_as_text(value))}'
                f"</textarea></div>"
            )
        if kind == "slider":
            lo, hi = _num(node.props.get("min"), 0), _num(node.props.get("max"), 100)
            step = hint.get("step", "any")
            shown = _num(value, None)
            unset = shown is None
            v = lo if shown is None else shown
            out = f'<output for="{_e(dom)}" class="a2ui-out">{_e("—" if unset else _fmt(v))}</output>'
            return (
                f'<div class="a2ui-field" {wrap}{" data-a2ui-unset" if unset else ""}>{lab}'
                f'<div class="a2ui-slider"><span class="a2ui-bound" aria-hidden="true">{_e(_fmt(lo))}</span>'
                f'<input type="range" {common} min="{_e(_fmt(lo))}" max="{_e(_fmt(hi))}" step="{_e(step)}" '
                f'value="{_e(_fmt(v))}"><span class="a2ui-bound" aria-hidden="true">{_e(_fmt(hi))}</span>'
                f"{out}</div></div>"
            )
        if kind in ("date", "datetime", "time"):
            typ = {"date": "date", "datetime": "datetime-local", "time": "time"}[kind]
            shown = _date_value(kind, value)
            step = ' step="1"' if kind != "date" else ""
            return (
                f'<div class="a2ui-field" {wrap}>{lab}<input type="{typ}" {common} value="{_e(shown)}"{step}>'
                f"</div>"
            )
        typ = "password" if kind == "secret" else "text"
        mode = ""
        if kind == "number":
            mode = f' inputmode="{"numeric" if hint.get("integer") else "decimal"}"'
        auto = ' autocomplete="off"' if kind in ("number", "secret") else ""
        return (
            f'<div class="a2ui-field" {wrap}>{lab}<input type="{typ}" {common}{mode}{auto} '
            f'value="{_e(_as_text(value))}"></div>'
        )

    def choices(
        self,
        node: Node,
        kind: Kind,
        label: str,
        required: bool,
        value: Any,
        described: list[str],
        invalid: bool,
        wrap: str,
    ) -> str:
        dom = self.dom(node.id)
        path = _bound_path(node) or ""
        chosen = set(value) if isinstance(value, list) else {value} if isinstance(value, str) else set()
        typ = "radio" if kind == "choice" else "checkbox"
        opts = _list(node.props.get("options"))
        items = []
        if (
            kind == "choice" and not required and not chosen
        ):  # a way back to "unanswered" (no default to keep)
            none_id = f"{dom}__none"
            checked = (
                " checked" if not (chosen & {o.get("value") for o in opts if isinstance(o, dict)}) else ""
            )
            items.append(
                f'<div class="a2ui-option a2ui-none"><input type="radio" id="{_e(none_id)}" '
                f'name="{_e(path)}" value=""{checked}><label for="{_e(none_id)}">No answer</label></div>'
            )
        for i, o in enumerate(opts):
            if not isinstance(o, dict):
                continue
            v = o.get("value")
            oid = f"{dom}__opt{i}"
            checked = " checked" if v in chosen else ""
            # The posted value is the option's index: any string may be an option value (even "", which
            # the "No answer" radio posts), so the value itself travels in data-a2ui-value for the script.
            items.append(
                f'<div class="a2ui-option"><input type="{typ}" id="{_e(oid)}" name="{_e(path)}" '
                f'value="{i}" data-a2ui-value="{_e(v)}"{checked}><label for="{_e(oid)}">'
                f"{_e(self.s.text(o.get('label')) or v)}</label></div>"
            )
        aria = f' aria-describedby="{_e(" ".join(described))}"' if described else ""
        aria += ' aria-invalid="true"' if invalid else ""
        aria += ' aria-required="true"' if required else ""
        role = ' role="radiogroup"' if kind == "choice" else ""
        return (
            f'<fieldset class="a2ui-field a2ui-choice" id="{_e(dom)}" {wrap}{role}{aria}>'
            f"<legend>{self.label_html(label, required)}</legend>"
            f'<div class="a2ui-options">{"".join(items)}</div></fieldset>'
        )


def _as_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _num(v: Any, default: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, str):
            try:
                return float(v) if any(c in v for c in ".eE") else int(v)
            except ValueError:
                return default
        return default
    return v


def _fmt(x: Any) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return str(x)


_DT = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2}(?::\d{2})?))?")


def _date_value(kind: str, v: Any) -> str:
    """What a native date / datetime-local / time input can show (its own formats, no time zone)."""
    if not isinstance(v, str):
        return ""
    m = _DT.match(v)
    if kind == "time":
        t = re.match(r"\d{2}:\d{2}(?::\d{2})?", v)
        return t.group(0) if t else ""
    if not m:
        return ""
    if kind == "date":
        return m.group(1)
    return f"{m.group(1)}T{m.group(2)}" if m.group(2) else ""


def render_surface(
    messages: Sequence[Any] | Surface,
    *,
    action: str = "",
    hidden: Mapping[str, str] | None = None,
    id_prefix: str = "a2ui-",
    heading_shift: int = 0,
    hints: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The surface as one ``<form>``: its components from the root down, plus ``hidden`` inputs.

    ``hints`` (component id -> ``{"step": 1, "integer": True}``) refine native controls where A2UI has
    no property for it (a slider's step, a numeric keyboard); ``heading_shift`` moves ``h3`` etc. to fit
    the page's outline. Never raises on odd input: missing components render as nothing.
    """
    s = messages if isinstance(messages, Surface) else parse_surface(messages)
    r = _Renderer(s, id_prefix, heading_shift, hints or {})
    inner = r.render(s.root)
    extra = "".join(
        f'<input type="hidden" name="{_e(k)}" value="{_e(v)}">' for k, v in (hidden or {}).items()
    )
    return (
        f'<form class="a2ui-surface" method="post" action="{_e(action)}" novalidate '
        f'data-a2ui-surface="{_e(s.surface_id)}" data-a2ui-version="{_e(s.version)}">{extra}{inner}</form>'
    )


# --------------------------------------------------------------------------------------------------
# A posted form -> the A2UI action event (the no-script path; the page's script builds the same one).
# --------------------------------------------------------------------------------------------------


def _option(node: Node | None, posted: str) -> str:
    """A posted option index -> that option's value (anything else is passed on, to be refused as such)."""
    opts = node.props.get("options") if node is not None else None
    if (
        isinstance(opts, list)
        and posted.isdigit()
        and int(posted) < len(opts)
        and isinstance(opts[int(posted)], dict)
    ):
        value = opts[int(posted)].get("value")
        if isinstance(value, str):
            return value
    return posted


def form_to_event(
    messages: Sequence[Any] | Surface, form: Sequence[tuple[str, str]], *, timestamp: str
) -> dict[str, Any]:
    """The action event a renderer would send for this form post (``a2ui_source`` names the button).

    Values are sent as a renderer holds them (text as typed, choices as lists, checkboxes as booleans);
    checking them is :func:`askgate.a2ui.answer.action_to_payload`'s job. An unknown button yields an
    event naming it, which that function then refuses with a fault.
    """
    s = messages if isinstance(messages, Surface) else parse_surface(messages)
    values: dict[str, list[str]] = {}
    for k, v in form:
        values.setdefault(k, []).append(v)
    source = (values.get(SOURCE_FIELD) or [""])[-1]
    button = s.nodes.get(source)
    event: dict[str, Any] = {}
    if button is not None and button.type == "Button" and isinstance(button.props.get("action"), dict):
        event = button.props["action"].get("event") or {}
    ctx = _dict(event.get("context"))
    by_path = {(_bound_path(n)): n for n in s.nodes.values() if input_kind(n) is not None}
    context: dict[str, Any] = {}
    for key, binding in ctx.items():
        path = _path_of(binding)
        node = by_path.get(path) if path else None
        got = values.get(path or "", [])
        kind = input_kind(node) if node is not None else "text"
        if kind == "checkbox":
            context[key] = bool(got) and got[-1] == "true"
        elif kind == "choice":
            context[key] = [_option(node, got[-1])] if got and got[-1] != "" else []
        elif kind == "multi":
            context[key] = [_option(node, g) for g in got if g != ""]
        else:
            context[key] = got[-1] if got else ""
    body = {
        "name": event.get("name") if isinstance(event.get("name"), str) else source,
        "surfaceId": s.surface_id,
        "sourceComponentId": source,
        "timestamp": timestamp,
        "context": context,
    }
    if s.version == "0.8":
        return {"userAction": body}
    return {"version": "v0.9", "action": body}
