"""The SQLite file's write turn (askgate/store/filelock.py). Two WriteTurn objects on one path conflict
exactly as two processes would: ``flock`` locks belong to the open file description, not the process."""

from __future__ import annotations

import asyncio
import fcntl
import os
from pathlib import Path

import pytest

from askgate.store.filelock import WriteTurn


def _free(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # also lets go of the probe's lock
    return True


async def test_the_second_writer_waits_without_blocking_the_loop_and_goes_when_the_first_lets_go(tmp_path: Path) -> None:
    a, b = WriteTurn(tmp_path / "x.db"), WriteTurn(tmp_path / "x.db")
    await a.acquire()
    waiting = asyncio.ensure_future(b.acquire())
    ticks = 0
    for _ in range(20):  # the loop keeps running while b waits in its thread
        await asyncio.sleep(0.005)
        ticks += 1
    assert not waiting.done() and ticks == 20
    a.release()
    await asyncio.wait_for(waiting, 5)
    assert not _free(a.path)  # b holds it now
    b.release()
    assert _free(a.path)
    a.close()
    b.close()


async def test_a_writer_cancelled_while_waiting_never_leaves_the_file_locked(tmp_path: Path) -> None:
    a, b = WriteTurn(tmp_path / "x.db"), WriteTurn(tmp_path / "x.db")
    await a.acquire()
    waiting = asyncio.ensure_future(b.acquire())
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    a.release()  # b's thread now takes the lock, and lets go of it at once
    for _ in range(200):
        await asyncio.sleep(0.01)
        if _free(a.path):
            break
    assert _free(a.path)
    await asyncio.wait_for(a.acquire(), 1)
    a.close()
    b.close()


async def test_a_writer_gives_up_as_sqlite_would_and_leaves_nothing_locked(tmp_path: Path) -> None:
    import sqlite3

    a, b = WriteTurn(tmp_path / "x.db"), WriteTurn(tmp_path / "x.db")
    await a.acquire()
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        await b.acquire(timeout=0.1)
    a.release()
    for _ in range(200):
        await asyncio.sleep(0.01)
        if _free(a.path):
            break
    assert _free(a.path)  # b's thread took it after giving up, and let go at once
    a.close()
    b.close()


async def test_the_lock_file_sits_next_to_the_database(tmp_path: Path) -> None:
    turn = WriteTurn(tmp_path / "data.db")
    await turn.acquire()
    assert (tmp_path / "data.db-askgate.lock").exists()
    turn.close()
    assert _free(turn.path)  # closing lets go too


async def test_two_stores_on_one_file_write_as_one(tmp_path: Path) -> None:
    """Two Store objects on one SQLite file stand for two processes: own connections, own group commits,
    own lock descriptors. Interleaved writers lose nothing, a shared session chain stays linear, and each
    due ask is claimed by exactly one of them."""
    from datetime import UTC, datetime, timedelta

    from askgate.core.audit import verify_chain
    from askgate.store import Store
    from tests.store.test_store import factory, row

    url = f"sqlite:///{tmp_path / 'shared.db'}"
    one, two = await Store.open(url), await Store.open(url)
    try:
        async def write(store: Store, i: int) -> None:
            async with store.write() as tx:
                await tx.insert_ask(row(f"a{i}", session="sess", wake=datetime.now(UTC) - timedelta(seconds=1)))
                await tx.append_audit("session", "sess", factory(f"step{i}"))

        await asyncio.gather(*(write(one if i % 2 else two, i) for i in range(200)))
        chain = await one.audit_chain("session", "sess")
        assert len(chain) == 200 and verify_chain(chain).ok
        assert {e["step_type"] for e in chain} == {f"step{i}" for i in range(200)}

        claimed: list[str] = []

        async def claimer(store: Store) -> None:
            while True:
                async with store.claim_due(datetime.now(UTC), limit=7) as (tx, rows):
                    if not rows:
                        return
                    claimed.extend(r.id for r in rows)
                    await tx.cas_asks([(row(r.id, version=r.version + 1, session="sess"), r.version, False)
                                       for r in rows])

        await asyncio.gather(claimer(one), claimer(two), claimer(one), claimer(two))
        assert sorted(claimed) == sorted(f"a{i}" for i in range(200))  # each exactly once
    finally:
        await one.close()
        await two.close()
