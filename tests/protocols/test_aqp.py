"""AQP codec: request parsing, intake rules, answers and the proposed QueryResponse (protocols.md §3)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from askgate.core.model import Answer, Ask, Respondent
from askgate.errors import AskgateError
from askgate.protocols import aqp, schemas
from askgate.protocols.registry import codec_for
from tests.support.scale import examples

QID = "9b2f7c1e-2a4d-4e8b-9f21-0c5d7a3e6b10"
BASE = {
    "protocolVersion": "2026-07-30",
    "queryId": QID,
    "type": "feedback",
    "subject": {"release": "v2"},
    "prompt": "How did it go?",
    "timing": "immediate",
    "consentMode": "not_required",
    "response": {"format": "text"},
    "delivery": {"binding": "other"},
    "expiresAt": "2026-08-03T00:00:00Z",
}
NOW = datetime(2026, 8, 1, tzinfo=UTC)
ISSUED = datetime(2026, 8, 2, 10, 15, 4, tzinfo=UTC)
ALICE = Respondent(kind="human", id="user:alice")
FORM = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    },
    "required": ["score"],
}


def doc(**changes):
    out = copy.deepcopy(BASE)
    out.update(changes)
    return out


def faults(document, **opts):
    with pytest.raises(AskgateError) as err:
        aqp.parse_request(document, **opts)
    return err.value


# --------------------------------------------------------------------------------------------------
# Requests.
# --------------------------------------------------------------------------------------------------


def test_registry_finds_the_codec():
    assert codec_for("aqp") is aqp and aqp.DIALECT.value == "aqp"


def test_valid_request_builds_a_model_equal_to_a_validated_one():
    ask = aqp.parse_request(doc(instructions="Be brief", dataPolicy="30 days"))
    again = Ask.model_validate(ask.model_dump())
    assert again == ask
    assert ask.model_dump(mode="json") == again.model_dump(mode="json")
    assert ask.details == "Be brief" and ask.consent.data_policy == "30 days"
    assert ask.deadline.expires_at == datetime(2026, 8, 3, tzinfo=UTC)
    assert ask.deadline.on_timeout == "expire" and ask.purpose == "feedback" and ask.external_id == QID


def test_original_is_the_document_with_the_credential_masked():
    d = doc(delivery={"binding": "https", "endpoint": "https://a.example/", "authorization": "Token hunter2"})
    ask = aqp.parse_request(d)
    assert ask.delivery.authorization.get_secret_value() == "Token hunter2"
    assert "hunter2" not in repr(ask) and "hunter2" not in ask.model_dump_json()
    assert ask.original["delivery"]["authorization"] == aqp.MASK
    assert d["delivery"]["authorization"] == "Token hunter2"  # the caller's document is untouched


def test_without_authorization_original_is_the_document_itself():
    d = doc()
    assert aqp.parse_request(d).original is d


@pytest.mark.parametrize(
    ("response", "kind"),
    [
        ({"format": "text"}, "text"),
        ({"format": "choice", "choices": ["a"]}, "choice"),
        ({"format": "boolean"}, "yes_no"),
        ({"format": "number"}, "number"),
        ({"format": "structured", "jsonSchema": FORM}, "form"),
    ],
)
def test_each_format_maps_to_its_spec_and_back(response, kind):
    ask = aqp.parse_request(doc(response=response))
    assert ask.spec.kind == kind
    assert aqp.response_format(ask) == response["format"]


def test_structured_spec_comes_from_the_flat_schema_parser():
    ask = aqp.parse_request(doc(response={"format": "structured", "jsonSchema": FORM}))
    score, tags = ask.spec.fields
    assert (score.kind, score.required, score.minimum, score.maximum) == ("integer", True, 1, 5)
    assert tags.kind == "multi_choice" and [o.value for o in tags.options] == ["a", "b"]


def test_unrenderable_structured_schema_is_refused_with_details():
    err = faults(
        doc(
            response={
                "format": "structured",
                "jsonSchema": {"type": "object", "properties": {"a": {"type": "object"}}},
            }
        )
    )
    assert err.code == "unsupported_json_schema"
    assert err.faults[0].rule == "aqp.unsupported_json_schema"
    assert len(err.faults) >= 2 and all(f.pointer.startswith("/response/jsonSchema") for f in err.faults)


def test_missing_everything_reports_ten_required_and_nothing_else():
    err = faults({})
    assert [f.rule for f in err.faults] == ["required"] * 10
    assert err.code == "invalid_request"


def test_vacuous_if_is_suppressed_for_response_and_consent():
    err = faults(doc(response={}))
    assert [(f.pointer, f.rule) for f in err.faults] == [("/response/format", "required")]
    d = doc(consentScope="scope:abcdefgh")
    del d["consentMode"]
    assert [(f.pointer, f.rule) for f in faults(d).faults] == [("/consentMode", "required")]


@pytest.mark.parametrize(
    ("mode", "scope", "rule"),
    [
        ("ask_once", None, "aqp.consentScope-required"),
        ("not_required", "scope:abcdefgh", "aqp.consentScope-forbidden"),
        ("ask_always", "scope:abcdefgh", "aqp.consentScope-forbidden"),
    ],
)
def test_consent_conditionals(mode, scope, rule):
    d = doc(consentMode=mode)
    if scope:
        d["consentScope"] = scope
    assert [f.rule for f in faults(d).faults] == [rule]


def test_ask_once_with_scope_passes():
    ask = aqp.parse_request(doc(consentMode="ask_once", consentScope="scope:abcdefgh"))
    assert (ask.consent.mode, ask.consent.scope) == ("ask_once", "scope:abcdefgh")


@pytest.mark.parametrize("value", [0, 16001, 2.5, True, "10", None])
def test_max_length_bounds_and_type(value):
    err = faults(doc(response={"format": "text", "maxLength": value}))
    assert [f.pointer for f in err.faults] == ["/response/maxLength"]


@pytest.mark.parametrize("value", [1, 1.0, 16000, 16000.0])
def test_max_length_integral_values_pass(value):
    assert aqp.parse_request(doc(response={"format": "text", "maxLength": value})).spec.max_length == int(
        value
    )


def test_choices_report_each_bad_item_and_duplicates():
    err = faults(doc(response={"format": "choice", "choices": ["a", "", 3, "a", True, 1]}))
    got = {(f.pointer, f.rule) for f in err.faults}
    assert ("/response/choices/1", "minLength") in got and ("/response/choices/2", "type") in got
    assert ("/response/choices/3", "uniqueItems") in got
    assert ("/response/choices/5", "uniqueItems") not in got  # 1 and true are different JSON values


def test_subject_size_limit_counts_utf8_bytes():
    limit = aqp.SUBJECT_MAX_BYTES
    fits = doc(subject="é" * ((limit - 2) // 2))  # quotes + 2 bytes per character
    assert aqp.parse_request(fits)
    too_big = doc(subject="é" * ((limit - 2) // 2 + 1))
    assert [f.rule for f in faults(too_big).faults] == ["aqp.subject-too-large"]


def test_subject_that_is_not_json_is_a_type_fault():
    assert [f.rule for f in faults(doc(subject=float("nan"))).faults] == ["type"]
    assert [f.rule for f in faults(doc(subject={1, 2})).faults] == ["type"]


def test_authorization_is_never_echoed_in_faults():
    err = faults(doc(delivery={"binding": "https", "authorization": "x" * 5000}))
    assert all("xxxx" not in f.message for f in err.faults)


def test_notes_record_ignored_members_without_the_credential():
    ask = aqp.parse_request(
        doc(
            response={"format": "number", "maxLength": 3},
            delivery={"binding": "other", "authorization": "Token hunter2"},
        )
    )
    assert ask.notes == (
        'response.maxLength ignored: it does not apply to format "number"',
        'delivery.authorization ignored: binding "other" is pull-only',
    )
    assert all("hunter2" not in n for n in ask.notes)


# --------------------------------------------------------------------------------------------------
# Intake rules with now.
# --------------------------------------------------------------------------------------------------


def test_intake_rules_only_apply_with_now():
    d = doc(delivery={"binding": "https"}, expiresAt="2020-01-01T00:00:00Z")
    assert aqp.parse_request(d).delivery.binding == "https"
    err = faults(d, now=NOW)
    assert [f.rule for f in err.faults] == ["aqp.already_expired", "aqp.endpoint_required"]
    assert err.code == "already_expired"


@pytest.mark.parametrize("now", [NOW, "2026-08-01T00:00:00Z", datetime(2026, 8, 1)])
def test_now_may_be_aware_a_string_or_naive_utc(now):
    assert aqp.parse_request(doc(), now=now).deadline.expires_at > NOW


def test_expiry_boundary_is_inclusive():
    at = datetime(2026, 8, 3, tzinfo=UTC)
    assert faults(doc(), now=at).code == "already_expired"
    assert aqp.parse_request(doc(), now=at - timedelta(microseconds=1))


def test_offsets_are_compared_as_instants():
    d = doc(expiresAt="2026-08-03T01:00:00+02:00")  # 2026-08-02T23:00Z
    assert faults(d, now=datetime(2026, 8, 2, 23, tzinfo=UTC)).code == "already_expired"
    assert aqp.parse_request(d, now=datetime(2026, 8, 2, 22, 59, tzinfo=UTC))


def test_bad_now_string_is_an_askgate_error():
    with pytest.raises(AskgateError) as err:
        aqp.parse_request(doc(), now="yesterday")
    assert err.value.code == "invalid_options"


@pytest.mark.parametrize(
    ("delivery", "pointers"),
    [
        ({"binding": "https"}, ["/delivery/endpoint"]),
        ({"binding": "https", "endpoint": "HTTP://a.example/"}, ["/delivery/endpoint"]),
        ({"binding": "mcp", "endpoint": "https://m.example/"}, ["/delivery/operation"]),
        ({"binding": "mcp", "operation": "t"}, ["/delivery/endpoint"]),
    ],
)
def test_endpoint_required(delivery, pointers):
    err = faults(doc(delivery=delivery), now=NOW)
    assert err.code == "endpoint_required"
    assert [f.pointer for f in err.faults] == pointers


def test_https_endpoint_scheme_is_case_insensitive():
    assert aqp.parse_request(doc(delivery={"binding": "https", "endpoint": "HTTPS://a.example/"}), now=NOW)


def test_schema_faults_win_the_error_code():
    err = faults(doc(prompt="", delivery={"binding": "https"}), now=NOW)
    assert err.code == "invalid_request" and {f.rule for f in err.faults} == {
        "minLength",
        "aqp.endpoint_required",
    }


def test_bytes_entry_point_refuses_duplicates_and_nan():
    text = json.dumps(doc())
    assert aqp.parse_request_bytes(text.encode()).external_id == QID
    with pytest.raises(AskgateError) as err:
        aqp.parse_request_bytes(text[:-1] + ', "prompt": "again"}')
    assert err.value.code == "not_json"
    with pytest.raises(AskgateError):
        aqp.parse_request_bytes(text.replace('"v2"', "NaN"))


# --------------------------------------------------------------------------------------------------
# Answers.
# --------------------------------------------------------------------------------------------------


def _ask(response, **extra):
    return aqp.parse_request(doc(response=response, **extra))


def test_a_whole_rendered_response_is_accepted_back():
    ask = _ask({"format": "choice", "choices": ["Ship it", "Hold"]})
    answer = Answer(outcome="accept", value="Hold", respondent=ALICE, answered_at=NOW)
    echoed = aqp.check_answer(ask, aqp.render_answer(ask, answer, issued_at=ISSUED))
    assert (echoed.outcome, echoed.value) == ("accept", "Hold")


def test_answer_object_and_response_like_forms():
    ask = _ask({"format": "choice", "choices": ["Ship it", "Hold"]})
    a = aqp.check_answer(ask, {"format": "choice", "value": "Hold"}, respondent=ALICE, answered_at=NOW)
    assert (a.outcome, a.value, a.respondent, a.answered_at) == ("accept", "Hold", ALICE, NOW)
    b = aqp.check_answer(
        ask, {"status": "answered", "answer": {"format": "choice", "value": "Hold"}, "queryId": QID}
    )
    assert b.value == "Hold"
    assert aqp.check_answer(ask, {"status": "declined"}).outcome == "decline"


def test_structured_answer_normalises_multi_select_to_a_tuple():
    ask = _ask({"format": "structured", "jsonSchema": FORM})
    a = aqp.check_answer(ask, {"format": "structured", "value": {"score": 3, "tags": ["a"]}})
    assert a.value == {"score": 3, "tags": ("a",)}


@pytest.mark.parametrize(
    ("response", "payload", "rule"),
    [
        ({"format": "text", "maxLength": 3}, {"format": "text", "value": "abcd"}, "maxLength"),
        ({"format": "boolean"}, {"format": "boolean", "value": 0}, "type"),
        ({"format": "number"}, {"format": "number", "value": False}, "type"),
        ({"format": "choice", "choices": ["A"]}, {"format": "choice", "value": "a"}, "enum"),
        ({"format": "text"}, {"format": "number", "value": "x"}, "aqp.answer-format"),
        ({"format": "text"}, {"value": "x"}, "required"),
        ({"format": "text"}, {"status": "cancelled"}, "aqp.answer-status"),
        (
            {"format": "text"},
            {"status": "declined", "answer": {"format": "text", "value": "x"}},
            "aqp.answer-forbidden",
        ),
        (
            {"format": "text"},
            {"status": "answered", "queryId": "x", "answer": {"format": "text", "value": "x"}},
            "aqp.queryId-mismatch",
        ),
        ({"format": "text"}, "just text", "type"),
        ({"format": "text"}, {"status": "declined", "respondent": {"id": "u", "kind": "robot"}}, "enum"),
        ({"format": "text"}, {"status": "declined", "respondent": {"id": "", "kind": "human"}}, "minLength"),
        ({"format": "text"}, {"status": "declined", "consent": {"mode": "ask_once"}}, "required"),
        ({"format": "text"}, {"status": "declined", "answeredAt": "2026-08-02T10:00:00"}, "format"),
        ({"format": "text"}, {"status": "declined", "issuedAt": 5}, "type"),
    ],
)
def test_bad_answers(response, payload, rule):
    with pytest.raises(AskgateError) as err:
        aqp.check_answer(_ask(response), payload)
    assert err.value.code == "invalid_answer"
    assert rule in {f.rule for f in err.value.faults}


# --------------------------------------------------------------------------------------------------
# QueryResponse rendering and its schema.
# --------------------------------------------------------------------------------------------------

RESPONSE_SCHEMA = schemas.load(schemas.AQP_RESPONSE)
RESPONSE_VALIDATOR = Draft202012Validator(RESPONSE_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)


def test_response_schema_is_a_valid_2020_12_schema():
    Draft202012Validator.check_schema(RESPONSE_SCHEMA)


def test_rendered_example_matches_protocols_md():
    ask = _ask(
        {"format": "choice", "choices": ["Ship it", "Hold"]},
        consentMode="ask_once",
        consentScope="repo:acme/app",
    )
    answer = Answer(
        outcome="accept",
        value="Ship it",
        respondent=ALICE,
        answered_at=datetime(2026, 8, 2, 10, 15, 3, tzinfo=UTC),
        consent_basis="stored_grant",
    )
    out = aqp.render_answer(ask, answer, issued_at=ISSUED)
    assert out == {
        "protocolVersion": "2026-07-30",
        "queryId": QID,
        "status": "answered",
        "answer": {"format": "choice", "value": "Ship it"},
        "respondent": {"id": "user:alice", "kind": "human"},
        "answeredAt": "2026-08-02T10:15:03Z",
        "consent": {"mode": "ask_once", "basis": "stored_grant"},
        "issuedAt": "2026-08-02T10:15:04Z",
    }
    assert RESPONSE_VALIDATOR.is_valid(out)


def test_consent_basis_keyword_overrides_the_answer():
    ask = _ask({"format": "text"}, consentMode="ask_always")
    answer = Answer(outcome="accept", value="fine", respondent=ALICE, answered_at=NOW)
    out = aqp.render_answer(ask, answer, issued_at=ISSUED, consent_basis="granted_now")
    assert out["consent"] == {"mode": "ask_always", "basis": "granted_now"}
    with pytest.raises(AskgateError):
        aqp.render_answer(ask, answer, issued_at=ISSUED)  # ask_always needs a basis
    with pytest.raises(AskgateError):
        aqp.render_answer(ask, answer, issued_at=ISSUED, consent_basis="not_required")


def test_rendering_never_emits_null_and_omits_answer_unless_answered():
    ask = _ask({"format": "text"})
    for outcome in ("decline", "cancel", "expired", "timed_out"):
        out = aqp.render_answer(
            ask, Answer(outcome=outcome, respondent=ALICE, answered_at=NOW), issued_at=ISSUED
        )
        assert set(out) == {"protocolVersion", "queryId", "status", "issuedAt"}
        assert None not in out.values() and RESPONSE_VALIDATOR.is_valid(out)


def test_render_takes_the_respondent_from_the_ask_when_the_answer_has_none():
    ask = aqp.parse_request(doc()).model_copy(update={"respondent": Respondent(kind="agent", id="agent:x")})
    out = aqp.render_answer(
        ask, Answer(outcome="accept", value="v", answered_at=NOW), issued_at="2026-08-02T10:15:04+02:00"
    )
    assert (
        out["respondent"] == {"id": "agent:x", "kind": "agent"}
        and out["issuedAt"] == "2026-08-02T10:15:04+02:00"
    )


def test_render_refuses_a_bad_issued_at_string():
    with pytest.raises(AskgateError):
        aqp.render_answer(aqp.parse_request(doc()), Answer(outcome="cancel"), issued_at="now")


_VALUES = {
    "text": st.text(min_size=1, max_size=40),
    "choice": st.sampled_from(["Ship it", "Hold"]),
    "boolean": st.booleans(),
    "number": st.one_of(st.integers(-(10**6), 10**6), st.floats(allow_nan=False, allow_infinity=False)),
    "structured": st.fixed_dictionaries(
        {"score": st.integers(1, 5)}, optional={"tags": st.lists(st.sampled_from(["a", "b"]), unique=True)}
    ),
}
_RESPONSES = {
    "text": {"format": "text"},
    "choice": {"format": "choice", "choices": ["Ship it", "Hold"]},
    "boolean": {"format": "boolean"},
    "number": {"format": "number"},
    "structured": {"format": "structured", "jsonSchema": FORM},
}


@st.composite
def _rendered(draw):
    fmt = draw(st.sampled_from(sorted(_VALUES)))
    mode = draw(st.sampled_from(["not_required", "ask_once", "ask_always"]))
    extra = {"consentScope": "scope:abcdefgh"} if mode == "ask_once" else {}
    ask = aqp.parse_request(doc(response=_RESPONSES[fmt], consentMode=mode, **extra))
    outcome = draw(st.sampled_from(["accept", "decline", "cancel", "expired", "timed_out"]))
    basis = {
        "not_required": "not_required",
        "ask_once": draw(st.sampled_from(["granted_now", "stored_grant"])),
        "ask_always": "granted_now",
    }[mode]
    value = draw(_VALUES[fmt])
    answer = aqp.check_answer(ask, {"format": fmt, "value": value}) if outcome == "accept" else None
    who = Respondent(
        kind=draw(st.sampled_from(["human", "agent", "service"])), id=draw(st.text(min_size=1, max_size=10))
    )
    at = draw(
        st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))
    )
    canonical = Answer(
        outcome=outcome,
        value=answer.value if answer else None,
        respondent=who,
        answered_at=at,
        consent_basis=basis,
    )
    return aqp.render_answer(ask, canonical, issued_at=at)


@settings(max_examples=examples(1000), deadline=None)
@given(_rendered())
def test_every_rendered_response_validates_against_askgates_schema(response):
    errors = list(RESPONSE_VALIDATOR.iter_errors(response))
    assert not errors, [e.message for e in errors]
    assert json.loads(json.dumps(response)) == response  # plain JSON, no tuples or datetimes


@pytest.mark.parametrize(
    "mutation",
    [
        lambda r: r.update(status="declined"),  # answer without answered
        lambda r: r.pop("consent"),  # answered without consent
        lambda r: r.update(answeredAt=None),  # nulls are never allowed
        lambda r: r["answer"].update(format="number"),  # value must fit the format
        lambda r: r.update(issuedAt="2026-08-02T10:15:04"),  # offsets are mandatory
        lambda r: r["respondent"].update(kind="robot"),
        lambda r: r.update(extra=1),
    ],
)
def test_response_schema_rejects_malformed_responses(mutation):
    good = {
        "protocolVersion": "2026-07-30",
        "queryId": QID,
        "status": "answered",
        "answer": {"format": "choice", "value": "Hold"},
        "respondent": {"id": "u", "kind": "human"},
        "answeredAt": "2026-08-02T10:15:03Z",
        "consent": {"mode": "not_required", "basis": "not_required"},
        "issuedAt": "2026-08-02T10:15:04Z",
    }
    assert RESPONSE_VALIDATOR.is_valid(good)
    bad = copy.deepcopy(good)
    mutation(bad)
    assert not RESPONSE_VALIDATOR.is_valid(bad)
