"""ACS codec and approval rules: intake forms, binding context, approvals, resolution envelope (§4)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime

import pytest

from askgate.core.answers import check_value
from askgate.core.approval import check_approval, decision_model
from askgate.core.model import Answer, ApprovalDecision, ApprovalSpec, Ask, IntentExtension, Respondent
from askgate.errors import AskgateError
from askgate.protocols import acs
from askgate.protocols.registry import codec_for

RID = "3f6c2a9e-8d1b-4c7e-a5f0-6e2b9d4c1a77"
RES = "6c1d8f0e-0b7a-4c2e-9a4d-2f5e8b1c7d30"
BASE = {"approver": {"type": "human", "id": "user:lead"}, "question": "Run it?", "timeout_seconds": 300}
PROPOSAL = {
    "capabilities": [
        {"tool": "shell", "operation": "exec", "resource": "posix:///srv"},
        {"tool": "db", "operation": "write", "x": [1]},
    ],
    "scope": "session",
}
FULL = {
    **BASE,
    "options": ["once", "always"],
    "context": "why",
    "timeout_disposition": "allow",
    "intent_extension": PROPOSAL,
}
RESULT = {
    "type": "final",
    "acs_version": "0.1.0",
    "request_id": RID,
    "decision": "ask",
    "reasoning": "outside intent",
    "ask_details": FULL,
}
ENV = {"jsonrpc": "2.0", "id": "r-1", "result": RESULT}
BINDING = {
    "session_id": "s",
    "agent_id": "a",
    "step_id": "step-1",
    "request_id": RID,
    "method": "steps/toolCallRequest",
    "request_hash": "0" * 64,
}


def refused(document, **opts):
    with pytest.raises(AskgateError) as err:
        acs.parse_request(document, **opts)
    return err.value


def test_registry_finds_the_codec():
    assert codec_for("acs") is acs


@pytest.mark.parametrize("document", [BASE, FULL, RESULT, ENV])
def test_every_form_builds_a_model_equal_to_a_validated_one(document):
    ask = acs.parse_request(document)
    assert Ask.model_validate(ask.model_dump()) == ask
    assert ask.model_dump(mode="json") == Ask.model_validate(ask.model_dump()).model_dump(mode="json")
    assert ask.original is document and ask.purpose == "approval"


def test_mapping_onto_the_canonical_ask():
    ask = acs.parse_request(ENV, binding=BINDING)
    assert ask.prompt == "Run it?" and ask.details == "why"
    assert ask.spec == ApprovalSpec(
        options=("once", "always"), intent_extension=IntentExtension.model_validate(PROPOSAL)
    )
    assert ask.spec.intent_extension.capabilities[1].model_dump() == {
        "tool": "db",
        "operation": "write",
        "resource": None,
        "x": [1],
    }
    assert ask.respondent == Respondent(kind="human", id="user:lead")
    assert (ask.deadline.timeout_seconds, ask.deadline.on_timeout) == (300.0, "allow")
    assert ask.session_id == "s" and ask.external_id == RID
    assert ask.binding == {**BINDING, "reasoning": "outside intent"}


def test_forms_can_be_named_explicitly():
    assert acs.parse_request(RESULT, form="result").external_id == RID
    err = refused(RESULT, form="ask_details")  # a result read as ask_details misses approver etc.
    assert {f.pointer for f in err.faults} == {"/approver", "/question", "/timeout_seconds"}
    assert refused(BASE, form="nonsense").code == "invalid_options"


def test_unsupported_version_has_its_own_code():
    assert refused({**RESULT, "acs_version": "1.0.0"}).code == "unsupported_version"
    assert acs.parse_request({**RESULT, "acs_version": "0.1.3"}).dialect_version == "0.1.3"


@pytest.mark.parametrize("value", [True, 0, -3, 1.5, "5", None, 2**53])
def test_timeout_seconds_refusals(value):
    err = refused({**BASE, "timeout_seconds": value})
    assert [f.pointer for f in err.faults] == ["/timeout_seconds"]


@pytest.mark.parametrize("value", [1, 1.0, 2**53 - 1])
def test_timeout_seconds_accepts_integers(value):
    assert acs.parse_request({**BASE, "timeout_seconds": value}).deadline.timeout_seconds == float(value)


@pytest.mark.parametrize(
    "method", ["steps/toolCallRequest", "protocols/MCP/tools/call", "wrapped:mcp-2025-06-18/tools/call"]
)
def test_ask_origins_that_acs_allows(method):
    assert acs.parse_request(BASE, binding={"method": method}).binding["method"] == method


@pytest.mark.parametrize(
    "method",
    [
        "steps/llmRequest",
        "steps/toolCallResult",
        "protocols/MCP/",
        "wrapped:mcp-1/",
        "steps/toolCallRequest/x",
        "STEPS/toolCallRequest",
    ],
)
def test_ask_origins_that_acs_refuses(method):
    assert [f.rule for f in refused(BASE, binding={"method": method}).faults] == ["acs.ask-origin"]


def test_binding_must_be_an_object():
    assert [f.pointer for f in refused(BASE, binding=["s"]).faults] == ["/binding"]


def test_unknown_members_pass_and_are_noted():
    ask = acs.parse_request({**BASE, "quorum": 2, "approver": {**BASE["approver"], "team": "x"}})
    assert ask.notes == ('ask_details member "quorum" ignored (unknown to ACS 0.1.0)',)


def test_every_fault_at_once():
    bad = {
        "approver": {"type": "robot"},
        "question": "",
        "options": [1],
        "timeout_seconds": 0,
        "timeout_disposition": "maybe",
        "intent_extension": {"capabilities": [], "scope": "x", "provenance": {"origin": "llm"}},
    }
    got = {(f.pointer, f.rule) for f in refused(bad).faults}
    assert got == {
        ("/approver/type", "enum"),
        ("/approver/id", "required"),
        ("/question", "acs.question-empty"),
        ("/options/0", "type"),
        ("/timeout_seconds", "minimum"),
        ("/timeout_disposition", "enum"),
        ("/intent_extension/capabilities", "minItems"),
        ("/intent_extension/scope", "enum"),
        ("/intent_extension/provenance/provenance_id", "required"),
        ("/intent_extension/provenance/origin", "enum"),
    }


def test_bytes_entry_point():
    assert acs.parse_request_bytes(json.dumps(ENV).encode(), binding=BINDING).session_id == "s"
    with pytest.raises(AskgateError) as err:
        acs.parse_request_bytes(b'{"question": "a", "question": "b"}')
    assert err.value.code == "not_json"


# --------------------------------------------------------------------------------------------------
# Approvals.
# --------------------------------------------------------------------------------------------------

SPEC = acs.parse_request(FULL).spec
NARROW = {"capabilities": [PROPOSAL["capabilities"][1]], "scope": "this_request"}


def rules(spec, value):
    return [f.rule for f in check_approval(spec, value)]


def test_check_value_delegates_to_check_approval():
    value = {"decision": "allow"}
    assert check_value(SPEC, value) == check_approval(SPEC, value)
    assert rules(SPEC, value) == ["acs.option-required"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"decision": "allow", "selected_option": "once"}, []),
        ({"decision": "deny"}, []),
        ({"decision": "deny", "selected_option": "always"}, []),
        ({"decision": "allow", "selected_option": "twice"}, ["acs.option-unknown"]),
        ({"decision": "allow", "selected_option": "once", "intent_extension": NARROW}, []),
        ({"decision": "allow", "selected_option": "once", "intent_extension": PROPOSAL}, []),
        ({"decision": "deny", "intent_extension": NARROW}, ["acs.extension-with-deny"]),
        (
            {
                "decision": "allow",
                "selected_option": "once",
                "intent_extension": {**NARROW, "capabilities": [{"tool": "db", "operation": "write"}]},
            },
            ["acs.extension-wider-capabilities"],
        ),  # the proposal's capability carries x: [1]; dropping it is a different tuple
        ({"decision": "ask"}, ["acs.approver-ask"]),
        ({"decision": "ALLOW", "selected_option": "once"}, ["enum"]),
        ({"decision": "allow", "selected_option": 1}, ["type"]),
        ({"decision": "allow", "selected_option": "once", "reasoning": None}, ["type"]),
    ],
)
def test_approval_rules(value, expected):
    assert rules(SPEC, value) == expected


def test_scope_may_narrow_but_never_widen():
    this_request = ApprovalSpec(
        intent_extension=IntentExtension.model_validate({**PROPOSAL, "scope": "this_request"})
    )
    assert (
        rules(this_request, {"decision": "allow", "intent_extension": {**PROPOSAL, "scope": "this_request"}})
        == []
    )
    assert rules(this_request, {"decision": "allow", "intent_extension": PROPOSAL}) == [
        "acs.extension-wider-scope"
    ]


def test_check_approval_accepts_a_canonical_decision():
    decision = ApprovalDecision(decision="allow", selected_option="once")
    assert check_approval(SPEC, decision) == []
    assert rules(SPEC, ApprovalDecision(decision="allow")) == ["acs.option-required"]


def test_decision_model_keeps_extra_capability_members():
    d = decision_model({"decision": "allow", "intent_extension": PROPOSAL})
    assert d.intent_extension == IntentExtension.model_validate(PROPOSAL)


def test_check_answer_codes():
    ask = acs.parse_request(FULL)
    with pytest.raises(AskgateError) as err:
        acs.check_answer(ask, {"decision": "ask"})
    assert err.value.code == "capability_not_negotiated"
    assert acs.error_envelope(err.value, 7)["error"]["code"] == -32003
    with pytest.raises(AskgateError) as err:
        acs.check_answer(ask, {"decision": "allow"})
    assert err.value.code == "invalid_answer"
    assert acs.error_envelope(err.value, 7)["error"]["code"] == -32602


def test_check_answer_gives_the_approvers_decision():
    ask = acs.parse_request(FULL)
    who = Respondent(kind="human", id="user:lead")
    at = datetime(2026, 8, 2, tzinfo=UTC)
    answer = acs.check_answer(
        ask,
        {"decision": "allow", "selected_option": "once", "intent_extension": NARROW},
        respondent=who,
        answered_at=at,
    )
    assert answer.outcome == "accept" and answer.respondent == who and answer.answered_at == at
    assert answer.value.decided_by == "approver" and answer.value.intent_extension.scope == "this_request"


def test_check_answer_refuses_an_error_envelope():
    with pytest.raises(AskgateError) as err:
        acs.check_answer(
            acs.parse_request(BASE), {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "x"}}
        )
    assert [f.rule for f in err.value.faults] == ["acs.envelope-error"]


# --------------------------------------------------------------------------------------------------
# Resolution envelopes and errors.
# --------------------------------------------------------------------------------------------------


def test_resolution_for_an_approval_with_everything():
    ask = acs.parse_request(ENV, binding=BINDING)
    answer = acs.check_answer(
        ask,
        {"decision": "allow", "reasoning": "ok", "selected_option": "once", "intent_extension": NARROW},
        respondent=Respondent(kind="human", id="user:lead"),
    )
    out = acs.render_answer(ask, answer, request_id=RES, jsonrpc_id="r-9", chain_hash="f" * 64)
    assert out == {
        "jsonrpc": "2.0",
        "id": "r-9",
        "result": {
            "type": "final",
            "acs_version": "0.1.0",
            "request_id": RES,
            "decision": "allow",
            "reasoning": "ok",
            "reason_codes": ["approver_decision"],
            "policy_data": {
                "askgate": {
                    "ask_step_id": "step-1",
                    "ask_request_id": RID,
                    "decided_by": "approver",
                    "approver": {"type": "human", "id": "user:lead"},
                    "selected_option": "once",
                    "intent_extension": {
                        "capabilities": [{"tool": "db", "operation": "write", "x": [1]}],
                        "scope": "this_request",
                    },
                }
            },
            "chain_hash": "f" * 64,
        },
    }


def test_timeout_resolution_uses_the_disposition_and_names_no_approver():
    ask = acs.parse_request(FULL)
    out = acs.render_answer(ask, Answer(outcome="timed_out"), request_id=RES, jsonrpc_id=1)
    result = out["result"]
    assert result["decision"] == "allow" and result["reason_codes"] == ["ask_timeout"]
    assert result["policy_data"]["askgate"] == {"decided_by": "timeout"} and "chain_hash" not in result


def test_render_refuses_bad_ids_and_cancel():
    ask = acs.parse_request(BASE)
    for kwargs in (
        {"request_id": "r-1", "jsonrpc_id": 1},
        {"request_id": RES, "jsonrpc_id": 1, "chain_hash": "F" * 64},
    ):
        with pytest.raises(AskgateError):
            acs.render_answer(ask, Answer(outcome="timed_out"), **kwargs)
    with pytest.raises(AskgateError) as err:
        acs.render_answer(ask, Answer(outcome="cancel"), request_id=RES, jsonrpc_id=1)
    assert err.value.code == "unsupported"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("PARSE_ERROR", -32700),
        ("INVALID_REQUEST", -32600),
        ("METHOD_NOT_FOUND", -32601),
        ("INVALID_PARAMS", -32602),
        ("INTERNAL_ERROR", -32603),
        ("SESSION_REFUSED", -32000),
        ("UNSUPPORTED_VERSION", -32001),
        ("PROVENANCE_REQUIRED", -32002),
        ("CAPABILITY_NOT_NEGOTIATED", -32003),
        ("SIGNATURE_INVALID", -32004),
        ("REPLAY_DETECTED", -32005),
        ("TIMESTAMP_OUT_OF_WINDOW", -32006),
        ("CHAIN_MISMATCH", -32007),
    ],
)
def test_acs_error_registry(name, code):
    assert acs.acs_error(name, "m", "x") == {
        "jsonrpc": "2.0",
        "id": "x",
        "error": {"code": code, "message": "m"},
    }


def test_acs_error_refuses_unknown_names_and_carries_data():
    with pytest.raises(AskgateError):
        acs.acs_error("NOPE", "m", 1)
    assert acs.acs_error("CHAIN_MISMATCH", "m", None, {"k": 1})["error"]["data"] == {"k": 1}


def test_parse_does_not_modify_its_input():
    document = copy.deepcopy(ENV)
    acs.parse_request(document, binding=dict(BINDING))
    assert document == ENV
