"""Unit tests for the dialect-neutral answer checks (protocols.md §1.5, §2.3, AQP format table §3.4)."""

from __future__ import annotations

import sys
import types

import pytest

from askgate.core.answers import check_value, normalise_value
from askgate.core.model import (
    ApprovalSpec, BooleanField, ChoiceField, ChoiceSpec, FormSpec, IntegerField, MultiChoiceField, NumberField,
    NumberSpec, Option, StringField, TextSpec, YesNoSpec,
)
from askgate.errors import Fault

FORM = FormSpec(fields=(
    StringField(name="s", required=True, min_length=1, max_length=3),
    StringField(name="d", format="date"), StringField(name="t", format="date-time"),
    StringField(name="e", format="email"), StringField(name="u", format="uri"), StringField(name="p", pattern="^[a-z]+$"),
    NumberField(name="x", minimum=0, maximum=1), IntegerField(name="i", minimum=-2, maximum=2), BooleanField(name="b"),
    ChoiceField(name="c", options=(Option(value="eu"), Option(value="us west"))),
    MultiChoiceField(name="m", options=(Option(value="a"), Option(value="b"), Option(value="c")), min_items=1, max_items=2),
))


def rules(value, spec=FORM, pointer="/content"):
    return [(f.pointer, f.rule) for f in check_value(spec, value, pointer)]


def test_valid_form_answer():
    value = {"s": "abc", "d": "2024-02-29", "t": "2024-02-29T23:59:59.5-05:00", "e": "a.b@localhost", "u": "urn:x:y",
             "p": "abc", "x": 0.25, "i": 1.0, "b": True, "c": "us west", "m": ["a", "c"]}
    assert rules(value) == []


def test_required_presence_is_json_presence():
    assert rules({}) == [("/content", "required")]
    assert rules({"s": ""}) == [("/content/s", "minLength")]


def test_undeclared_and_null():
    assert rules({"s": "a", "zz": 1, "x": None}) == [("/content/zz", "additionalProperties"), ("/content/x", "type")]


@pytest.mark.parametrize("field,value,rule", [
    ("d", "2023-02-29", "format"), ("d", "2024-2-9", "format"), ("t", "2024-01-01T10:00:00", "format"),
    ("t", "2024-01-01T10:60:00Z", "format"), ("e", "no-at", "format"), ("u", "relative/path", "format"),
    ("p", "ABC", "pattern"), ("x", True, "type"), ("x", "0.5", "type"), ("x", 1.5, "maximum"), ("x", -0.1, "minimum"),
    ("x", float("nan"), "type"), ("x", float("inf"), "type"), ("i", 0.5, "type"), ("i", 3, "maximum"), ("i", False, "type"),
    ("b", 0, "type"), ("b", "true", "type"), ("c", "EU", "enum"), ("c", "us  west", "enum"), ("c", ["eu"], "type"),
    ("m", "a", "type"), ("m", [], "minItems"), ("m", ["a", "b", "c"], "maxItems"), ("s", "😀😀😀😀", "maxLength"),
])
def test_single_field_failures(field, value, rule):
    assert rules({"s": "a", field: value}) == [(f"/content/{field}", rule)]


def test_astral_characters_count_once():
    assert rules({"s": "😀😀😀"}) == []


def test_multi_select_items():
    assert rules({"s": "a", "m": ["a", "a"]}) == [("/content/m/1", "uniqueItems")]
    assert rules({"s": "a", "m": ["z"]}) == [("/content/m/0", "enum")]
    assert rules({"s": "a", "m": [1]}) == [("/content/m/0", "type")]


def test_titled_choice_rule_name():
    spec = FormSpec(fields=(ChoiceField(name="c", options=(Option(value="a", label="A"),), titled=True),))
    assert rules({"c": "A"}, spec) == [("/content/c", "oneOf")]


def test_other_convention():
    spec = FormSpec(fields=(
        ChoiceField(name="why", options=(Option(value="cost"), Option(value="other"))),
        MultiChoiceField(name="also", options=(Option(value="x"), Option(value="other"))),
        StringField(name="other"),
    ))
    assert rules({"why": "other"}, spec) == [("/content/other", "elicitation.other-required")]
    assert rules({"why": "other", "other": "  "}, spec) == [("/content/other", "elicitation.other-required")]
    assert rules({"also": ["other"]}, spec) == [("/content/other", "elicitation.other-required")]
    assert rules({"why": "other", "other": "legal"}, spec) == []
    assert rules({"why": "cost"}, spec) == []
    # without a string field named other the convention does not apply
    plain = FormSpec(fields=(ChoiceField(name="why", options=(Option(value="other"),)),))
    assert rules({"why": "other"}, plain) == []


def test_proto_key_is_data():
    spec = FormSpec(fields=(StringField(name="__proto__", required=True),))
    assert rules({"__proto__": "x"}, spec) == []
    assert normalise_value(spec, {"__proto__": "x"}) == {"__proto__": "x"}


def test_non_object_content():
    assert rules(["a"]) == [("/content", "type")]


@pytest.mark.parametrize("spec,value,expected", [
    (TextSpec(max_length=3), "abc", []), (TextSpec(max_length=3), "", ["minLength"]), (TextSpec(max_length=3), "abcd", ["maxLength"]),
    (TextSpec(), 5, ["type"]), (ChoiceSpec(choices=("Ship it", "Hold")), "Ship it", []),
    (ChoiceSpec(choices=("Ship it", "Hold")), "ship it", ["enum"]), (YesNoSpec(), False, []), (YesNoSpec(), 0, ["type"]),
    (YesNoSpec(), "yes", ["type"]), (NumberSpec(), 1e300, []), (NumberSpec(), True, ["type"]),
    (NumberSpec(), float("-inf"), ["type"]), (NumberSpec(minimum=0), -1, ["minimum"]),
])
def test_aqp_format_table(spec, value, expected):
    assert [f.rule for f in check_value(spec, value)] == expected


def test_approval_delegates_to_the_approval_module(monkeypatch):
    seen = []

    def check_approval(spec, value, pointer=""):
        seen.append((spec, value, pointer))
        return [Fault(pointer, "from approval", "acs.test")]

    fake = types.ModuleType("askgate.core.approval")
    fake.check_approval = check_approval
    monkeypatch.setitem(sys.modules, "askgate.core.approval", fake)
    spec = ApprovalSpec(options=("a",))
    assert check_value(spec, {"decision": "allow"}, "/x") == [Fault("/x", "from approval", "acs.test")]
    assert seen == [(spec, {"decision": "allow"}, "/x")]


def test_normalise_keeps_numbers_and_tuples_multi_select():
    out = normalise_value(FORM, {"s": "a", "i": 1.0, "m": ["a", "b"]})
    assert out == {"s": "a", "i": 1.0, "m": ("a", "b")}
    assert type(out["i"]) is float
