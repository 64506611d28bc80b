"""Per-chunk shortcuts of the streaming parser against the behaviour they replace.

- No forced re-sniff at every chunk end: the parser used to mark a sniff due after each chunk; now only
  when the chunk-end work changed the active message kind. A parser that marks it after every chunk (the
  old behaviour) must give the same parts at every chunk, on every suite input cut at random points, on
  benchmark-like streams and on hypothesis streams that switch message kinds and surfaces.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.streaming import StreamParser
from tests.a2ui.test_streaming import _suite_streams
from tests.support.a2ui_streams import llm_response, random_chunks
from tests.support.scale import examples

_CATALOGS = {v: A2uiCatalog.basic(v) for v in ("0.8", "0.9")}
_real_scan = StreamParser._scan_json


def _always_sniff(self: StreamParser, s: str, parts: list[Any]) -> None:
    """The former chunk end: a sniff marked due after every chunk, whatever ran."""
    _real_scan(self, s, parts)
    self._sniff_due = True


def _records(catalog: A2uiCatalog, chunks: list[str]) -> list[str]:
    parser = StreamParser(catalog)
    out = []
    for chunk in chunks:
        try:
            out.append(json.dumps([[p.text, p.a2ui_json] for p in parser.process_chunk(chunk)], sort_keys=True))
        except ValueError as exc:
            out.append(f"error: {exc}")
    return out


def _both(catalog: A2uiCatalog, chunks: list[str]) -> tuple[list[str], list[str]]:
    fast = _records(catalog, chunks)
    with mock.patch.object(StreamParser, "_scan_json", _always_sniff):
        slow = _records(catalog, chunks)
    return fast, slow


def test_forced_sniff_changes_nothing_on_suite_inputs(shared_dir: Path) -> None:
    rng = random.Random(20261130)
    for case_id, catalog, inputs in _suite_streams(shared_dir):
        text = "".join(inputs)
        for chunks in [inputs] + [random_chunks(text, rng, max_size=rng.choice((2, 7, 40))) for _ in range(3)]:
            fast, slow = _both(catalog, chunks)
            assert fast == slow, case_id


def test_forced_sniff_changes_nothing_on_benchmark_streams() -> None:
    rng = random.Random(7)
    for version, catalog in _CATALOGS.items():
        text = llm_response(12, version, catalog.catalog_id)
        for chunks in ([text[i : i + 40] for i in range(0, len(text), 40)], random_chunks(text, rng, 25)):
            fast, slow = _both(catalog, chunks)
            assert fast == slow, version


@st.composite
def _kind_switching_streams(draw: st.DrawFn) -> tuple[str, list[str]]:
    """v0.8 / v0.9 blocks whose messages come in any order (updates before their start message, data
    model in between, a second surface, a deletion), cut anywhere."""
    version = draw(st.sampled_from(["0.8", "0.9"]))
    sids = draw(st.lists(st.sampled_from(["s", "t"]), min_size=1, max_size=3))
    messages: list[Any] = []
    for sid in sids:
        if version == "0.9":
            pool = [
                {"version": "v0.9", "createSurface": {"surfaceId": sid, "catalogId": _CATALOGS["0.9"].catalog_id}},
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
    cuts = sorted(draw(st.lists(st.integers(0, len(whole)), max_size=50)))
    bounds = [0, *cuts, len(whole)]
    return version, [whole[a:b] for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=examples(200), deadline=None)
@given(_kind_switching_streams())
def test_forced_sniff_changes_nothing_on_generated_streams(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    fast, slow = _both(_CATALOGS[version], chunks)
    assert fast == slow
