"""Webhook signatures: ``Askgate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>``.

askgate signs every request it POSTs to a service respondent; the service verifies with
:func:`verify_signature`. The timestamp is inside the MAC, so it cannot be changed without the secret;
the receiver refuses a timestamp outside the replay window (300 s either way by default) and, given a
:class:`ReplayGuard`, also refuses the same signature seen twice inside the window. Comparison is in
constant time. Several ``v1=`` values may be present (secret rotation: one per active secret).
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Iterable

HEADER = "Askgate-Signature"
DEFAULT_TOLERANCE = 300


class SignatureError(ValueError):
    """The signature header is missing, malformed, stale, replayed or does not match. ``reason`` is
    one of ``missing``, ``malformed``, ``stale``, ``mismatch``, ``replayed``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _key(secret: str | bytes) -> bytes:
    return secret.encode() if isinstance(secret, str) else secret


def compute(secret: str | bytes, timestamp: int, body: bytes) -> str:
    """The hex HMAC-SHA256 over ``f"{timestamp}.".encode() + body``."""
    return hmac.new(_key(secret), str(int(timestamp)).encode() + b"." + body, hashlib.sha256).hexdigest()


def sign(secret: str | bytes, body: bytes, *, timestamp: int | None = None) -> str:
    """The ``Askgate-Signature`` header value for ``body`` (now, unless ``timestamp`` is given)."""
    t = int(time.time()) if timestamp is None else int(timestamp)
    return f"t={t},v1={compute(secret, t, body)}"


def parse_header(header: str) -> tuple[int, list[str]]:
    """``t=..,v1=..[,v1=..]`` -> (timestamp, signatures). Unknown schemes are ignored."""
    t: int | None = None
    sigs: list[str] = []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            raise SignatureError("malformed", "signature header parts must be key=value")
        if key == "t":
            if t is not None or not value.isascii() or not value.isdigit() or len(value) > 12:
                raise SignatureError("malformed", "t must be one unix timestamp in seconds")
            t = int(value)
        elif key == "v1":
            if len(value) != 64 or not all(c in "0123456789abcdef" for c in value):
                raise SignatureError("malformed", "v1 must be 64 lowercase hex digits")
            sigs.append(value)
    if t is None or not sigs:
        raise SignatureError("malformed", "the signature header needs t= and at least one v1=")
    return t, sigs


class ReplayGuard:
    """Remembers signatures seen within the window, so a captured request cannot be replayed even
    while its timestamp is still fresh. Thread-safe; memory is bounded by the window."""

    def __init__(self, tolerance: int = DEFAULT_TOLERANCE) -> None:
        self.tolerance = tolerance
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def check_and_remember(self, signature: str, timestamp: int, now: float) -> bool:
        """True when ``signature`` is new (and is now remembered); False when it was seen before."""
        with self._lock:
            if len(self._seen) > 1024:
                horizon = now - 2 * self.tolerance
                self._seen = {s: t for s, t in self._seen.items() if t >= horizon}
            if signature in self._seen:
                return False
            self._seen[signature] = timestamp
            return True


def verify_signature(secret: str | bytes | Iterable[str | bytes], body: bytes, header: str | None, *,
                     now: float | None = None, tolerance: int = DEFAULT_TOLERANCE,
                     replay_guard: ReplayGuard | None = None) -> int:
    """Check an ``Askgate-Signature`` header for ``body`` (the raw bytes received); return its timestamp.

    ``secret`` may be several secrets (rotation): any match counts. Raises :class:`SignatureError`.
    """
    if not header:
        raise SignatureError("missing", f"the {HEADER} header is missing")
    t, sigs = parse_header(header)
    current = time.time() if now is None else now
    if abs(current - t) > tolerance:
        raise SignatureError("stale", f"the signature timestamp is outside the {tolerance} s window")
    secrets = [secret] if isinstance(secret, (str, bytes)) else list(secret)
    expected = [compute(s, t, body) for s in secrets]
    match = next((sig for sig in sigs for e in expected if hmac.compare_digest(sig, e)), None)
    if match is None:
        raise SignatureError("mismatch", "the signature does not match the body")
    if replay_guard is not None and not replay_guard.check_and_remember(match, t, current):
        raise SignatureError("replayed", "this signed request was already received")
    return t


__all__ = ["DEFAULT_TOLERANCE", "HEADER", "ReplayGuard", "SignatureError", "compute", "parse_header", "sign",
           "verify_signature"]
