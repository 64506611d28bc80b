"""The decode-once memos on the record path give exactly what decoding and rebuilding would.

askgate/store/record_memo.py (record text -> dict), askgate/broker/records.py (written dict -> the
AskRecord it was made from) and askgate/core/record.py (Ask -> its JSON): each skips work only where the
skipped work would have returned an equal value.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.broker import records
from askgate.core.lifecycle import AskRecord
from askgate.core.record import _ask_json, _dump_ask
from askgate.store import record_memo
from askgate.store.jsontext import dumps_text
from tests.core.lifecycle_support import ALICE, aqp_ask, opened
from tests.support.scale import examples

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=8)


@settings(max_examples=examples(200))
@given(st.dictionaries(st.text(max_size=4), JSON, max_size=4))
def test_decode_is_json_loads(doc: dict) -> None:
    text = dumps_text(doc)
    assert record_memo.decode(text) == json.loads(text)
    assert record_memo.decode(text) == json.loads(text)  # the second time from the memo


def test_a_remembered_doc_is_returned_for_its_text_only() -> None:
    doc = {"id": "a", "n": 1}
    record_memo.remember(dumps_text(doc), doc)
    assert record_memo.decode(dumps_text(doc)) is doc
    assert record_memo.decode(dumps_text({"id": "a", "n": 2})) == {"id": "a", "n": 2}


def test_the_memo_is_bounded() -> None:
    for i in range(record_memo.MAX_ENTRIES + 50):
        record_memo.decode(json.dumps({"i": i}))
    assert len(record_memo._memo) <= record_memo.MAX_ENTRIES


def test_a_written_record_comes_back_as_itself_and_equal_to_a_rebuilt_one() -> None:
    rec = opened(aqp_ask(), ALICE).record
    row = records.to_row(rec)
    assert records.from_row(row) is rec
    rebuilt = AskRecord.from_json(json.loads(dumps_text(row.record)))
    assert rebuilt == rec
    copy = type(row)(**{**row.__dict__, "record": json.loads(dumps_text(row.record))})  # not the written dict
    assert records.from_row(copy) == rec and records.from_row(copy) is not rec


def test_a_record_holding_a_credential_is_always_rebuilt() -> None:
    """Its JSON leaves the credential out, so what a read gives back must not have it either."""
    rec = opened(aqp_ask(authorization="Bearer tok-SECRET", endpoint="https://example.test/x"), ALICE).record
    row = records.to_row(rec)
    back = records.from_row(row)
    assert back is not rec and back.ask.delivery.authorization is None
    assert "tok-SECRET" not in dumps_text(row.record)


def test_the_ask_json_is_made_once_per_ask_and_equals_a_fresh_dump() -> None:
    rec = opened(aqp_ask(), ALICE).record
    first = _ask_json(rec.ask)
    assert first == _dump_ask(rec.ask) and _ask_json(rec.ask) is first
    other = rec.ask.model_copy(update={"prompt": "Another?"})
    assert _ask_json(other)["prompt"] == "Another?"


def test_identity_memo_is_by_identity_and_bounded() -> None:
    from askgate.core.memo import IdentityMemo

    made: list[tuple[int, ...]] = []
    memo: IdentityMemo[tuple[int, ...], int] = IdentityMemo(lambda t: made.append(t) or sum(t), size=3)
    a, b = (1, 2), tuple([1, 2])  # equal, not the same object
    assert memo(a) == 3 and memo(a) == 3 and made == [a]
    assert memo(b) == 3 and len(made) == 2  # equality is not enough
    for i in range(10):
        memo((i, i))
    assert len(memo) == 3 and memo.get(a) is None


def test_the_view_parts_made_once_equal_fresh_ones() -> None:
    from datetime import UTC, datetime

    rec = opened(aqp_ask(), ALICE).record
    view = records.view(rec, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert view["spec"] == rec.ask.spec.model_dump(mode="json", exclude_none=True)
    assert view["respondents"] == [r.model_dump(mode="json", exclude_none=True) for r in rec.routing.respondents]
    assert rec.to_json()["routing"] == type(rec.routing).to_json(rec.routing)
    again = records.view(rec, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert again == view and again["spec"] is view["spec"]
