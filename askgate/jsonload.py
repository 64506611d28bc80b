"""Strict JSON decoding shared by every entry point that takes bytes or text.

``json.loads`` silently accepts ``NaN``/``Infinity``, turns ``1e400`` into ``inf`` and keeps the last of
duplicate keys. askgate refuses all three, so that what is validated is exactly what was sent.
"""

from __future__ import annotations

import json
import math
from typing import Any

from askgate.errors import AskgateError, Fault


class _Refused(ValueError):
    def __init__(self, message: str, rule: str) -> None:
        super().__init__(message)
        self.rule = rule


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not valid JSON", "json.non-finite")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"number {text} is out of range", "json.non-finite")
    return value


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)  # in C; a duplicate shows as a shorter dict, then found by the loop below
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    for key, _value in pairs:
        if key in seen:
            raise _Refused(f"duplicate key {key!r}", "json.duplicate-key")
        seen.add(key)
    raise AssertionError("unreachable: a shorter dict means a repeated key")


def loads_strict(data: bytes | bytearray | str) -> Any:
    """Decode JSON text, refusing duplicate keys, NaN/Infinity and overflowing numbers.

    Raises :class:`AskgateError` with code ``not_json`` for anything that is not one strict JSON value.
    """
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AskgateError(
                "input is not UTF-8", [Fault("", f"not UTF-8 at byte {exc.start}", "json.utf-8")], code="not_json"
            ) from None
    else:
        text = data
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_float, object_pairs_hook=_pairs)
    except _Refused as exc:
        raise AskgateError(f"input is not strict JSON: {exc}", [Fault("", str(exc), exc.rule)], code="not_json") from None
    except json.JSONDecodeError as exc:
        msg = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise AskgateError(f"input is not JSON: {msg}", [Fault("", msg, "json.syntax")], code="not_json") from None
    except RecursionError:
        raise AskgateError("input is nested too deeply", [Fault("", "nested too deeply", "json.depth")], code="not_json") from None
