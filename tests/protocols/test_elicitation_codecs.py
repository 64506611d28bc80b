"""Unit tests for the A2A elicitation/v1 and MCP elicitation codecs (protocols.md §1, §2)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from askgate.core.model import (
    Answer, Ask, ChoiceField, ChoiceSpec, Dialect, FormSpec, MultiChoiceField, Option, Respondent, TextSpec,
)
from askgate.errors import AskgateError
from askgate.protocols import a2a_elicitation as a2a
from askgate.protocols import mcp_elicitation as mcp

REGION = {
    "message": "Which region should I deploy to?",
    "requestedSchema": {
        "type": "object",
        "properties": {"region": {"type": "string", "enum": ["eu", "us"], "enumNames": ["Europe", "United States"]},
                       "note": {"type": "string", "maxLength": 200}},
        "required": ["region"],
    },
}


def error(fn, *args, **kwargs) -> AskgateError:
    with pytest.raises(AskgateError) as err:
        fn(*args, **kwargs)
    return err.value


# ---- A2A ---------------------------------------------------------------------------------------

def test_a2a_parse_builds_the_canonical_ask():
    ask = a2a.parse_request(REGION, external_id="task-1", session_id="ctx-1")
    assert ask.dialect is Dialect.A2A_ELICITATION and ask.dialect_version == "v1"
    assert ask.prompt == REGION["message"] and ask.original is REGION
    assert ask.deadline.on_timeout == "cancel" and ask.external_id == "task-1" and ask.session_id == "ctx-1"
    assert Ask.model_validate(ask.model_dump()) == ask  # the fast construction is a valid model


def test_a2a_request_errors_are_invalid_request_with_every_fault():
    err = error(a2a.parse_request, {"message": "", "requestedSchema": {"type": "object", "properties": {"a": {"type": "x"}}}})
    assert err.code == "invalid_request"
    assert [f.rule for f in err.faults] == ["minLength", "const"]
    assert str(err).startswith("invalid elicitation/v1 request: /message: message must not be empty (and 1 more)")


def test_a2a_bytes_entry_point_is_strict():
    ask = a2a.parse_request_bytes(json.dumps(REGION).encode())
    assert ask.prompt == REGION["message"]
    for text, rule in [('{"message": "a", "message": "b"}', "json.duplicate-key"), ('{"a": NaN}', "json.non-finite"),
                       ('{"a": 1e400}', "json.non-finite"), (b"\xff", "json.utf-8"), ("{", "json.syntax")]:
        err = error(a2a.parse_request_bytes, text)
        assert err.code == "not_json" and err.faults[0].rule == rule


def test_a2a_proto_property_round_trip():
    doc = {"message": "m", "requestedSchema": {"type": "object", "properties": {"__proto__": {"type": "string"}}, "required": ["__proto__"]}}
    ask = a2a.parse_request_bytes(json.dumps(doc))
    answer = a2a.check_answer(ask, {"action": "accept", "content": {"__proto__": "v"}})
    assert answer.value == {"__proto__": "v"}
    assert a2a.render_answer(ask, answer) == {"action": "accept", "content": {"__proto__": "v"}}
    assert a2a.render_request(ask) == doc


def test_a2a_answer_carries_respondent_and_time():
    ask = a2a.parse_request(REGION)
    who = Respondent(kind="human", id="user:alice")
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    answer = a2a.check_answer(ask, {"action": "accept", "content": {"region": "eu"}}, respondent=who, answered_at=at)
    assert answer == Answer(outcome="accept", value={"region": "eu"}, respondent=who, answered_at=at)


def test_a2a_answer_faults_are_not_duplicated_per_pointer():
    ask = a2a.parse_request(REGION)
    err = error(a2a.check_answer, ask, {"action": "accept", "content": {"region": None}})
    assert err.code == "invalid_answer"
    assert [(f.pointer, f.rule) for f in err.faults] == [("/content/region", "type")]


def test_a2a_render_every_outcome():
    ask = a2a.parse_request(REGION)
    assert a2a.render_answer(ask, Answer(outcome="accept", value={"region": "us"})) == {"action": "accept", "content": {"region": "us"}}
    for outcome, action in [("decline", "decline"), ("cancel", "cancel"), ("timed_out", "cancel"), ("expired", "cancel")]:
        assert a2a.render_answer(ask, Answer(outcome=outcome)) == {"action": action}


def test_a2a_status_message_parts():
    ask = a2a.parse_request(REGION)
    assert a2a.status_message_parts(ask, extension_active=False) == [{"text": REGION["message"]}]
    parts = a2a.status_message_parts(ask, extension_active=True)
    assert parts == [{"text": REGION["message"]}, {"data": {"elicitation/v1": REGION}}]
    # the data part is itself a valid request
    assert a2a.parse_request(parts[1]["data"]).spec == ask.spec


def test_a2a_render_request_downgrades_titled_and_refuses_multi_select():
    titled = mcp.parse_request({"message": "m", "requestedSchema": {"type": "object", "properties": {
        "c": {"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}}}})
    assert a2a.render_request(titled) == {"message": "m", "requestedSchema": {"type": "object", "properties": {
        "c": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}}}}
    multi = mcp.parse_request({"message": "m", "requestedSchema": {"type": "object", "properties": {
        "t": {"type": "array", "items": {"type": "string", "enum": ["a"]}}}}})
    err = error(a2a.render_request, multi)
    assert err.code == "unsupported"


def test_non_form_specs_are_wrapped_for_elicitation_respondents():
    ask = Ask(dialect=Dialect.AQP, prompt="Ship?", spec=ChoiceSpec(choices=("Ship it", "Hold")))
    req = a2a.render_request(ask)
    assert req["requestedSchema"] == {"type": "object", "properties": {"answer": {"type": "string", "enum": ["Ship it", "Hold"]}}, "required": ["answer"]}
    answer = a2a.check_answer(ask, {"action": "accept", "content": {"answer": "Hold"}})
    assert answer.value == "Hold"
    assert a2a.render_answer(ask, answer) == {"action": "accept", "content": {"answer": "Hold"}}
    err = error(a2a.check_answer, ask, {"action": "accept", "content": {"answer": "hold"}})
    assert err.faults[0].pointer == "/content/answer"
    text = Ask(dialect=Dialect.AQP, prompt="Why?", spec=TextSpec(max_length=5))
    assert mcp.check_answer(text, {"action": "accept", "content": {"answer": "short"}}).value == "short"


# ---- MCP ---------------------------------------------------------------------------------------

WIDE = {"message": "Pick", "requestedSchema": {"type": "object", "properties": {
    "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2}}}}


def test_mcp_parse_params_and_jsonrpc():
    ask = mcp.parse_request(WIDE)
    assert ask.dialect is Dialect.MCP_ELICITATION and ask.dialect_version == "2025-11-25"
    assert isinstance(ask.spec.fields[0], ChoiceField) and ask.spec.fields[0].titled
    assert isinstance(ask.spec.fields[1], MultiChoiceField)
    env = {"jsonrpc": "2.0", "id": "r-1", "method": "elicitation/create", "params": WIDE}
    ask2 = mcp.parse_request(env)
    assert ask2.spec == ask.spec and ask2.external_id == "r-1" and ask2.original is env


def test_mcp_url_mode_and_tasks_are_unsupported():
    err = error(mcp.parse_request, {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"})
    assert err.code == "unsupported" and [f.rule for f in err.faults] == ["mcp.url-mode"]
    err = error(mcp.parse_request, {"message": "m", "requestedSchema": {"type": "object", "properties": {}}, "task": {}, "mode": "url"})
    assert err.code == "unsupported" and [f.rule for f in err.faults] == ["mcp.url-mode", "mcp.task-augmented"]
    err = error(mcp.parse_request_bytes, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
                                                     "params": {"mode": "url", "message": "m"}}))
    assert err.code == "unsupported" and err.faults[0].pointer == "/params/mode"


def test_mcp_2025_06_18_keyword_set():
    err = error(mcp.parse_request, WIDE, version="2025-06-18")
    assert err.code == "invalid_request"
    assert [f.rule for f in err.faults] == ["additionalProperties", "const"]
    ok = {"message": "m", "requestedSchema": {"type": "object", "properties": {"s": {"type": "string", "default": "x"}}}}
    assert mcp.parse_request(ok, version="2025-06-18").spec.fields[0].default == "x"


def test_mcp_elicit_result_rules():
    ask = mcp.parse_request(WIDE)
    assert mcp.check_answer(ask, {"action": "accept"}).value == {}
    answer = mcp.check_answer(ask, {"action": "accept", "content": {"size": "l", "tags": ["b", "a"]}, "_meta": {"x": 1}})
    assert answer.value == {"size": "l", "tags": ("b", "a")}
    assert mcp.render_answer(ask, answer, meta={"x": 1}) == {"action": "accept", "content": {"size": "l", "tags": ["b", "a"]}, "_meta": {"x": 1}}
    assert mcp.check_answer(ask, {"action": "cancel", "content": {"size": 1}}).value is None
    err = error(mcp.check_answer, ask, {"action": "accept", "content": {"size": "Large", "tags": ["a", "a", "b"]}})
    assert [f.rule for f in err.faults] == ["oneOf", "uniqueItems", "maxItems"]
    err = error(mcp.check_answer, ask, {"action": "accept", "_meta": []})
    assert [f.pointer for f in err.faults] == ["/_meta"]


def test_mcp_render_request_per_revision():
    ask = mcp.parse_request(WIDE)
    assert mcp.render_request(ask) == WIDE
    err = error(mcp.render_request, ask, version="2025-06-18")
    assert err.code == "unsupported"
    plain = a2a.parse_request(REGION)
    assert mcp.render_request(plain, version="2025-06-18") == REGION


def test_mcp_client_capabilities():
    assert mcp.client_capabilities("2025-06-18") == {}
    assert mcp.client_capabilities("2025-11-25") == {"form": {}}
    with pytest.raises(AskgateError):
        mcp.client_capabilities("1999-01-01")


def test_round_trip_parse_render_parse_is_stable():
    for codec, doc in ((a2a, REGION), (mcp, WIDE)):
        ask = codec.parse_request(doc)
        again = codec.parse_request(codec.render_request(ask))
        assert again.spec == ask.spec and again.prompt == ask.prompt


def test_mcp_meta_is_relayed_untouched():
    ask = mcp.parse_request(WIDE)
    meta = {"io.example/trace": [1, {"deep": None}]}
    result = {"jsonrpc": "2.0", "id": 3, "result": {"action": "accept", "content": {"size": "s"}, "_meta": meta}}
    relayed = mcp.render_answer(ask, mcp.check_answer(ask, result), meta=mcp.result_meta(result))
    assert relayed == {"action": "accept", "content": {"size": "s"}, "_meta": meta}
    assert relayed["_meta"] is meta
    assert mcp.result_meta({"action": "cancel"}) is None and mcp.result_meta([1]) is None
