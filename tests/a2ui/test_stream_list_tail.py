"""The open component's growing id list taken from its text, against the general path.

While a long child list streams, the healed text of the open component only grows string items at its
innermost open list; once that list's path is proven (``StreamParser._note_list_tail``), the parser
builds the new version from the old one instead of parsing the text, checking it and finding its growth
again (``_take_grown_text``). Checked here: the parts and the parser's state after every chunk equal the
general path's (``_fast_scan = False``) on the benchmark streams, random re-chunkings and generated
streams that break the conditions (escapes, ids that look like keys, duplicate keys, other child fields,
data paths, a list that stops growing); ``_grown_text`` accepts only what ``json.loads`` agrees with; and
the benchmark stream goes through the shortcut.
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
from askgate.a2ui.stream_heal import heal_fragment
from askgate.a2ui.streaming import StreamParser, _grown_text
from tests.a2ui.test_stream_scan import _assert_same
from tests.support.a2ui_streams import chunked, cut_at, llm_response, random_chunks
from tests.support.scale import examples

_CATALOGS = {v: A2uiCatalog.basic(v) for v in ("0.8", "0.9")}


def test_list_tail_matches_the_general_path_on_benchmark_streams() -> None:
    rng = random.Random(5)
    for version, catalog in _CATALOGS.items():
        text = llm_response(100, version, catalog.catalog_id)
        _assert_same(catalog, chunked(text, 40), f"v{version}")
        # Only the root's part matters here (the rest is the other tests' business).
        head = text[: text.index("item_60") + 30]
        for size in (3, 11, 40):
            _assert_same(catalog, random_chunks(head, rng, size), f"v{version} random {size}")


def test_list_tail_is_taken_on_the_benchmark_stream() -> None:
    """The benchmark goes through the shortcut (else the comparisons check nothing)."""
    catalog = _CATALOGS["0.8"]
    taken: list[bool] = []
    real = StreamParser._take_grown_text

    def spy(self: StreamParser, *args: Any) -> bool:
        result = real(self, *args)
        taken.append(result)
        return result

    with mock.patch.object(StreamParser, "_take_grown_text", spy):
        parser = StreamParser(catalog)
        for chunk in chunked(llm_response(100, "0.8", catalog.catalog_id), 40):
            parser.process_chunk(chunk)
    assert sum(taken) >= 35


def _root_text(version: str, kids: list[str], extra: str) -> str:
    """The root with its id list, written by hand so that keys can repeat."""
    ids = json.dumps(kids, ensure_ascii=False)
    if version == "0.9":
        head = {"": "", "dup": '"children": ["x"], ', "child": f'"child": {json.dumps(kids[0])}, ', "path": ""}[extra]
        return f'{{"id": "root", "component": "Column", {head}"children": {ids}}}'
    head = {
        "": "",
        "dup": '"explicitList": ["x"], ',
        "child": f'"child": {json.dumps(kids[0])}, ',
        "path": '"alignment": {"path": "a/b"}, ',
    }[extra]
    return f'{{"id": "root", "component": {{"Column": {{"children": {{{head}"explicitList": {ids}}}}}}}}}'


@st.composite
def _streams(draw: st.DrawFn) -> tuple[str, list[str]]:
    version = draw(st.sampled_from(["0.8", "0.9"]))
    size = draw(st.integers(16, 60))
    pool = [f"c{i}" for i in range(size + 5)] + ["root", "children", 'q"x', "a\\b", "é", "t\tab", " s "]
    kids = draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size))
    extra = draw(st.sampled_from(["", "dup", "child", "path"]))
    texts = [
        json.dumps({"id": c, "component": "Text", "text": f"t {c}"} if version == "0.9"
                   else {"id": c, "component": {"Text": {"text": {"literalString": f"t {c}"}}}})
        for c in draw(st.lists(st.sampled_from(pool[:size]), max_size=4))
    ]
    comps = ", ".join([_root_text(version, kids, extra), *texts])
    if version == "0.9":
        start = {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": _CATALOGS["0.9"].catalog_id}}
        update = f'{{"version": "v0.9", "updateComponents": {{"surfaceId": "s", "components": [{comps}]}}}}'
    else:
        start = {"beginRendering": {"surfaceId": "s", "root": "root"}}
        update = f'{{"surfaceUpdate": {{"surfaceId": "s", "components": [{comps}]}}}}'
    body = f"[{json.dumps(start)}, {update}]"
    if draw(st.booleans()):
        body = json.dumps(json.loads(body), indent=1)  # newlines between the items (no repeated keys then)
    whole = f"Here: <a2ui-json>{body}</a2ui-json> done"
    # Many cuts: the shortcut needs several chunk ends inside the list once it holds 16 ids.
    return version, cut_at(whole, draw(st.lists(st.integers(0, len(whole)), min_size=20, max_size=150)))


@settings(max_examples=examples(200), deadline=None)
@given(_streams())
def test_list_tail_matches_the_general_path_on_generated_streams(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    _assert_same(_CATALOGS[version], chunks)


@st.composite
def _fragments(draw: st.DrawFn) -> tuple[str, str]:
    """Two cuts of one JSON text (the second longer), healed as the parser heals them."""
    items = draw(st.lists(st.sampled_from(["a", "bc", "", 'q"', "x\\y", "é", "t\nx", "]", "}"]), max_size=8))
    value = {"k": {"l": items, "m": draw(st.sampled_from([1, "s", [1, "z"]]))}}
    text = json.dumps(value, indent=draw(st.sampled_from([None, 1])))
    if draw(st.booleans()):
        text = text.replace('"l"', '"m": 0, "l"', 1)  # a repeated key before the list
    a = draw(st.integers(0, len(text)))
    b = draw(st.integers(a, len(text)))
    return heal_fragment(text[:a]), heal_fragment(text[:b])


@settings(max_examples=examples(1000), deadline=None)
@given(_fragments())
def test_grown_text_is_what_json_loads_gives(pair: tuple[str, str]) -> None:
    """Whatever ``_grown_text`` accepts parses, and the parse is the old one with the innermost open
    list's last item replaced by the returned items."""
    before, healed = pair
    items = _grown_text(before, healed)
    if items is None:
        return
    old, new = json.loads(before), json.loads(healed)
    last = items.pop()
    assert any(
        _at(old, path)[-1] == last
        and _at(new, path) == _at(old, path)[:-1] + items
        and json.dumps(_with(new, path, None)) == json.dumps(_with(old, path, None))
        for path in _list_paths(old)
    ), (before, healed)


