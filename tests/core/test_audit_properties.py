"""Hypothesis properties of the audit chain over arbitrary I-JSON payloads."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.core.audit import chain_entry, entry_hash, verify_chain
from tests.support.scale import examples

SAFE = 2**53 - 1
scalars = (st.none() | st.booleans() | st.integers(-SAFE, SAFE)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)
RESERVED = {"entry_id", "step_id", "step_type", "timestamp", "request_hash", "previous_hash", "entry_hash"}
payloads = st.dictionaries(st.text(max_size=8).filter(lambda k: k not in RESERVED), values, max_size=5)


def build(datas: list[dict]) -> list[dict]:
    chain: list[dict] = []
    for i, data in enumerate(datas):
        chain.append(chain_entry(entry_id=f"e-{i}", step_id="ask", step_type="vote", timestamp=None,
                                 data=data, previous_hash=chain[-1]["entry_hash"] if chain else None))
    return chain


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(payloads, min_size=1, max_size=4), st.data())
def test_any_chain_verifies_and_any_change_is_caught_where_it_is(datas: list[dict], data: st.DataObject) -> None:
    chain = build(datas)
    assert verify_chain(chain).ok
    i = data.draw(st.integers(0, len(chain) - 1))
    tampered = copy.deepcopy(chain)
    tampered[i]["tampered"] = data.draw(scalars.filter(lambda v: v is not None))
    result = verify_chain(tampered)
    assert not result.ok and result.first_bad == i


@settings(max_examples=examples(150), deadline=None)
@given(payloads, st.randoms(use_true_random=False))
def test_member_order_does_not_matter(data: dict, rnd) -> None:
    entry = {"entry_id": "e", "step_id": "s", "step_type": "t", **{k: v for k, v in data.items() if v is not None}}
    items = list(entry.items())
    rnd.shuffle(items)
    assert entry_hash(dict(items), None) == entry_hash(entry, None)
