"""askgate.a2ui.html: the inbox's server-side A2UI renderer, checked as a browser and a screen reader see it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from askgate.a2ui.answer import action_to_payload, typed_values
from askgate.a2ui.html import SOURCE_FIELD, form_to_event, render_surface
from askgate.a2ui.plan import plan_ask
from askgate.a2ui.surface import ask_to_surface
from askgate.core.answers import check_value
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
)
from askgate.errors import AskgateError, Fault, pointer_join
from tests.a2ui.surface_strategies import answered_forms, asks
from tests.inbox.htmlform import Doc, Form
from tests.support.scale import examples

VERSIONS = ("0.8", "0.9")
SETTINGS = settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
STAMP = "2026-11-30T10:00:00Z"
HOSTILE = '<script>alert("x")</script>'


def _render(ask: Ask, version: str, **kw: Any) -> Doc:
    return Doc(render_surface(ask_to_surface(ask, version, **kw)))  # type: ignore[arg-type]


def _check_accessible(doc: Doc) -> None:
    ids = [el.attrs["id"] for el in doc.elements if "id" in el.attrs]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for c in doc.controls():
        label = doc.label_for(c)
        assert (
            label is not None
            and label.strip() != ""
            or c.attrs.get("type") in ("radio", "checkbox")
            and label is not None
        ), f"unlabelled control {c.attrs}"
        if c.attrs.get("type") == "radio" or (
            c.attrs.get("type") == "checkbox" and c.attrs.get("value") != "true"
        ):
            groups = [a for a in c.ancestors() if a.tag == "fieldset"]
            assert groups and any(ch.tag == "legend" for ch in groups[0].children), (
                "choice outside a fieldset/legend"
            )
    for el in doc.elements:
        for ref in el.attrs.get("aria-describedby", "").split():
            assert doc.by_id(ref) is not None, f"aria-describedby names a missing id {ref}"
    for b in doc.find("button"):
        assert b.all_text().strip(), "a button without text"


@SETTINGS
@given(asks(), st.sampled_from(VERSIONS))
def test_every_generated_ask_renders_accessibly(ask: Ask, version: str) -> None:
    _check_accessible(_render(ask, version))


@SETTINGS
@given(asks(), st.sampled_from(VERSIONS), st.data())
def test_rendering_never_fails_with_faults_and_values(ask: Ask, version: str, data: st.DataObject) -> None:
    plan = plan_ask(ask)
    props = [f.prop for f in plan.fields]
    values = (
        data.draw(
            st.dictionaries(
                st.sampled_from(props),
                st.one_of(
                    st.text(max_size=10),
                    st.integers(),
                    st.booleans(),
                    st.lists(st.text(max_size=4), max_size=3),
                ),
                max_size=4,
            )
        )
        if props
        else {}
    )
    faults = [Fault(pointer_join("/form", p), data.draw(st.text(max_size=20)), "x") for p in props[:3]]
    faults.append(Fault("/action", "an envelope fault", "x"))
    doc = _render(ask, version, values=values, faults=faults)
    _check_accessible(doc)
    for fp in plan.fields[:3]:  # each faulted field is aria-invalid and described by its error
        target = doc.by_id("a2ui-" + fp.id)
        assert target is not None
        assert target.attrs.get("aria-invalid") == "true"
        assert "a2ui-" + fp.id + "-err-0" in target.attrs.get("aria-describedby", "").split()


def _hostile_ask(field_name: str = HOSTILE) -> Ask:
    return Ask(
        id='x"><script>1</script>',
        dialect="canonical",
        prompt=HOSTILE,
        details=HOSTILE,
        subject={HOSTILE: HOSTILE},
        spec=FormSpec(
            fields=(
                StringField(
                    name=field_name, title=HOSTILE, description=HOSTILE, required=True, default=HOSTILE
                ),
                ChoiceField(
                    name="c" + field_name,
                    title=HOSTILE,
                    options=(Option(value=HOSTILE, label=HOSTILE), Option(value="'\"&<>")),
                ),
                MultiChoiceField(name="m" + field_name, options=(Option(value=HOSTILE),)),
                BooleanField(name="b" + field_name, title=HOSTILE),
            )
        ),
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_hostile_text_is_escaped_everywhere(version: str) -> None:
    ask = _hostile_ask()
    html = render_surface(ask_to_surface(ask, version, faults=[Fault("/form/" + HOSTILE, HOSTILE, "x")]))
    assert "<script" not in html.lower()
    doc = Doc(html)
    assert not doc.find("script")
    heading = [el for el in doc.elements if el.tag in ("h1", "h2", "h3", "h4")]
    assert heading[0].all_text() == HOSTILE  # shown as text, exactly
    form = Form(doc)
    assert form.value_of("/form/" + HOSTILE.replace("/", "~1")) == HOSTILE  # the default, intact
    labels = [doc.label_for(c) for c in doc.controls()]
    assert HOSTILE + " *" in labels and HOSTILE in labels


@pytest.mark.parametrize("version", VERSIONS)
def test_v08_and_v09_render_the_same_controls(version: str) -> None:
    ask = _hostile_ask("plain")
    docs = {v: _render(ask, v) for v in VERSIONS}
    shape = {
        v: [(c.tag, c.attrs.get("type"), c.attrs.get("name"), d.label_for(c)) for c in d.controls()]
        for v, d in docs.items()
    }
    assert shape["0.8"] == shape["0.9"] and shape["0.8"]


@pytest.mark.parametrize("version", VERSIONS)
def test_descriptions_errors_and_required_are_tied_to_their_input(version: str) -> None:
    ask = Ask(
        id="a",
        dialect="canonical",
        prompt="Q",
        spec=FormSpec(
            fields=(
                StringField(
                    name="email", title="Email", format="email", required=True, description="Where we write."
                ),
                ChoiceField(
                    name="tier",
                    title="Tier",
                    required=True,
                    options=(Option(value="a"), Option(value="b")),
                    description="Pick one.",
                ),
            )
        ),
    )
    doc = _render(
        ask,
        version,
        values={"email": "nope"},
        faults=[
            Fault("/form/email", "Email is not valid", "format"),
            Fault("/form/tier", "Tier is required", "required"),
        ],
    )
    email = doc.by_id("a2ui-f_email")
    assert email is not None and email.tag == "input"
    assert doc.label_for(email) == "Email *"
    described = email.attrs["aria-describedby"].split()
    assert [doc.by_id(d).all_text() for d in described] == ["Where we write.", "⚠ Email is not valid"]  # type: ignore[union-attr]
    assert email.attrs["aria-invalid"] == "true" and email.attrs["aria-required"] == "true"
    assert email.attrs["value"] == "nope"  # what was typed is kept
    tier = doc.by_id("a2ui-f_tier")
    assert tier is not None and tier.tag == "fieldset" and tier.attrs["aria-invalid"] == "true"
    assert [c.all_text() for c in tier.children if c.tag == "legend"] == ["Tier *"]
    assert [doc.by_id(d).all_text() for d in tier.attrs["aria-describedby"].split()] == [  # type: ignore[union-attr]
        "Pick one.",
        "⚠ Tier is required",
    ]
    assert (
        doc.find("form")[0].attrs.get("novalidate") == ""
    )  # the server explains faults; the browser never blocks


def _browser_value(field: Any, value: Any) -> Any:
    """What a person puts in the control (the page's script sends a date-time with its offset)."""
    if isinstance(field, (BooleanField, ChoiceField, MultiChoiceField)):
        return value
    return value if isinstance(value, str) else json.dumps(value)


@SETTINGS
@given(answered_forms(), st.sampled_from(VERSIONS))
def test_a_posted_html_form_becomes_the_same_answer(
    form: tuple[FormSpec, dict[str, Any]], version: str
) -> None:
    spec, values = form
    assume(not check_value(spec, values))
    ask = Ask(id="a1", dialect="canonical", prompt="Q", spec=spec)
    messages = ask_to_surface(ask, version)  # type: ignore[arg-type]
    f = Form(Doc(render_surface(messages)))
    for prop, v in values.items():
        f.set(pointer_join("/form", prop), _browser_value(spec.field(prop), v))
    for (
        fld
    ) in spec.fields:  # an untouched optional box is "not answered" only with the script; a post says false
        if isinstance(fld, BooleanField) and fld.name not in values:
            values = {**values, fld.name: False}
    event = form_to_event(messages, f.post("btn-accept"), timestamp=STAMP)
    key = "userAction" if version == "0.8" else "action"
    assert event[key]["sourceComponentId"] == "btn-accept" and event[key]["name"] == "elicitation.accept"
    sliders = {fp.prop for fp in plan_ask(ask).fields if fp.widget == "slider"}
    outcome, got = action_to_payload(ask, event, version)  # type: ignore[arg-type]
    assert outcome == "accept"
    expected = {k: v for k, v in values.items()}
    for fld in spec.fields:  # checkboxes post in the options' order, whatever order they were ticked in
        if isinstance(fld, MultiChoiceField) and fld.name in expected:
            order = [o.value for o in fld.options]
            expected[fld.name] = sorted(expected[fld.name], key=order.index)
    for prop in sliders - set(values):  # a range input always has a value: its minimum when unset
        expected[prop] = got[prop]
    assert got == expected


@SETTINGS
@given(answered_forms())
def test_rerender_after_a_fault_keeps_everything_typed(form: tuple[FormSpec, dict[str, Any]]) -> None:
    spec, values = form
    ask = Ask(id="a1", dialect="canonical", prompt="Q", spec=spec)
    messages = ask_to_surface(ask, "0.9")
    f = Form(Doc(render_surface(messages)))
    typed = {prop: _browser_value(spec.field(prop), v) for prop, v in values.items()}
    for prop, v in typed.items():
        f.set(pointer_join("/form", prop), v)
    event = form_to_event(messages, f.post("btn-accept"), timestamp=STAMP)
    again = Form(
        Doc(
            render_surface(
                ask_to_surface(
                    ask, "0.9", values=typed_values(event, "0.9"), faults=[Fault("/form", "something", "x")]
                )
            )
        )
    )
    for prop, v in typed.items():
        shown = again.value_of(pointer_join("/form", prop))
        fld = spec.field(prop)
        if isinstance(fld, BooleanField):
            assert shown == ([v and "true"] if v else [])
        elif isinstance(fld, ChoiceField):
            assert shown == [v]
        elif isinstance(fld, MultiChoiceField):
            assert sorted(shown) == sorted(v)
        elif isinstance(fld, StringField) and fld.format == "date-time":
            assert (
                shown == v[:19]
            )  # a datetime-local input shows the local part; the offset is re-added on send
        elif (
            isinstance(fld, (IntegerField, NumberField))
            and fld.minimum is not None
            and fld.maximum is not None
        ):
            assert float(shown) == float(v)
        else:
            assert shown == v


def test_an_unknown_button_becomes_an_event_the_checker_refuses() -> None:
    ask = Ask(id="a1", dialect="canonical", prompt="Q", spec=FormSpec(fields=(StringField(name="x"),)))
    messages = ask_to_surface(ask, "0.9")
    event = form_to_event(messages, [("/form/x", "hi"), (SOURCE_FIELD, "btn-evil")], timestamp=STAMP)
    with pytest.raises(AskgateError) as info:
        action_to_payload(ask, event, "0.9")
    assert info.value.code == "invalid_answer"


@pytest.mark.parametrize("version", VERSIONS)
def test_approval_renders_intent_and_posts_a_narrowed_grant(version: str) -> None:
    ext = IntentExtension(
        capabilities=(Capability(tool="psql", operation="migrate", resource="db://x"),), scope="session"
    )
    ask = Ask(
        id="a1",
        dialect="acs",
        prompt="Run it?",
        spec=ApprovalSpec(options=("now", "later"), intent_extension=ext),
    )
    messages = ask_to_surface(ask, version)  # type: ignore[arg-type]
    doc = Doc(render_surface(messages))
    _check_accessible(doc)
    assert "psql · migrate · db://x" in doc.root.all_text()
    f = Form(doc)
    f.set("/form/option", "later")
    f.set("/form/scope", "this_request")
    event = form_to_event(messages, f.post("btn-allow"), timestamp=STAMP)
    outcome, value = action_to_payload(ask, event, version)  # type: ignore[arg-type]
    assert outcome == "accept" and value["decision"] == "allow" and value["selected_option"] == "later"
    assert value["intent_extension"]["scope"] == "this_request"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=20,
)
COMPONENTS = [
    "Card",
    "Column",
    "Row",
    "List",
    "Text",
    "TextField",
    "CheckBox",
    "Slider",
    "DateTimeInput",
    "ChoicePicker",
    "MultipleChoice",
    "Button",
    "Divider",
    "Image",
    "root",
]


