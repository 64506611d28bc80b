"""Per-chunk shortcuts of the streaming parser against the behaviour they replace.

- No forced re-sniff at every chunk end: the parser used to mark a sniff due after each chunk; now only
  when the chunk-end work changed the active message kind. A parser that marks it after every chunk (the
  old behaviour) must give the same parts at every chunk, on every suite input cut at random points, on
  benchmark-like streams and on hypothesis streams that switch message kinds and surfaces.
- Healed fragments told invalid without parsing (``_surely_invalid``): whatever it rejects, json.loads
  rejects too (random bracket/quote soups, every cut of real responses healed as the parser heals them).
- A long child list's growth found once per chunk and handed on to ``grow_component``: equal to a fresh
  ``appended_strings``, actually used, and the same parts as recomputing it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui import streaming
from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.stream_growth import UNKNOWN_GROWTH, appended_strings
from askgate.a2ui.stream_heal import heal_fragment
from askgate.a2ui.streaming import StreamParser
from tests.a2ui.test_streaming import _suite_streams
from tests.support.a2ui_streams import chunked, cut_at, llm_response, part_records, random_chunks
from tests.support.scale import examples

_CATALOGS = {v: A2uiCatalog.basic(v) for v in ("0.8", "0.9")}
_real_scan = StreamParser._scan_json


def _always_sniff(self: StreamParser, s: str, parts: list[Any]) -> None:
    """The former chunk end: a sniff marked due after every chunk, whatever ran."""
    _real_scan(self, s, parts)
    self._sniff_due = True


def _records(catalog: A2uiCatalog, chunks: list[str]) -> list[str]:
    return part_records(catalog, chunks)


def _both(catalog: A2uiCatalog, chunks: list[str]) -> tuple[list[str], list[str]]:
    fast = _records(catalog, chunks)
    with mock.patch.object(StreamParser, "_scan_json", _always_sniff):
        slow = _records(catalog, chunks)
    return fast, slow


def test_forced_sniff_changes_nothing_on_suite_inputs(shared_dir: Path) -> None:
    rng = random.Random(20261130)
    for case_id, catalog, inputs in _suite_streams(shared_dir):
        text = "".join(inputs)
        cuts = [random_chunks(text, rng, max_size=rng.choice((2, 7, 40))) for _ in range(3)]
        for chunks in [inputs, *cuts]:
            fast, slow = _both(catalog, chunks)
            assert fast == slow, case_id


def test_forced_sniff_changes_nothing_on_benchmark_streams() -> None:
    rng = random.Random(7)
    for version, catalog in _CATALOGS.items():
        text = llm_response(12, version, catalog.catalog_id)
        for chunks in (chunked(text, 40), random_chunks(text, rng, 25)):
            fast, slow = _both(catalog, chunks)
            assert fast == slow, version


@st.composite
def _kind_switching_streams(draw: st.DrawFn) -> tuple[str, list[str]]:
    """v0.8 / v0.9 blocks whose messages come in any order (updates before their start message, data
    model in between, a second surface, a deletion), cut anywhere."""
    version = draw(st.sampled_from(["0.8", "0.9"]))
    sids = draw(st.lists(st.sampled_from(["s", "t"]), min_size=1, max_size=3))
    catalog_id = _CATALOGS["0.9"].catalog_id
    messages: list[Any] = []
    for sid in sids:
        if version == "0.9":
            pool = [
                {"version": "v0.9", "createSurface": {"surfaceId": sid, "catalogId": catalog_id}},
                {"version": "v0.9", "updateComponents": {"surfaceId": sid, "components": [
                    {"id": "root", "component": "Column", "children": ["a", "b"]},
                    {"id": "a", "component": "Text", "text": f"hello {sid}"}]}},
                {"version": "v0.9", "updateDataModel": {"surfaceId": sid, "value": {"n": 1}}},
                {"version": "v0.9", "deleteSurface": {"surfaceId": sid}},
            ]
        else:
            pool = [
                {"beginRendering": {"surfaceId": sid, "root": "root"}},
                {"surfaceUpdate": {"surfaceId": sid, "components": [
                    {"id": "root", "component": {"Column": {"children": {"explicitList": ["a", "b"]}}}},
                    {"id": "a", "component": {"Text": {"text": {"literalString": f"hello {sid}"}}}}]}},
                {"dataModelUpdate": {"surfaceId": sid, "contents": [{"key": "n", "valueNumber": 1}]}},
                {"deleteSurface": {"surfaceId": sid}},
            ]
        messages += draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    blocks = draw(st.integers(1, 2))
    body = json.dumps(messages, indent=draw(st.sampled_from([None, 1])))
    whole = "Hi " + " and ".join([f"<a2ui-json>{body}</a2ui-json>"] * blocks) + " bye"
    return version, cut_at(whole, draw(st.lists(st.integers(0, len(whole)), max_size=50)))


@settings(max_examples=examples(200), deadline=None)
@given(_kind_switching_streams())
def test_forced_sniff_changes_nothing_on_generated_streams(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    fast, slow = _both(_CATALOGS[version], chunks)
    assert fast == slow


# ---- healed fragments told invalid without parsing ---------------------------------------------------

_PIECES = ['{', '}', '[', ']', '"', ":", ",", " ", "\n", "\\", '\\"', "a", "1", '"k"', '"k":', "{}", "true"]


@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_surely_invalid_only_for_text_json_rejects(pieces: list[str]) -> None:
    text = "".join(pieces)
    if streaming._surely_invalid(text):
        with pytest.raises(ValueError):
            json.loads(text)


@settings(max_examples=examples(1000), deadline=None)
@given(st.sampled_from(["0.8", "0.9"]), st.integers(1, 6), st.data())
def test_surely_invalid_only_for_healed_fragments_json_rejects(
    version: str, n: int, data: st.DataObject
) -> None:
    """Every cut of a real response, healed as the parser heals it."""
    text = llm_response(n, version, _CATALOGS[version].catalog_id)
    start = text.index("{", text.index("components"))
    end = data.draw(st.integers(start + 1, len(text)))
    healed = heal_fragment(text[start:end])
    if healed and streaming._surely_invalid(healed):
        with pytest.raises(ValueError):
            json.loads(healed)


def test_surely_invalid_cases() -> None:
    assert streaming._surely_invalid('{"id": "a", "component": {"Text"}}')
    assert streaming._surely_invalid('{"id": "a", "text":}')
    assert streaming._surely_invalid('[{ "Text" }]')
    assert not streaming._surely_invalid('{"id": "a"}')
    assert not streaming._surely_invalid('["a", "b"]')
    assert not streaming._surely_invalid('{"a": "x\\"{"}')  # the quote before the last one is escaped


# ---- a long child list's growth, computed once per chunk ---------------------------------------------


def test_known_growth_is_appended_strings_and_is_used() -> None:
    """``_reprocess`` hands ``grow_component`` the growth ``_grown_refs`` found for the same pair: it must
    be what ``appended_strings`` gives, the memo must be hit on the benchmark stream, and recomputing it
    each time (the general path) must give the same parts."""
    catalog = _CATALOGS["0.8"]
    text = llm_response(40, "0.8", catalog.catalog_id)
    chunks = chunked(text, 40)
    real = streaming.grow_component
    hits = []

    def checked(*args: Any) -> Any:
        known = args[7]
        if known is not UNKNOWN_GROWTH:
            assert known == appended_strings(args[1], args[2])
            hits.append(known)
        return real(*args)

    with mock.patch.object(streaming, "grow_component", checked):
        fast = _records(catalog, chunks)
    assert len(hits) >= 10 and any(h is not None for h in hits)
    with mock.patch.object(streaming, "grow_component", lambda *args: real(*args[:7])):
        assert _records(catalog, chunks) == fast


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(16, 40), st.integers(3, 50), st.sampled_from(["0.8", "0.9"]))
def test_known_growth_gives_the_general_paths_parts(n: int, size: int, version: str) -> None:
    catalog = _CATALOGS[version]
    text = llm_response(n, version, catalog.catalog_id)
    chunks = chunked(text, size)
    real = streaming.grow_component
    fast = _records(catalog, chunks)
    with mock.patch.object(streaming, "grow_component", lambda *args: real(*args[:7])):
        assert _records(catalog, chunks) == fast
