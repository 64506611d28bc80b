"""The SQLite file's write turn, shared fairly and promptly by every askgate process on that file.

SQLite lets one connection write at a time; a second process that tries meanwhile gets ``SQLITE_BUSY``
and its busy handler sleeps and retries with growing naps (1, 2, 5 ... 100 ms), in whatever thread
issued the ``BEGIN``. For askgate that meant the event loop of the waiting process stalled, and the
process that had just committed usually won the race again: two servers on one file shared 574 asks/s
as 498 and 75. So before ``BEGIN IMMEDIATE`` a group commit takes this lock: an exclusive ``flock`` on a
small companion file (``<database>-askgate.lock``). Uncontended it is one system call on the loop;
contended, the wait runs in a worker thread, and the kernel wakes it the moment the holder lets go.

SQLite's own locking still decides who may write; this only orders askgate's writers (a process that
does not take it, such as the ``sqlite3`` shell, is still serialised by SQLite, with its busy naps).
``flock`` locks are not the POSIX record locks SQLite uses, so the two never interact, and the lock is
on its own file because closing any descriptor of the database file would drop SQLite's record locks.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sqlite3
from pathlib import Path


class WriteTurn:
    """An exclusive inter-process lock on ``<database>-askgate.lock``, acquired without blocking the loop."""

    def __init__(self, database: str | os.PathLike[str]) -> None:
        self.path = Path(f"{os.fspath(database)}-askgate.lock")
        self._fd: int | None = None

    def _descriptor(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        return self._fd

    async def acquire(self, timeout: float = 30.0) -> None:
        """Take the turn: at once when it is free, else from a worker thread (the loop keeps serving).

        After ``timeout`` seconds (SQLite's own busy time-out in askgate) it gives up with the error
        SQLite would give, ``database is locked``. Cancelled or timed out while waiting, the thread still
        gets the lock in the end; it is then let go at once, so nobody leaves the file locked."""
        fd = self._descriptor()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        waiting = asyncio.ensure_future(asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX))
        try:
            await asyncio.wait_for(asyncio.shield(waiting), timeout)
        except asyncio.TimeoutError:
            waiting.add_done_callback(self._release_if_taken)
            raise sqlite3.OperationalError("database is locked") from None
        except asyncio.CancelledError:
            waiting.add_done_callback(self._release_if_taken)
            raise

    def _release_if_taken(self, waiting: asyncio.Future[None]) -> None:
        if not waiting.cancelled() and waiting.exception() is None:
            self.release()

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing the descriptor also lets go of the lock
            self._fd = None
