"""The elicitation-form mapping of protocols.md §5.6, checked component by component on generated asks."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.surface import ask_to_surface
from askgate.core.model import (
    ApprovalSpec,
    Ask,
    BooleanField,
    Capability,
    ChoiceField,
    FormSpec,
    IntegerField,
    IntentExtension,
    MultiChoiceField,
    NumberField,
    Option,
    StringField,
    TextSpec,
)
from askgate.errors import AskgateError, Fault, pointer_join
from tests.a2ui.surface_strategies import SimRenderer, asks, form_specs
from tests.support.scale import examples

VERSIONS = ("0.8", "0.9")
CATALOG_ID_09 = A2uiCatalog.basic("0.9").catalog_id


def _components(msgs: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    """Components as flat dicts ``{"id", "type", **props}`` for either version."""
    out = []
    for m in msgs:
        body = m.get("surfaceUpdate") or m.get("updateComponents")
        for c in (body or {}).get("components", []):
            if version == "0.8":
                ((type_, props),) = c["component"].items()
            else:
                type_, props = c["component"], {k: v for k, v in c.items() if k not in ("id", "component")}
            out.append({"id": c["id"], "type": type_, **props})
    return out


def _text(c: dict[str, Any], key: str, version: str) -> Any:
    v = c.get(key)
    return v.get("literalString") if version == "0.8" and isinstance(v, dict) else v


def _children(c: dict[str, Any], version: str) -> list[str]:
    return c["children"]["explicitList"] if version == "0.8" else c["children"]


def _bound_path(c: dict[str, Any]) -> str | None:
    for key in ("text", "value", "selections"):
        v = c.get(key)
        if c["type"] != "Text" and isinstance(v, dict) and "path" in v:
            return v["path"]
    return None


def _calls(node: Any) -> list[dict[str, Any]]:
    """Every function call nested in ``node``."""
    found = []
    if isinstance(node, dict):
        if "call" in node and "args" in node:
            found.append(node)
        for v in node.values():
            found.extend(_calls(v))
    elif isinstance(node, list):
        for v in node:
            found.extend(_calls(v))
    return found


INPUTS = {"TextField", "CheckBox", "MultipleChoice", "ChoicePicker", "Slider", "DateTimeInput"}


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(asks(st.one_of(form_specs(), st.builds(ApprovalSpec))), st.sampled_from(VERSIONS))
def test_mapping_rules_hold_for_generated_forms(ask: Ask, version: str) -> None:
    msgs = ask_to_surface(ask, version)
    sid = "elicit-" + (ask.id or "")
    assert all(next(iter(v for k, v in m.items() if k != "version"))["surfaceId"] == sid for m in msgs)
    if version == "0.9":
        assert [next(k for k in m if k != "version") for m in msgs] == [
            "createSurface",
            "updateComponents",
            "updateDataModel",
        ]
        assert msgs[0]["createSurface"]["catalogId"] == CATALOG_ID_09
    else:
        assert [next(iter(m)) for m in msgs] == ["beginRendering", "dataModelUpdate", "surfaceUpdate"]
        assert msgs[0]["beginRendering"]["root"] == "root"
    comps = _components(msgs, version)
    by_id = {c["id"]: c for c in comps}
    assert len(by_id) == len(comps)  # unique ids
    root = by_id["root"]
    assert root["type"] == "Card"
    column = by_id[root["child"]]
    assert column["type"] == "Column"
    order = _children(column, version)
    title = by_id[order[0]]
    assert title["type"] == "Text" and _text(title, "text", version) == ask.prompt
    assert title["usageHint" if version == "0.8" else "variant"] == "h3"

    fields = ask.spec.fields if isinstance(ask.spec, FormSpec) else ()
    inputs = [c for c in comps if c["type"] in INPUTS]
    for f in fields:
        path = pointer_join("/form", f.name)
        bound = [c for c in inputs if _bound_path(c) == path]
        assert len(bound) == 1, (f.name, path)
        c = bound[0]
        assert re.fullmatch(r"f_[A-Za-z0-9_]*", c["id"])
        label = f.title or f.name
        want_label = label + " *" if f.required else label
        if version == "0.8" and c["type"] in ("MultipleChoice", "DateTimeInput"):
            assert "label" not in c  # trap 7: the label is a Text just before the input
            before = by_id[order[order.index(c["id"]) - 1]]
            assert before["type"] == "Text" and _text(before, "text", version) == want_label
        else:
            assert _text(c, "label", version) == want_label
        expected_type = {
            "string": "DateTimeInput" if getattr(f, "format", None) in ("date", "date-time") else "TextField",
            "boolean": "CheckBox",
            "choice": "MultipleChoice" if version == "0.8" else "ChoicePicker",
            "multi_choice": "MultipleChoice" if version == "0.8" else "ChoicePicker",
        }.get(f.kind)
        if f.kind in ("number", "integer"):
            both = f.minimum is not None and f.maximum is not None and f.minimum <= f.maximum
            expected_type = "Slider" if both else "TextField"
        assert c["type"] == expected_type, (f, c)
        if c["type"] == "DateTimeInput":
            assert c["enableDate"] is True and c["enableTime"] is (f.format == "date-time")
            assert "min" not in c and "max" not in c  # trap 2
        if c["type"] == "Slider":
            assert ("max" if version == "0.9" else "maxValue") in c  # trap 4
        if c["type"] == "TextField":
            variant = c["textFieldType"] if version == "0.8" else c["variant"]
            assert variant in ("shortText", "longText", "number")  # trap 5: never email/date
            if f.kind in ("number", "integer"):
                assert variant == "number"
        if c["type"] == "ChoicePicker":
            assert c["value"] == {"path": path}  # trap 3
            assert c["variant"] == ("mutuallyExclusive" if f.kind == "choice" else "multipleSelection")
        if c["type"] == "MultipleChoice":
            want_max = 1 if f.kind == "choice" else getattr(f, "max_items", None)
            assert c.get("maxAllowedSelections") == want_max
        if f.kind in ("choice", "multi_choice"):
            opts = c["options"]
            assert [o["value"] for o in opts] == [o.value for o in f.options]
            assert [_text(o, "label", version) for o in opts] == [o.label or o.value for o in f.options]
        if version == "0.9":
            checks = c.get("checks", [])
            assert all(set(ch) == {"condition", "message"} for ch in checks)  # trap 1
            has_required = any(
                ch["condition"] == {"call": "required", "args": {"value": {"path": path}}} for ch in checks
            )
            assert has_required == (f.required and f.kind != "boolean")
            if f.description:
                assert c["accessibility"] == {"description": f.description}
        if f.description:
            after = [by_id[i] for i in order[order.index(c["id"]) + 1 :]]
            assert any(
                a["type"] == "Text"
                and _text(a, "text", version) == f.description
                and a["usageHint" if version == "0.8" else "variant"] == "caption"
                for a in after[:1]
            )

    for call in _calls(comps):
        if call["call"] in ("and", "or"):
            assert len(call["args"]["values"]) >= 2  # trap 6

    buttons = {
        (c["action"]["name"] if version == "0.8" else c["action"]["event"]["name"]): c
        for c in comps
        if c["type"] == "Button"
    }
    if isinstance(ask.spec, ApprovalSpec):
        assert set(buttons) == {"approval.allow", "approval.deny"}
    else:
        assert set(buttons) == {"elicitation.accept", "elicitation.decline", "elicitation.cancel"}
        accept = buttons["elicitation.accept"]
        if version == "0.8":
            ctx = {i["key"]: i["value"] for i in accept["action"].get("context", [])}
            assert accept["primary"] is True
        else:
            ctx = accept["action"]["event"].get("context", {})
            assert accept["variant"] == "primary"
        assert ctx == {f.name: {"path": pointer_join("/form", f.name)} for f in fields}
        for name in ("elicitation.decline", "elicitation.cancel"):
            b = buttons[name]
            assert "context" not in (b["action"] if version == "0.8" else b["action"]["event"])
        if version == "0.9":
            req = [f for f in fields if f.required and f.kind != "boolean"]
            if not req:
                assert "checks" not in accept
            else:
                (check,) = accept["checks"]
                cond = check["condition"]
                assert cond["call"] == ("required" if len(req) == 1 else "and")


@pytest.mark.parametrize("version", VERSIONS)
def test_defaults_are_seeded_in_the_data_model(version: str) -> None:
    spec = FormSpec(
        fields=(
            StringField(name="s", default="hi"),
            StringField(name="d", format="date", default="2024-02-29"),
            NumberField(name="n", default=2.5),
            IntegerField(name="i", minimum=0, maximum=9, default=4),
            BooleanField(name="b", default=True),
            BooleanField(name="req", required=True),
            BooleanField(name="opt"),
            ChoiceField(name="c", options=(Option(value="x"), Option(value="y")), default="y"),
            MultiChoiceField(name="m/~", options=(Option(value="x"), Option(value="y")), default=("x", "y")),
            ChoiceField(name="none", options=(Option(value="x"),)),
            StringField(name="when", format="date-time"),
        )
    )
    r = SimRenderer(ask_to_surface(Ask(id="a", dialect="canonical", prompt="p", spec=spec), version), version)
    assert r.model == {
        "form": {
            "s": "hi",
            "d": "2024-02-29",
            "n": "2.5",
            "i": 4,
            "b": True,
            "req": False,
            "c": ["y"],
            "m/~": ["x", "y"],
            "none": [],
            "when": "",
        }
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_faults_render_next_to_their_fields_and_values_are_kept(version: str) -> None:
    spec = FormSpec(fields=(StringField(name="a/b", required=True), IntegerField(name="n")))
    ask = Ask(id="a", dialect="canonical", prompt="p", spec=spec)
    faults = [
        Fault("/form/a~1b", "say something", "required"),
        Fault("/form/n", "not a number", "type"),
        Fault("", "the client reported an error", "a2ui.client-error"),
    ]
    msgs = ask_to_surface(ask, version, values={"a/b": "typed", "n": "twelve", "zzz": 1}, faults=faults)
    comps = _components(msgs, version)
    by_id = {c["id"]: c for c in comps}
    order = _children(by_id[by_id["root"]["child"]], version)
    texts = [(i, _text(by_id[i], "text", version)) for i in order if by_id[i]["type"] == "Text"]
    where = {t: order.index(i) for i, t in texts}
    assert order.index("f_a_b") < where["⚠ say something"] < order.index("f_n") < where["⚠ not a number"]
    assert where["⚠ the client reported an error"] < order.index("f_a_b")
    r = SimRenderer(msgs, version)
    assert r.model["form"]["a/b"] == "typed" and r.model["form"]["n"] == "twelve"
    assert "zzz" not in r.model["form"]


@pytest.mark.parametrize("version", VERSIONS)
def test_approval_surface_shows_options_capabilities_and_scope_choice(version: str) -> None:
    ext = IntentExtension(
        capabilities=(Capability(tool="shell", operation="exec", resource="posix:///srv"),), scope="session"
    )
    ask = Ask(
        id="a",
        dialect="acs",
        prompt="Run it?",
        spec=ApprovalSpec(options=("once", "always"), intent_extension=ext),
    )
    msgs = ask_to_surface(ask, version)
    comps = _components(msgs, version)
    texts = [_text(c, "text", version) for c in comps if c["type"] == "Text"]
    assert "• shell · exec · posix:///srv" in texts
    assert "Proposed scope: this session" in texts
    chooser = {_bound_path(c): c for c in comps if c["type"] in ("MultipleChoice", "ChoicePicker")}
    assert [o["value"] for o in chooser["/form/option"]["options"]] == ["once", "always"]
    assert [o["value"] for o in chooser["/form/scope"]["options"]] == ["session", "this_request"]
    assert SimRenderer(msgs, version).model["form"]["scope"] == ["session"]


def test_long_text_and_unknown_version() -> None:
    ask = Ask(id="a", dialect="aqp", prompt="p", spec=TextSpec(min_length=1, max_length=10))
    v9 = _components(ask_to_surface(ask, "0.9"), "0.9")
    assert [c["variant"] for c in v9 if c["type"] == "TextField"] == ["longText"]
    with pytest.raises(AskgateError) as info:
        ask_to_surface(ask, "1.0")  # type: ignore[arg-type]
    assert info.value.code == "unsupported"
    with pytest.raises(AskgateError) as info:
        ask_to_surface(ask.model_copy(update={"id": None}), "0.9")
    assert info.value.faults[0].pointer == "/id"
