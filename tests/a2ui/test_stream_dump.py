"""Spliced dumps (askgate/a2ui/stream_dump.py) against ``json.dumps(obj, sort_keys=True)``.

A long list of plain ids is joined into the dump of the rest of the component, and placeholders are
dumped from a template: both must give exactly the plain sorted dump, whatever the ids (quotes,
backslashes, control and non-ASCII characters, the marker itself), and the parser must give the same
parts with the plain dump in their place. While a long list grows, the parser keeps the text around the
list and writes only the list again (``StreamParser._list_dump``): every shown form's dump must still be
its plain sorted dump after every chunk.
"""

from __future__ import annotations

import json
import random
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui import streaming
from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.stream_components import placeholder_body
from askgate.a2ui.stream_dump import (
    MARKER,
    dump_sorted,
    dump_with_list,
    dump_with_list_parts,
    list_text,
    template_dumper,
)
from askgate.a2ui.streaming import StreamParser
from tests.a2ui.test_stream_list_tail import _streams as _list_streams
from tests.support.a2ui_streams import chunked, llm_response, random_chunks
from tests.support.scale import examples

_ids = st.one_of(
    st.from_regex(r"[a-z_0-9]{1,8}", fullmatch=True),
    st.text(max_size=6),
    st.sampled_from([MARKER, '"', "\\", "\x7f", "é", "a\nb", "~", " "]),
)
_leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), _ids)
_json = st.recursive(_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(_ids, inner, max_size=3)), max_leaves=8)


@st.composite
def _components(draw: st.DrawFn) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A component with a list at a path of dict keys, other content around it (maybe the marker list)."""
    path = tuple(draw(st.lists(st.sampled_from(["component", "Column", "children", "explicitList", "x"]),
                               min_size=1, max_size=4, unique=True)))
    items: Any = draw(st.one_of(st.lists(_ids, max_size=30), st.lists(_json, max_size=3), _json))
    comp: dict[str, Any] = draw(st.dictionaries(_ids, _json, max_size=3))
    node = comp
    for key in path[:-1]:
        inner = draw(st.dictionaries(_ids, _json, max_size=2))
        node[key] = inner
        node = inner
    node[path[-1]] = items
    if draw(st.booleans()):
        comp[draw(_ids)] = [MARKER]
    return comp, path


@settings(max_examples=examples(600), deadline=None)
@given(_components())
def test_spliced_dump_is_the_sorted_dump(case: tuple[dict[str, Any], tuple[str, ...]]) -> None:
    comp, path = case
    assert dump_with_list(comp, path) == json.dumps(comp, sort_keys=True)


def test_spliced_dump_splices_plain_ids_and_not_the_others() -> None:
    ids = [f"item_{i}" for i in range(40)]
    comp = {"id": "root", "component": {"Column": {"children": {"explicitList": ids}}}}
    path = ("component", "Column", "children", "explicitList")
    with mock.patch("askgate.a2ui.stream_dump.dump_sorted", wraps=dump_sorted) as spy:
        assert dump_with_list(comp, path) == json.dumps(comp, sort_keys=True)
    assert [c.args[0]["component"]["Column"]["children"]["explicitList"] for c in spy.call_args_list] == [[MARKER]]
    for odd in ('a"b', "a\\b", "é", "\x1f"):
        comp["component"]["Column"]["children"]["explicitList"] = ids + [odd]
        assert dump_with_list(comp, path) == json.dumps(comp, sort_keys=True)


@settings(max_examples=examples(1000), deadline=None)
@given(st.booleans(), _ids)
def test_template_dump_is_the_sorted_dump(v09: bool, pid: str) -> None:
    body = placeholder_body(v09)
    assert template_dumper(body)(pid) == json.dumps({"id": pid, **body}, sort_keys=True)


def _records(catalog: A2uiCatalog, chunks: list[str]) -> list[str]:
    parser = StreamParser(catalog)
    return [json.dumps([[p.text, p.a2ui_json] for p in parser.process_chunk(c)], sort_keys=True) for c in chunks]


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(14, 45), st.integers(3, 50), st.sampled_from(["0.8", "0.9"]))
def test_parser_gives_the_plain_dumps_parts(n: int, size: int, version: str) -> None:
    catalog = A2uiCatalog.basic(version)
    text = llm_response(n, version, catalog.catalog_id)
    chunks = chunked(text, size)
    spliced = _records(catalog, chunks)
    plain_body = placeholder_body(version == "0.9")
    with mock.patch.object(streaming, "dump_with_list_parts", lambda comp, path: (dump_sorted(comp), None)), \
         mock.patch.object(streaming, "template_dumper",
                           lambda body: lambda pid: dump_sorted({"id": pid, **plain_body})):
        assert _records(catalog, chunks) == spliced


def test_parser_splices_the_growing_root() -> None:
    """The spliced dump is the one the benchmark stream goes through (else the comparison checks nothing):
    made once, then only the list's text is new at each chunk (``StreamParser._list_dump``)."""
    catalog = A2uiCatalog.basic("0.8")
    text = llm_response(40, "0.8", catalog.catalog_id)
    with mock.patch.object(streaming, "dump_with_list_parts", wraps=dump_with_list_parts) as whole, \
            mock.patch.object(streaming, "list_text", wraps=list_text) as spliced:
        _records(catalog, chunked(text, 40))
    assert whole.call_count >= 1
    assert spliced.call_count >= 10