def _list_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The key paths (through objects only) to the non-empty lists in ``value``."""
    if isinstance(value, list):
        return [path] if value else []
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _list_paths(item, path + (key,))]
    return []


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _with(value: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    if not path:
        return replacement
    out = dict(value)
    out[path[0]] = _with(value[path[0]], path[1:], replacement)
    return out


def test_grown_text_cases() -> None:
    assert _grown_text('{"l": ["a", "b"]}', '{"l": ["a", "b", "c"]}') == ["b", "c", "b"]
    assert _grown_text('{"l": ["a", "i"]}', '{"l": ["a", "item", "j"]}') == ["item", "j", "i"]
    assert _grown_text('{"l": ["a"]}', '{"l": ["a"]}') == ["a", "a"]
    # Not a list item, not the innermost open list, other closers, escapes, control characters.
    assert _grown_text('{"l": "a"}', '{"l": "ab"}') is None
    assert _grown_text('{"l": ["a"], "m": "b"}', '{"l": ["a"], "m": "b", "n": "c"}') is None
    assert _grown_text('{"l": ["a"]}', '{"l": ["a", ["b"]]}') is None
    assert _grown_text('{"l": ["a"]}', '{"l": ["a"], "m": ["b"]}') is None
    assert _grown_text('{"l": ["a"]}', '{"l": ["a", "b\\"c"]}') is None
    assert _grown_text('{"l": ["a\\"b"]}', '{"l": ["a\\"b", "c"]}') is None
    assert _grown_text('{"l": ["a"]}', '{"l": ["a", "b\nc"]}') is None
    assert _grown_text('{"l": ["a"]}', '{"m": ["a", "b"]}') is None


def test_a_planted_error_in_the_shortcut_is_caught() -> None:
    """The comparison notices a shortcut that keeps the old last item instead of replacing it."""
    catalog = _CATALOGS["0.8"]
    chunks = chunked(llm_response(30, "0.8", catalog.catalog_id), 40)
    real = streaming._grown_text

    def keeps_last(before: str, healed: str) -> list[str] | None:
        items = real(before, healed)
        if items is not None and len(items) > 2:
            items.insert(0, items[-1])
        return items

    with mock.patch.object(streaming, "_grown_text", keeps_last):
        try:
            _assert_same(catalog, chunks)
        except AssertionError:
            return
    raise AssertionError("the planted error went unnoticed")
