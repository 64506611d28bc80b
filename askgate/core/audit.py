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
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Mapping

import rfc8785

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


def canonical(value: Any) -> bytes:
    """RFC 8785 JCS bytes of ``value`` (raises ValueError for non-I-JSON input)."""
    raise NotImplementedError


def entry_hash(entry: Mapping[str, Any], previous_hash: str | None) -> str:
    """SHA-256 hex over JCS(entry minus both hash fields) || raw bytes of ``previous_hash``."""
    raise NotImplementedError


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
    """One ContextEntry-shaped dict: the ids, the ``data`` members flattened in, and both hashes."""
    raise NotImplementedError


def verify_chain(entries: Iterable[Any], *, anchor: str | None = None) -> Verification:
    """Check every link and hash; name the first broken entry. ``anchor``: the expected previous hash of
    the first entry when verifying a chain segment (None: the first entry must have no previous hash)."""
    raise NotImplementedError
