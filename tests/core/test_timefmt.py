"""The cached timestamp texts (askgate/core/timefmt.py) are exactly what isoformat gives, in every zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.core import timefmt
from askgate.core.timefmt import iso_z, sql_utc
from tests.support.scale import examples

zones = st.one_of(st.just(UTC), st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-23 * 60, 23 * 60)))
aware = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=zones)


@settings(max_examples=examples(2000))
@given(aware)
def test_same_text_as_isoformat_also_when_asked_again(value: datetime) -> None:
    for _ in range(2):  # the second call answers from the table
        assert iso_z(value) == value.isoformat().replace("+00:00", "Z")
        assert sql_utc(value) == value.astimezone(UTC).isoformat(" ", "microseconds")[:-6]


def test_one_instant_in_two_zones_keeps_each_zones_text() -> None:
    utc = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    paris = utc.astimezone(timezone(timedelta(hours=1)))
    assert utc == paris and hash(utc) == hash(paris)  # why only tzinfo-is-UTC values are kept
    assert iso_z(utc) == "2026-11-30T12:00:00Z"
    assert iso_z(paris) == "2026-11-30T13:00:00+01:00"
    assert iso_z(utc) == "2026-11-30T12:00:00Z"
    assert sql_utc(paris) == sql_utc(utc) == "2026-11-30 12:00:00.000000"


def test_the_tables_stay_bounded_and_right_after_they_are_cleared() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(timefmt._MAX * 2 + 10):
        value = start + timedelta(microseconds=i)
        assert iso_z(value) == value.isoformat().replace("+00:00", "Z")
        assert sql_utc(value) == value.isoformat(" ", "microseconds")[:-6]
    assert len(timefmt._Z) <= timefmt._MAX and len(timefmt._SQL) <= timefmt._MAX
