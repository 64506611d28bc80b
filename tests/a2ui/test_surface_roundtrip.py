"""Surface -> person -> action event -> checked answer, and hostile events.

The event is built by a simulated renderer from the surface's own messages (its data-model seeds, the
paths its inputs are bound to, its buttons' context bindings), so these tests fail if the surface and
``action_to_payload`` ever disagree on ids, paths or action names.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from askgate.a2ui.answer import action_to_payload, typed_values
from askgate.a2ui.surface import ask_to_surface
from askgate.core.answers import check_value
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
from askgate.errors import AskgateError, pointer_join
from tests.a2ui.surface_strategies import SimRenderer, answered_forms, asks, names, numbers
from tests.support.scale import examples

VERSIONS = ("0.8", "0.9")
versions = st.sampled_from(VERSIONS)
ask_ids = st.one_of(st.sampled_from(["a1", "x/y", "~"]), st.text(min_size=1, max_size=8))
SETTINGS = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _ask(spec: Any, ask_id: str = "a1") -> Ask:
    return Ask(id=ask_id, dialect="canonical", prompt="Question?", spec=spec)


def _fill(ask: Ask, version: str, values: dict[str, Any]) -> SimRenderer:
    r = SimRenderer(ask_to_surface(ask, version), version)
    for prop, v in values.items():
        r.type_value(pointer_join("/form", prop), v)
    return r


def _base(version: str) -> str:
    return "/userAction" if version == "0.8" else "/action"


def _action(event: dict[str, Any], version: str) -> dict[str, Any]:
    return event["userAction"] if version == "0.8" else event["action"]


def _faults(ask: Ask, event: Any, version: str) -> list[tuple[str, str]]:
    with pytest.raises(AskgateError) as info:
        action_to_payload(ask, event, version)
    assert info.value.code == "invalid_answer"
    assert info.value.faults
    return [(f.pointer, f.rule) for f in info.value.faults]


# --------------------------------------------------------------------------------------------------
# Round trips.
# --------------------------------------------------------------------------------------------------


@SETTINGS
@given(answered_forms(), versions, ask_ids)
def test_form_answers_round_trip(form: tuple[FormSpec, dict[str, Any]], version: str, ask_id: str) -> None:
    spec, values = form
    assume(not check_value(spec, values))  # e.g. the "other" convention can make a drawn answer invalid
    ask = _ask(spec, ask_id)
    r = _fill(ask, version, values)
    outcome, got = action_to_payload(ask, r.click("elicitation.accept"), version)
    assert outcome == "accept"
    assert got == values
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in values.items()}
    assert check_value(spec, got, "/form") == []


@SETTINGS
@given(answered_forms(), versions)
def test_rerender_keeps_everything_typed(form: tuple[FormSpec, dict[str, Any]], version: str) -> None:
    spec, values = form
    ask = _ask(spec)
    first = _fill(ask, version, values)
    event = first.click("elicitation.accept")
    again = SimRenderer(ask_to_surface(ask, version, values=typed_values(event, version)), version)
    for prop in values:
        path = pointer_join("/form", prop)
        assert again.get(path) == first.get(path), prop
    # ...and pressing submit again gives the same event context.
    assert (
        _action(again.click("elicitation.accept"), version)["context"] == _action(event, version)["context"]
    )


@SETTINGS
@given(answered_forms(), versions, st.sampled_from(["elicitation.decline", "elicitation.cancel"]))
def test_decline_and_cancel_carry_nothing(
    form: tuple[FormSpec, dict[str, Any]], version: str, name: str
) -> None:
    spec, values = form
    ask = _ask(spec)
    assert action_to_payload(ask, _fill(ask, version, values).click(name), version) == (
        name.split(".")[1],
        None,
    )


@st.composite
def single_value_asks(draw: st.DrawFn) -> tuple[Any, Any]:
    kind = draw(st.sampled_from(["text", "choice", "yes_no", "number"]))
    if kind == "text":
        lo = draw(st.integers(0, 5))
        hi = draw(st.integers(max(lo, 1), 100))
        return TextSpec(min_length=lo, max_length=hi), draw(
            st.text(min_size=max(lo, 1), max_size=min(hi, 30))
        )
    if kind == "choice":
        choices = draw(st.lists(st.text(max_size=6), min_size=1, max_size=4, unique=True))
        return ChoiceSpec(choices=tuple(choices)), draw(st.sampled_from(choices))
    if kind == "yes_no":
        return YesNoSpec(), draw(st.booleans())
    lo, hi = sorted(draw(st.tuples(numbers, numbers)))
    spec = NumberSpec(minimum=draw(st.sampled_from([lo, None])), maximum=draw(st.sampled_from([hi, None])))
    return spec, draw(
        st.floats(min_value=spec.minimum, max_value=spec.maximum, allow_nan=False, allow_infinity=False)
    )


@SETTINGS
@given(single_value_asks(), versions)
def test_single_value_specs_round_trip(case: tuple[Any, Any], version: str) -> None:
    spec, value = case
    ask = _ask(spec)
    r = SimRenderer(ask_to_surface(ask, version), version)
    shown = value
    if isinstance(spec, YesNoSpec):
        shown = "yes" if value else "no"
    r.type_value("/form/value", shown)
    outcome, got = action_to_payload(ask, r.click("elicitation.accept"), version)
    assert (outcome, got) == ("accept", value)
    assert type(got) is type(value)
    assert check_value(spec, got) == []


@st.composite
def approvals(draw: st.DrawFn) -> tuple[ApprovalSpec, dict[str, Any], dict[str, Any]]:
    """(spec, what the approver enters, the decision expected back)."""
    options = draw(st.lists(st.text(min_size=1, max_size=6), max_size=3, unique=True))
    ext = draw(
        st.none()
        | st.builds(
            IntentExtension,
            capabilities=st.lists(
                st.builds(Capability, tool=st.text(max_size=5), operation=st.none() | st.just("exec")),
                min_size=1,
                max_size=2,
            ).map(tuple),
            scope=st.sampled_from(["this_request", "session"]),
        )
    )
    spec = ApprovalSpec(options=tuple(options), intent_extension=ext)
    decision = draw(st.sampled_from(["allow", "deny"]))
    entered: dict[str, Any] = {}
    expected: dict[str, Any] = {"decision": decision}
    if options and (decision == "allow" or draw(st.booleans())):
        entered["option"] = expected["selected_option"] = draw(st.sampled_from(options))
    if draw(st.booleans()):
        entered["reasoning"] = expected["reasoning"] = draw(st.text(min_size=1, max_size=20))
    if decision == "allow" and ext is not None:
        scope = ext.scope
        if ext.scope == "session" and draw(st.booleans()):
            entered["scope"] = scope = "this_request"
        expected["intent_extension"] = {
            "capabilities": [c.model_dump(exclude_none=True) for c in ext.capabilities],
            "scope": scope,
        }
    return spec, entered, expected


@SETTINGS
@given(approvals(), versions)
def test_approvals_round_trip(
    case: tuple[ApprovalSpec, dict[str, Any], dict[str, Any]], version: str
) -> None:
    spec, entered, expected = case
    ask = _ask(spec)
    r = _fill(ask, version, entered)
    outcome, got = action_to_payload(ask, r.click("approval." + expected["decision"]), version)
    assert outcome == "accept"
    assert got == expected


def test_approval_allow_needs_an_option_and_scope_never_widens() -> None:
    ext = IntentExtension(capabilities=(Capability(tool="shell"),), scope="this_request")
    ask = _ask(ApprovalSpec(options=("once", "always"), intent_extension=ext))
    for version in VERSIONS:
        r = _fill(ask, version, {})
        assert ("/form/option", "required") in _faults(ask, r.click("approval.allow"), version)
        # deny needs no option
        assert action_to_payload(ask, r.click("approval.deny"), version) == ("accept", {"decision": "deny"})
        event = _fill(ask, version, {"option": "once"}).click("approval.allow")
        _action(event, version)["context"]["scope"] = "session"  # not offered: the proposal is this_request
        assert ("/form/scope", "additionalProperties") in _faults(ask, event, version)
        event = _fill(ask, version, {"option": "once"}).click("approval.allow")
        _action(event, version)["context"]["option"] = ["never"]
        assert ("/form/option", "enum") in _faults(ask, event, version)


# --------------------------------------------------------------------------------------------------
# Coercions of §5.6 "Reading the answer back", one by one.
# --------------------------------------------------------------------------------------------------

FORM = FormSpec(
    fields=(
        StringField(name="d", format="date"),
        StringField(name="t", format="date-time"),
        NumberField(name="n"),
        IntegerField(name="i"),
        IntegerField(name="s", minimum=0, maximum=10),
        BooleanField(name="b"),
        ChoiceField(name="c", options=(Option(value="x"), Option(value="y"))),
        MultiChoiceField(name="m", options=(Option(value="x"), Option(value="y"))),
        StringField(name="name", required=True),
    )
)


def _event(
    version: str,
    context: dict[str, Any],
    name: str = "elicitation.accept",
    source: str = "btn-accept",
    surface: str = "elicit-a1",
) -> dict[str, Any]:
    action = {
        "name": name,
        "surfaceId": surface,
        "sourceComponentId": source,
        "timestamp": "2026-01-01T00:00:00+01:00",
        "context": context,
    }
    return {"userAction": action} if version == "0.8" else {"version": "v0.9", "action": action}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("prop", "sent", "read"),
    [
        ("d", "2024-02-29T00:00:00", "2024-02-29"),
        ("d", "2024-02-29", "2024-02-29"),
        ("d", "2024-02-29T23:59:59.123+05:30", "2024-02-29"),
        ("t", "2024-02-29T10:30Z", "2024-02-29T10:30:00Z"),
        ("t", "2024-02-29T10:30:15.5+02:00", "2024-02-29T10:30:15.5+02:00"),
        ("n", " 2.50 ", 2.5),
        ("n", "-1e3", -1000.0),
        ("n", 7, 7),
        ("i", "42", 42),
        ("i", "3.0", 3),
        ("s", 4.0, 4),
        ("s", "4", 4),
        ("b", False, False),
        ("c", ["y"], "y"),
        ("c", "y", "y"),
        ("m", ["y", "x"], ["y", "x"]),
        ("m", [], None),
        ("n", "", None),
        ("b", None, None),
    ],
)
def test_coercions(version: str, prop: str, sent: Any, read: Any) -> None:
    ask = _ask(FORM)
    outcome, got = action_to_payload(ask, _event(version, {prop: sent, "name": "Ann"}), version)
    assert outcome == "accept"
    assert got == ({"name": "Ann"} if read is None else {prop: read, "name": "Ann"})
    if read is not None:
        assert type(got[prop]) is type(read)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("prop", "sent", "rule"),
    [
        ("n", True, "type"),  # a boolean is never a number
        ("i", False, "type"),
        ("s", "11", "maximum"),  # checked against the ask: the slider's own bounds are only a hint
        ("s", 2.5, "type"),
        ("n", "1e400", "type"),
        ("n", "twelve", "type"),
        ("i", {"x": 1}, "type"),
        ("b", "true", "type"),
        ("b", 1, "type"),
        ("c", ["x", "y"], "type"),
        ("c", ["z"], "enum"),
        ("c", 3, "type"),
        ("m", ["x", "x"], "uniqueItems"),
        ("m", ["x", 1], "type"),
        ("m", {"x": True}, "type"),
        ("d", "2023-02-29", "format"),
        ("d", 20240101, "type"),
        ("d", "2024-02-29 and more", "format"),
        ("t", "2024-01-01T10:00", "format"),  # no time zone is guessed
        ("name", 5, "type"),
        ("name", "", "required"),
        ("name", None, "required"),
    ],
)
def test_bad_values_fault_at_their_field(version: str, prop: str, sent: Any, rule: str) -> None:
    context = {"name": "Ann", prop: sent}
    faults = _faults(_ask(FORM), _event(version, context), version)
    path = pointer_join("/form", prop)
    assert any(p == path or p.startswith(path + "/") for p, _ in faults), faults
    assert rule in {r for _, r in faults}, faults


# --------------------------------------------------------------------------------------------------
# Hostile envelopes.
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_hostile_envelopes(version: str) -> None:
    ask = _ask(FORM)
    base = _base(version)
    good = _event(version, {"name": "Ann"})
    assert action_to_payload(ask, good, version) == ("accept", {"name": "Ann"})

    def mutated(fn: Any) -> dict[str, Any]:
        e = copy.deepcopy(good)
        fn(e, _action(e, version))
        return e

    cases: list[tuple[Any, tuple[str, str]]] = [
        (mutated(lambda e, a: a.update(surfaceId="elicit-other")), (base + "/surfaceId", "a2ui.surface")),
        (mutated(lambda e, a: a.update(name="elicitation.hack")), (base + "/name", "a2ui.action")),
        (mutated(lambda e, a: a.update(name="approval.allow")), (base + "/name", "a2ui.action")),
        (
            mutated(lambda e, a: a.update(sourceComponentId="f_name")),
            (base + "/sourceComponentId", "a2ui.action"),
        ),
        (mutated(lambda e, a: a.update(timestamp="yesterday")), (base + "/timestamp", "format")),
        (mutated(lambda e, a: a.update(timestamp=17)), (base + "/timestamp", "type")),
        (mutated(lambda e, a: a.update(context=[1])), (base + "/context", "type")),
        (mutated(lambda e, a: a.update(extra=1)), (base + "/extra", "additionalProperties")),
        (mutated(lambda e, a: e.update(more=1)), ("/more", "additionalProperties")),
        (mutated(lambda e, a: a["context"].update(admin=True)), ("/form/admin", "additionalProperties")),
        (mutated(lambda e, a: a["context"].update({"a/b": 1})), ("/form/a~1b", "additionalProperties")),
        (mutated(lambda e, a: a.pop("timestamp")), (base, "required")),
        (mutated(lambda e, a: e.update(error={"message": "boom"})), ("/error", "a2ui.client-error")),
        ([good], ("", "type")),
        ("{}", ("", "type")),
    ]
    if version == "0.9":
        cases.append((mutated(lambda e, a: e.update(version="v0.8")), ("/version", "const")))
    for event, want in cases:
        assert want in _faults(ask, event, version), (event, want)
    # each version's events are refused by the other version's reader
    other = "0.9" if version == "0.8" else "0.8"
    assert _faults(ask, good, other)
    # decline and cancel buttons send no context: anything in it is refused
    for name in ("elicitation.decline", "elicitation.cancel"):
        event = _event(version, {"name": "Ann"}, name=name, source="btn-" + name.split(".")[1])
        assert ("/form/name", "additionalProperties") in _faults(ask, event, version)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@SETTINGS
@given(
    asks(),
    versions,
    st.dictionaries(names, json_values, max_size=5),
    st.sampled_from(["elicitation.accept", "elicitation.decline", "approval.allow", "approval.deny"]),
)
def test_fuzzed_contexts_give_checked_values_or_field_faults(
    ask: Ask, version: str, context: dict[str, Any], name: str
) -> None:
    """Any context: either a value the ask accepts, or AskgateError whose field faults name /form paths."""
    sid = "elicit-" + (ask.id or "")
    event = _event(version, context, name=name, source="btn-" + name.split(".")[1], surface=sid)
    try:
        outcome, value = action_to_payload(ask, event, version)
    except AskgateError as exc:
        assert exc.code == "invalid_answer" and exc.faults
        for f in exc.faults:
            assert f.pointer.startswith("/form") or f.pointer.startswith(_base(version)), f
        return
    if outcome == "accept":
        assert check_value(ask.spec, value) == []
    json.dumps(value)
