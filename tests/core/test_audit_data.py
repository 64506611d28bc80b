"""askgate/core/audit_data.py: ijson's exact-type shortcuts give what the general rules give."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from enum import StrEnum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from askgate.core.audit_data import ijson
from askgate.core.model import Respondent
from askgate.core.record import iso
from tests.support.scale import examples

_MAX = 2**53 - 1


class Colour(StrEnum):
    RED = "red"


def rules(value: Any) -> Any:
    """The documented rules, written plainly (no shortcuts): the oracle."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return rules(value.model_dump(mode="json", exclude_none=True))
    if isinstance(value, SecretStr):
        raise ValueError("credential")
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -_MAX <= value <= _MAX else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): rules(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [rules(v) for v in value]
    return str(value)


LEAVES = (st.none() | st.booleans() | st.integers() | st.integers(min_value=2**53 - 3, max_value=2**64)
          | st.floats() | st.text(max_size=4) | st.sampled_from([Colour.RED])
          | st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=2))]))
          | st.builds(Respondent, kind=st.sampled_from(["human", "agent"]), id=st.text(min_size=1, max_size=4)))
KEYS = st.text(max_size=3) | st.sampled_from([Colour.RED]) | st.integers(0, 3)
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                      | st.dictionaries(KEYS, inner, max_size=3), max_leaves=10)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)


@settings(max_examples=examples(500))
@given(VALUES)
def test_ijson_follows_the_rules(value: Any) -> None:
    assert same(ijson(value), rules(value))


def test_a_credential_anywhere_is_refused() -> None:
    for value in (SecretStr("x"), {"a": [SecretStr("x")]}, ({"b": SecretStr("x")},)):
        with pytest.raises(ValueError):
            ijson(value)
