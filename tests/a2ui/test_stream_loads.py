"""The streaming parser's direct call of json's C scanner against ``json.loads``: same value, same error."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui.streaming import _loads
from tests.support.scale import examples

_PIECES = st.sampled_from(['{', '}', '[', ']', '"a"', '"', ':', ',', ' ', '\n', '1', '-0.5e3', 'true', 'null',
                           'NaN', '\\', '\\u00e9', '\ufeff', 'x', '"k": ', '{"id": "r"}'])
_texts = st.lists(_PIECES, max_size=25).map("".join)


def _outcome(fn, text: str) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    try:
        return "ok", json.dumps(fn(text))
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=examples(3000), deadline=None)
@given(st.one_of(_texts, st.text(max_size=30)))
def test_loads_matches_json_loads(text: str) -> None:
    assert _outcome(_loads, text) == _outcome(json.loads, text)


def test_loads_edge_cases() -> None:
    for text in ['{"a": [1, 2]}', ' {"a": 1} \n', '{"a": 1} x', '', '   ', '\ufeff{}', '{"a": NaN}', '[1,]']:
        assert _outcome(_loads, text) == _outcome(json.loads, text), text
