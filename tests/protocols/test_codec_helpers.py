"""The hand-compiled helpers behind the AQP and ACS codecs, held to their reference semantics."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from rfc3986_validator import validate_rfc3986

from askgate.core.construct import make
from askgate.core.formats import check_format, is_uri
from askgate.core.model import Capability, Deadline, TextSpec
from askgate.protocols import _checks as C
from tests.protocols.seed_strategies import any_json
from tests.support.scale import examples

_RFC3339ISH = st.from_regex(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?\n?", fullmatch=True
)


@settings(max_examples=examples(1000), deadline=None)
@given(
    st.one_of(
        _RFC3339ISH, st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat()), st.text(max_size=30)
    )
)
def test_parse_date_time_agrees_with_check_format(value):
    parsed = C.parse_date_time(value)
    assert (parsed is not None) == check_format("date-time", value)
    if parsed is not None:
        assert parsed.tzinfo is not None


def test_parse_date_time_values():
    assert C.parse_date_time("2026-08-03T01:02:03.1234567+02:00") == datetime(
        2026, 8, 2, 23, 2, 3, 123456, tzinfo=UTC
    )
    assert C.parse_date_time("2026-08-03t01:02:03z") == datetime(2026, 8, 3, 1, 2, 3, tzinfo=UTC)
    for bad in (
        "2026-08-03T00:00:60Z",
        "2026-02-29T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "2026-08-03T00:00:00+00:60",
        "2026-08-03T24:00:00Z",
    ):
        assert C.parse_date_time(bad) is None and not check_format("date-time", bad)


@settings(max_examples=examples(600), deadline=None)
@given(any_json(max_leaves=30), st.integers(0, 400))
def test_json_size_bound_never_underestimates(value, budget):
    if C.json_size_fits(value, budget):
        assert len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()) <= budget


def test_json_size_bound_worst_case_escapes():
    assert C.json_size_fits("\x00" * 10, 62)  # 10 x "\u0000" + quotes = 62 bytes
    assert not C.json_size_fits("\x00" * 10, 61)
    assert C.json_size_fits(float("nan"), 100) is None


_URI_CHARS = st.sampled_from(list("abcAZ09-._~!$&'()*+,;=:@/?#[]%% \n") + ["%41", "%zz", "::1", "v1.x", "é"])


@settings(max_examples=examples(2000), deadline=None)
@given(
    st.one_of(
        st.lists(_URI_CHARS, max_size=20).map("".join).map(lambda s: "http:" + s),
        st.lists(_URI_CHARS, max_size=20).map("".join),
    )
)
def test_uri_is_at_least_as_strict_as_rfc3986_validator(value):
    """askgate's uri accepts only what rfc3986-validator accepts (it is stricter on a trailing newline,
    IPv6 zone ids and non-canonical IPv4 parts inside IP-literals)."""
    if is_uri(value):
        assert validate_rfc3986(value, rule="URI")


@pytest.mark.parametrize(
    "value",
    [
        "https://a.example/x?y#z",
        "urn:isbn:1",
        "http://[::1]:8080/",
        "http://[v7.a:b]/",
        "mailto:a@b.c",
        "a:",
        "http://h:/",
        "s://u:p@h:1/p",
    ],
)
def test_uri_accepts(value):
    assert is_uri(value) and validate_rfc3986(value, rule="URI")


@pytest.mark.parametrize(
    "value",
    [
        "http://h:x/",
        "http://a@b@c",
        "http://[::1%25eth0]/",
        "http://[1.2.3.4]/",
        "//h/p",
        "http://h/ x",
        "http://h/\n",
        "http://[::1]x",
    ],
)
def test_uri_refuses(value):
    assert not is_uri(value)


def test_format_checker_of_jsonschema_knows_our_formats():
    for fmt in ("uuid", "uri", "date-time"):
        assert fmt in Draft202012Validator.FORMAT_CHECKER.checkers


def test_is_integer_and_is_number():
    assert C.is_integer(1) and C.is_integer(1.0) and C.is_integer(-0.0)
    assert (
        not C.is_integer(True)
        and not C.is_integer(1.5)
        and not C.is_integer("1")
        and not C.is_integer(float("inf"))
    )
    assert C.is_number(1.5) and not C.is_number(False) and not C.is_number(float("nan"))


def test_freeze_uses_json_equality():
    assert C.freeze(1) == C.freeze(1.0) and C.freeze(True) != C.freeze(1)
    assert C.freeze({"a": [1, {"b": None}]}) == C.freeze({"a": [1.0, {"b": None}]})


def test_make_equals_validated_models():
    spec = make(TextSpec, {"kind": "text", "min_length": 1, "max_length": 5})
    assert spec == TextSpec(max_length=5) and spec.model_dump() == TextSpec(max_length=5).model_dump()
    d = make(Deadline, {"expires_at": None, "timeout_seconds": 3.0, "on_timeout": "deny"})
    assert d == Deadline(timeout_seconds=3, on_timeout="deny")
    assert d.model_copy(update={"on_timeout": "allow"}).on_timeout == "allow" and d.on_timeout == "deny"
    assert d.model_fields_set == set(Deadline.model_fields)  # the shared set was not mutated by the copy
    cap = make(
        Capability,
        {"tool": "t", "operation": None, "resource": None},
        extra={"x": 1},
        fields_set={"tool", "x"},
    )
    assert cap == Capability.model_validate({"tool": "t", "x": 1})
    assert cap.model_dump() == {"tool": "t", "operation": None, "resource": None, "x": 1}
    assert cap.model_copy(update={"tool": "u"}).tool == "u"


def test_make_catches_a_missing_field():
    with pytest.raises(TypeError):
        make(TextSpec, {"kind": "text", "min_length": 1})


def test_template_fills_defaults_and_leaves_required_and_mutable_fields_to_the_caller():
    from askgate.core.construct import template
    from askgate.core.model import Ask, Dialect, YesNoSpec

    data = template(Ask, dialect=Dialect.AQP, purpose="survey")
    assert list(data) == list(Ask.model_fields)  # declaration (serialisation) order
    assert data["dialect"] is Dialect.AQP and data["timing"] == "immediate" and data["notes"] == ()
    placeholders = {k for k, v in data.items() if v is template(Ask)["prompt"]}
    assert placeholders == {"prompt", "spec", "binding"}  # required ones and the mutable {} default
    data.update(prompt="p", spec=YesNoSpec(), binding={})
    ask = make(Ask, data)
    assert ask == Ask(dialect="aqp", purpose="survey", prompt="p", spec=YesNoSpec())
    with pytest.raises(TypeError):
        template(Ask, no_such_field=1)
