"""Hand-compiled JSON Schema keyword checks shared by the AQP and ACS codecs.

A generic schema engine walks a schema for every document; these helpers are the same keywords
written out as plain ``isinstance`` tests, so a codec validates a request in one pass at a small
fraction of the cost (issue #2 asks for >= 20x). Their semantics are JSON Schema 2020-12's:
``bool`` is never a number, ``1.0`` is an integer, lengths count code points, ``enum``/``const``
compare strings exactly. Every helper appends :class:`Fault` objects and returns whether the value
passed, so a codec can report every fault and still know which parts are usable.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

from askgate.core.formats import check_format
from askgate.errors import AskgateError, Fault, pointer_join

MISSING: Any = object()
"""Sentinel for an absent member (``None`` is JSON ``null``, a present value)."""

MAX_SAFE_INTEGER = 2**53 - 1


def kind(value: Any) -> str:
    """The JSON type name of a decoded value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_integer(value: Any) -> bool:
    """JSON Schema ``integer``: a whole number, never a boolean (``1.0`` counts)."""
    t = type(value)
    return (t is int) or (t is float and value.is_integer()) or (isinstance(value, int) and t is not bool)


def is_number(value: Any) -> bool:
    """JSON Schema ``number``: int or float, never a boolean (non-finite floats are not JSON)."""
    t = type(value)
    if t is int:
        return True
    if t is float:
        return math.isfinite(value)
    return isinstance(value, (int, float)) and t is not bool


def string(
    faults: list[Fault],
    value: Any,
    pointer: str,
    label: str,
    lo: int = 0,
    hi: int | None = None,
    fmt: str | None = None,
) -> bool:
    """``type: string`` with optional ``minLength``/``maxLength`` (code points) and ``format``."""
    if type(value) is not str:
        faults.append(Fault(pointer, f"{label} must be a string, not {kind(value)}", "type"))
        return False
    ok = True
    n = len(value)
    if n < lo:
        if lo == 1:
            faults.append(Fault(pointer, f"{label} must not be empty", "minLength"))
        else:
            faults.append(
                Fault(pointer, f"{label} must be at least {lo} characters long (got {n})", "minLength")
            )
        ok = False
    if hi is not None and n > hi:
        faults.append(Fault(pointer, f"{label} must be at most {hi} characters long (got {n})", "maxLength"))
        ok = False
    if fmt is not None and not check_format(fmt, value):
        faults.append(Fault(pointer, f"{label} is not a valid {fmt}: {_clip(value)!r}", "format"))
        ok = False
    return ok


def enum(
    faults: list[Fault], value: Any, allowed: frozenset[str], order: tuple[str, ...], pointer: str, label: str
) -> bool:
    """A string ``enum`` (every enum in these seeds lists strings only)."""
    if type(value) is str and value in allowed:
        return True
    shown = _clip(value) if type(value) is str else kind(value)
    faults.append(Fault(pointer, f"{label} must be one of {', '.join(order)} (got {shown!r})", "enum"))
    return False


def unknown_members(
    faults: list[Fault], obj: dict, allowed: frozenset[str], pointer: str, label: str
) -> None:
    """``additionalProperties: false``."""
    for key in obj:
        if key not in allowed:
            faults.append(
                Fault(
                    pointer_join(pointer, key),
                    f'{label} does not allow member "{_clip(key)}"',
                    "additionalProperties",
                )
            )


def required(faults: list[Fault], obj: dict, names: tuple[str, ...], pointer: str, label: str) -> None:
    """``required``: the pointer names the missing member, so the fault says where it belongs."""
    for name in names:
        if name not in obj:
            faults.append(
                Fault(pointer_join(pointer, name), f'{label} is missing required member "{name}"', "required")
            )


def freeze(value: Any) -> Any:
    """A hashable key with JSON Schema equality (``1 == 1.0``, ``true != 1``) for ``uniqueItems``."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, list):
        return ("a", tuple(freeze(v) for v in value))
    if isinstance(value, dict):
        return ("o", frozenset((k, freeze(v)) for k, v in value.items()))
    return ("s", value) if isinstance(value, str) else ("x", repr(value))


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))\Z", re.ASCII
)
_from_iso = datetime.fromisoformat


def parse_date_time(value: str) -> datetime | None:
    """The aware datetime an RFC 3339 date-time names, or ``None`` when it is not one.

    The regex fixes the RFC 3339 shape; ``datetime.fromisoformat`` then refuses impossible days, hours
    above 23, minutes and seconds above 59 and year 0. Together: the same verdicts as
    ``check_format("date-time")`` (a property test holds them equal) in one cheap pass, so the codecs
    validate and convert at once. Fractions beyond microseconds are truncated.
    """
    m = _RFC3339.match(value)
    if m is None:
        return None
    oh = m.group(1)
    if oh is not None and (int(oh) > 23 or int(m.group(2)) > 59):
        return None
    try:
        return _from_iso(value if value[10] == "T" and value[-1] != "z" else value.upper())
    except ValueError:
        return None


def as_aware(now: datetime | str) -> datetime:
    """A caller's clock reading: an aware datetime, an RFC 3339 string, or a naive datetime taken as UTC."""
    if isinstance(now, str):
        moment = parse_date_time(now)
        if moment is None:
            raise AskgateError(
                "invalid option now",
                [Fault("", f"now is not an RFC 3339 date-time: {now!r}", "options.now")],
                code="invalid_options",
            )
        return moment
    if now.tzinfo is None:
        return now.replace(tzinfo=UTC)
    return now


def rfc3339(moment: datetime) -> str:
    """Render an aware datetime as RFC 3339 with an offset (``Z`` for UTC); naive means UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    text = moment.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def json_size_fits(value: Any, budget: int) -> bool | None:
    """``True`` when ``value``'s compact UTF-8 JSON is surely at most ``budget`` bytes.

    A cheap upper bound (6 bytes per character covers the worst escape) that lets a codec skip
    serialising small values; ``None`` means "not sure": serialise and measure exactly.
    """
    left = _bound(value, budget, 0)
    return None if left is None else True


def _bound(value: Any, left: int, depth: int) -> int | None:
    t = type(value)
    if t is str:
        left -= 6 * len(value) + 2
    elif value is None or t is bool:
        left -= 5
    elif t is int:
        if not -(10**15) < value < 10**15:
            return None
        left -= 17
    elif t is float:
        if not math.isfinite(value):
            return None
        left -= 24
    elif depth > 32:
        return None
    elif t is dict:
        left -= 2
        for key, item in value.items():
            if type(key) is not str:
                return None
            left -= 6 * len(key) + 3
            if left < 0 or (left := _bound(item, left, depth + 1)) is None:  # type: ignore[assignment]
                return None
    elif t is list:
        left -= 2
        for item in value:
            left -= 1
            if left < 0 or (left := _bound(item, left, depth + 1)) is None:  # type: ignore[assignment]
                return None
    else:
        return None
    return left if left >= 0 else None
