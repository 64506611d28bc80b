"""The healing scanner's fast path (no backslash in the new text) against its general token loop.

``HealScan.advance`` splits backslash-free text at quotes instead of walking it token by token; both
must leave the same state after every growth step, and heal to the same text.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui.stream_heal import HealScan, _key_before_colon, heal_fragment
from tests.support.scale import examples

_ALPHABET = st.sampled_from(list('{}[]"\\:, abn') + ['"text": "', '"id": "', '\\"', "\\\\", "\n  "])
_texts = st.lists(_ALPHABET, max_size=60).map("".join)


def _state(scan: HealScan) -> tuple[object, ...]:
    return (scan.scanned, list(scan.openers), scan.in_string, scan.last_open, scan.skip)


@settings(max_examples=examples(1500), deadline=None)
@given(_texts, st.lists(st.integers(0, 60), max_size=8))
def test_fast_scan_matches_token_scan(text: str, cuts: list[int]) -> None:
    fast, slow = HealScan(), HealScan()
    for end in [*sorted(c for c in cuts if c <= len(text)), len(text)]:
        fragment = text[:end]
        fast.advance(fragment)
        slow._advance_tokens(fragment)
        assert _state(fast) == _state(slow), fragment
        fresh = HealScan()
        fresh._advance_tokens(fragment)
        assert _state(fast) == _state(fresh), fragment
        # Healing with the incrementally scanned state equals healing from scratch.
        assert heal_fragment(fragment, _copy(fast)) == heal_fragment(fragment), fragment


def test_fast_scan_tracks_strings_and_brackets() -> None:
    scan = HealScan()
    scan.advance('{"a": ["x", {"b": "c')
    assert (scan.openers, scan.in_string, scan.last_open) == (["{", "[", "{"], True, 18)
    scan.advance('{"a": ["x", {"b": "c"}], "d": "e"')
    assert (scan.openers, scan.in_string, scan.last_open) == (["{"], False, 30)
    assert heal_fragment('{"a": ["x", {"b": "c"}], "text": "e') == '{"a": ["x", {"b": "c"}], "text": "e"}'


def _copy(scan: HealScan) -> HealScan:
    out = HealScan()
    out.scanned, out.openers, out.in_string, out.last_open, out.skip = _state(scan)  # type: ignore[assignment]
    return out


_KEY_BEFORE_COLON = re.compile(r'"([^"]+)"\s*:\s*$')  # the scan the look-back replaces


@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(st.sampled_from(list('"ab:, \t\n\u00a0{\\') + ['"k"', '": ', '"text"']), max_size=20).map("".join))
def test_key_before_colon_is_what_the_regex_finds(text: str) -> None:
    prefix = (text + ":").rstrip()
    if not prefix.endswith(":"):
        return
    keys = _KEY_BEFORE_COLON.findall(prefix)
    assert _key_before_colon(prefix) == (keys[0] if keys else None)
