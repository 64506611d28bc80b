"""askgate's hash-chained audit log, built exactly as ACS ContextEntries are (protocols.md §4.6).

``entry_hash`` = lowercase hex SHA-256( RFC 8785 JCS of the entry without ``entry_hash`` and
``previous_hash``  ||  the raw 32 bytes of ``previous_hash`` (nothing for the first entry) ). One
construction for every dialect, so one verifier (``askgate audit verify``) checks any chain; chains exist
per ask and per session (the broker appends each :class:`~askgate.core.lifecycle.AuditEvent` to both).

Absent optional members are omitted, never written as ``null``. Credentials never enter an entry: the
lifecycle records only that one was present, and :func:`chain_entry` refuses a value that is a
``SecretStr``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson
import rfc8785
from pydantic import SecretBytes, SecretStr

from askgate.core.timefmt import iso_z

if TYPE_CHECKING:
    from .lifecycle import AuditEvent

HASH_RE = re.compile(r"^[0-9a-f]{64}$")
HASH_FIELDS = ("entry_hash", "previous_hash")
RESERVED = ("entry_id", "step_id", "step_type", "timestamp", "request_hash", "previous_hash", "entry_hash")


@dataclass(frozen=True)
class Verification:
    """The result of checking a chain: ``first_bad`` is the 0-based index of the first broken entry."""

    ok: bool
    first_bad: int | None = None
    reason: str | None = None
    head: str | None = None  # the last entry_hash when ok


_INT_MAX = 2**53 - 1  # RFC 8785 / I-JSON: integers beyond this are refused (as the rfc8785 package does)
_NON_BMP = "\U00010000"


def _orjson_safe(value: Any) -> bool:
    """Whether orjson with sorted keys writes exactly the RFC 8785 bytes of ``value``.

    True only for exact ``str``/``bool``/``None``, ``int`` within ±(2^53-1), and ``dict`` (string keys
    without characters beyond the BMP, where UTF-16 order equals the code-point order orjson sorts by)
    / ``list`` / ``tuple`` of such values. Those serialise identically in both: no whitespace, ``"``, ``\\``
    and controls below U+0020 escaped (``\\b \\t \\n \\f \\r``, else ``\\u00xx``), everything else raw
    UTF-8. Floats (ECMAScript number formatting), subclasses and anything else go to ``rfc8785``.
    """
    t = type(value)
    if t is str or t is bool or value is None:
        return True
    if t is int:
        return -_INT_MAX <= value <= _INT_MAX
    if t is dict:
        for k, v in value.items():
            if type(k) is not str or (not k.isascii() and max(k) >= _NON_BMP):
                return False
            if type(v) is not str and not _orjson_safe(v):  # (a str leaf is safe: skip the call)
                return False
        return True
    if t is list or t is tuple:
        for v in value:
            if type(v) is not str and not _orjson_safe(v):
                return False
        return True
    return False


def canonical(value: Any) -> bytes:
    """RFC 8785 JCS bytes of ``value`` (raises ValueError for non-I-JSON input).

    The audit chain hashes every entry, and the pure-Python ``rfc8785`` package cost more than a tenth
    of the broker's CPU per request; values orjson provably writes identically (:func:`_orjson_safe`;
    tests/core/test_audit_jcs_fast.py checks it against ``rfc8785`` differentially) take orjson, the rest
    (floats, and whatever orjson refuses, such as lone surrogates) still goes through ``rfc8785``."""
    try:
        if _orjson_safe(value):
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, RecursionError):
        pass  # the reference implementation decides (and words the error)
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise ValueError(f"not canonicalisable as RFC 8785 JSON: {exc}") from exc
    except (TypeError, RecursionError) as exc:
        raise ValueError(f"not JSON data: {exc}") from exc


def _raw(previous_hash: str | None) -> bytes:
    if previous_hash is None:
        return b""
    if not isinstance(previous_hash, str) or not HASH_RE.match(previous_hash):
        raise ValueError("previous_hash must be 64 lowercase hex digits")
    return bytes.fromhex(previous_hash)


def entry_hash(entry: Mapping[str, Any], previous_hash: str | None) -> str:
    """SHA-256 hex over JCS(entry minus both hash fields) || raw bytes of ``previous_hash``."""
    body = {k: v for k, v in entry.items() if k not in HASH_FIELDS}
    return hashlib.sha256(canonical(body) + _raw(previous_hash)).hexdigest()


def _timestamp(value: datetime | str) -> str:
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        raise ValueError("audit timestamps must be timezone-aware")
    return iso_z(value)


def _check_no_secrets(value: Any, where: str) -> None:
    if isinstance(value, SecretStr | SecretBytes):
        raise ValueError(f"a credential ({where}) must never enter the audit chain")
    if isinstance(value, Mapping):
        for k, v in value.items():
            _check_no_secrets(v, f"{where}/{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _check_no_secrets(v, f"{where}/{i}")


def chain_entry(
    *,
    entry_id: str,
    step_id: str,
    step_type: str,
    timestamp: datetime | str | None,
    data: Mapping[str, Any] | None = None,
    previous_hash: str | None,
    request_hash: str | None = None,
) -> dict[str, Any]:
    """One ContextEntry-shaped dict: the ids, the ``data`` members flattened in, and both hashes.

    ``data`` keys may not reuse the ContextEntry member names; ``None`` values in ``data`` are dropped
    (absent optional members are omitted, not written as null).
    """
    entry: dict[str, Any] = {"entry_id": entry_id, "step_id": step_id, "step_type": step_type}
    if timestamp is not None:
        entry["timestamp"] = _timestamp(timestamp)
    if request_hash is not None:
        entry["request_hash"] = request_hash
    # plain: every member is an exact str, every key a BMP-only str, every data value _orjson_safe, so
    # canonical(entry) would take orjson; hashing it here saves a copy of the entry and a second walk
    plain = all(type(v) is str for v in entry.values())
    for key, value in (data or {}).items():
        if key in RESERVED:
            raise ValueError(f"audit data may not set the ContextEntry member {key!r}")
        if value is not None:
            if _orjson_safe(value):  # plain JSON types only (exact types): no SecretStr can hide in it
                plain = plain and type(key) is str and (key.isascii() or max(key) < _NON_BMP)
            else:
                plain = False
                _check_no_secrets(value, key)
            entry[key] = value
    raw_previous = _raw(previous_hash)
    digest = None
    if plain:  # the entry has neither hash member yet: it is exactly what entry_hash would hash
        try:
            digest = hashlib.sha256(orjson.dumps(entry, option=orjson.OPT_SORT_KEYS) + raw_previous).hexdigest()
        except orjson.JSONEncodeError:
            pass  # e.g. a lone surrogate: entry_hash below decides, as it always did
    if previous_hash is not None:
        entry["previous_hash"] = previous_hash
    entry["entry_hash"] = digest if digest is not None else entry_hash(entry, previous_hash)
    return entry


def verify_chain(entries: Iterable[Any], *, anchor: str | None = None) -> Verification:
    """Check every link and hash; name the first broken entry. ``anchor``: the expected previous hash of
    the first entry when verifying a chain segment (None: the first entry must have no previous hash)."""
    expected_prev = anchor
    head: str | None = None
    for i, entry in enumerate(entries):
        bad = _check_entry(entry, expected_prev, first=(i == 0))
        if bad is not None:
            return Verification(ok=False, first_bad=i, reason=bad)
        head = entry["entry_hash"]
        expected_prev = head
    return Verification(ok=True, head=head)


def _check_entry(entry: Any, expected_prev: str | None, *, first: bool) -> str | None:
    """Why ``entry`` breaks the chain, or None when it is sound."""
    if not isinstance(entry, Mapping):
        return f"entry is a {type(entry).__name__}, not an object"
    for key in ("entry_id", "step_id", "step_type"):
        if not isinstance(entry.get(key), str):
            return f"required member {key!r} is missing or not a string"
    stated = entry.get("entry_hash")
    if not isinstance(stated, str) or not HASH_RE.match(stated):
        return "entry_hash is missing or not 64 lowercase hex digits"
    prev = entry.get("previous_hash")
    if prev is not None and (not isinstance(prev, str) or not HASH_RE.match(prev)):
        return "previous_hash is not 64 lowercase hex digits"
    if expected_prev is None:
        if prev is not None:
            return "the first entry has a previous_hash but no anchor was given"
    elif prev is None:
        return "previous_hash is missing" if not first else "previous_hash does not match the anchor"
    elif prev != expected_prev:
        return (
            "previous_hash does not match the previous entry's entry_hash"
            if not first
            else "previous_hash does not match the anchor"
        )
    try:
        actual = entry_hash(entry, prev)
    except ValueError as exc:
        return f"entry cannot be canonicalised: {exc}"
    if actual != stated:
        return f"entry_hash mismatch: content hashes to {actual}"
    return None


def entries_for(events: Iterable[AuditEvent], *, previous_hash: str | None) -> list[dict[str, Any]]:
    """Chain a transition's audit events onto a chain whose head is ``previous_hash``.

    Use it once per chain: the ask's own chain and, when ``event.session_id`` is set, the session's.
    Default ids: ``step_id`` is the ask id, ``entry_id`` is ``<ask id>/v<version>/<n>`` (n counts the
    events of one transition), so ids are unique across every chain an ask's events enter.
    """
    out: list[dict[str, Any]] = []
    head = previous_hash
    for n, event in enumerate(events):
        entry = chain_entry(
            entry_id=event.entry_id or f"{event.ask_id}/v{event.version}/{n}",
            step_id=event.step_id or event.ask_id,
            step_type=event.step_type,
            timestamp=event.at,
            request_hash=event.request_hash,
            data={"ask_id": event.ask_id, "ask_version": event.version, **event.data},
            previous_hash=head,
        )
        out.append(entry)
        head = entry["entry_hash"]
    return out
