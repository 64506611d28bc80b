"""askgate/protocols/mcp_carriage.py: what askgate sends an MCP respondent and how its ElicitResult is read.

Fuzz: any JSON as an ElicitResult raises only AskgateError. Properties: a decision form filled in any
valid way reads back as that ApprovalDecision; accepted content round-trips through the codec; the
request for a revision parses back (as an MCP request of that revision) to the same form.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askgate.core.model import ApprovalDecision, ApprovalSpec, Ask, Dialect, TextSpec
from askgate.errors import AskgateError
from askgate.protocols import mcp_carriage as carriage
from askgate.protocols import mcp_elicitation as codec
from tests.protocols.test_elicitation_fuzz import RICH, WIDE, documents
from tests.support.scale import examples

FORM = codec.parse_request(RICH)
MULTI = codec.parse_request(WIDE)
APPROVAL = Ask(dialect=Dialect.CANONICAL, prompt="Ship?", details="v2 to prod", spec=ApprovalSpec(options=("now", "later")))
TEXT = Ask(dialect=Dialect.AQP, prompt="Why?", spec=TextSpec(min_length=2, max_length=10))
ASKS = [FORM, MULTI, APPROVAL, TEXT]


@settings(max_examples=examples(1500), deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=documents, which=st.integers(0, len(ASKS) - 1), version=st.sampled_from(carriage.VERSIONS))
def test_any_result_is_an_answer_or_faults(doc: object, which: int, version: str) -> None:
    try:
        answer = carriage.check_result(ASKS[which], doc, version)
    except AskgateError as exc:
        assert exc.faults and exc.code == "invalid_answer"
        return
    assert answer.outcome in ("accept", "decline", "cancel")


@settings(max_examples=examples(500), deadline=None)
@given(decision=st.sampled_from(["allow", "deny"]), option=st.none() | st.sampled_from(["now", "later"]),
       reasoning=st.none() | st.text(max_size=40), version=st.sampled_from(carriage.VERSIONS))
def test_a_filled_decision_form_is_that_decision(decision: str, option: str | None, reasoning: str | None,
                                                 version: str) -> None:
    content: dict[str, object] = {"decision": decision}
    if option is not None:
        content["selected_option"] = option
    if reasoning is not None:
        content["reasoning"] = reasoning
    answer = carriage.check_result(APPROVAL, {"action": "accept", "content": content}, version)
    assert answer.value == ApprovalDecision(decision=decision, selected_option=option, reasoning=reasoning)  # type: ignore[arg-type]
    assert carriage.canonical_answer(answer)["value"] == content


@settings(max_examples=examples(500), deadline=None)
@given(text=st.text(min_size=2, max_size=10).filter(str.strip), action=st.sampled_from(["accept", "decline", "cancel"]))
def test_a_wrapped_spec_round_trips(text: str, action: str) -> None:
    result = {"action": action, "content": {"answer": text}} if action == "accept" else {"action": action}
    answer = carriage.check_result(TEXT, result, "2025-06-18")
    assert answer.outcome == action and answer.value == (text if action == "accept" else None)
    assert carriage.canonical_answer(answer) == ({"outcome": action, "value": text} if action == "accept"
                                                 else {"outcome": action})


@pytest.mark.parametrize("ask", [FORM, APPROVAL, TEXT])
@pytest.mark.parametrize("version", carriage.VERSIONS)
def test_the_request_parses_back_to_the_same_form(ask: Ask, version: str) -> None:
    params = carriage.request_for(ask, version)
    assert ("mode" in params) is False  # form is the default; old peers must never see the member
    again = codec.parse_request(params, version)
    expected = carriage.form_ask(ask) if isinstance(ask.spec, ApprovalSpec) else ask
    from askgate.protocols.flat_schema import as_form

    assert as_form(again.spec)[0] == as_form(expected.spec)[0]


def test_the_round_trip_era_gets_the_2025_11_25_form() -> None:
    assert carriage.form_version("2026-07-28") == "2025-11-25"
    assert carriage.request_for(MULTI, "2026-07-28") == carriage.request_for(MULTI, "2025-11-25")
    answer = carriage.check_result(MULTI, {"action": "accept", "content": {"m": ["x"]}}, "2026-07-28")
    assert answer.value == {"m": ("x",)}


def test_what_an_old_peer_cannot_express_is_refused() -> None:
    with pytest.raises(AskgateError) as err:
        carriage.request_for(MULTI, "2025-06-18")
    assert err.value.code == "unsupported"
    assert carriage.request_for(MULTI, "2025-11-25")["requestedSchema"]["properties"]["m"]["type"] == "array"


@pytest.mark.parametrize("caps, version, ok", [
    ({"elicitation": {}}, "2025-06-18", True),
    ({"elicitation": {}}, "2025-11-25", True),  # bare {} means form only
    ({"elicitation": {"form": {}, "url": {}}}, "2025-11-25", True),
    ({"elicitation": {"form": {}}}, "2025-11-25", True),
    ({"elicitation": {"url": {}}}, "2025-11-25", False),  # url only: never sent a form
    ({}, "2025-11-25", False),
    (None, "2025-11-25", False),
    ({"sampling": {}}, "2025-06-18", False),
    ({"elicitation": {}}, "2025-03-26", False),  # no elicitation in that revision
    ({"elicitation": {}}, "2026-07-28", True),  # per-request era: rides InputRequiredResult
    ({"elicitation": {"url": {}}}, "2026-07-28", False),
    ({"elicitation": {}}, "2099-01-01", False),
    ({"elicitation": {}}, None, False),
])
def test_who_may_be_sent_elicitation_create(caps: object, version: str | None, ok: bool) -> None:
    why = carriage.elicitation_refusal(caps, version)
    assert (why is None) is ok
    if not ok:
        assert isinstance(why, str) and len(why) > 20
