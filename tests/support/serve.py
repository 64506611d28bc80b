"""Run real `askgate serve` processes for end-to-end tests (random port on 127.0.0.1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.postgres import free_port

ASKGATE = [sys.executable, "-m", "askgate.cli"]


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    port: int
    out: Path
    err: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def first_token(self) -> str | None:
        lines = [x for x in self.out.read_text().splitlines() if x.startswith("agk_")]
        return lines[0] if lines else None

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def start(workdir: Path, *, db: str | None = None, name: str = "serve", env: dict[str, str] | None = None) -> Served:
    """Start the process (does not wait for it); call :func:`ready` next (start several, then wait)."""
    port = free_port()
    out, err = workdir / f"{name}.out", workdir / f"{name}.err"
    args = [*ASKGATE, "serve", "--port", str(port)]
    if db:
        args += ["--db", db]
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    full_env.pop("ASKGATE_DB", None)
    proc = subprocess.Popen(args, cwd=workdir, stdout=out.open("wb"), stderr=err.open("wb"), env=full_env)
    return Served(proc, port, out, err)


def ready(served: Served, timeout: float = 90.0) -> Served:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if served.proc.poll() is not None:
            raise RuntimeError(f"askgate serve exited: {served.err.read_text()[-2000:]}")
        try:
            if httpx.get(served.url + "/healthz", timeout=1).status_code == 200:
                return served
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    served.stop()
    raise RuntimeError("askgate serve did not become ready")
