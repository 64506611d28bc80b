"""A first-come, first-served lock whose release wakes every waiter at once.

The group commit (askgate/store/group.py) serialises the units of work on SQLite's one write connection
with a lock, and a group holds the database file's write lock from its first unit to its commit. With
``asyncio.Lock`` each release hands the lock to *one* waiter, whose task runs in a later turn of the event
loop, after whatever else is ready: other requests' parsing, validation and rendering. A group of fifteen
units thus took fifteen turns of the loop, ~6 ms, most of it spent on other work while the file stayed
locked, so a second askgate process on the same file waited for nothing.

Here a release wakes all waiters together; their tasks are queued next to each other and run one after
the other in the same turn of the loop. A unit runs its statements without suspending, so each takes the
lock, does its work and lets go before the next resumes. One that does suspend while holding it (a
settlement pass yields to requests now and then) makes the ones behind it queue again, at the front, in
their order. Newcomers queue behind everyone already woken, so the lock goes in order of arrival.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any


class Baton:
    """``await baton.acquire()`` ... ``baton.release()``, or ``async with baton``."""

    __slots__ = ("_held", "_waiting", "_woken", "_front")

    def __init__(self) -> None:
        self._held = False
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._woken = 0  # woken by a release, not yet resumed: a newcomer must not pass them
        self._front = 0  # how many went back to the front of the queue since the last release

    def locked(self) -> bool:
        return self._held

    async def acquire(self) -> None:
        if not self._held and not self._waiting and not self._woken:
            self._held = True
            return
        loop = asyncio.get_running_loop()
        again = False
        while True:
            fut: asyncio.Future[None] = loop.create_future()
            if again:  # woken, but someone holds it: back to the front, behind the others who went back
                self._waiting.insert(self._front, fut)
                self._front += 1
            else:
                self._waiting.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut.cancelled():  # still queued (or skipped by a release): just leave
                    try:
                        self._waiting.remove(fut)
                    except ValueError:
                        pass
                else:  # woken, then cancelled before it resumed: pass the wake-up on if nobody else will
                    self._woken -= 1
                    if not self._held and not self._woken:
                        self._wake_all()
                raise
            self._woken -= 1
            if not self._held:
                self._held = True
                return
            again = True

    def release(self) -> None:
        if not self._held:
            raise RuntimeError("Baton.release() while not held")
        self._held = False
        self._wake_all()

    def _wake_all(self) -> None:
        waiting, self._waiting = self._waiting, deque()
        self._front = 0
        for fut in waiting:
            if not fut.done():
                fut.set_result(None)
                self._woken += 1

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: Any) -> None:
        self.release()
