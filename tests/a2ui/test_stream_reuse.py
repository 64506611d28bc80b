"""Work the streaming parser reuses instead of redoing, against redoing it.

- A component closed exactly as it was last shown used to re-run the update pass; now it does only when
  something that pass reads changed since its last clean run (``_is_settled``). Running it every time
  must give the same parts at every chunk.
- A complete update's components are re-set from the exact text each was parsed from when that is proven
  (``_element_texts``): the same parts and the same seen components as dumping each one twice, also on
  messages built to break the proof (a repeated or escaped ``components`` key, foreign elements, nested
  component-like objects), which must also match the reference SDK.
- The placeholder components of a placeholder list derived from the previous one (``_ph_list``) are
  derived too: always equal to looking each one up.
- A long id list's limits verdict carries over when only string ids were added (``_limits``), and so do
  the text conditions of growing it in place (``_raw_ok``): always equal to checking the text again.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui import streaming
from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.integrity import check_limits_and_paths
from askgate.a2ui.stream_components import GROWTH_NAMES, raw_allows_growth
from askgate.a2ui.streaming import StreamParser
from tests.a2ui.test_stream_shortcuts import _kind_switching_streams
from tests.a2ui.test_streaming import _compare, _suite_streams
from tests.support.a2ui_streams import (
    askgate_run,
    catalog_json,
    chunked,
    cut_at,
    llm_response,
    part_records,
    random_chunks,
    reference_run,
)
from tests.support.scale import examples

_CATALOGS = {v: A2uiCatalog.basic(v) for v in ("0.8", "0.9")}


def _trace(catalog: A2uiCatalog, chunks: list[str]) -> list[Any]:
    """The parts (or error) after every chunk, and the seen components as JSON text."""
    return part_records(catalog, chunks, state=lambda parser: json.dumps(list(parser._seen.items())), restart=True)


def _without_settled(catalog: A2uiCatalog, chunks: list[str]) -> list[Any]:
    with mock.patch.object(StreamParser, "_is_settled", lambda self: False):
        return _trace(catalog, chunks)


def _without_texts(catalog: A2uiCatalog, chunks: list[str]) -> list[Any]:
    with mock.patch.object(StreamParser, "_element_texts", lambda self, comps, src: None):
        return _trace(catalog, chunks)


def _streams(shared_dir: Path) -> list[tuple[str, A2uiCatalog, list[str]]]:
    """Suite inputs as written and cut at random, and the benchmark responses in 40-character and random
    chunks."""
    rng = random.Random(20261201)
    out = []
    for case_id, catalog, inputs in _suite_streams(shared_dir):
        text = "".join(inputs)
        out.append((case_id, catalog, inputs))
        out += [(case_id, catalog, random_chunks(text, rng, max_size=rng.choice((2, 9, 40)))) for _ in range(2)]
    for version, catalog in _CATALOGS.items():
        for n in (12, 40):
            text = llm_response(n, version, catalog.catalog_id)
            out += [(f"v{version} N={n}", catalog, chunked(text, 40)), (f"v{version} N={n} random", catalog,
                                                                         random_chunks(text, rng, 25))]
    return out


# ---- the update pass after a component closed as shown ----------------------------------------------


def test_settled_skip_is_taken_on_the_benchmark_stream() -> None:
    """Not vacuous: the pass is skipped after most closes of the benchmark response."""
    catalog = _CATALOGS["0.8"]
    taken = []
    real = StreamParser._is_settled

    def counted(self: StreamParser) -> bool:
        taken.append(real(self))
        return taken[-1]

    with mock.patch.object(StreamParser, "_is_settled", counted):
        parser = StreamParser(catalog)
        for chunk in chunked(llm_response(40, "0.8", catalog.catalog_id), 40):
            parser.process_chunk(chunk)
    assert sum(taken) >= 25 and not all(taken)


def test_settled_skip_changes_nothing(shared_dir: Path) -> None:
    for label, catalog, chunks in _streams(shared_dir):
        assert _trace(catalog, chunks) == _without_settled(catalog, chunks), label


@settings(max_examples=examples(200), deadline=None)
@given(_kind_switching_streams())
def test_settled_skip_changes_nothing_on_generated_streams(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    assert _trace(_CATALOGS[version], chunks) == _without_settled(_CATALOGS[version], chunks)


# ---- a complete update's components re-set from their texts -----------------------------------------


def test_element_texts_are_used_on_the_benchmark_streams() -> None:
    for version, catalog in _CATALOGS.items():
        found: list[Any] = []

        def recorded(
            self: StreamParser, comps: Any, src: Any, found: list[Any] = found, real: Any = StreamParser._element_texts
        ) -> Any:
            found.append(real(self, comps, src))
            return found[-1]

        with mock.patch.object(StreamParser, "_element_texts", recorded):
            parser = StreamParser(catalog)
            for chunk in chunked(llm_response(30, version, catalog.catalog_id), 40):
                parser.process_chunk(chunk)
        texts = [t for t in found if t is not None]
        assert len(texts) == 1 and len(texts[0]) == 30, version
        # Each is the exact text its component was parsed from.
        comps = [json.loads(t) for t in texts[0]]
        assert [c["id"] for c in comps] == ["root"] + [f"item_{i}" for i in range(1, 30)]
        assert all(parser._seen[c["id"]] == c for c in comps)


def test_element_texts_change_nothing(shared_dir: Path) -> None:
    for label, catalog, chunks in _streams(shared_dir):
        assert _trace(catalog, chunks) == _without_texts(catalog, chunks), label


def _v08(components: str) -> str:
    """One v0.8 block: a start message and a surface update whose body text is ``components``."""
    return (
        'Here: <a2ui-json>[{"beginRendering": {"surfaceId": "s", "root": "root"}},\n'
        '{"surfaceUpdate": {"surfaceId": "s", ' + components + "}}]</a2ui-json> done"
    )


_ROOT = '{"id": "root", "component": {"Column": {"children": {"explicitList": ["a", "b"]}}}}'
_A = '{"id": "a", "component": {"Text": {"text": {"literalString": "one"}}}}'
_B = '{"id": "b", "component": {"Text": {"text": {"literalString": "two"}, "usageHint": "h1"}}}'
_A2 = '{"id": "a", "component": {"Text": {"text": {"literalString": "ONE"}}}}'
_HOSTILE = {
    "plain": _v08(f'"components": [{_ROOT}, {_A}, {_B}]'),
    "key twice, the second wins": _v08(f'"components": [{_ROOT}, {_A}, {_B}], "components": [{_ROOT}, {_A2}, {_B}]'),
    "escaped key after the plain one": _v08(
        f'"components": [{_ROOT}, {_A}, {_B}], "comp\\u006fnents": [{_ROOT}, {_A2}, {_B}]'
    ),
    "escaped key before the plain one": _v08(
        f'"comp\\u006fnents": [{_ROOT}, {_A2}, {_B}], "components": [{_ROOT}, {_A}, {_B}]'
    ),
    "a string among the elements": _v08(f'"components": [{_ROOT}, "a", {_A}, {_B}]'),
    "an object without id among them": _v08(f'"components": [{_ROOT}, {{"x": 1}}, {_A}, {_B}]'),
    "component-like objects nested in another key": _v08(
        f'"extra": [{_A2}, {_B}], "components": [{_ROOT}, {_A}, {_B}]'
    ),
    "the word as a value": _v08(f'"note": "components", "components": [{_ROOT}, {_A}, {_B}]'),
    "numbers spelled differently": _v08(
        f'"components": [{_ROOT}, {_A}, '
        '{"id": "b", "component": {"Image": {"url": {"literalString": "u"}, "weight": 1.0}}}]'
    ),
    "an id repeated": _v08(f'"components": [{_ROOT}, {_A}, {_A2}, {_B}]'),
}


def test_hostile_updates_change_nothing_and_match_the_reference() -> None:
    """Messages built so that a wrong proof would re-set a component from the wrong text."""
    catalog = _CATALOGS["0.8"]
    rng = random.Random(11)
    jobs, labels = [], []
    for label, text in _HOSTILE.items():
        for chunks in (chunked(text, 40), chunked(text, 7), random_chunks(text, rng, 30), [text]):
            assert _trace(catalog, chunks) == _without_texts(catalog, chunks), label
            jobs.append({"catalog": catalog_json(catalog), "chunks": chunks})
            labels.append(label)
    for job, label, ref in zip(jobs, labels, reference_run(jobs)):
        _compare(label, askgate_run(catalog, job["chunks"]), ref, job["chunks"])


@settings(max_examples=examples(200), deadline=None)
@given(_kind_switching_streams())
def test_element_texts_change_nothing_on_generated_streams(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    assert _trace(_CATALOGS[version], chunks) == _without_texts(_CATALOGS[version], chunks)


@settings(max_examples=examples(100), deadline=None)
@given(st.sampled_from(sorted(_HOSTILE)), st.data())
def test_hostile_updates_cut_anywhere_change_nothing(label: str, data: st.DataObject) -> None:
    text = _HOSTILE[label]
    chunks = cut_at(text, data.draw(st.lists(st.integers(0, len(text)), max_size=30)))
    assert _trace(_CATALOGS["0.8"], chunks) == _without_texts(_CATALOGS["0.8"], chunks)


# ---- derived placeholder components and carried limits verdicts --------------------------------------


def _check_caches(parser: StreamParser) -> None:
    cached = parser._ph_list
    if cached is not None:
        assert cached[1] == [parser._ph_comp[p] for p in cached[0]]
        assert all(a is parser._ph_comp[p] for a, p in zip(cached[1], cached[0]))
    for raw, verdict in parser._limits.items():
        message = [{"surfaceUpdate": {"surfaceId": "s", "components": [json.loads(raw)]}}]
        try:
            check_limits_and_paths(message)
            fresh = True
        except ValueError:
            fresh = False
        assert verdict == fresh, raw
    if parser._raw_ok is not None:
        _, raw, path = parser._raw_ok
        assert raw_allows_growth(raw, path, parser._v09)


def _deep_list_response(depth: int, n: int) -> str:
    """A v0.8 response whose root's id list sits ``depth`` objects deep (past the limit when deep enough),
    then its children."""
    kids = [f"k{i}" for i in range(n)]
    inner: Any = {"explicitList": kids}
    for _ in range(depth):
        inner = {"x": inner}
    root = {"id": "root", "component": {"Column": {"children": inner}}}
    comps = [root] + [{"id": k, "component": {"Text": {"text": {"literalString": k}}}} for k in kids]
    messages = [{"beginRendering": {"surfaceId": "s", "root": "root"}},
                {"surfaceUpdate": {"surfaceId": "s", "components": comps}}]
    return "<a2ui-json>" + json.dumps(messages, indent=1) + "</a2ui-json>"


def _named_ids_response(n: int, names: list[str]) -> str:
    """A v0.8 response whose root's id list holds child field names (and ``path``) among plain ids."""
    kids = [names[i % len(names)] if i % 7 == 3 else f"k{i}" for i in range(n)]
    kids = list(dict.fromkeys(kids))
    root = {"id": "root", "component": {"Column": {"children": {"explicitList": kids}}}}
    comps = [root] + [{"id": k, "component": {"Text": {"text": {"literalString": k}}}} for k in kids]
    messages = [{"beginRendering": {"surfaceId": "s", "root": "root"}},
                {"surfaceUpdate": {"surfaceId": "s", "components": comps}}]
    return "<a2ui-json>" + json.dumps(messages, indent=1) + "</a2ui-json>"


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(["0.8", "0.9", "deep", "named"]), st.integers(16, 60), st.integers(3, 45), st.integers(40, 50))
def test_derived_caches_equal_recomputing_them(kind: str, n: int, size: int, depth: int) -> None:
    if kind == "named":
        names = sorted(GROWTH_NAMES)
        catalog, text = _CATALOGS["0.8"], _named_ids_response(n, names[depth % len(names) :] + names)
    elif kind == "deep":
        catalog, text = _CATALOGS["0.8"], _deep_list_response(depth, n)
    else:
        catalog = _CATALOGS[kind]
        text = llm_response(n, kind, catalog.catalog_id)
    parser = StreamParser(catalog)
    for chunk in chunked(text, size):
        try:
            parser.process_chunk(chunk)
        except ValueError:
            break
        _check_caches(parser)


