"""Fuzzing the streaming parser: whatever the chunks, only the toolkit's errors escape.

Inputs mix free text with the characters and words the parser reacts to (tags, brackets, quotes,
escapes, message and component keys), so the generator reaches deep states: open blocks, cut strings,
partial components, data-model updates, errors mid-stream followed by more chunks.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.errors import A2uiError
from askgate.a2ui.streaming import ResponsePart, StreamParser
from tests.support.scale import examples

_TOKENS = [
    "<a2ui-json>", "</a2ui-json>", "<a2u", "</a2", "[", "]", "{", "}", '"', ":", ",", "\\", "\\u00", "\\\"",
    " ", "\n", "```json", "```", '"id"', '"root"', '"component"', '"components"', '"children"',
    '"explicitList"', '"child"', '"surfaceId"', '"s1"', '"path"', '"/a~b"', '"call"', '"args"',
    '"beginRendering"', '"surfaceUpdate"', '"dataModelUpdate"', '"deleteSurface"', '"createSurface"',
    '"updateComponents"', '"updateDataModel"', '"version"', '"v0.9"', '"contents"', '"key"',
    '"valueString"', '"valueMap"', '"value"', '"Text"', '"Column"', '"Row"', '"text"', '"literalString"',
    '"https://x', "true", "null", "-1.5e3", "NaN", "{}", "[]", '"loading_a"', '"a"', '"b"',
]

_text = st.lists(st.one_of(st.sampled_from(_TOKENS), st.text(max_size=6)), max_size=40).map("".join)


def _messages(version: str) -> st.SearchStrategy[str]:
    """Whole (often valid) blocks, to be cut anywhere by the chunking strategy."""
    leaf = st.one_of(st.text(max_size=5), st.integers(-3, 3), st.booleans(), st.none())
    ids = st.sampled_from(["root", "a", "b", "c", "loading_a"])
    if version == "0.9":
        comp = st.fixed_dictionaries(
            {"id": ids, "component": st.sampled_from(["Text", "Column", "Row", "Card"])},
            optional={"text": leaf, "children": st.lists(ids, max_size=3), "child": ids},
        )
        msg = st.one_of(
            st.just({"version": "v0.9", "createSurface": {"surfaceId": "s1", "catalogId": "x"}}),
            st.builds(lambda cs: {"version": "v0.9", "updateComponents": {"surfaceId": "s1", "components": cs}},
                      st.lists(comp, max_size=4)),
            st.builds(lambda v: {"version": "v0.9", "updateDataModel": {"surfaceId": "s1", "value": v}},
                      st.dictionaries(st.sampled_from(["a", "b"]), leaf, max_size=2)),
            st.just({"version": "v0.9", "deleteSurface": {"surfaceId": "s1"}}),
        )
    else:
        body = st.one_of(
            st.builds(lambda t: {"Text": {"text": {"literalString": t}}}, st.text(max_size=5)),
            st.builds(lambda cs: {"Column": {"children": {"explicitList": cs}}}, st.lists(ids, max_size=3)),
            st.builds(lambda c: {"Card": {"child": c}}, ids),
        )
        comp = st.fixed_dictionaries({"id": ids, "component": body})
        msg = st.one_of(
            st.builds(lambda r: {"beginRendering": {"surfaceId": "s1", "root": r}}, ids),
            st.builds(lambda cs: {"surfaceUpdate": {"surfaceId": "s1", "components": cs}}, st.lists(comp, max_size=4)),
            st.builds(
                lambda k, v: {"dataModelUpdate": {"surfaceId": "s1", "contents": [{"key": k, "valueString": v}]}},
                st.sampled_from(["name", "imageUrl"]), st.text(max_size=8),
            ),
            st.just({"deleteSurface": {"surfaceId": "s1"}}),
        )
    return st.lists(msg, max_size=4).map(lambda ms: f"hi <a2ui-json>{json.dumps(ms, indent=1)}</a2ui-json> bye")


@st.composite
def _chunked(draw: st.DrawFn, text_strategy: st.SearchStrategy[str]) -> list[str]:
    text = draw(text_strategy)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


_CATALOGS = {v: A2uiCatalog.basic(v) for v in ("0.8", "0.9")}


def _feed(version: str, chunks: list[str]) -> None:
    parser = StreamParser(_CATALOGS[version])
    for chunk in chunks:
        try:
            parts = parser.process_chunk(chunk)
        except A2uiError as exc:
            assert str(exc)  # every error says what went wrong
            # The parser turns an unexpected internal exception into a ParseError "from" it; such a cause
            # would be a bug, not a verdict on the input.
            assert not isinstance(exc.__cause__, (TypeError, KeyError, AttributeError, IndexError)), repr(exc.__cause__)
            continue
        assert isinstance(parts, list)
        for part in parts:
            assert isinstance(part, ResponsePart)
            assert isinstance(part.text, str)
            assert part.a2ui_json is None or (isinstance(part.a2ui_json, list) and part.a2ui_json)


@pytest.mark.parametrize("version", ["0.8", "0.9"])
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks=st.lists(_text, max_size=8))
def test_arbitrary_chunks_raise_only_toolkit_errors(version: str, chunks: list[str]) -> None:
    _feed(version, chunks)


@pytest.mark.parametrize("version", ["0.8", "0.9"])
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_cut_message_streams_raise_only_toolkit_errors(version: str, data: st.DataObject) -> None:
    _feed(version, data.draw(_chunked(_messages(version))))


def test_text_only_stream_is_passed_through() -> None:
    """Without tags, the text comes back unchanged (a possible tag start is held back, then released)."""
    parser = StreamParser(_CATALOGS["0.8"])
    out = "".join(p.text for chunk in ["Hello <a2", "u wor", "ld"] for p in parser.process_chunk(chunk))
    assert out == "Hello <a2u world"


@settings(max_examples=examples(400), deadline=None)
@given(text=_text, cuts=st.lists(st.integers(0, 400), max_size=8))
def test_incremental_healing_equals_healing_from_scratch(text: str, cuts: list[int]) -> None:
    """Healing a growing fragment with a kept scanner state gives what a fresh heal of it gives."""
    from askgate.a2ui.stream_heal import HealScan, heal_fragment

    scan = HealScan()
    for end in sorted({min(c, len(text)) for c in cuts} | {len(text)}):
        prefix = text[:end]
        assert heal_fragment(prefix, scan) == heal_fragment(prefix)
