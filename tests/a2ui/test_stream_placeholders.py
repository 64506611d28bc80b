"""The placeholder-list shortcut against the general path (``StreamParser._fast_scan = False``).

When children arrive, their placeholders are patched out of the holder's list (``_apply_patches``); when
a long child list grows, the new children's placeholders are appended to it (``grow_component``). The new
list is then the old one with some positions deleted plus some ids at its end (``_ph_derived``): what
was established for all ids of the old list (their components made, all shown to the surface, all valid
for it) is only found out for the appended ids. Likewise the ids already sent to a surface: its reachable set only grows
in place, so only the ids the topology added since (``Topology.grown``) are looked up.

Checked here: the parts returned after every chunk equal the general path's, on the benchmark streams,
random re-chunkings, and generated streams whose children arrive in any order, on several surfaces,
some deleted; and the facts the shortcuts rely on hold after every chunk.
"""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.streaming import StreamParser
from tests.a2ui.test_stream_scan import _assert_same
from tests.support.a2ui_streams import chunked, cut_at, llm_response, random_chunks
from tests.support.scale import examples

_CATALOGS = {v: A2uiCatalog.basic(v) for v in ("0.8", "0.9")}


def _check_facts(parser: StreamParser) -> None:
    """What the shortcut takes for granted, checked against the parser's sets."""
    derived = parser._ph_derived
    if derived is not None:
        new, old, added, removed = derived
        assert set(new) <= set(old) | set(added)
        assert new[len(new) - len(added) :] == added
        # Exactly the old list with those positions deleted in turn, then the added ids.
        rebuilt = list(old)
        for at in removed:
            del rebuilt[at]
        assert new == rebuilt + added
    synced = parser._ph_synced
    if synced is not None:
        assert set(synced[1]) <= parser._ph_shown.get(synced[0], set())
    valid = parser._ph_valid
    if valid is not None:
        assert set(valid[1]) <= parser._ph_ok.get(valid[0], set())
    if parser._extras_seen is not None:
        assert set(parser._extras_seen) <= set(parser._ph_comp)
    for sid, ok in parser._ph_ok.items():
        assert ok.isdisjoint(parser._ph_bad.get(sid, set()))
    # The yielded-ids shortcut: a covered reach is all yielded, plus what the topology grew it by since.
    covered = parser._covered
    if covered is not None and covered[1] is parser._topo.reach and covered[3] is parser._topo.grown:
        assert covered[1] <= covered[0] | set(covered[3][covered[4] :])


def _feed_checked(catalog: A2uiCatalog, chunks: list[str], strict: bool = False) -> int:
    """Feed with the shortcut on, checking its facts after every chunk; how often it applied.

    ``strict``: the input is valid, so an error fails the test (else the parser starts over)."""
    parser = StreamParser(catalog)
    used = 0
    for chunk in chunks:
        try:
            parser.process_chunk(chunk)
        except ValueError:
            if strict:
                raise
            parser = StreamParser(catalog)
            continue
        _check_facts(parser)
        derived = parser._ph_derived
        if derived is not None and derived[0] is parser._extras_seen and derived[0] is not derived[1]:
            used += 1
    return used


def test_shortcut_matches_the_general_path_on_benchmark_streams() -> None:
    rng = random.Random(7)
    for version, catalog in _CATALOGS.items():
        for n in (20, 100):
            text = llm_response(n, version, catalog.catalog_id)
            for chunks in (chunked(text, 40), random_chunks(text, rng, 30)):
                _assert_same(catalog, chunks, f"v{version} N={n}")
                _feed_checked(catalog, chunks, strict=True)


def test_shortcut_is_taken_on_the_benchmark_stream() -> None:
    """The root's list grown, then its children patched out: the benchmark's path (else the comparisons
    above check nothing)."""
    for version, catalog in _CATALOGS.items():
        text = llm_response(30, version, catalog.catalog_id)
        assert _feed_checked(catalog, chunked(text, 40), strict=True) >= 20


@st.composite
def _child_streams(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Surfaces whose children (shared ids, ids looking like placeholders, some invalid: a surface's
    placeholders are then not all checked) arrive in any order, cut anywhere."""
    version = draw(st.sampled_from(["0.8", "0.9"]))
    ids = st.sampled_from(["a", "b", "c", "d", "loading_a", "e"])
    messages: list[Any] = []
    for sid in draw(st.lists(st.sampled_from(["s", "t"]), min_size=1, max_size=3)):
        kids = draw(st.lists(ids, min_size=1, max_size=6))
        if version == "0.9":
            root = {"id": "root", "component": "Column", "children": kids}
            words = st.sampled_from(["x", "yy", 5])  # 5: an invalid text
            texts = [{"id": k, "component": "Text", "text": draw(words)} for k in kids]
            start = {"version": "v0.9", "createSurface": {"surfaceId": sid, "catalogId": "c"}}
            batches = draw(st.permutations([root, *texts]))
            updates = [
                {"version": "v0.9", "updateComponents": {"surfaceId": sid, "root": "root", "components": [c]}}
                for c in batches
            ]
            if draw(st.booleans()):
                updates = [{"version": "v0.9", "updateComponents": {
                    "surfaceId": sid, "root": "root", "components": list(batches)}}]
            end = [{"version": "v0.9", "deleteSurface": {"surfaceId": sid}}] if draw(st.booleans()) else []
        else:
            root = {"id": "root", "component": {"Column": {"children": {"explicitList": kids}}}}
            texts = [
                {"id": k, "component": {"Text": {"text": draw(st.sampled_from([{"literalString": k}, 5]))}}}
                for k in kids
            ]
            start = {"beginRendering": {"surfaceId": sid, "root": "root"}}
            batches = draw(st.permutations([root, *texts]))
            updates = [{"surfaceUpdate": {"surfaceId": sid, "components": [c]}} for c in batches]
            if draw(st.booleans()):
                updates = [{"surfaceUpdate": {"surfaceId": sid, "components": list(batches)}}]
            end = [{"deleteSurface": {"surfaceId": sid}}] if draw(st.booleans()) else []
        messages += [start, *updates, *end] if draw(st.booleans()) else [*updates, start, *end]
    body = json.dumps(messages, indent=draw(st.sampled_from([None, 1])))
    whole = f"Hi <a2ui-json>{body}</a2ui-json> bye"
    return version, cut_at(whole, draw(st.lists(st.integers(0, len(whole)), max_size=60)))


@settings(max_examples=examples(300), deadline=None)
@given(_child_streams())
def test_shortcut_matches_the_general_path_on_child_streams(stream: tuple[str, list[str]]) -> None:
    version, chunks = stream
    _assert_same(_CATALOGS[version], chunks)
    _feed_checked(_CATALOGS[version], chunks)
