"""Webhook signatures: round trip, tampering, staleness, replay and malformed headers."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.channels.signing import ReplayGuard, SignatureError, parse_header, sign, verify_signature
from tests.support.scale import examples

T0 = 1_800_000_000


def test_header_is_hmac_sha256_over_timestamp_dot_body() -> None:
    header = sign("s3cret", b'{"a":1}', timestamp=T0)
    expected = hmac.new(b"s3cret", f"{T0}.".encode() + b'{"a":1}', hashlib.sha256).hexdigest()
    assert header == f"t={T0},v1={expected}"
    assert verify_signature("s3cret", b'{"a":1}', header, now=T0 + 10) == T0


@settings(max_examples=examples(300), deadline=None)
@given(body=st.binary(max_size=512), secret=st.binary(min_size=1, max_size=64),
       skew=st.integers(-300, 300), flip=st.integers(0, 511))
def test_any_body_round_trips_and_any_change_is_caught(body: bytes, secret: bytes, skew: int, flip: int) -> None:
    header = sign(secret, body, timestamp=T0)
    assert verify_signature(secret, body, header, now=T0 + skew) == T0
    if body:
        i = flip % len(body)
        tampered = body[:i] + bytes([body[i] ^ 1]) + body[i + 1:]
        with pytest.raises(SignatureError) as info:
            verify_signature(secret, tampered, header, now=T0)
        assert info.value.reason == "mismatch"
    with pytest.raises(SignatureError):
        verify_signature(secret + b"x", body, header, now=T0)


def test_timestamp_is_covered_by_the_mac() -> None:
    header = sign("k", b"body", timestamp=T0)
    forged = header.replace(f"t={T0}", f"t={T0 + 100}")
    with pytest.raises(SignatureError) as info:
        verify_signature("k", b"body", forged, now=T0 + 100)
    assert info.value.reason == "mismatch"


@pytest.mark.parametrize("skew", [301, -301, 10_000])
def test_stale_timestamps_are_refused(skew: int) -> None:
    header = sign("k", b"b", timestamp=T0)
    with pytest.raises(SignatureError) as info:
        verify_signature("k", b"b", header, now=T0 + skew)
    assert info.value.reason == "stale"


def test_replay_inside_the_window_is_refused_with_a_guard() -> None:
    guard = ReplayGuard()
    header = sign("k", b"b", timestamp=T0)
    verify_signature("k", b"b", header, now=T0, replay_guard=guard)
    with pytest.raises(SignatureError) as info:
        verify_signature("k", b"b", header, now=T0 + 1, replay_guard=guard)
    assert info.value.reason == "replayed"
    verify_signature("k", b"b", sign("k", b"b", timestamp=T0 + 1), now=T0 + 1, replay_guard=guard)


def test_rotated_secrets() -> None:
    header = sign("old", b"b", timestamp=T0)
    assert verify_signature(["new", "old"], b"b", header, now=T0) == T0
    two = f"{header},v1={sign('new', b'b', timestamp=T0).split('v1=')[1]}"
    assert verify_signature("new", b"b", two, now=T0) == T0


@pytest.mark.parametrize("header", [None, "", "garbage", "t=1", "v1=" + "a" * 64, "t=x,v1=" + "a" * 64,
                                    "t=1,v1=ABC", "t=1,t=2,v1=" + "a" * 64, "t=-1,v1=" + "a" * 64])
def test_malformed_headers(header: str | None) -> None:
    with pytest.raises(SignatureError) as info:
        verify_signature("k", b"b", header, now=1)
    assert info.value.reason in ("missing", "malformed")


def test_parse_ignores_unknown_schemes() -> None:
    assert parse_header(f"t=5,v0=zz,v1={'b' * 64}") == (5, ["b" * 64])
