"""Waking waiters in the other askgate processes on one SQLite file (what LISTEN/NOTIFY does on PostgreSQL).

Several ``askgate serve`` processes may share one SQLite file (askgate/store/filelock.py orders their
writes). A client waiting on one process for an ask that another process changes must be woken at once,
not at its time-out, so after every commit a process tells its peers which asks changed.

Each process binds a Unix datagram socket in the abstract namespace (no file to clean up after a
``kill -9``, no path-length limit) and announces itself with an empty file named after that socket in
``<database>-askgate.peers/``. Publishing is one non-blocking ``sendto`` per peer: the changed ask ids,
one per line. A peer that no longer answers (``ECONNREFUSED``) is dead: its file is removed. A peer whose
receive buffer is full misses that datagram, so it is owed an empty datagram, retried shortly, which tells
it to wake every waiter (:meth:`Waiters.wake_all`: each re-reads), so no wake-up is lost for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import secrets
import socket
from collections.abc import Iterable
from pathlib import Path

import structlog

from askgate.broker.waiters import Waiters

log = structlog.get_logger("askgate.broker")

_CHUNK = 32 * 1024  # bytes of ids per datagram: far below the socket buffers, so one never fails for size
_RELIST = 1.0  # seconds: the peer directory is re-read at least this often (its mtime is coarse)
_RETRY = 0.05  # seconds before a peer that missed a datagram is sent its resync


class SqlitePeers:
    """This process's mailbox plus the list of the others; :meth:`publish` is a store commit listener."""

    def __init__(self, database: str | os.PathLike[str], waiters: Waiters) -> None:
        real = os.path.realpath(os.fspath(database))
        self._dir = Path(f"{real}-askgate.peers")
        self._prefix = b"\0askgate-" + hashlib.sha256(real.encode()).hexdigest()[:24].encode() + b"-"
        self._me = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._waiters = waiters
        self._sock: socket.socket | None = None
        self._peers: list[str] = []
        self._listed: tuple[int, float] | None = None  # (directory mtime, when listed)
        self._owed: set[str] = set()  # peers that missed a datagram and must be told to re-read everything
        self._retry: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Bind this process's socket and announce it; on any failure nothing is left behind."""
        try:
            self._dir.mkdir(mode=0o700, exist_ok=True)
            sock = self._sock = socket.socket(socket.AF_UNIX,
                                              socket.SOCK_DGRAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            sock.bind(self._prefix + self._me.encode())
            (self._dir / self._me).touch()
            asyncio.get_running_loop().add_reader(sock.fileno(), self._receive)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
        if self._sock is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._sock.fileno())
            self._sock.close()
            self._sock = None
        with contextlib.suppress(OSError):
            (self._dir / self._me).unlink()

    # ---- receiving -------------------------------------------------------------------------------

    def _receive(self) -> None:
        assert self._sock is not None
        while True:
            try:
                data = self._sock.recv(1 << 17)
            except (BlockingIOError, InterruptedError):
                return
            if data:
                self._waiters.changed(data.decode().split("\n"))
            else:  # a datagram was lost on its way here: everyone re-reads
                self._waiters.wake_all()

    # ---- sending ---------------------------------------------------------------------------------

    def publish(self, changed: Iterable[str]) -> None:
        """Tell every other process on this database which asks a commit changed."""
        peers = self._current_peers()
        if not peers or self._sock is None:
            return
        datagrams = _datagrams(sorted(changed))
        for peer in peers:
            if peer in self._owed:
                continue  # it gets the resync, which covers these too
            for datagram in datagrams:
                if not self._send(peer, datagram):
                    break

    def _send(self, peer: str, datagram: bytes) -> bool:
        assert self._sock is not None
        try:
            self._sock.sendto(datagram, self._prefix + peer.encode())
            return True
        except (BlockingIOError, InterruptedError):  # its buffer is full: owe it a resync
            self._owed.add(peer)
            self._schedule_retry()
        except (ConnectionRefusedError, FileNotFoundError):  # nobody there: the process is gone
            self._forget(peer)
        except OSError as exc:
            log.warning("peer_notify_failed", peer=peer, error=type(exc).__name__)
            self._owed.add(peer)
            self._schedule_retry()
        return False

    def _schedule_retry(self) -> None:
        if self._retry is None:
            self._retry = asyncio.get_running_loop().call_later(_RETRY, self._pay_owed)

    def _pay_owed(self) -> None:
        self._retry = None
        for peer in list(self._owed):
            self._owed.discard(peer)
            self._send(peer, b"")  # fails again: owed again, retried again

    def _forget(self, peer: str) -> None:
        self._owed.discard(peer)
        with contextlib.suppress(ValueError):
            self._peers.remove(peer)
        with contextlib.suppress(OSError):
            (self._dir / peer).unlink()

    def _current_peers(self) -> list[str]:
        """The other processes, re-listed when the directory changed (or every :data:`_RELIST` seconds)."""
        loop_time = asyncio.get_running_loop().time()
        try:
            mtime = os.stat(self._dir).st_mtime_ns
        except OSError:
            return []
        if self._listed is None or self._listed[0] != mtime or loop_time - self._listed[1] > _RELIST:
            try:
                self._peers = [name for name in os.listdir(self._dir) if name != self._me]
            except OSError:
                self._peers = []
            self._listed = (mtime, loop_time)
        return self._peers


def _datagrams(ids: list[str]) -> list[bytes]:
    """The ids, one per line, cut into datagrams of at most about :data:`_CHUNK` bytes."""
    out: list[bytes] = []
    part: list[str] = []
    size = 0
    for ask_id in ids:
        if part and size + len(ask_id) + 1 > _CHUNK:
            out.append("\n".join(part).encode())
            part, size = [], 0
        part.append(ask_id)
        size += len(ask_id) + 1
    if part:
        out.append("\n".join(part).encode())
    return out
