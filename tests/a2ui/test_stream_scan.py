"""The scanner's shortcuts against the general paths (``StreamParser._fast_scan = False``).

- Token runs (``_scan_run``): whole escape-free strings (and a key with its colon) as one token, the
  buffer appended once per run.
- A chunk without ``<`` inside a block skips the tag search (``_process``).
- A component closed exactly as it was last healed is not parsed again (``_same_as_shown``).

Each must leave the parser exactly where the general paths leave it. Compared after every chunk: the
returned parts (or error) and the state the later chunks depend on (buffer, open objects with their key
flags, term positions, string state, message kinds, every seen component and its raw text). Inputs: every suite case cut
at random points, the benchmark responses, and generated streams made of the characters and terms the
machine reacts to (escapes, message kinds as keys, ``surfaceId``/``root`` values cut anywhere, stray
``]`` inside objects, nested and top-level arrays), cut anywhere.
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
from tests.support.a2ui_streams import chunked, cut_at, llm_response, part_records, random_chunks
from tests.support.scale import examples

_CATALOGS = {v: A2uiCatalog.basic(v) for v in ("0.8", "0.9")}


def _state(parser: StreamParser) -> Any:
    return (
        parser._buf.text(),
        [frame[:3] for frame in parser._stack],
        parser._in_top,
        parser._in_str,
        parser._esc,
        # What the loop notes about a string is read only while it is open (at its closing quote).
        (parser._str_start, parser._str_escaped) if parser._in_str else None,
        parser._sniff_due,
        parser._found_json,
        json.dumps(parser._quote_terms, sort_keys=True),
        json.dumps(parser._colon_terms, sort_keys=True),
        [(v.pos, v.state, v.value) for values in parser._values.values() for v in values],
        sorted(parser._latest_dirty),
        list(parser._msg_types),
        parser._active,
        parser._surface,
        dict(parser._raw),
        json.dumps(list(parser._seen.items())),
    )


def _trace(catalog: A2uiCatalog, chunks: list[str], fast: bool) -> list[Any]:
    return part_records(catalog, chunks, fast=fast, state=_state, restart=True)


def _assert_same(catalog: A2uiCatalog, chunks: list[str], label: str = "") -> None:
    runs = _trace(catalog, chunks, True)
    general = _trace(catalog, chunks, False)
    for k, (a, b) in enumerate(zip(runs, general)):
        assert a == b, f"{label} step {k} (chunk {k // 2} {chunks[min(k // 2, len(chunks) - 1)]!r})"
    assert len(runs) == len(general)


def test_runs_match_the_general_loop_on_suite_inputs(shared_dir: Path) -> None:
    rng = random.Random(20261201)
    for case_id, catalog, inputs in _suite_streams(shared_dir):
        text = "".join(inputs)
        for chunks in [inputs, *(random_chunks(text, rng, max_size=rng.choice((2, 9, 40))) for _ in range(3))]:
            _assert_same(catalog, chunks, case_id)


def test_runs_match_the_general_loop_on_benchmark_streams() -> None:
    rng = random.Random(11)
    for version, catalog in _CATALOGS.items():
        for n in (12, 100):
            text = llm_response(n, version, catalog.catalog_id)
            _assert_same(catalog, chunked(text, 40), f"v{version} N={n}")
            _assert_same(catalog, random_chunks(text, rng, 25), f"v{version} N={n} random")


def test_runs_are_taken_on_the_benchmark_stream() -> None:
    """The run path is the one the benchmark goes through (else the comparison above checks nothing)."""
    catalog = _CATALOGS["0.8"]
    text = llm_response(20, "0.8", catalog.catalog_id)
    taken = []
    real = StreamParser._scan_run

    def counted(self: StreamParser, s: str, i: int, parts: list[Any]) -> int:
        end = real(self, s, i, parts)
        taken.append(end - i)
        return end

    with mock.patch.object(StreamParser, "_scan_run", counted):
        parser = StreamParser(catalog)
        for i in range(0, len(text), 40):
            parser.process_chunk(text[i : i + 40])
    assert sum(taken) > len(text) // 2


def test_closes_as_healed_are_not_parsed_again() -> None:
    """On the benchmark stream most components close exactly as last healed: those skip the parse."""
    catalog = _CATALOGS["0.8"]
    text = llm_response(20, "0.8", catalog.catalog_id)
    verdicts = []
    real = StreamParser._same_as_shown

    def counted(self: StreamParser, cid: Any, healed: str, closed: str) -> bool:
        verdicts.append(real(self, cid, healed, closed))
        return verdicts[-1]

    with mock.patch.object(StreamParser, "_same_as_shown", counted):
        parser = StreamParser(catalog)
        for i in range(0, len(text), 40):
            parser.process_chunk(text[i : i + 40])
    assert verdicts.count(True) >= 10


_PIECES = [
    "<a2ui-json>", "</a2ui-json>", "[", "]", "{", "}", '"', ":", ",", " ", "\n", "\\", '\\"', "\\u0041",
    '"id"', '"root"', '"component"', '"components"', '"surfaceId"', '"children"', '"explicitList"',
    '"beginRendering"', '"surfaceUpdate"', '"dataModelUpdate"', '"deleteSurface"', '"createSurface"',
    '"updateComponents"', '"updateDataModel"', '"contents"', '"key"', '"valueString"', '"value"',
    '"Text"', '"Column"', '"text"', '"literalString"', '"a"', '"b"', '"s1"', '"ro', 'ot"', '"surfaceI',
    'd"', "1", "true", "{}", "[]", '":', '"x":', '": "', "abc",
    # Terms written bare, so that a quote after them ends one (``"a"root"b"``).
    "root", "surfaceId", "components", "id", "surfaceUpdate", "dataModelUpdate", "updateDataModel",
]


@st.composite
def _token_streams(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Soups of the machine's tokens, mostly inside a block and a top-level array, cut anywhere."""
    version = draw(st.sampled_from(["0.8", "0.9"]))
    body = "".join(draw(st.lists(st.sampled_from(_PIECES), max_size=60)))
    whole = draw(st.sampled_from(["<a2ui-json>[", "<a2ui-json>", "x <a2ui-json> [{"])) + body
    whole += draw(st.sampled_from(["", "]</a2ui-json>", "}]</a2ui-json> done"]))
    cuts = sorted(draw(st.lists(st.integers(0, len(whole)), max_size=20)))
    bounds = [0, *cuts, len(whole)]
    return version, [whole[a:b] for a, b in zip(bounds, bounds[1:])]


