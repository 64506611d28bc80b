"""A real askgate server process (``askgate demo``) on 127.0.0.1 and a random port, and Debian's Chromium.

One server and one browser per module keep the browser tests fast; each test opens fresh browser
contexts (separate cookie jars), so sessions never leak between tests.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    tokens: dict[str, str]
    proc: subprocess.Popen[str]

    def api(self, principal: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.tokens[principal]}"},
            timeout=10,
            trust_env=False,
        )

    def create(self, doc: dict[str, Any], dialect: str, respondents: tuple[str, ...] = ("alice",)) -> str:
        """Create an ask as the demo's asker, offered to ``respondents``; returns its id."""
        params: list[tuple[str, str]] = [("dialect", dialect)] + [("respondent", r) for r in respondents]
        with self.api("demo-agent") as c:
            r = c.post("/v1/asks", params=params, json=doc)
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    def ask(self, ask_id: str, principal: str = "demo-agent") -> dict[str, Any]:
        with self.api(principal) as c:
            r = c.get(f"/v1/asks/{ask_id}")
        assert r.status_code == 200, r.text
        return dict(r.json())


def start_demo(tmp: Path, *, short_deadline: float = 240) -> Server:
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "ASKGATE_SECRET_KEY": "inbox-tests-" + uuid.uuid4().hex}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "askgate.cli",
            "demo",
            "--port",
            str(port),
            "--dir",
            str(tmp),
            "--short-deadline",
            str(short_deadline),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    tokens: dict[str, str] = {}
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    for line in proc.stdout:
        m = re.match(r"\s+\w+ token for (\S+): (\S+)", line)
        if m:
            tokens[m.group(1)] = m.group(2)
        if "database:" in line or time.monotonic() > deadline:
            break
    url = f"http://127.0.0.1:{port}"
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1, trust_env=False).status_code == 200:
                return Server(url, tokens, proc)
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    stop(proc)
    raise RuntimeError("askgate demo did not start")


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_demo(tmp_path_factory.mktemp("inbox"))
    try:
        yield srv
    finally:
        stop(srv.proc)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def expires_in(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")
