"""Whole-response parsing and payload fixing: behaviour, and properties over arbitrary text.

Properties: on any text only ParseError escapes; a JSON list survives being wrapped in tags, fenced,
given curly quotes outside strings and trailing commas; commas inside strings are never touched.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui.errors import ParseError
from askgate.a2ui.parts import ResponsePart
from askgate.a2ui.payload import fix_payload, has_parts, parse_full, remove_trailing_commas
from tests.support.scale import examples

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    # Curly quotes are normalised everywhere, inside strings too (as the reference does), so JSON values that
    # must survive unchanged avoid them.
    | st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\u201c\u201d\u2018\u2019"), max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\u201c\u201d\u2018\u2019"), max_size=6),
        inner, max_size=4),
    max_leaves=20,
)


def test_parts_text_and_json() -> None:
    parts = parse_full("Intro\n<a2ui-json>```json\n[{\"a\": 1},]\n```</a2ui-json>\nmid<a2ui-json>{\"b\": 2}"
                       "</a2ui-json>  tail  ")
    assert parts == [ResponsePart("Intro", [{"a": 1}]), ResponsePart("mid", [{"b": 2}]), ResponsePart("tail", None)]


@pytest.mark.parametrize(("text", "message"), [
    ("", "A2UI tags '<a2ui-json>' and '</a2ui-json>' not found in response."),
    ("</a2ui-json> then <a2ui-json>", "A2UI tags '<a2ui-json>' and '</a2ui-json>' not found in response."),
    ("<a2ui-json> ```json ``` </a2ui-json>", "A2UI JSON part is empty."),
    ("<a2ui-json>[1,,]</a2ui-json>", "Failed to parse JSON: Expecting value: line 1 column 4 (char 3)"),
])
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_full(text)
    assert str(info.value) == message


def test_has_parts_needs_both_tags() -> None:
    assert has_parts("a</a2ui-json>b<a2ui-json>")
    assert not has_parts("<a2ui-json>") and not has_parts("</a2ui-json>")


def test_curly_quotes_are_normalised_even_inside_strings() -> None:
    assert fix_payload('["\u2018x\u2019"]') == ["'x'"]


def test_fix_payload_rules() -> None:
    assert fix_payload("{\u201ca\u201d: \u201cit\u2019s\u201d}") == [{"a": "it's"}]
    assert fix_payload('[1, 2 ,\n ]') == [1, 2]
    assert fix_payload('{"k": "a,}", "l": [",]",],}') == [{"k": "a,}", "l": [",]"]}]
    assert fix_payload("7") == [7]
    with pytest.raises(ParseError, match=r"^Failed to parse JSON: "):
        fix_payload("[" * 100_000)
    with pytest.raises(ParseError, match=r"^Failed to parse JSON: "):
        fix_payload("1" * 5000)  # int too long for Python's str->int conversion limit


def test_commas_inside_strings_stay() -> None:
    assert remove_trailing_commas('["a,]", "b\\",}",]') == '["a,]", "b\\",}"]'


@settings(max_examples=examples(1000), deadline=None)
@given(st.text())
def test_arbitrary_text_only_parse_errors(text: str) -> None:
    try:
        parts = parse_full(text)
    except ParseError:
        return
    assert parts and all(isinstance(p.a2ui_json, list) for p in parts if p.a2ui_json is not None)


@settings(max_examples=examples(1000), deadline=None)
@given(st.text(alphabet=st.sampled_from('[]{},:" \\\n\u201c\u201d\u2018\u2019ab01'), max_size=40))
def test_json_like_text_only_parse_errors(text: str) -> None:
    try:
        result = fix_payload(text)
    except ParseError as exc:
        assert str(exc).startswith("Failed to parse JSON: ")
        return
    assert isinstance(result, list)
    assert has_parts(f"<a2ui-json>{text}</a2ui-json>")


def _with_trailing_commas(value: Any) -> str:
    """JSON text of ``value`` with a trailing comma in every non-empty container."""
    if isinstance(value, list):
        return "[" + "".join(_with_trailing_commas(v) + ", " for v in value) + "]" if value else "[]"
    if isinstance(value, dict):
        body = "".join(json.dumps(k) + ": " + _with_trailing_commas(v) + " ,\n" for k, v in value.items())
        return "{" + body + "}" if value else "{}"
    return json.dumps(value)


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(JSON, max_size=4), st.text(alphabet=st.characters(exclude_characters="<"), max_size=10),
       st.sampled_from(["", "```json\n", "```\n"]))
def test_round_trip_through_tags_fences_and_commas(value: list[Any], before: str, fence: str) -> None:
    body = fence + _with_trailing_commas(value) + ("\n```" if fence else "")
    parts = parse_full(f"{before}<a2ui-json>{body}</a2ui-json>")
    assert parts[0].a2ui_json == value
    assert parts[0].text == before.strip()
    assert len(parts) == 1


@settings(max_examples=examples(500), deadline=None)
@given(JSON)
def test_fix_payload_wraps_exactly_non_lists(value: Any) -> None:
    assert fix_payload(json.dumps(value)) == (value if isinstance(value, list) else [value])
