"""A live feed of changed asks for any number of subscribers (the inbox's Server-Sent Events).

The broker already wakes per-ask waiters after every committed write, in this process and (PostgreSQL
LISTEN/NOTIFY) in every other one; this feed hangs one hook on those same notifications and fans the
changed ask ids out to subscriber queues. It carries ids only: each subscriber re-reads the ask and
decides what its principal may see (:meth:`Broker.may_see`), so nothing leaks through the feed.

An empty id means "something may have been missed" (a lost LISTEN connection, a full queue): the
subscriber should re-read everything it shows.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from askgate.broker.broker import Broker

__all__ = ["ChangeFeed", "feed_of"]

RESYNC = ""


class ChangeFeed:
    """Fan-out of changed ask ids. Subscribe with ``async with feed.subscribe() as queue``."""

    def __init__(self, broker: Broker, *, queue_size: int = 1000) -> None:
        self._subscribers: set[asyncio.Queue[str]] = set()
        self._size = queue_size
        broker.waiters.on_change(self.publish)

    def publish(self, ask_id: str) -> None:
        for q in list(self._subscribers):
            try:
                q.put_nowait(ask_id)
            except asyncio.QueueFull:  # a slow reader: drop its backlog and tell it to re-read everything
                while not q.empty():
                    q.get_nowait()
                q.put_nowait(RESYNC)

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[str]]:
        q: asyncio.Queue[str] = asyncio.Queue(self._size)
        self._subscribers.add(q)
        try:
            yield q
        finally:
            self._subscribers.discard(q)

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)


def feed_of(broker: Broker) -> ChangeFeed:
    """The broker's one feed, created on first use (its hook stays registered for the broker's life)."""
    feed = getattr(broker, "_change_feed", None)
    if feed is None:
        feed = ChangeFeed(broker)
        broker._change_feed = feed  # type: ignore[attr-defined]
    return feed
