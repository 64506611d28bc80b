"""A real, throw-away PostgreSQL server for the tests (Debian's postgresql package; bin/test installs it).

One server per test run (started on first use, stopped at exit), on 127.0.0.1 and a free port, with
its data directory in a temporary folder. PostgreSQL refuses to run as root, so as root the server runs
as the ``postgres`` user via ``runuser``. Each test gets a fresh database from :func:`fresh_database`.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PgServer:
    port: int
    datadir: str
    bindir: str
    as_user: list[str]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str) -> None:
        subprocess.run([*self.as_user, f"{self.bindir}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                        "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qc", sql], check=True, capture_output=True)

    def stop(self) -> None:
        subprocess.run([*self.as_user, f"{self.bindir}/pg_ctl", "-D", self.datadir, "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(os.path.dirname(self.datadir), ignore_errors=True)


_server: PgServer | None = None


def _bindir() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


def server() -> PgServer:
    """The shared server, started on first call. Fails (never skips) when PostgreSQL is missing."""
    global _server
    if _server is not None:
        return _server
    bindir = _bindir()
    if bindir is None:
        pytest.fail("PostgreSQL is not installed (apt-get install -y postgresql; bin/test does it as root)")
    root = tempfile.mkdtemp(prefix="askgate-pg-")
    datadir = os.path.join(root, "data")
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        os.chmod(root, 0o700)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    subprocess.run([*as_user, f"{bindir}/initdb", "-D", datadir, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                    "--no-sync"], check=True, capture_output=True)
    opts = (f"-p {port} -c listen_addresses=127.0.0.1 -k {root} -c fsync=off -c full_page_writes=off "
            f"-c max_connections=200 -c shared_buffers=32MB")
    subprocess.run([*as_user, f"{bindir}/pg_ctl", "-D", datadir, "-o", opts, "-w", "-t", "60",
                    "-l", os.path.join(root, "log"), "start"], check=True, capture_output=True)
    _server = PgServer(port, datadir, bindir, as_user)
    atexit.register(_server.stop)
    return _server


def fresh_database() -> str:
    """A new empty database on the shared server; returns its URL."""
    srv = server()
    name = "t_" + uuid.uuid4().hex[:16]
    srv.psql(f"CREATE DATABASE {name}")
    return srv.url(name)
