"""Unit tests for the flat requestedSchema rules (protocols.md §1.4, §2.2, §2.5)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.scale import examples

from askgate.core.model import ChoiceField, FormSpec, MultiChoiceField, Option, StringField, TextSpec, ApprovalSpec
from askgate.errors import AskgateError
from askgate.core.ecma_pattern import PatternError, pattern_matches, translate
from askgate.protocols.flat_schema import (
    MAX_SAFE_INTEGER,
    as_form,
    borderline_secret_notes,
    parse_requested_schema,
    render_requested_schema,
    secret_target,
)

P = "/requestedSchema"


def faults(schema, profile="a2a"):
    return parse_requested_schema(schema, profile=profile, pointer=P)[1]


def form(props, required=None, **top):
    doc = {"type": "object", "properties": props, **top}
    if required is not None:
        doc["required"] = required
    return doc


# ---- the §1.4 table: messages byte-identical ----------------------------------------------------

TABLE = [
    ({"type": "object", "properties": {}, "x": 1}, 'requestedSchema has unsupported keyword "x"'),
    ({"type": "thing", "properties": {}}, "requestedSchema.type must be object"),
    ({"type": "object", "properties": None}, "requestedSchema.properties must be an object"),
    (form({"a": {"type": "object"}}), 'requestedSchema property "a" must have a primitive type'),
    (form({"a": {"type": "string", "title": 1}}), 'requestedSchema property "a" has an invalid title'),
    (form({"a": {"type": "string", "description": 1}}), 'requestedSchema property "a" has an invalid description'),
    (form({"a": {"type": "integer", "format": "date"}}), 'requestedSchema property "a" has unsupported keyword "format"'),
    (form({"a": {"type": "string", "minLength": -2}}), 'requestedSchema property "a" has an invalid minLength'),
    (form({"a": {"type": "string", "maxLength": MAX_SAFE_INTEGER + 1}}), 'requestedSchema property "a" has an invalid maxLength'),
    (form({"a": {"type": "string", "minLength": 3, "maxLength": 2}}), 'requestedSchema property "a" minLength must not exceed maxLength'),
    (form({"a": {"type": "string", "format": "hostname"}}), 'requestedSchema property "a" has an invalid format'),
    (form({"a": {"type": "string", "default": None}}), 'requestedSchema property "a" has an invalid default'),
    (form({"a": {"type": "string", "enumNames": ["A"]}}), 'requestedSchema property "a" enumNames requires enum'),
    (form({"a": {"type": "string", "enum": []}}), 'requestedSchema property "a" has an invalid string enum'),
    (form({"a": {"type": "string", "enum": ["x"], "enumNames": []}}), 'requestedSchema property "a" enumNames must match enum'),
    (form({"a": {"type": "string", "enum": ["x", "x"]}}), 'requestedSchema property "a" enum must not contain duplicates'),
    (form({"a": {"type": "string", "enum": ["x"], "default": "y"}}), 'requestedSchema property "a" default must be in enum'),
    (form({"a": {"type": "number", "minimum": "0"}}), 'requestedSchema property "a" has an invalid minimum'),
    (form({"a": {"type": "integer", "maximum": 2.5}}), 'requestedSchema property "a" has an invalid maximum'),
    (form({"a": {"type": "number", "default": float("nan")}}), 'requestedSchema property "a" has an invalid default'),
    (form({"a": {"type": "number", "minimum": float("inf")}}), 'requestedSchema property "a" has an invalid minimum'),
    (form({"a": {"type": "number", "minimum": 1, "maximum": 0}}), 'requestedSchema property "a" minimum must not exceed maximum'),
    (form({"a": {"type": "integer", "maximum": 0, "default": 1}}), 'requestedSchema property "a" default must satisfy its bounds'),
    (form({"a": {"type": "boolean", "default": 1}}), 'requestedSchema property "a" has an invalid default'),
    (form({"a": {"type": "string"}}, ["b"]), "requestedSchema.required must name declared properties"),
    (form({"a": {"type": "string"}}, ["a", "a"]), "requestedSchema.required must not contain duplicates"),
]


@pytest.mark.parametrize(("schema", "message"), TABLE)
def test_each_rule_has_the_reference_message(schema, message):
    found = faults(schema)
    assert [f.message for f in found] == [message]


def test_first_fault_follows_the_documented_order():
    schema = {
        "properties": {"s": {"type": "string", "title": 3, "minLength": 2, "maxLength": 1, "foo": 1}},
        "zzz": 1,
        "type": "x",
        "required": ["q"],
    }
    found = faults(schema)
    assert [f.rule for f in found] == [
        "additionalProperties",  # top-level keys first (in document order)
        "const",  # then type
        "type",  # property: title
        "additionalProperties",  # allow-list
        "elicitation.length-order",
        "elicitation.required-declared",
    ]
    assert found[0].pointer == "/requestedSchema/zzz"


def test_every_fault_is_collected_across_properties():
    props = {f"p{i}": {"type": "string", "enum": ["a"], "default": "b"} for i in range(5)}
    found = faults(form(props))
    assert [f.pointer for f in found] == [f"/requestedSchema/properties/p{i}/default" for i in range(5)]


def test_booleans_are_never_numbers_and_whole_floats_are_integers():
    assert faults(form({"a": {"type": "integer", "minimum": True}}))[0].rule == "type"
    assert faults(form({"a": {"type": "string", "maxLength": False}}))[0].rule == "type"
    spec, found = parse_requested_schema(form({"a": {"type": "integer", "minimum": 1.0, "default": 3.0}}), profile="a2a", pointer="")
    assert found == []
    field = spec.fields[0]
    assert field.minimum == 1 and type(field.minimum) is int and field.default == 3


def test_safe_integer_caps_for_integer_bounds():
    ok = form({"a": {"type": "integer", "minimum": -MAX_SAFE_INTEGER, "maximum": MAX_SAFE_INTEGER}})
    assert faults(ok) == []
    bad = form({"a": {"type": "integer", "minimum": -MAX_SAFE_INTEGER - 1}})
    assert [f.rule for f in faults(bad)] == ["elicitation.safe-integer"]


def test_valid_schema_builds_fields_in_document_order_with_required_flags():
    spec, found = parse_requested_schema(
        form({"b": {"type": "boolean"}, "a": {"type": "string", "enum": ["x", "y"], "enumNames": ["X", "Y"]}}, ["a"]),
        profile="a2a", pointer="",
    )
    assert found == []
    assert [f.name for f in spec.fields] == ["b", "a"]
    assert spec.fields[1] == ChoiceField(name="a", required=True, options=(Option(value="x", label="X"), Option(value="y", label="Y")))


def test_spec_from_parse_equals_validated_models():
    """The fast constructor must build exactly what pydantic validation would."""
    schema = form({
        "s": {"type": "string", "minLength": 1, "maxLength": 5, "format": "email", "title": "T", "default": "a@b"},
        "n": {"type": "number", "minimum": 0.5}, "i": {"type": "integer", "default": 2},
        "c": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
        "m": {"type": "array", "items": {"type": "string", "enum": ["x"]}, "default": ["x"]},
    }, ["s"])
    spec, found = parse_requested_schema(schema, profile="mcp-2025-11-25", pointer="")
    assert found == []
    assert FormSpec.model_validate(spec.model_dump()) == spec
    assert spec.model_dump() == FormSpec.model_validate(spec.model_dump()).model_dump()


@pytest.mark.parametrize("profile", ["a2a", "mcp-2025-06-18"])
def test_narrow_profiles_refuse_the_2025_11_25_widening(profile):
    schema = form({"c": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]}, "m": {"type": "array", "items": {"type": "string", "enum": ["x"]}}}, **{"$schema": "x"})
    assert [f.rule for f in faults(schema, profile)] == ["additionalProperties", "additionalProperties", "const"]


@pytest.mark.parametrize("profile", ["mcp-2025-11-25", "aqp"])
def test_wide_profiles_accept_titled_and_multi_select(profile):
    schema = form({"c": {"type": "string", "oneOf": [{"const": "a", "title": "A"}], "default": "a"},
                   "m": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}, "minItems": 0, "maxItems": 1}},
                  **{"$schema": "https://json-schema.org/draft/2020-12/schema"})
    spec, found = parse_requested_schema(schema, profile=profile, pointer="")
    assert found == []
    assert isinstance(spec.fields[1], MultiChoiceField) and spec.fields[1].titled


def test_unknown_profile_is_unsupported():
    with pytest.raises(AskgateError) as err:
        parse_requested_schema({}, profile="mcp-2024", pointer="")
    assert err.value.code == "unsupported"


# ---- secrets (§2.5) -----------------------------------------------------------------------------

@pytest.mark.parametrize("text,kind", [
    ("password", "password"), ("newPassword", "password"), ("db_passwd", "password"), ("API key", "api key"),
    ("apiKey", "api key"), ("OPENAI_API_KEY", "api key"), ("private-key", "private key"), ("Card number", "card number"),
    ("accessToken", "token"), ("client secret", "secret"),
])
def test_secret_targets(text, kind):
    assert secret_target(text) == kind


@pytest.mark.parametrize("text", ["name", "region", "passage", "keyboard", "tokenize me?", "secretary", "card", "number"])
def test_not_secrets(text):
    assert secret_target(text) is None


def test_borderline_names_are_noted_not_refused():
    spec, found = parse_requested_schema(form({"pin": {"type": "string"}, "city": {"type": "string"}}), profile="a2a", pointer="")
    assert found == []
    assert borderline_secret_notes(spec) == ('field "pin" may ask for sensitive data',)


# ---- rendering ----------------------------------------------------------------------------------

def test_render_round_trips_for_every_profile():
    schema = form({
        "s": {"type": "string", "title": "S", "description": "D", "minLength": 1, "maxLength": 9, "format": "uri", "default": "x:y"},
        "n": {"type": "number", "minimum": -1.5, "maximum": 2, "default": 0}, "b": {"type": "boolean", "default": False},
        "e": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "default": "b"},
    }, ["s", "e"])
    for profile in ("a2a", "mcp-2025-11-25"):
        spec, found = parse_requested_schema(schema, profile=profile, pointer="")
        assert found == []
        assert render_requested_schema(spec, profile=profile) == schema


def test_render_downgrades_titled_enums_and_refuses_multi_select():
    spec = FormSpec(fields=(ChoiceField(name="c", options=(Option(value="a", label="A"),), titled=True, default="a"),))
    assert render_requested_schema(spec, profile="a2a")["properties"]["c"] == {"type": "string", "enum": ["a"], "enumNames": ["A"], "default": "a"}
    assert render_requested_schema(spec, profile="mcp-2025-11-25")["properties"]["c"] == {"type": "string", "oneOf": [{"const": "a", "title": "A"}], "default": "a"}
    # 2025-06-18 carries boolean defaults only
    assert "default" not in render_requested_schema(spec, profile="mcp-2025-06-18")["properties"]["c"]
    multi = FormSpec(fields=(MultiChoiceField(name="m", options=(Option(value="a"),)),))
    for profile in ("a2a", "mcp-2025-06-18"):
        with pytest.raises(AskgateError) as err:
            render_requested_schema(multi, profile=profile)
        assert err.value.code == "unsupported" and err.value.faults[0].rule == "elicitation.multi-select-unsupported"
    pattern = FormSpec(fields=(StringField(name="p", pattern="^a"),))
    with pytest.raises(AskgateError):
        render_requested_schema(pattern, profile="a2a")


def test_as_form_wraps_non_form_specs():
    form_spec, wrapped = as_form(TextSpec(max_length=10))
    assert wrapped and form_spec.fields[0].name == "answer" and form_spec.fields[0].max_length == 10
    with pytest.raises(AskgateError):
        as_form(ApprovalSpec())


# ---- the ECMA/Python pattern subset -------------------------------------------------------------

@pytest.mark.parametrize("src,value,expected", [
    ("^a.c$", "abc", True), ("^a.c$", "a\nc", False), ("^abc$", "abc\n", False), (r"^\d+$", "١٢", False),
    (r"^\d{2,3}$", "123", True), (r"^[\w-]+$", "a_b-c", True), (r"^[\w-]+$", "é", False), (r"\s", "\u00a0", True),
    (r"\s", "\x1c", False), ("^(?:ab)+$", "abab", True), ("^a(?!b)", "ac", True), (r"^\u0041$", "A", True),
])
def test_pattern_semantics_are_ecma(src, value, expected):
    assert pattern_matches(src, value) is expected


@pytest.mark.parametrize("src", ["(?<=a)b", "(?<!a)b", "(?P<n>a)", "(?<n>a)", r"(a)\1", r"\k<n>", r"\p{L}", "(?i)a", r"\A",
                                 r"\Z", "a++", "a{", "(a", "a)", "[a", "[]", r"\b", "*a", "a{3,1}", "😀", r"[\D]"])
def test_patterns_outside_the_subset_are_refused(src):
    with pytest.raises(PatternError):
        translate(src)


_HINT_WORDS = ["pass", "Password", "passwd", "api", "Key", "apiKey", "APIKey", "private", "access", "credit", "Card",
               "number", "token", "Secret", "pin", "PIN", "ssn", "cvv", "cvc", "otp", "iban", "mfa", "2FA",
               "credentials", "İ", "\u212a", "ſ", "é", "_", "-", " ", "/", "x", "0"]


@settings(max_examples=examples(2000), deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_HINT_WORDS), st.text(max_size=3)), max_size=6).map("".join))
def test_secret_hints_are_only_a_shortcut(text):
    """The substring pre-test never changes a verdict: same answers as the plain word scan."""
    from askgate.protocols import flat_schema as fs

    words = fs._words(text)
    expect = None
    for i, w in enumerate(words):
        if w in fs._SECRET_WORDS:
            expect = fs._SECRET_WORDS[w]
            break
        if i + 1 < len(words) and (w, words[i + 1]) in fs._SECRET_PAIRS:
            expect = fs._SECRET_PAIRS[(w, words[i + 1])]
            break
    assert fs.secret_target(text) == expect
    assert fs._borderline(text) == any(w in fs._BORDERLINE_WORDS for w in words)
