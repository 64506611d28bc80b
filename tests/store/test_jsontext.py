"""askgate/store/jsontext.py against the standard encoder it replaces on the hot path: the same JSON data
(byte for byte where no float is involved), and an error wherever the standard encoder raised one."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sqlalchemy.dialects.sqlite import DATETIME
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite

from askgate.store.jsontext import dumps_bytes, dumps_text
from askgate.store.sqlite_fast import dt_in, dt_out
from tests.support.scale import examples


def standard(value: Any) -> str | type[BaseException]:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return TypeError


def ours(value: Any) -> str | type[BaseException]:
    try:
        text = dumps_text(value)
    except (TypeError, ValueError):
        return TypeError
    try:
        expected = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the old ``.encode("utf-8")`` of the text raised too
        try:
            dumps_bytes(value)
        except UnicodeEncodeError:
            return text
        raise AssertionError("dumps_bytes encoded a lone surrogate") from None
    assert dumps_bytes(value) == expected
    return text


class Kind(enum.StrEnum):
    A = "a"


class Level(enum.IntEnum):
    ONE = 1


@dataclasses.dataclass
class Point:
    x: int


def has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_float(v) for v in value)
    return False


scalars = (st.none() | st.booleans() | st.integers() | st.integers(-(2**80), 2**80)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text()
           | st.sampled_from([Kind.A, Level.ONE, datetime(2026, 1, 1, tzinfo=UTC), Point(1), b"x"]))
keys = st.text(max_size=6) | st.integers(-5, 5) | st.booleans() | st.none()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
                      | st.dictionaries(keys, inner, max_size=4), max_leaves=16)


@settings(max_examples=examples(1500), deadline=None)
@given(values)
@example({"a": [1, 2**64, -(2**63)]})
@example({1: "int key", None: "null key", True: "bool key"})
@example({"t": datetime(2026, 1, 1, tzinfo=UTC)})
@example([Point(2)])
@example({"s": "\x00\x1f\x7f\u2028\ud800\U0001f600\"\\/"})
@example([1e16, 1e-5, 0.1, -0.0, 5e-324, 1.7976931348623157e308, 123456789.0])
def test_same_json_as_the_standard_encoder(value: Any) -> None:
    a, b = ours(value), standard(value)
    if a is TypeError or b is TypeError:
        assert a == b
    elif has_float(value):
        assert json.loads(a) == json.loads(b)  # float spelling may differ, the numbers may not
    else:
        assert a == b


@settings(max_examples=examples(800), deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_reads_back_exactly(x: float) -> None:
    back = json.loads(dumps_text([x]))[0]
    assert back == x and math.copysign(1, back) == math.copysign(1, x)


@settings(max_examples=examples(300))
@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))])))
def test_sqlite_datetimes_are_written_as_sqlalchemy_writes_them(value: datetime) -> None:
    """The raw SQLite path writes the text SQLAlchemy's Core path writes for the same (naive UTC) value."""
    core = DATETIME().bind_processor(SQLiteDialect_pysqlite())
    assert core is not None
    assert dt_out(value) == core(value.astimezone(UTC).replace(tzinfo=None))
    assert dt_in(dt_out(value)) == value
