"""askgate/server/hot.py: create and answer taken without the router answer exactly as the FastAPI routes do.

Every request below is sent to two apps: the real one (HotPath in place) and one with HotPath removed
(plain FastAPI routing and parameter solving). Status, content type, the names of the headers and the body
must match, once ids and clock readings (which differ between two databases) are masked.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from askgate.server import hot
from askgate.server.app import create_app
from askgate.server.hot import HotPath, _create_params
from askgate.server.settings import Settings
from tests.support import askdocs
from tests.support.lifespan import start_lifespan

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


class Side:
    def __init__(self, app: Any, tokens: dict[str, str]) -> None:
        self.app, self.tokens = app, tokens

    async def send(self, method: str, url: str, who: str | None, **kw: Any) -> httpx.Response:
        headers = dict(kw.pop("headers", {}))
        if who is not None:
            headers["Authorization"] = f"Bearer {self.tokens.get(who, who)}"
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://t") as c:
            return await c.request(method, url, headers=headers, **kw)


async def _side(tmp: Path, name: str, *, hot_path: bool, stack: list[Any]) -> Side:
    app = create_app(Settings(db_url=f"sqlite:///{tmp / (name + '.db')}", auth_cache_seconds=0, log_level="warning"))
    if not hot_path:
        app.hot_path = None
    stack.append(await start_lifespan(app))
    store = app.state.store
    tokens = {"admin": await store.ensure_first_admin()}
    for pid, role in (("agent", "asker"), ("bob", "respondent"), ("eve", "respondent")):
        tokens[pid] = await store.create_token(pid, role)
    return Side(app, tokens)


@pytest.fixture
async def sides(tmp_path: Path) -> AsyncIterator[tuple[Side, Side]]:
    stack: list[Any] = []
    try:
        yield (await _side(tmp_path, "hot", hot_path=True, stack=stack),
               await _side(tmp_path, "plain", hot_path=False, stack=stack))
    finally:
        for stop, task in stack:
            stop.set()
            await task


def masked(resp: httpx.Response) -> tuple[Any, ...]:
    text = STAMP.sub("<t>", UUID.sub("<id>", resp.text))
    names = sorted(k for k in resp.headers if k not in ("date", "server"))
    location = UUID.sub("<id>", resp.headers.get("location", ""))
    return resp.status_code, resp.headers.get("content-type"), names, location, text


async def both(pair: tuple[Side, Side], method: str, url: str | tuple[str, str], who: str | None,
               **kw: Any) -> tuple[httpx.Response, httpx.Response]:
    urls = (url, url) if isinstance(url, str) else url
    a = await pair[0].send(method, urls[0], who, **kw)
    b = await pair[1].send(method, urls[1], who, **kw)
    assert masked(a) == masked(b), (a.text, b.text)
    return a, b


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which requests the hot path itself served."""
    seen: list[str] = []
    real = HotPath._run

    async def spy(self: HotPath, app: Any, scope: Any, receive: Any, send: Any, which: str,
                  params: dict[str, Any]) -> None:
        seen.append(which)
        await real(self, app, scope, receive, send, which, params)

    monkeypatch.setattr(HotPath, "_run", spy)
    return seen


