"""A real askgate (uvicorn on 127.0.0.1, SQLite) and mcp SDK client sessions for the MCP wire tests."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from askgate.server.app import create_app
from askgate.server.settings import Settings
from askgate.store import Store
from tests.support.tls_peers import uvicorn_thread

PRINCIPALS = (("agent", "asker"), ("other-agent", "asker"), ("alice", "respondent"), ("bob", "respondent"),
              ("carol", "respondent"), ("dave", "respondent"), ("erin", "respondent"), ("root", "admin"))


@dataclass
class Askgate:
    url: str
    tokens: dict[str, str]
    app: Any

    def http(self, who: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.tokens[who]}"},
                            timeout=30, trust_env=False)

    @contextlib.asynccontextmanager
    async def session(self, who: str, **kwargs: Any) -> AsyncIterator[ClientSession]:
        """An initialized mcp SDK ClientSession to askgate's /mcp, authenticated as ``who``."""
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.tokens[who]}"},
                                  timeout=httpx2.Timeout(60.0), trust_env=False)
        async with (http, streamable_http_client(self.url + "/mcp", http_client=http) as (read, write),
                    ClientSession(read, write, **kwargs) as session):
            await session.initialize()
            yield session


async def _make_tokens(db_url: str) -> dict[str, str]:
    store = await Store.open(db_url, secret_key="mcp-tests")
    try:
        return {pid: await store.create_token(pid, role) for pid, role in PRINCIPALS}
    finally:
        await store.close()


def make_gate(tmp: Any) -> Iterator[Askgate]:
    db_url = f"sqlite+aiosqlite:///{tmp / 'askgate.db'}"
    tokens = asyncio.run(_make_tokens(db_url))
    app = create_app(Settings(db_url=db_url, secret_key="mcp-tests", auth_cache_seconds=0, log_level="warning",
                              sqlite_synchronous="NORMAL"))
    with uvicorn_thread(app) as url:
        yield Askgate(url, tokens, app)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Askgate]:
    yield from make_gate(tmp_path_factory.mktemp("mcp"))


@dataclass
class Person:
    """A person answering through the HTTP API in a thread: each ask offered to them gets ``reply(view)``."""

    gate: Askgate
    who: str
    reply: Callable[[dict[str, Any]], dict[str, Any] | None]
    seen: list[dict[str, Any]] = field(default_factory=list)
    responses: list[httpx.Response] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        done: set[str] = set()
        with self.gate.http(self.who) as http:
            while not self._stop.is_set():
                for view in http.get("/v1/asks", params={"state": "delivered"}).json()["items"]:
                    if view["id"] in done:
                        continue
                    done.add(view["id"])
                    self.seen.append(view)
                    payload = self.reply(view)
                    if payload is not None:
                        self.responses.append(http.post(f"/v1/asks/{view['id']}/answer", json=payload))
                time.sleep(0.05)

    @contextlib.contextmanager
    def answering(self) -> Iterator[Person]:
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(10)
