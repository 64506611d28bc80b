"""The SQLite store keeps one connection for its raw hot-path reads (Store._raw_read): each read still sees
every commit made before it, a failed read gives the connection back to the pool, and close() returns it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from askgate.store import AskRow, Store

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def row(ask_id: str, version: int, offered: tuple[str, ...] = ()) -> AskRow:
    return AskRow(id=ask_id, version=version, state="pending", terminal=False, dialect="aqp", created_at=T0,
                  record={"id": ask_id, "n": version}, asker="a1", offered_to=offered)


async def test_each_raw_read_sees_the_latest_commit(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite:///{tmp_path / 'a.db'}")
    try:
        assert await store.get_ask("x") is None  # the kept connection is now open
        held = store._hot_read
        async with store.write(T0) as tx:
            await tx.insert_ask(row("x", 1, ("bob",)))
        assert (await store.get_ask("x")).record == {"id": "x", "n": 1}
        for v in range(2, 6):
            async with store.write(T0) as tx:
                await tx.cas_ask(row("x", v, ("bob", f"r{v}")), v - 1)
            got = await store.get_ask("x")
            assert got.version == v and got.record["n"] == v and got.offered_to == ("bob", f"r{v}")
        assert store._hot_read is held  # one connection served every read
        assert await store.principal_for_token("agk_nothing") is None
        assert await store.consent_map(["bob"]) == {}
    finally:
        await store.close()
    assert store._hot_read is None


async def test_a_failed_read_returns_the_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = await Store.open(f"sqlite:///{tmp_path / 'a.db'}")
    try:
        await store.get_ask("x")
        held = store._hot_read
        from askgate.store import sqlite_fast

        def broken(db, ask_id):
            db.execute("SELECT 1")
            raise RuntimeError("boom")

        monkeypatch.setattr(sqlite_fast, "get_ask_row", broken)
        with pytest.raises(RuntimeError):
            await store.get_ask("x")
        assert store._hot_read is None and held.dbapi_connection is None  # checked back in (and reset)
        monkeypatch.undo()
        async with store.write(T0) as tx:
            await tx.insert_ask(row("x", 1))
        assert (await store.get_ask("x")).version == 1
    finally:
        await store.close()
