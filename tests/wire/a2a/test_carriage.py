"""Property tests for askgate/protocols/a2a_carriage.py: how an A2A message reads as an answer.

Any message (random parts, random data) either yields an Answer or raises AskgateError with faults —
nothing else escapes; valid typed answers round-trip to the canonical form; the text fallback reads one
field's value; an approval's decision form becomes the ACS decision.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.core.model import (
    ApprovalDecision,
    ApprovalSpec,
    Ask,
    Dialect,
    IntentExtension,
    TextSpec,
    YesNoSpec,
)
from askgate.errors import AskgateError
from askgate.protocols import a2a_carriage as carriage
from askgate.protocols import a2a_elicitation
from tests.support.scale import examples

REGION = a2a_elicitation.parse_request({"message": "Where?", "requestedSchema": {"type": "object", "properties": {
    "region": {"type": "string", "enum": ["eu", "us"]}, "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
    "note": {"type": "string", "maxLength": 20}}, "required": ["region"]}})
TEXT = Ask(dialect=Dialect.AQP, prompt="Why?", spec=TextSpec(min_length=2, max_length=50))
YES_NO = Ask(dialect=Dialect.CANONICAL, prompt="Ship it?", spec=YesNoSpec())
PROPOSAL = IntentExtension.model_validate({"capabilities": [{"tool": "shell"}], "scope": "this_request"})
APPROVAL = Ask(dialect=Dialect.ACS, prompt="Run it?", spec=ApprovalSpec(options=("once", "always"),
                                                                       intent_extension=PROPOSAL))
ASKS = [REGION, TEXT, YES_NO, APPROVAL]

json_scalars = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=True) | st.text(max_size=8)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
keys = st.sampled_from(["action", "content", "region", "replicas", "note", "answer", "decision", "reasoning",
                        "selected_option", "grant_intent_extension", "x"])
payloads = st.dictionaries(keys, json_values | st.dictionaries(keys, json_values, max_size=4), max_size=4)
parts = st.lists(st.one_of(
    st.builds(lambda t: {"text": t}, st.text(max_size=30)),
    st.builds(lambda p: {"data": {"elicitation/v1": p}}, payloads | json_values),
    st.builds(lambda d: {"data": d}, st.dictionaries(st.text(max_size=6), json_values, max_size=2)),
    json_values,
), max_size=4)
messages = st.fixed_dictionaries({"parts": parts | json_values})


@settings(max_examples=examples(1000), deadline=None)
@given(st.sampled_from(ASKS), messages)
def test_any_message_gives_an_answer_or_faults(ask: Ask, message: dict[str, Any]) -> None:
    try:
        answer, _typed = carriage.answer_from_message(ask, message)
    except AskgateError as exc:
        assert exc.faults and all(f.pointer == "" or f.pointer.startswith("/") for f in exc.faults)
        return
    canonical = carriage.canonical_answer(answer)
    assert canonical["outcome"] in ("accept", "decline", "cancel")
    assert ("value" in canonical) == (canonical["outcome"] == "accept")


contents = st.fixed_dictionaries({"region": st.sampled_from(["eu", "us"])},
                                 optional={"replicas": st.integers(1, 9), "note": st.text(max_size=20)})


@settings(max_examples=examples(500), deadline=None)
@given(contents, st.booleans())
def test_valid_typed_answers_round_trip(content: dict[str, Any], as_floats: bool) -> None:
    wire = {k: (float(v) if as_floats and isinstance(v, int) else v) for k, v in content.items()}  # protobuf doubles
    answer, typed = carriage.answer_from_message(REGION, {"parts": [
        {"text": "accepted"}, {"data": {"elicitation/v1": {"action": "accept", "content": wire}}}]})
    assert typed and answer.outcome == "accept"
    value = carriage.canonical_answer(answer)["value"]
    assert value == content
    assert list(value) == [k for k in ("region", "replicas", "note") if k in content]  # the form's order
    if "replicas" in value:
        assert type(value["replicas"]) is int


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(["yes", "No", "TRUE", "false"]), st.sampled_from(["", " ", "\n"]))
def test_text_answers_for_a_yes_no_ask(word: str, pad: str) -> None:
    answer, typed = carriage.answer_from_message(YES_NO, {"parts": [{"text": pad + word + pad}]})
    assert not typed and answer.value is (word.lower() in ("yes", "true"))


@settings(max_examples=examples(300), deadline=None)
@given(st.text(min_size=1, max_size=60))
def test_text_answers_for_a_text_ask_are_checked(text: str) -> None:
    stripped = text.strip()
    try:
        answer, _ = carriage.answer_from_message(TEXT, {"parts": [{"text": text}]})
    except AskgateError:
        assert not stripped or stripped.startswith("{") or not (2 <= len(stripped) <= 50)
        return
    assert answer.value == stripped and 2 <= len(stripped) <= 50


@pytest.mark.parametrize(("content", "expected"), [
    ({"decision": "allow", "selected_option": "once", "grant_intent_extension": True},
     ApprovalDecision(decision="allow", selected_option="once", intent_extension=PROPOSAL)),
    ({"decision": "deny", "reasoning": "no", "grant_intent_extension": True},
     ApprovalDecision(decision="deny", reasoning="no")),  # grants come only with allow
    ({"decision": "allow", "selected_option": "once"}, ApprovalDecision(decision="allow", selected_option="once")),
])
def test_the_decision_form_becomes_the_acs_decision(content: dict[str, Any], expected: ApprovalDecision) -> None:
    answer = carriage.check_response(APPROVAL, {"action": "accept", "content": content})
    assert answer.value == expected


def test_the_decision_form_refuses_what_an_approver_may_not_say() -> None:
    with pytest.raises(AskgateError) as err:
        carriage.check_response(APPROVAL, {"action": "accept", "content": {"decision": "ask", "selected_option": "x"}})
    assert {f.pointer for f in err.value.faults} == {"/content/decision", "/content/selected_option"}
    schema = carriage.approval_schema(APPROVAL.spec)  # type: ignore[arg-type]
    assert schema["required"] == ["decision"] and set(schema["properties"]) == {
        "decision", "reasoning", "selected_option", "grant_intent_extension"}


def test_status_parts_only_type_when_active() -> None:
    assert carriage.status_parts(REGION, extension_active=False) == [{"text": "Where?"}]
    typed = carriage.status_parts(REGION, extension_active=True)
    assert typed[0] == {"text": "Where?"} and typed[1]["data"]["elicitation/v1"]["message"] == "Where?"
    assert carriage.extension_active({"extensions": [carriage.EXTENSION_URI]})
    assert carriage.extension_active({}, {carriage.EXTENSION_URI})
    assert not carriage.extension_active({"extensions": ["https://example.com/other"]})


routing_like = st.one_of(json_values, st.fixed_dictionaries({}, optional={
    "respondents": st.lists(st.one_of(json_values, st.fixed_dictionaries({"kind": st.sampled_from(["human", "x"]),
                                                                          "id": json_scalars})), max_size=2),
    "rule": json_scalars, "quorum": json_scalars}))
metadata = st.one_of(json_values, st.fixed_dictionaries({}, optional={"askgate": st.one_of(json_values, st.fixed_dictionaries(
    {}, optional={"routing": routing_like, "respondents": json_values, "respondent_kind": json_scalars,
                  "timeout_seconds": json_scalars, "binding": json_values, "ask_id": json_scalars}))}))


@settings(max_examples=examples(500), deadline=None)
@given(parts, metadata, st.booleans())
def test_any_first_message_is_an_ask_request_none_or_faults(message_parts: Any, meta: Any, with_ask: bool) -> None:
    from askgate.server.a2a.executor import AskRequest, parse_ask_request

    if with_ask and isinstance(message_parts, list):
        message_parts = [*message_parts, {"data": {"askgate/ask": {"document": {"ask": {}}, "routing": meta}}}]
    try:
        found = parse_ask_request({"parts": message_parts, "metadata": meta})
    except AskgateError as exc:
        assert exc.faults
        return
    assert found is None or isinstance(found, AskRequest)