@st.composite
def _message_streams(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Valid blocks (several surfaces, kinds in any order, escaped strings), cut anywhere."""
    version = draw(st.sampled_from(["0.8", "0.9"]))
    words = st.sampled_from(["hi", 'say "root"', "a\\b", "é", "root", "x:y", "]"])
    messages: list[Any] = []
    for sid in draw(st.lists(st.sampled_from(["s", "t", 'q"1']), min_size=1, max_size=3)):
        if version == "0.9":
            pool = [
                {"version": "v0.9", "createSurface": {"surfaceId": sid, "catalogId": "c"}},
                {"version": "v0.9", "updateComponents": {"surfaceId": sid, "root": "root", "components": [
                    {"id": "root", "component": "Column", "children": ["a", "b"]},
                    {"id": "a", "component": "Text", "text": draw(words)},
                    {"id": "b", "component": "Text", "text": {"path": "/n"}, "variant": "h1"}]}},
                {"version": "v0.9", "updateDataModel": {"surfaceId": sid, "value": {"n": draw(words)}}},
                {"version": "v0.9", "deleteSurface": {"surfaceId": sid}},
            ]
        else:
            pool = [
                {"beginRendering": {"surfaceId": sid, "root": "root"}},
                {"surfaceUpdate": {"surfaceId": sid, "components": [
                    {"id": "root", "component": {"Column": {"children": {"explicitList": ["a", "b"]}}}},
                    {"id": "a", "component": {"Text": {"text": {"literalString": draw(words)}}}},
                    {"id": "b", "component": {"Text": {"text": {"path": "/n"}}}, "weight": 1}]}},
                {"dataModelUpdate": {"surfaceId": sid, "contents": [{"key": "n", "valueString": draw(words)}]}},
                {"deleteSurface": {"surfaceId": sid}},
            ]
        messages += draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    body = json.dumps(messages, indent=draw(st.sampled_from([None, 1])), ensure_ascii=draw(st.booleans()))
    whole = f"Hi <a2ui-json>{body}</a2ui-json> bye"
    return version, cut_at(whole, draw(st.lists(st.integers(0, len(whole)), max_size=40)))


@settings(max_examples=examples(600), deadline=None)
@given(_token_streams())
def test_runs_match_the_general_loop_on_token_soups(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    _assert_same(_CATALOGS[version], chunks)


@settings(max_examples=examples(300), deadline=None)
@given(_message_streams())
def test_runs_match_the_general_loop_on_message_streams(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    _assert_same(_CATALOGS[version], chunks)
