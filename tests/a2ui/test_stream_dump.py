"""Spliced dumps (askgate/a2ui/stream_dump.py) against ``json.dumps(obj, sort_keys=True)``.

A long list of plain ids is joined into the dump of the rest of the component, and placeholders are
dumped from a template: both must give exactly the plain sorted dump, whatever the ids (quotes,
backslashes, control and non-ASCII characters, the marker itself), and the parser must give the same
parts with the plain dump in their place.
"""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui import streaming
from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.stream_components import placeholder_body
from askgate.a2ui.stream_dump import MARKER, dump_sorted, dump_with_list, template_dumper
from askgate.a2ui.streaming import StreamParser
from tests.support.a2ui_streams import chunked, llm_response
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
    with mock.patch.object(streaming, "dump_with_list", lambda comp, path: dump_sorted(comp)), \
         mock.patch.object(streaming, "template_dumper",
                           lambda body: lambda pid: dump_sorted({"id": pid, **plain_body})):
        assert _records(catalog, chunks) == spliced


def test_parser_splices_the_growing_root() -> None:
    """The spliced dump is the one the benchmark stream goes through (else the comparison checks nothing)."""
    catalog = A2uiCatalog.basic("0.8")
    text = llm_response(40, "0.8", catalog.catalog_id)
    with mock.patch.object(streaming, "dump_with_list", wraps=dump_with_list) as spy:
        _records(catalog, chunked(text, 40))
    assert spy.call_count >= 10
