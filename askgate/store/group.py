"""Group commit for SQLite: many units of work, one transaction, one fsync, nobody told early.

SQLite has one writer and, with ``synchronous=FULL``, every ``COMMIT`` fsyncs (~5 ms on this machine's
disk), so one transaction per request caps the broker at ~200 writes per second whatever the CPU does.
Here every :meth:`GroupCommit.unit` runs inside a ``SAVEPOINT`` of a shared transaction: a unit that fails
rolls back to its savepoint and leaves the others intact, a unit that succeeds is released into the
transaction, and a committer task commits the whole group once (in a worker thread, since it may fsync).
Every unit waits for *its* group's commit before returning, so durability is unchanged: nothing is
acknowledged before it is on disk, and if the commit fails every unit of the group sees the error.

Batching adapts to load: the committer queues on the same FIFO lock as the units, so the units already
waiting when a group starts join it, and those arriving while it commits form the next one. Alone, a unit
costs what a plain transaction did.

Several askgate processes may share the file: a group first takes the file's write turn
(askgate/store/filelock.py) and gives it back once its commit is over, so the processes' groups take
turns promptly and fairly instead of racing through SQLite's busy handler.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from askgate.store.baton import Baton
from askgate.store.engine import InlineConnection, InlineEngine
from askgate.store.filelock import WriteTurn


class _Group:
    __slots__ = ("conn", "db", "trans", "done", "changed", "turn_given_back")

    def __init__(self, conn: Any, trans: Any, done: asyncio.Future[None]) -> None:
        self.conn = conn
        self.db = conn.connection.dbapi_connection  # the sqlite3 connection, inside the group's transaction
        self.trans = trans
        self.done = done
        self.changed: set[str] = set()
        self.turn_given_back = False


class _Unit:
    """One unit of work of a :class:`GroupCommit` (see :meth:`GroupCommit.unit`)."""

    __slots__ = ("_gc", "_group", "_changed")

    def __init__(self, gc: GroupCommit) -> None:
        self._gc = gc

    async def __aenter__(self) -> tuple[InlineConnection, set[str]]:
        gc = self._gc
        await gc._lock.acquire()
        try:
            group = gc._group if gc._group is not None else await gc._start_group()
            # savepoints straight on the DB-API connection (what exec_driver_sql ran, without ~30 µs of
            # SQLAlchemy execution context per statement, three statements per unit)
            group.db.execute("SAVEPOINT askgate_unit")
        except BaseException:
            gc._lock.release()
            raise
        self._group = group
        self._changed: set[str] = set()
        return InlineConnection(group.conn), self._changed

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        group = self._group
        try:
            if exc is not None:
                group.db.execute("ROLLBACK TO SAVEPOINT askgate_unit")
                group.db.execute("RELEASE SAVEPOINT askgate_unit")
            else:
                group.db.execute("RELEASE SAVEPOINT askgate_unit")
                group.changed |= self._changed
        finally:
            self._gc._lock.release()
        if exc is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(group.done)
            return False  # the unit's own exception goes on
        await asyncio.shield(group.done)
        return False


class GroupCommit:
    """Units of work on the single SQLite write connection, committed together."""

    def __init__(self, engine: InlineEngine, on_commit: Callable[[set[str]], None]) -> None:
        self._engine = engine
        self._on_commit = on_commit
        self._lock = Baton()  # a release wakes every waiting unit at once (askgate/store/baton.py)
        self._group: _Group | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        database = engine.url.database
        # several askgate processes may share the file: each group first takes the file's write turn
        self._turn = WriteTurn(database) if database and database != ":memory:" else None

    def unit(self) -> _Unit:
        """``async with`` it: the write connection (inside a savepoint) and the set to add changed ask ids to.

        On normal exit the unit is released into its group and this waits for the group's commit; on an
        exception it is rolled back and the exception re-raised once the group has committed (so a caller
        that retries after a lost compare-and-set reads what the winner wrote). A class rather than an
        ``asynccontextmanager``: two of these per request, and the generator machinery cost more than the
        savepoint statements."""
        return _Unit(self)

    async def _start_group(self) -> _Group:
        """A new group: the write turn taken (askgate/store/filelock.py), its transaction begun (holding the
        file's write lock) and its committer queued."""
        if self._turn is not None:
            await self._turn.acquire()
        try:
            conn = self._engine.sync_engine.connect()
            try:
                trans = conn.begin()  # BEGIN IMMEDIATE (engine event): holds the write lock of the file
            except BaseException:
                conn.close()
                raise
        except BaseException:
            self._release_turn()
            raise
        group = self._group = _Group(conn, trans, asyncio.get_running_loop().create_future())
        task = asyncio.create_task(self._commit(group), name="askgate-group-commit")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return group

    async def _commit(self, group: _Group) -> None:
        async with self._lock:  # FIFO: every unit already waiting for the lock joins this group
            if self._group is group:
                self._group = None
            commit = asyncio.ensure_future(asyncio.to_thread(self._commit_in_thread, group))
            cancelled = False
            while not commit.done():
                try:
                    await asyncio.shield(commit)
                except asyncio.CancelledError:
                    cancelled = True  # the commit is already under way in its thread: see it through
                except BaseException:  # noqa: BLE001 - read below from the future
                    break
            error = commit.exception()
            if error is not None:
                with contextlib.suppress(Exception):
                    group.trans.rollback()
            try:
                group.conn.close()
            finally:
                if not group.turn_given_back:
                    self._release_turn()  # the transaction is over: the next writer (maybe another process) may go
            if error is not None:
                group.done.set_exception(error)
                group.done.exception()  # marked retrieved: the units see it through their shield
            else:
                try:
                    if group.changed:
                        self._on_commit(group.changed)
                finally:
                    group.done.set_result(None)
            if cancelled:
                raise asyncio.CancelledError

    def _commit_in_thread(self, group: _Group) -> None:
        """Commit; once committed, give the file's write turn back from this thread at once, so another
        process need not wait until this one's busy event loop gets round to it."""
        group.trans.commit()
        try:
            self._release_turn()
        except OSError:  # committed all the same: the loop's side lets go of it (or closing the file does)
            return
        group.turn_given_back = True

    def _release_turn(self) -> None:
        if self._turn is not None:
            self._turn.release()

    async def close(self) -> None:
        """Wait for the group in flight (if any) to commit."""
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if self._turn is not None:
            self._turn.close()
