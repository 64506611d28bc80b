"""Wake-ups between processes on one SQLite file (askgate/broker/sqlite_peers.py), with real sockets.

Several :class:`SqlitePeers` in one event loop stand for several processes: each has its own socket and
its own :class:`Waiters`, exactly as separate processes would."""

from __future__ import annotations

import asyncio
from pathlib import Path

from askgate.broker import sqlite_peers
from askgate.broker.sqlite_peers import SqlitePeers, _datagrams
from askgate.broker.waiters import Waiters


class _Seen:
    def __init__(self, waiters: Waiters) -> None:
        self.ids: list[str] = []
        waiters.on_change(self.ids.append)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0.01)


async def test_a_commit_in_one_process_wakes_the_waiters_of_the_others(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    w1, w2, w3 = Waiters(), Waiters(), Waiters()
    p1, p2, p3 = SqlitePeers(db, w1), SqlitePeers(db, w2), SqlitePeers(str(tmp_path / "." / "a.db"), w3)
    for p in (p1, p2, p3):
        p.start()
    try:
        seen1, seen2, seen3 = _Seen(w1), _Seen(w2), _Seen(w3)
        ev2 = w2.event_for("ask-1")
        p1.publish({"ask-1", "ask-2"})
        await asyncio.wait_for(ev2.wait(), 2)
        await _settle()
        assert sorted(seen2.ids) == ["ask-1", "ask-2"]
        assert sorted(seen3.ids) == ["ask-1", "ask-2"]  # the same file named another way is the same database
        assert seen1.ids == []  # its own commits are the store's business, not the peers'
    finally:
        for p in (p1, p2, p3):
            p.stop()


async def test_another_database_is_not_told(tmp_path: Path) -> None:
    w1, w2 = Waiters(), Waiters()
    p1, p2 = SqlitePeers(tmp_path / "one.db", w1), SqlitePeers(tmp_path / "two.db", w2)
    p1.start()
    p2.start()
    try:
        seen2 = _Seen(w2)
        p1.publish({"ask-1"})
        await _settle()
        assert seen2.ids == []
    finally:
        p1.stop()
        p2.stop()


async def test_a_dead_peer_is_forgotten_and_its_file_removed(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    p1 = SqlitePeers(db, Waiters())
    p1.start()
    ghost = p1._dir / "999999-deadbeef"  # what a process killed with -9 leaves behind
    ghost.touch()
    try:
        p1.publish({"ask-1"})
        assert not ghost.exists()
        assert "999999-deadbeef" not in p1._current_peers()
    finally:
        p1.stop()
    assert not any(p1._dir.iterdir())  # a clean stop removes its own file too


async def test_a_peer_that_missed_a_datagram_is_told_to_re_read_everything(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    w1, w2 = Waiters(), Waiters()
    p1, p2 = SqlitePeers(db, w1), SqlitePeers(db, w2)
    p1.start()
    p2.start()
    loop = asyncio.get_running_loop()
    try:
        assert p2._sock is not None
        loop.remove_reader(p2._sock.fileno())  # a stalled process: it reads nothing while p1 commits
        sent = 0
        while not p1._owed and sent < 100_000:
            p1.publish({f"ask-{sent}"})
            sent += 1
        assert p1._owed  # its queue filled up: some commit's ids could not be delivered
        seen2 = _Seen(w2)
        ev = w2.event_for("an-ask-never-named")
        loop.add_reader(p2._sock.fileno(), p2._receive)  # the stalled process reads again
        await asyncio.wait_for(ev.wait(), 5)  # woken by the resync, though no datagram named this ask
        assert "" in seen2.ids  # the feed's "re-read everything" marker
        assert p1._owed == set()
    finally:
        p1.stop()
        p2.stop()


async def test_a_directory_it_cannot_write_leaves_nothing_behind(tmp_path: Path) -> None:
    import pytest

    (tmp_path / "a.db-askgate.peers").write_text("a file where the directory should be")
    peers = SqlitePeers(tmp_path / "a.db", Waiters())
    with pytest.raises(OSError):
        peers.start()
    assert peers._sock is None


def test_ids_are_cut_into_datagrams_that_keep_every_id_whole() -> None:
    ids = [f"{i:036d}" for i in range(5000)]
    grams = _datagrams(ids)
    assert len(grams) > 1
    assert all(len(g) <= sqlite_peers._CHUNK for g in grams)
    assert [x for g in grams for x in g.decode().split("\n")] == ids
    assert _datagrams([]) == []
