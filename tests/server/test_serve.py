"""End to end against real `askgate serve` processes: SQLite with no set-up, the Python client, SSE,
callbacks, a scan of everything askgate wrote for planted secrets, and two processes on one PostgreSQL
and on one SQLite file."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import httpx
import pytest

import askgate
from askgate.client import AskgateHTTPError
from tests.support import askdocs, postgres, serve
from tests.support.scale import examples


@pytest.fixture(scope="module")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[serve.Served]:
    workdir = tmp_path_factory.mktemp("serve-sqlite")
    served = serve.ready(serve.start(workdir))
    yield served
    served.stop()


class _Sink(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        _Sink.received.append((dict(self.headers), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_first_start_creates_the_database_and_prints_one_admin_token(sqlite_server: serve.Served) -> None:
    token = sqlite_server.first_token()
    assert token is not None and token.startswith("agk_")
    assert (sqlite_server.out.parent / ".askgate" / "askgate.db").is_file()
    with askgate.Client(sqlite_server.url, token) as admin:
        assert admin.list()["items"] == [] or isinstance(admin.list()["items"], list)
    assert httpx.get(sqlite_server.url + "/openapi.json").json()["info"]["title"] == "askgate"


def _tokens(served: serve.Served, *pairs: tuple[str, str], admin: str | None = None) -> dict[str, str]:
    admin = admin or served.first_token()
    out = {}
    for principal, role in pairs:
        r = httpx.post(served.url + "/v1/tokens", json={"principal": principal, "role": role},
                       headers={"Authorization": f"Bearer {admin}"})
        assert r.status_code in (201, 409), r.text
        if r.status_code == 201:
            out[principal] = r.json()["token"]
    return out


def test_client_elicit_waits_for_the_typed_answer(sqlite_server: serve.Served) -> None:
    toks = _tokens(sqlite_server, ("client-agent", "asker"), ("client-bob", "respondent"))
    results: dict[str, object] = {}

    def ask() -> None:
        with askgate.Client(sqlite_server.url, toks["client-agent"]) as c:
            results["answer"] = c.elicit("Your name?", askdocs.a2a()["requestedSchema"], respondent="client-bob")

    t = threading.Thread(target=ask)
    t.start()
    with askgate.Client(sqlite_server.url, toks["client-bob"]) as bob:
        for _ in range(200):
            items = bob.list(state="delivered")["items"]
            if items:
                break
            time.sleep(0.05)
        with pytest.raises(AskgateHTTPError) as bad:
            bob.answer(items[0]["id"], {"action": "accept", "content": {"name": ""}})
        assert bad.value.status == 422 and bad.value.faults[0]["pointer"] == "/content/name"
        bob.answer(items[0]["id"], {"action": "accept", "content": {"name": "Ada"}})
    t.join(30)
    answer = results["answer"]
    assert isinstance(answer, askgate.core.model.Answer)
    assert answer.outcome == "accept" and answer.value == {"name": "Ada"}


def test_sse_stream_and_callback(sqlite_server: serve.Served) -> None:
    toks = _tokens(sqlite_server, ("sse-agent", "asker"), ("sse-bob", "respondent"))
    sink = HTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    try:
        with askgate.Client(sqlite_server.url, toks["sse-agent"]) as agent:
            ask = agent.create(askdocs.aqp(), respondents=["sse-bob"])
            r = httpx.post(f"{sqlite_server.url}/v1/asks/{ask['id']}/callbacks",
                           json={"url": f"http://127.0.0.1:{sink.server_port}/hook"},
                           headers={"Authorization": f"Bearer {toks['sse-agent']}"})
            assert r.status_code == 201
            bad = httpx.post(f"{sqlite_server.url}/v1/asks/{ask['id']}/callbacks",
                             json={"url": "http://user:pw@example.com/hook"},
                             headers={"Authorization": f"Bearer {toks['sse-agent']}"})
            assert bad.status_code == 422 and bad.json()["faults"][0]["rule"] == "callback.userinfo"
            events: list[tuple[str, dict]] = []

            def listen() -> None:
                with httpx.stream("GET", f"{sqlite_server.url}/v1/asks/{ask['id']}/events", timeout=30,
                                  headers={"Authorization": f"Bearer {toks['sse-agent']}"}) as resp:
                    name = ""
                    for line in resp.iter_lines():
                        if line.startswith("event:"):
                            name = line.split(":", 1)[1].strip()
                        elif line.startswith("data:"):
                            events.append((name, json.loads(line.split(":", 1)[1])))
                            if name == "outcome":
                                return

            t = threading.Thread(target=listen)
            t.start()
            time.sleep(0.5)
            with askgate.Client(sqlite_server.url, toks["sse-bob"]) as bob:
                bob.answer(ask["id"], askdocs.aqp_answer("hold"))
            t.join(20)
            assert events[0][0] == "state" and events[-1][0] == "outcome"
            assert events[-1][1]["response"]["answer"]["value"] == "hold"
            for _ in range(100):
                if _Sink.received:
                    break
                time.sleep(0.05)
            headers, body = _Sink.received[-1]
            assert json.loads(body)["id"] == ask["id"] and json.loads(body)["state"] == "answered"
            assert headers["Idempotency-Key"].startswith(ask["id"])
    finally:
        sink.shutdown()


def test_secrets_never_appear_in_anything_askgate_writes(tmp_path: Path) -> None:
    served = serve.ready(serve.start(tmp_path, name="secrets"))
    planted_auth = "Bearer PLANTED-aqp-credential-7Qx9"
    seen: list[str] = []

    def keep(resp: httpx.Response) -> httpx.Response:
        seen.append(json.dumps(dict(resp.headers)) + resp.text)
        return resp

    try:
        admin = served.first_token()
        assert admin is not None
        toks = _tokens(served, ("s-agent", "asker"), ("s-bob", "respondent"), ("lead", "respondent"))
        h = {k: {"Authorization": f"Bearer {v}"} for k, v in toks.items()}
        with httpx.Client(base_url=served.url) as c:
            ask = keep(c.post("/v1/asks", params={"respondent": "s-bob"}, headers=h["s-agent"],
                              json=askdocs.aqp(authorization=planted_auth))).json()
            assert ask["state"] == "delivered"
            broken = askdocs.aqp(authorization=planted_auth)
            broken["prompt"] = ""
            keep(c.post("/v1/asks", headers=h["s-agent"], json=broken))
            held = askdocs.aqp(authorization=planted_auth, timing="deferred")
            keep(c.post("/v1/asks", headers=h["s-agent"], json=held, params={"respondent": "s-bob"}))
            keep(c.get("/v1/asks", headers=h["s-bob"]))
            keep(c.get(f"/v1/asks/{ask['id']}", headers=h["s-bob"]))
            keep(c.get("/v1/asks", headers={"Authorization": "Bearer PLANTED-bad-token-55"}))
            keep(c.post(f"/v1/asks/{ask['id']}/answer", headers=h["s-bob"], json={"format": "choice", "value": 1}))
            keep(c.post(f"/v1/asks/{ask['id']}/answer", headers=h["s-bob"], json=askdocs.aqp_answer()))
            keep(c.get(f"/v1/asks/{ask['id']}/audit", headers=h["s-agent"]))
            acs = keep(c.post("/v1/asks", params={"dialect": "acs"}, headers=h["s-agent"], json=askdocs.acs())).json()
            keep(c.post(f"/v1/asks/{acs['id']}/answer", headers=h["lead"], json={"decision": "allow"}))
            keep(c.get(f"/v1/asks/{acs['id']}/audit", headers=h["s-agent"]))
    finally:
        served.stop()
    written = b""
    for f in sorted(tmp_path.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.name == "secrets.out":  # the first admin token is printed once, on purpose, on stdout
                data = data.replace(admin.encode(), b"")
            written += data
    blob = written + "".join(seen).encode()
    assert (tmp_path / ".askgate" / "askgate.db").is_file()
    for secret in (planted_auth, "PLANTED-aqp-credential-7Qx9", "PLANTED-bad-token-55", admin, *toks.values()):
        assert secret.encode() not in blob, f"secret leaked: {secret[:12]}..."
    assert b'"state": "answered"' in blob or b'"state":"answered"' in blob  # the scan saw real traffic


def test_two_processes_on_one_postgresql(tmp_path: Path) -> None:
    _two_processes_behave_as_one(tmp_path, postgres.fresh_database())


def test_two_processes_on_one_sqlite_file(tmp_path: Path) -> None:
    """Started together on a file that does not exist yet: one migration, one first admin, wake-ups across
    processes (askgate/broker/sqlite_peers.py) and each deadline settled once."""
    _two_processes_behave_as_one(tmp_path, str(tmp_path / "shared.db"))


def _two_processes_behave_as_one(tmp_path: Path, url: str) -> None:
    a = serve.start(tmp_path, db=url, name="a")
    b = serve.start(tmp_path, db=url, name="b")
    try:
        serve.ready(a)
        serve.ready(b)
        tokens = [t for t in (a.first_token(), b.first_token()) if t]
        assert len(tokens) == 1  # exactly one process created the first admin
        toks = _tokens(a, ("pg-agent", "asker"), ("pg-bob", "respondent"), ("pg-rival", "respondent"),
                       admin=tokens[0])
        ha = {"Authorization": f"Bearer {toks['pg-agent']}"}
        hb = {"Authorization": f"Bearer {toks['pg-bob']}"}
        ask = httpx.post(a.url + "/v1/asks", params={"respondent": "pg-bob"}, json=askdocs.aqp(), headers=ha).json()
        got: dict[str, object] = {}

        def wait_on_a() -> None:
            t0 = time.monotonic()
            got["view"] = httpx.get(f"{a.url}/v1/asks/{ask['id']}/wait", params={"timeout": 30}, headers=ha,
                                    timeout=40).json()
            got["waited"] = time.monotonic() - t0

        t = threading.Thread(target=wait_on_a)
        t.start()
        time.sleep(1.0)
        answered_at = time.monotonic()
        r = httpx.post(f"{b.url}/v1/asks/{ask['id']}/answer", json=askdocs.aqp_answer(), headers=hb)
        assert r.status_code == 200
        t.join(30)
        view = got["view"]
        assert isinstance(view, dict) and view["state"] == "answered"
        assert time.monotonic() - answered_at < 5  # woken across processes, not by the 30 s timeout

        # deadlines: both processes run a scheduler; each ask is settled exactly once
        ids = [httpx.post(b.url + "/v1/asks", params={"respondent": "pg-bob"}, headers=ha,
                          json=askdocs.aqp(expires_in=1.0)).json()["id"] for _ in range(10)]
        for ask_id in ids:
            v = httpx.get(f"{a.url}/v1/asks/{ask_id}/wait", params={"timeout": 20}, headers=ha, timeout=30).json()
            assert v["state"] == "expired"
            chain = httpx.get(f"{a.url}/v1/asks/{ask_id}/audit", headers=ha).json()
            assert chain["verification"]["ok"]
            assert [e["step_type"] for e in chain["entries"]].count("timeout") == 1

        # answer races across the processes: one respondent answers on a, the other on b, at once
        asyncio.run(_races_across(a.url, b.url, ha, {"Authorization": f"Bearer {toks['pg-rival']}"}, hb,
                                  examples(200)))
    finally:
        a.stop()
        b.stop()


async def _races_across(url_a: str, url_b: str, asker: dict[str, str], on_a: dict[str, str],
                        on_b: dict[str, str], n: int) -> None:
    """``n`` asks offered to two respondents; each is answered on both processes at the same moment:
    exactly one answer wins, the other gets 409 with the winning outcome."""
    sem = asyncio.Semaphore(16)
    limits = httpx.Limits(max_connections=32, keepalive_expiry=2.0)
    async with httpx.AsyncClient(timeout=30, limits=limits) as c:

        async def race(i: int) -> None:
            async with sem:
                ask = (await c.post(url_a + "/v1/asks", json=askdocs.aqp(), headers=asker,
                                    params=[("respondent", "pg-bob"), ("respondent", "pg-rival")])).json()
                rs = await asyncio.gather(
                    c.post(f"{url_a}/v1/asks/{ask['id']}/answer", headers=on_a, json=askdocs.aqp_answer("hold")),
                    c.post(f"{url_b}/v1/asks/{ask['id']}/answer", headers=on_b, json=askdocs.aqp_answer("ship")))
            assert sorted(r.status_code for r in rs) == [200, 409], [r.text for r in rs]
            win = next(r for r in rs if r.status_code == 200).json()["outcome"]
            assert next(r for r in rs if r.status_code == 409).json()["outcome"] == win

        await asyncio.gather(*(race(i) for i in range(n)))
