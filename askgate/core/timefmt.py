"""Timestamps as text, each instant formatted once.

One ask created and answered formats its few instants (created, updated, the answer's time) about
fifteen times: into the record's JSON, the audit entries, the SQL columns and the view. ``isoformat``
builds its text with ``PyUnicode_FromFormat``, ~11,000 machine instructions a call, about 5% of the
broker's CPU per ask. These keep the text of recent UTC instants. The key is the datetime's value; only
datetimes whose tzinfo *is* ``UTC`` are kept, since equal instants in other zones compare equal yet print
differently. The tables are cleared when full: recent instants are the ones asked for again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

_MAX = 4096
_Z: dict[datetime, str] = {}
_SQL: dict[datetime, str] = {}


def _rfc3339(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _sql(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(" ", "microseconds")[:-6]


def _kept(table: dict[datetime, str], value: datetime, make: Callable[[datetime], str]) -> str:
    """``make(value)``, from ``table`` when ``value`` is a UTC datetime made before (see the module doc)."""
    if value.tzinfo is not UTC:
        return make(value)
    text = table.get(value)
    if text is None:
        if len(table) >= _MAX:
            table.clear()
        text = table[value] = make(value)
    return text


def iso_z(value: datetime) -> str:
    """RFC 3339 with ``Z`` for UTC (``2026-11-30T19:00:00.123456Z``); other offsets as ``isoformat``."""
    return _kept(_Z, value, _rfc3339)


def sql_utc(value: datetime) -> str:
    """An aware datetime as SQLAlchemy's SQLite DATETIME text: naive UTC, a space, six fraction digits."""
    return _kept(_SQL, value, _sql)
