"""Waking whoever waits on an ask: in-process events, plus LISTEN/NOTIFY (PostgreSQL) or datagrams
(SQLite, askgate/broker/sqlite_peers.py) across processes.

A waiter takes the ask's event *before* reading its state, so a change committed between the read and
the wait still wakes it (no lost wake-ups). Every committed write notifies (the store calls
:meth:`Waiters.changed`; on PostgreSQL the transaction also sends ``pg_notify``, which
:class:`PgListener` turns into the same call in every process; on SQLite :class:`SqlitePeers` sends the
changed ids to the other processes on the file).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable

import structlog

from askgate.store.engine import asyncpg_dsn
from askgate.store.store import NOTIFY_CHANNEL

log = structlog.get_logger("askgate.broker")


class Waiters:
    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}
        self._hooks: list[Callable[[str], None]] = []

    def event_for(self, ask_id: str) -> asyncio.Event:
        ev = self._events.get(ask_id)
        if ev is None:
            ev = self._events[ask_id] = asyncio.Event()
        return ev

    def on_change(self, hook: Callable[[str], None]) -> None:
        self._hooks.append(hook)

    def changed(self, ask_ids: Iterable[str]) -> None:
        for ask_id in ask_ids:
            ev = self._events.pop(ask_id, None)
            if ev is not None:
                ev.set()
            for hook in self._hooks:
                hook(ask_id)

    def wake_all(self) -> None:
        """After a lost LISTEN connection: everyone re-reads (a notification may have been missed)."""
        events, self._events = self._events, {}
        for ev in events.values():
            ev.set()
        for hook in self._hooks:
            hook("")


class PgListener:
    """A dedicated asyncpg connection LISTENing on the store's channel; reconnects when it drops."""

    def __init__(self, url: str, waiters: Waiters) -> None:
        self._dsn = asyncpg_dsn(url)
        self._waiters = waiters
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="askgate-pg-listen")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def _run(self) -> None:
        import asyncpg

        while True:
            conn = None
            try:
                conn = await asyncpg.connect(self._dsn)
                lost = asyncio.Event()
                conn.add_termination_listener(lambda _c: lost.set())
                await conn.add_listener(
                    NOTIFY_CHANNEL, lambda _c, _pid, _ch, payload: self._waiters.changed([payload]))
                self._waiters.wake_all()
                self.ready.set()
                await lost.wait()
            except asyncio.CancelledError:
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.close()
                raise
            except Exception as exc:  # noqa: BLE001 - keep listening whatever happened
                log.warning("pg_listen_failed", error=type(exc).__name__)
            finally:
                self.ready.clear()
            await asyncio.sleep(0.5)
