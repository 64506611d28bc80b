"""askgate.core.audit.canonical takes orjson for the values it provably writes as RFC 8785 does: checked
differentially against the ``rfc8785`` package (the reference) over values built to hit every edge
(floats, integers at and beyond ±(2^53-1), keys beyond the BMP and just below it, control characters,
lone surrogates, tuples, str/int/dict subclasses, non-string keys, deep nesting)."""

from __future__ import annotations

import enum
import hashlib
from typing import Any

import pytest
import rfc8785
from hypothesis import example, given, settings
from hypothesis import strategies as st

from askgate.core import audit
from askgate.core.audit import _orjson_safe, canonical
from tests.support.scale import examples

SAFE = 2**53 - 1


def reference(value: Any) -> bytes | type[BaseException]:
    """What canonical() returned (or which error it raised) when it was rfc8785 alone."""
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, RecursionError, ValueError):
        return ValueError


def ours(value: Any) -> bytes | type[BaseException]:
    try:
        return canonical(value)
    except ValueError:
        return ValueError


class Colour(enum.StrEnum):
    RED = "red"


class MyInt(int):
    pass


# every code point class that matters: ASCII, controls, DEL, Latin-1, BMP up to U+FFFF (including the
# U+E000-U+FFFF block that sorts differently in UTF-16 against non-BMP keys), non-BMP, lone surrogates
chars = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x7F),
    st.characters(min_codepoint=0x80, max_codepoint=0x2FFF),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF),
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
)
text = st.text(chars, max_size=8)
ints = st.one_of(st.integers(-SAFE, SAFE), st.integers(-(2**70), 2**70),
                 st.sampled_from([SAFE, SAFE + 1, -SAFE, -SAFE - 1, 2**63, -(2**63), 2**64]))
floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1.0, 1e21, 1e-7, 5e-324, 2.0**53])
scalars = st.none() | st.booleans() | ints | floats | text
odd_scalars = st.sampled_from([Colour.RED, MyInt(3), b"bytes", object])
keys = text | st.sampled_from(["", "a", "\ue000", "\U00010000", "\uffff", "\U0001f600", "\x00", "\ud800"])
values = st.recursive(
    scalars | odd_scalars,
    lambda inner: (st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
                   | st.dictionaries(keys, inner, max_size=4)
                   | st.dictionaries(st.integers(0, 3) | st.none(), inner, min_size=1, max_size=2)),
    max_leaves=16,
)
plain = st.recursive(  # only what the fast path takes, so that it is exercised often
    st.none() | st.booleans() | st.integers(-SAFE, SAFE) | st.text(st.characters(max_codepoint=0xFFFF,
                                                                                  exclude_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=6), inner, max_size=5),
    max_leaves=24,
)


@settings(max_examples=examples(1000), deadline=None)
@given(values)
@example({"\ue000": 1, "\U00010000": 2})  # UTF-16 puts the non-BMP key first; code points put it last
@example({"a": [1.0, 1e21, 1e-7, -0.0]})
@example([SAFE, -SAFE])
@example([SAFE + 1])
@example({"s": "\x00\x08\t\n\x0b\x0c\r\x1f\x7f\u2028\u2029\"\\/"})
@example({"\ud800": 1})
@example("\udfff")
@example({1: 2})
@example((1, (2, [3])))
def test_canonical_equals_rfc8785(value: Any) -> None:
    assert ours(value) == reference(value)


@settings(max_examples=examples(600), deadline=None)
@given(plain)
def test_fast_path_values_are_taken_by_orjson_and_match(value: Any) -> None:
    assert _orjson_safe(value)
    assert canonical(value) == rfc8785.dumps(value)


def test_what_the_fast_path_refuses() -> None:
    for value in (1.5, [0.0], {"k": 2.0}, SAFE + 1, -SAFE - 1, {"\U0001f600": 1}, Colour.RED, MyInt(1),
                  {1: "x"}, [b"x"], {"a": {"b": [1, 2.5]}}):
        assert not _orjson_safe(value), value
    for value in (SAFE, -SAFE, "\U0001f600", {"\uffff": ["\U0001f600"]}, (1, "x"), None, True, {}):
        assert _orjson_safe(value), value


def test_deep_nesting_falls_back_to_the_reference() -> None:
    deep: Any = 1
    for _ in range(300):  # deeper than orjson's limit (255), shallower than Python's recursion limit
        deep = [deep]
    assert canonical(deep) == rfc8785.dumps(deep)
    deeper: Any = 1
    for _ in range(5000):
        deeper = [deeper]
    assert ours(deeper) == reference(deeper) == ValueError


def test_entry_hash_unchanged_by_the_fast_path(monkeypatch: Any) -> None:
    entry = {"entry_id": "e", "step_id": "s", "step_type": "t", "n": 3, "nested": {"b": [True, None], "a": "é"}}
    fast = audit.entry_hash(entry, None)
    monkeypatch.setattr(audit, "_orjson_safe", lambda _v: False)
    assert audit.entry_hash(entry, None) == fast


@settings(max_examples=examples(400), deadline=None)
@given(st.dictionaries(keys.filter(lambda k: k not in audit.RESERVED), values, max_size=4),
       st.sampled_from([None, "a" * 64, "0123456789abcdef" * 4]), st.sampled_from([None, "r", "\U0001f600"]))
def test_chain_entry_hash_equals_entry_hash(data: dict[str, Any], previous: str | None,
                                            request_hash: str | None) -> None:
    """chain_entry hashes plain entries itself: the result must equal entry_hash's (the verifier's)."""
    try:
        entry = audit.chain_entry(entry_id="e", step_id="s", step_type="t", timestamp="2026-01-01T00:00:00Z",
                                  data=data, previous_hash=previous, request_hash=request_hash)
    except ValueError:
        with pytest.raises(ValueError):  # refused exactly when the reference cannot hash it
            body = {"entry_id": "e", "step_id": "s", "step_type": "t", "timestamp": "2026-01-01T00:00:00Z",
                    **({"request_hash": request_hash} if request_hash else {}),
                    **{k: v for k, v in data.items() if v is not None}}
            rfc8785_or_value_error(body)
        return
    assert entry["entry_hash"] == audit.entry_hash(entry, previous)
    reference_body = {k: v for k, v in entry.items() if k not in audit.HASH_FIELDS}
    expected = reference(reference_body)
    assert expected is not ValueError
    assert entry["entry_hash"] == hashlib.sha256(expected + (bytes.fromhex(previous) if previous else b"")).hexdigest()


def rfc8785_or_value_error(value: Any) -> None:
    if reference(value) is ValueError:
        raise ValueError("not canonicalisable")