@st.composite
def odd_messages(draw: st.DrawFn) -> list[Any]:
    """Shapes close to real surfaces (so the renderer's branches run) with arbitrary JSON in every slot."""
    ids = draw(
        st.lists(
            st.sampled_from(["root", "body", "a", "b", "a-label", "a-desc", "a-err-0", "btn"]),
            min_size=1,
            max_size=8,
            unique=True,
        )
    )
    comps09 = [
        {
            "id": i,
            "component": draw(st.sampled_from(COMPONENTS)),
            **draw(
                st.dictionaries(
                    st.sampled_from(
                        [
                            "child",
                            "children",
                            "text",
                            "label",
                            "value",
                            "variant",
                            "options",
                            "min",
                            "max",
                            "action",
                            "checks",
                            "enableDate",
                            "enableTime",
                        ]
                    ),
                    st.one_of(
                        st.sampled_from(ids),
                        st.lists(st.sampled_from(ids), max_size=3),
                        json_values,
                        st.builds(lambda p: {"path": p}, st.sampled_from(["/form/a", "/form", "/x", 3])),
                    ),
                    max_size=6,
                )
            ),
        }
        for i in ids
    ]
    comps08 = [
        {
            "id": c["id"],
            "component": {c["component"]: {k: v for k, v in c.items() if k not in ("id", "component")}},
        }
        for c in comps09
    ]
    msgs: list[Any] = [
        {"version": "v0.9", "createSurface": {"surfaceId": draw(st.text(max_size=5)), "catalogId": "x"}},
        {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": comps09}},
        {
            "version": "v0.9",
            "updateDataModel": {"path": draw(st.sampled_from(["/form", "/", 7])), "value": draw(json_values)},
        },
        {"beginRendering": {"surfaceId": "s", "root": draw(st.sampled_from(ids))}},
        {"surfaceUpdate": {"surfaceId": "s", "components": comps08}},
        {"dataModelUpdate": {"path": "/form", "contents": draw(st.lists(json_values, max_size=3))}},
    ]
    picked = draw(st.lists(st.sampled_from(range(len(msgs))), max_size=6))
    return [msgs[i] for i in picked] + draw(st.lists(json_values, max_size=2))


@SETTINGS
@given(
    odd_messages(),
    st.lists(
        st.tuples(
            st.sampled_from(["a2ui_source", "/form/a", "/form", "x"]),
            st.sampled_from(["btn", "a", "0", "", "true"]),
        ),
        max_size=5,
    ),
)
def test_the_renderer_never_fails_on_odd_messages(messages: list[Any], form: list[tuple[str, str]]) -> None:
    html = render_surface(messages)
    doc = Doc(html)
    assert len(doc.find("form")) == 1 and not doc.find("script")
    ids = [el.attrs["id"] for el in doc.elements if "id" in el.attrs]
    assert len(ids) == len(set(ids))  # shared children and cycles never duplicate an element
    event = form_to_event(messages, form, timestamp=STAMP)
    assert set(event) in ({"version", "action"}, {"userAction"})