async def test_create_and_answer_match_the_fastapi_routes(sides: tuple[Side, Side], served: list[str]) -> None:
    a2a = askdocs.a2a()
    r, p = await both(sides, "POST", "/v1/asks?respondent=bob", "agent", json=a2a)
    assert r.status_code == 201 and served == ["create"]
    ids = (r.json()["id"], p.json()["id"])
    await both(sides, "POST", "/v1/asks?respondent=bob&respondent=eve&dialect=a2a-elicitation", "agent", json=a2a)
    await both(sides, "POST", "/v1/asks", "agent", json=a2a)  # no respondent
    await both(sides, "POST", "/v1/asks?dialect=nonsense", "agent", json=a2a)
    await both(sides, "POST", "/v1/asks?respondent=bob", "agent", content=b"{not json")
    await both(sides, "POST", "/v1/asks?respondent=bob", "agent", content=b'{"a": 1, "a": 2}')
    await both(sides, "POST", "/v1/asks?respondent=bob", "agent", json={"message": 3})
    await both(sides, "POST", "/v1/asks?respondent=bob", None, json=a2a)
    await both(sides, "POST", "/v1/asks?respondent=bob", "not-a-token", json=a2a)
    await both(sides, "POST", "/v1/asks?respondent=bob", "bob", json=a2a)  # a respondent may not create
    key = {"Idempotency-Key": "k-1"}
    await both(sides, "POST", "/v1/asks?respondent=bob", "agent", json=a2a, headers=key)
    r, _ = await both(sides, "POST", "/v1/asks?respondent=bob", "agent", json=a2a, headers=key)
    assert r.headers["idempotent-replayed"] == "true"
    await both(sides, "POST", "/v1/asks?respondent=eve", "agent", json=a2a, headers=key)  # other query: 409
    assert served.count("create") == 13

    answer = {"action": "accept", "content": {"name": "Ada"}}
    urls = tuple(f"/v1/asks/{i}/answer" for i in ids)
    await both(sides, "POST", urls, "eve", json=answer)  # not offered to eve: 403
    await both(sides, "POST", urls, "bob", json={"action": "accept", "content": {"name": 7}})  # invalid: 422
    await both(sides, "POST", urls, "bob", content=b"[")
    await both(sides, "POST", urls, None, json=answer)
    r, _ = await both(sides, "POST", urls, "bob", json=answer, headers={"Idempotency-Key": "a-1"})
    assert r.status_code == 200 and r.json()["state"] == "answered"
    await both(sides, "POST", urls, "bob", json=answer, headers={"Idempotency-Key": "a-1"})  # replay
    r, _ = await both(sides, "POST", urls, "bob", json={"action": "decline"})  # lost: 409 with the outcome
    assert r.status_code == 409 and r.json()["outcome"]["value"] == {"name": "Ada"}
    await both(sides, "POST", "/v1/asks/no-such-ask/answer", "bob", json=answer)
    assert served.count("answer") == 8


async def test_what_the_hot_path_leaves_to_fastapi(sides: tuple[Side, Side], served: list[str]) -> None:
    a2a = askdocs.a2a()
    for query in ("timeout=5&respondent=bob", "respondent=bob&respondent_kind=agent", "respondent=bob&rule=all",
                  "respondent=", "dialect=a2a-elicitation&dialect=acs", "timeout=-1", "quorum=0&respondent=bob",
                  "routing=%7B%7D", "respondent=bob&extra=1"):
        await both(sides, "POST", f"/v1/asks?{query}", "agent", json=a2a)
    await both(sides, "POST", "/v1/asks/a/b/answer", "bob", json={})  # no route: 404 from FastAPI
    await both(sides, "POST", "/v1/asks//answer", "bob", json={})
    await both(sides, "GET", "/v1/asks?respondent=bob", "agent")
    assert served == []


def test_create_params_bind_as_fastapi_does() -> None:
    assert _create_params(b"") == {"respondent": None, "dialect": None}
    assert _create_params(b"respondent=a&respondent=b%20c") == {"respondent": ["a", "b c"], "dialect": None}
    assert _create_params(b"dialect=acs&respondent=%C3%A9") == {"respondent": ["\u00e9"], "dialect": "acs"}
    for query in (b"respondent=", b"dialect=", b"dialect=a&dialect=b", b"timeout=1", b"respondent=a&x=1",
                  b"respondent"):
        assert _create_params(query) is None, query
    assert hot.CREATE_PARAMS == {"respondent", "dialect"}


async def test_an_unexpected_error_on_the_hot_path_is_a_bare_500(sides: tuple[Side, Side], served: list[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The hot path runs in front of FastAPI's middleware stack, so it must guard itself as CrashGuard does."""
    from askgate.broker import Broker

    async def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Broker, "create", broken)
    r, _ = await both(sides, "POST", "/v1/asks?respondent=bob", "agent", json=askdocs.a2a())
    assert r.status_code == 500 and r.json()["code"] == "internal" and "a bug" not in r.text
    assert served == ["create"]
