"""The growing-children-list fast path of the streaming parser against its general path.

While a long child list streams, the parser extends the shown component and the topology instead of
redoing them (askgate/a2ui/stream_growth.py). With that path switched off, every chunk must give the
same parts; the inputs make the fast path apply (lists of 16 and more ids, cut anywhere) and also
break its conditions (children seen before or inside the list, repeated and self-referencing ids,
other child fields, v0.8 data paths, escapes).
"""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui import streaming
from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.stream_growth import appended_strings
from askgate.a2ui.streaming import StreamParser
from tests.support.a2ui_streams import chunked, cut_at, part_records
from tests.support.scale import examples

_CATALOGS = {v: A2uiCatalog.basic(v) for v in ("0.8", "0.9")}


def _records(catalog: A2uiCatalog, chunks: list[str]) -> list[Any]:
    return part_records(catalog, chunks)


@st.composite
def _streams(draw: st.DrawFn) -> tuple[str, list[str]]:
    version = draw(st.sampled_from(["0.8", "0.9"]))
    size = draw(st.integers(16, 45))
    pool = [f"c{i}" for i in range(size + 5)] + ["root", "child", "children", "a\\u0062"]
    kids = draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size))
    early = draw(st.lists(st.sampled_from(pool[:size]), max_size=3))  # children written before the root
    late = draw(st.lists(st.sampled_from(pool[:size]), max_size=4))
    extra = draw(st.sampled_from(["", "path", "child"]))

    def text(cid: str) -> dict[str, Any]:
        if version == "0.9":
            return {"id": cid, "component": "Text", "text": f"t {cid}"}
        return {"id": cid, "component": {"Text": {"text": {"literalString": f"t {cid}"}}}}

    if version == "0.9":
        root: dict[str, Any] = {"id": "root", "component": "Column", "children": kids}
        if extra == "child":
            root["child"] = kids[0]
        start = {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": _CATALOGS["0.9"].catalog_id}}
        body = [text(c) for c in early] + [root] + [text(c) for c in late]
        messages = [start, {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": body}}]
    else:
        props: dict[str, Any] = {"children": {"explicitList": kids}}
        if extra == "path":
            props["alignment"] = {"path": "a/b"}
        elif extra == "child":
            props["child"] = kids[0]
        root = {"id": "root", "component": {"Column": props}}
        body = [text(c) for c in early] + [root] + [text(c) for c in late]
        messages = [{"beginRendering": {"surfaceId": "s", "root": "root"}},
                    {"surfaceUpdate": {"surfaceId": "s", "components": body}}]
    whole = f"Here: <a2ui-json>{json.dumps(messages, indent=draw(st.sampled_from([None, 1])))}</a2ui-json> done"
    return version, cut_at(whole, draw(st.lists(st.integers(0, len(whole)), max_size=60)))


@settings(max_examples=examples(300), deadline=None)
@given(_streams())
def test_growth_path_gives_the_general_paths_parts(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    catalog = _CATALOGS[version]
    fast = _records(catalog, chunks)
    with mock.patch.object(streaming, "grow_component", lambda *a: None), \
            mock.patch.object(StreamParser, "_grown_refs", lambda *a: None):
        slow = _records(catalog, chunks)
    assert fast == slow


def test_growth_path_is_taken() -> None:
    """The benchmark-like stream (a long root list in small chunks) goes through the fast path."""
    catalog = _CATALOGS["0.8"]
    kids = [f"item_{i}" for i in range(1, 60)]
    messages = [{"beginRendering": {"surfaceId": "s", "root": "root"}},
                {"surfaceUpdate": {"surfaceId": "s", "components": [
                    {"id": "root", "component": {"Column": {"children": {"explicitList": kids}}}}]}}]
    text = f"<a2ui-json>{json.dumps(messages, indent=1)}</a2ui-json>"
    taken = []
    real = streaming.grow_component

    def spy(*args: Any) -> Any:
        result = real(*args)
        taken.append(result is not None)
        return result

    with mock.patch.object(streaming, "grow_component", spy):
        fast = _records(catalog, chunked(text, 40))
    assert sum(taken) >= 10
    with mock.patch.object(streaming, "grow_component", lambda *a: None):
        assert _records(catalog, chunked(text, 40)) == fast


def test_appended_strings() -> None:
    old = {"id": "r", "c": {"children": ["a", "b"], "n": 1}}
    assert appended_strings(old, {"id": "r", "c": {"children": ["a", "b", "c"], "n": 1}}) == (("c", "children"), 2)
    assert appended_strings(old, {"id": "r", "c": {"children": ["a", "b", "c"], "n": True}}) is None  # 1 vs true
    # The last id was cut: it may change as ids are appended.
    assert appended_strings(old, {"id": "r", "c": {"children": ["a", "bb", "c"], "n": 1}}) == (("c", "children"), 1)
    assert appended_strings(old, {"id": "r", "c": {"children": ["x", "b", "c"], "n": 1}}) is None
    assert appended_strings(old, {"id": "r", "c": {"children": ["a", "b", 3], "n": 1}}) is None
    assert appended_strings(old, old) is None  # nothing grew


_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)),
    max_leaves=10,
)


@settings(max_examples=examples(2000), deadline=None)
@given(_json_values, st.lists(st.sampled_from("abc"), max_size=4).map(tuple))
def test_list_at_and_with_list_follow_dicts_only(value: Any, path: tuple[str, ...]) -> None:
    """The path helpers against a plain walk: only dicts are entered, anything else is 'missing'; a copy
    with a new value at the path leaves the original alone and shares what is off the path."""
    from askgate.a2ui.stream_growth import list_at, with_list

    node, found = value, True
    for key in path:
        if type(node) is not dict or key not in node:
            found = False
            break
        node = node[key]
    assert list_at(value, path) is (node if found else None)
    if found and path:
        before = json.dumps(value)
        copy = with_list(value, path, ["new"])
        assert json.dumps(value) == before
        assert list_at(copy, path) == ["new"]
        assert {k: v for k, v in copy.items() if k != path[0]} == {k: v for k, v in value.items() if k != path[0]}
