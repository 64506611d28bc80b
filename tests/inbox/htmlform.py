"""Just enough of a browser to read the inbox's HTML: elements, labels, form controls, and a form post.

Parsed with the standard library's ``html.parser`` (which unescapes attributes and text like a browser
does), so a test can check what a person and a screen reader would get, not the raw markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

VOID = {"input", "br", "hr", "img", "meta", "link"}


@dataclass
class El:
    tag: str
    attrs: dict[str, str]
    parent: El | None = None
    children: list[El] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def ancestors(self) -> list[El]:
        out, node = [], self.parent
        while node is not None:
            out.append(node)
            node = node.parent
        return out

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() for c in self.children)


class Doc(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = El("#root", {})
        self.stack = [self.root]
        self.elements: list[El] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = El(tag, {k: (v if v is not None else "") for k, v in attrs}, self.stack[-1])
        self.stack[-1].children.append(el)
        self.elements.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].text.append(data)

    # ---- queries ----------------------------------------------------------------------------------

    def by_id(self, id_: str) -> El | None:
        for el in self.elements:
            if el.attrs.get("id") == id_:
                return el
        return None

    def find(self, tag: str, **attrs: str) -> list[El]:
        return [
            el
            for el in self.elements
            if el.tag == tag and all(el.attrs.get(k) == v for k, v in attrs.items())
        ]

    def controls(self) -> list[El]:
        """Inputs a person interacts with (not hidden inputs), textareas and selects."""
        return [
            el
            for el in self.elements
            if el.tag in ("textarea", "select")
            or (el.tag == "input" and el.attrs.get("type", "text") != "hidden")
        ]

    def label_for(self, control: El) -> str | None:
        cid = control.attrs.get("id")
        for el in self.elements:
            if el.tag == "label" and cid and el.attrs.get("for") == cid:
                return el.all_text()
        for anc in control.ancestors():
            if anc.tag == "label":
                return anc.all_text()
        return None


class Form:
    """The surface's ``<form>`` with its current control values; ``post(button)`` is a browser submit."""

    def __init__(self, doc: Doc) -> None:
        forms = doc.find("form")
        assert len(forms) == 1, "one surface form expected"
        self.doc = doc
        self.form = forms[0]
        self.values: dict[int, Any] = {}
        for el in doc.elements:
            if self.form not in el.ancestors():
                continue
            if el.tag == "input":
                t = el.attrs.get("type", "text")
                if t in ("checkbox", "radio"):
                    self.values[id(el)] = "checked" in el.attrs
                else:
                    self.values[id(el)] = el.attrs.get("value", "")
            elif el.tag == "textarea":
                text = el.all_text()
                self.values[id(el)] = text.removeprefix("\n")

    def named(self, name: str) -> list[El]:
        return [el for el in self.doc.elements if id(el) in self.values and el.attrs.get("name") == name]

    def value_of(self, name: str) -> Any:
        """What the control(s) named ``name`` currently hold (checked values for radios/checkboxes)."""
        els = [el for el in self.named(name) if el.attrs.get("type") != "hidden"]
        if els and els[0].tag == "input" and els[0].attrs.get("type") in ("radio", "checkbox"):
            return [_shown(el) for el in els if self.values[id(el)]]
        return self.values[id(els[0])] if els else None

    def set(self, name: str, value: Any) -> None:
        """A person enters ``value``: text for text-like inputs, option values for choices, bool for a box."""
        els = [el for el in self.named(name) if el.attrs.get("type") != "hidden"]
        assert els, f"no control named {name!r}"
        t = els[0].attrs.get("type", "text") if els[0].tag == "input" else els[0].tag
        if t == "radio":
            if isinstance(
                value, (list, tuple)
            ):  # a one-pick list shown as radios (v0.8 maxAllowedSelections 1)
                value = value[0] if value else None
            for el in els:
                self.values[id(el)] = _shown(el) == value
        elif (
            t == "checkbox"
            and len(els) == 1
            and els[0].attrs.get("value") == "true"
            and isinstance(value, bool)
        ):
            self.values[id(els[0])] = value
        elif t == "checkbox":
            chosen = set(value)
            for el in els:
                self.values[id(el)] = _shown(el) in chosen
        else:
            self.values[id(els[0])] = value

    def post(self, button_value: str) -> list[tuple[str, str]]:
        """The name/value pairs a browser submits, in document order, plus the pressed button."""
        out: list[tuple[str, str]] = []
        for el in self.doc.elements:
            if id(el) not in self.values or "name" not in el.attrs or "disabled" in el.attrs:
                continue
            t = el.attrs.get("type", "text") if el.tag == "input" else el.tag
            if t in ("radio", "checkbox"):
                if self.values[id(el)]:
                    out.append((el.attrs["name"], el.attrs.get("value", "on")))
            else:
                out.append((el.attrs["name"], str(self.values[id(el)])))
        buttons = [b for b in self.doc.find("button") if b.attrs.get("value") == button_value]
        assert len(buttons) == 1, button_value
        out.append((buttons[0].attrs["name"], button_value))
        return out


def _shown(el: El) -> str:
    """An option's value as the page means it (the inbox posts option indexes and keeps the value aside)."""
    return el.attrs.get("data-a2ui-value", el.attrs.get("value", "on"))