def _check_dumps(catalog: A2uiCatalog, chunks: list[str]) -> None:
    """After every chunk, each shown form's dump is its sorted dump."""
    parser = StreamParser(catalog)
    for chunk in chunks:
        try:
            parser.process_chunk(chunk)
        except ValueError:
            parser = StreamParser(catalog)
            continue
        for cid, (shown, dump) in parser._proc.items():
            assert dump == dump_sorted(shown.comp), cid


def test_kept_splices_are_the_sorted_dumps_on_benchmark_streams() -> None:
    rng = random.Random(3)
    for version in ("0.8", "0.9"):
        catalog = A2uiCatalog.basic(version)
        text = llm_response(60, version, catalog.catalog_id)
        for chunks in (chunked(text, 40), random_chunks(text, rng, 9)):
            _check_dumps(catalog, chunks)


@settings(max_examples=examples(150), deadline=None)
@given(_list_streams())
def test_kept_splices_are_the_sorted_dumps_on_generated_streams(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    _check_dumps(A2uiCatalog.basic(version), chunks)


@given(st.lists(st.text(max_size=4), min_size=0, max_size=6))
def test_list_text_is_the_encoders(items: list[str]) -> None:
    text = list_text(items)
    if text is not None:
        assert text == dump_sorted(items)
    if items and all(t.isascii() and t.isprintable() and '"' not in t and "\\" not in t for t in items):
        assert text is not None


@settings(max_examples=examples(2000), deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "loading_a", "loading_b", "x loading_a", '"', "é"]), max_size=8),
    st.sampled_from(["a", "b", 'q"', "é"]),
    st.lists(st.integers(0, 8), max_size=3),
)
def test_patched_dump_is_the_sorted_dump_of_the_patched_component(
    ids: list[str], child: str, slots_at: list[int]
) -> None:
    """Swapping a child's placeholder back in the dump text (``_patched_dump``, one occurrence found and
    proven alone, or several counted) gives the patched component's sorted dump, or None."""
    before, after = list(ids), list(ids)
    places = sorted({i for i in slots_at if i <= len(ids)}, reverse=True)
    for i in places:
        before.insert(i, "loading_" + child)
        after.insert(i, child)
    comp = lambda items: {"id": "r", "component": {"Column": {"children": {"explicitList": items}}}}  # noqa: E731
    patched = streaming._patched_dump(dump_sorted(comp(before)), child, len(places))
    if patched is not None:
        assert patched == dump_sorted(comp(after))
    elif places and child.isascii() and child.isalpha() and ("loading_" + child) not in " ".join(ids):
        raise AssertionError("a plain id placed alone must be patched in the text")
