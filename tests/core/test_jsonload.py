"""askgate/jsonload.py: strict JSON, property-tested against the standard library's reading."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.errors import AskgateError
from askgate.jsonload import loads_strict
from tests.support.scale import examples

DOCS = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
                    max_leaves=12)


@settings(max_examples=examples(300))
@given(DOCS)
def test_what_json_writes_reads_back_the_same(doc: Any) -> None:
    assert loads_strict(json.dumps(doc)) == doc
    assert loads_strict(json.dumps(doc).encode()) == doc


@settings(max_examples=examples(300))
@given(st.dictionaries(st.text(max_size=4), DOCS, min_size=1, max_size=4), st.data())
def test_a_repeated_key_anywhere_is_refused(doc: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(doc)))
    body = json.dumps(doc)[:-1] + f", {json.dumps(key)}: 1}}"
    nested = json.dumps({"outer": [json.loads(json.dumps(doc))]}).replace(json.dumps(doc), body)
    for text in (body, nested):
        with pytest.raises(AskgateError) as caught:
            loads_strict(text)
        assert caught.value.faults[0].rule == "json.duplicate-key" and repr(key) in caught.value.faults[0].message


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e400", "[1,", "\"\\ud800", b"\xff"])
def test_not_strict_json_is_refused(text: str | bytes) -> None:
    with pytest.raises(AskgateError) as caught:
        loads_strict(text)
    assert caught.value.code == "not_json"
