"""The group commit's lock (askgate/store/baton.py): one holder at a time, first come first served, every
waiter woken at once, cancellations at any moment, holders that suspend."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.store.baton import Baton
from tests.support.scale import examples

# each task: (ticks to wait before arriving, ticks it suspends while holding, cancelled after n ticks or never)
tasks = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.one_of(st.none(), st.integers(0, 6))),
                 min_size=1, max_size=12)


async def _ticks(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def _scenario(plan: list[tuple[int, int, int | None]]) -> None:
    baton = Baton()
    holders: list[int] = []
    arrived: list[int] = []
    got: list[int] = []
    finished: set[int] = set()
    overlaps: list[tuple[int, list[int]]] = []

    async def one(i: int, arrive: int, hold: int) -> None:
        await _ticks(arrive)
        arrived.append(i)
        await baton.acquire()
        try:
            if holders:
                overlaps.append((i, list(holders)))
            holders.append(i)
            got.append(i)
            await _ticks(hold)  # a holder that suspends (and may be cancelled meanwhile)
        finally:
            holders.remove(i)
            baton.release()
        finished.add(i)

    runs = [asyncio.create_task(one(i, arrive, hold)) for i, (arrive, hold, _) in enumerate(plan)]

    async def cancel_later(task: asyncio.Task[None], after: int) -> None:
        await _ticks(after)
        task.cancel()

    cancellers = [asyncio.create_task(cancel_later(runs[i], c)) for i, (_, _, c) in enumerate(plan) if c is not None]
    await asyncio.wait_for(asyncio.gather(*runs, *cancellers, return_exceptions=True), 5)
    assert overlaps == []  # never two holders
    cancelled = {i for i, t in enumerate(runs) if t.cancelled()}
    assert finished | cancelled == set(range(len(plan)))  # nobody left waiting for ever
    assert not baton.locked() and not baton._waiting and baton._woken == 0
    # first come, first served among those that got it: the order of arrival
    assert got == [i for i in arrived if i in set(got)]
    await baton.acquire()  # and it is free again at once
    baton.release()


@settings(max_examples=examples(400), deadline=None)
@given(tasks)
def test_one_holder_at_a_time_in_order_of_arrival_whatever_is_cancelled(plan) -> None:
    asyncio.run(_scenario(plan))


async def test_a_release_wakes_every_waiter_and_they_all_run_in_one_turn_of_the_loop() -> None:
    baton = Baton()
    await baton.acquire()
    order: list[str] = []

    async def unit(name: str) -> None:
        async with baton:
            order.append(name)  # no suspension while holding, as a group-commit unit

    waiting = [asyncio.create_task(unit(f"u{i}")) for i in range(5)]
    await asyncio.sleep(0)

    async def bystander() -> None:
        await asyncio.sleep(0)
        order.append("other work")

    other = asyncio.create_task(bystander())
    await asyncio.sleep(0)  # the bystander is ready and queued before the release
    baton.release()
    await asyncio.gather(*waiting, other)
    # with asyncio.Lock each hand-over would wait behind the other ready work; here the units run
    # back to back (the bystander was already queued, so it may go first, but never between them)
    units = [x for x in order if x != "other work"]
    assert units == [f"u{i}" for i in range(5)]
    first = order.index("u0")
    assert order[first:first + 5] == units


async def test_release_without_holding_is_refused() -> None:
    with pytest.raises(RuntimeError):
        Baton().release()