def test_derived_caches_are_used_on_the_benchmark_stream() -> None:
    """Not vacuous: the placeholder components are derived at most chunks, and the root's limits are
    checked from its text only a few times while its id list grows over ~20 chunks."""
    catalog = _CATALOGS["0.8"]
    real = streaming._limits_trivially_ok
    real_growth = streaming.grow_component
    long_checks, growth_checks = [], []

    def counted(raw: str) -> bool:
        if raw.count('"item_') > 16:
            long_checks.append(raw)
        return real(raw)

    def growth(*args: Any) -> Any:
        growth_checks.append(len(args) > 8 and args[8])
        return real_growth(*args)

    derived = 0
    with mock.patch.object(streaming, "_limits_trivially_ok", counted), \
            mock.patch.object(streaming, "grow_component", growth):
        parser = StreamParser(catalog)
        for chunk in chunked(llm_response(60, "0.8", catalog.catalog_id), 40):
            before = parser._ph_list
            parser.process_chunk(chunk)
            after, d = parser._ph_list, parser._ph_derived
            if before is not None and after is not before and d is not None and d[0] is after[0] and d[1] is before[0]:
                derived += 1
            _check_caches(parser)
    grown = [raw for raw in parser._limits if raw.count('"item_') > 16]
    assert derived >= 40
    assert len(grown) >= 15 and len(long_checks) <= 4
    assert len(growth_checks) >= 15 and sum(growth_checks) >= 15
