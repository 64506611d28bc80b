"""The HTTP API in-process (httpx ASGI transport) on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest

from askgate.server.app import create_app
from askgate.server.settings import Settings
from tests.support import askdocs
from tests.support.lifespan import start_lifespan

PROBLEM = "application/problem+json"


@dataclass
class Api:
    app: object
    tokens: dict[str, str]

    def client(self, who: str | None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://askgate.test",
                                 headers=headers)


@pytest.fixture
async def api(db_url: str) -> AsyncIterator[Api]:
    """The app with its lifespan entered and left in one task (anyio cancel scopes in mounted apps'
    lifespans must exit in the task that entered them; pytest-asyncio tears fixtures down in another)."""
    app = create_app(Settings(db_url=db_url, auth_cache_seconds=0, log_level="warning"))
    stop, task = await start_lifespan(app)
    try:
        store = app.state.store
        tokens = {"admin": await store.ensure_first_admin()}
        for pid, role in (("agent", "asker"), ("other-agent", "asker"), ("bob", "respondent"),
                          ("eve", "respondent"), ("lead", "respondent")):
            tokens[pid] = await store.create_token(pid, role)
        tokens.update({f"r{i}": await store.create_token(f"r{i}", "respondent") for i in range(10)})
        yield Api(app, tokens)
    finally:
        stop.set()
        await task


def assert_problem(resp: httpx.Response, status: int, code: str | None = None) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith(PROBLEM)
    body = resp.json()
    assert body["status"] == status and body["type"].startswith("https://") and isinstance(body["faults"], list)
    if code is not None:
        assert body["code"] == code
    assert "Traceback" not in resp.text
    return body


async def test_vertical_slice_over_http(api: Api) -> None:
    async with api.client("agent") as agent, api.client("bob") as bob:
        r = await agent.post("/v1/asks", params={"respondent": "bob"}, json=askdocs.a2a())
        assert r.status_code == 201 and r.headers["location"] == f"/v1/asks/{r.json()['id']}"
        ask = r.json()
        assert ask["dialect"] == "a2a-elicitation" and ask["state"] == "delivered" and ask["offered_to"] == ["bob"]
        waiting = asyncio.create_task(agent.get(f"/v1/asks/{ask['id']}/wait", params={"timeout": 20}))
        listing = (await bob.get("/v1/asks", params={"state": "delivered"})).json()
        assert [a["id"] for a in listing["items"]] == [ask["id"]]
        r = await bob.post(f"/v1/asks/{ask['id']}/answer", json={"action": "accept", "content": {"name": "Ada"}})
        assert r.status_code == 200 and r.json()["state"] == "answered"
        done = (await asyncio.wait_for(waiting, 10)).json()
        assert done["terminal"] and done["response"] == {"action": "accept", "content": {"name": "Ada"}}
        assert done["outcome"]["value"] == {"name": "Ada"}
        audit = (await agent.get(f"/v1/asks/{ask['id']}/audit")).json()
        assert audit["verification"]["ok"] and [e["step_type"] for e in audit["entries"]] == ["ask", "offer", "answer"]


async def test_problem_documents(api: Api) -> None:
    async with api.client("agent") as agent, api.client(None) as anon:
        assert_problem(await anon.get("/v1/asks"), 401, "unauthorized")
        bad_token = httpx.AsyncClient(transport=httpx.ASGITransport(app=api.app), base_url="http://t",
                                      headers={"Authorization": "Bearer agk_nope"})
        async with bad_token:
            assert_problem(await bad_token.get("/v1/asks"), 401)
        body = assert_problem(await agent.post("/v1/asks", content=b'{"message": "x", "message": "y"}'), 400, "not_json")
        assert body["faults"][0]["rule"] == "json.duplicate-key"
        assert_problem(await agent.post("/v1/asks", content=b"{nope"), 400, "not_json")
        body = assert_problem(await agent.post("/v1/asks", json={"message": 3, "requestedSchema": {}},
                                               params={"dialect": "a2a-elicitation"}), 422, "invalid_request")
        assert {"pointer": "/message", "message": body["faults"][0]["message"], "rule": "type"} in body["faults"]
        aqp = askdocs.aqp()
        del aqp["prompt"]
        body = assert_problem(await agent.post("/v1/asks", json=aqp), 422)
        assert any(f["rule"] == "required" for f in body["faults"])
        assert_problem(await agent.post("/v1/asks", json={"hello": 1}), 422, "unknown_dialect")
        assert_problem(await agent.post("/v1/asks", json=askdocs.a2a(), params={"dialect": "klingon"}), 422)
        assert_problem(await agent.get("/v1/asks/does-not-exist"), 404, "not_found")
        assert_problem(await agent.get("/v1/nowhere"), 404)
        assert_problem(await agent.get("/v1/asks", params={"limit": "many"}), 422, "invalid_parameters")
        assert_problem(await agent.get("/v1/asks", params={"cursor": "garbage"}), 422)
        assert_problem(await agent.post("/v1/asks", json=askdocs.a2a(), params={"routing": "{"}), 400)


async def test_roles(api: Api) -> None:
    async with api.client("agent") as agent, api.client("other-agent") as other, api.client("bob") as bob, \
            api.client("eve") as eve, api.client("admin") as admin:
        ask = (await agent.post("/v1/asks", params={"respondent": "bob"}, json=askdocs.aqp())).json()
        assert_problem(await bob.post("/v1/asks", json=askdocs.aqp()), 403, "forbidden")
        assert_problem(await other.get(f"/v1/asks/{ask['id']}"), 404)
        assert_problem(await eve.get(f"/v1/asks/{ask['id']}"), 404)
        assert (await bob.get(f"/v1/asks/{ask['id']}")).status_code == 200
        assert (await admin.get(f"/v1/asks/{ask['id']}")).status_code == 200
        assert (await other.get("/v1/asks")).json()["items"] == []
        assert (await eve.get("/v1/asks")).json()["items"] == []
        assert len((await admin.get("/v1/asks")).json()["items"]) == 1
        # only an offered respondent may answer; a refusal is audited
        for client in (eve, admin, agent):
            assert_problem(await client.post(f"/v1/asks/{ask['id']}/answer", json=askdocs.aqp_answer()), 403)
        assert_problem(await bob.post(f"/v1/asks/{ask['id']}/withdraw"), 403)
        assert_problem(await bob.post("/v1/tokens", json={"principal": "x", "role": "admin"}), 403)
        audit = (await admin.get(f"/v1/asks/{ask['id']}/audit")).json()
        assert [e.get("respondent") for e in audit["entries"] if e["step_type"] == "refused"] == ["eve", "admin", "agent"]
        made = await admin.post("/v1/tokens", json={"principal": "carol", "role": "respondent"})
        assert made.status_code == 201 and made.json()["token"].startswith("agk_")
        assert_problem(await admin.post("/v1/tokens", json={"principal": "", "role": "king"}), 422)


async def test_idempotency_key(api: Api) -> None:
    async with api.client("agent") as agent:
        doc = askdocs.a2a()
        one = await agent.post("/v1/asks", json=doc, params={"respondent": "bob"}, headers={"Idempotency-Key": "k-1"})
        two = await agent.post("/v1/asks", json=doc, params={"respondent": "bob"}, headers={"Idempotency-Key": "k-1"})
        assert one.status_code == two.status_code == 201 and one.json()["id"] == two.json()["id"]
        assert two.headers.get("idempotent-replayed") == "true"
        other = await agent.post("/v1/asks", json=askdocs.a2a("Another?"), params={"respondent": "bob"},
                                 headers={"Idempotency-Key": "k-1"})
        assert_problem(other, 409, "idempotency_conflict")
        listing = (await agent.get("/v1/asks")).json()["items"]
        assert len(listing) == 1


async def test_racing_answers_over_http(api: Api) -> None:
    async with api.client("agent") as agent:
        people = [f"r{i}" for i in range(10)]
        ask = (await agent.post("/v1/asks", params=[("respondent", p) for p in people], json=askdocs.aqp())).json()
        clients = [api.client(p) for p in people]
        try:
            results = await asyncio.gather(*(c.post(f"/v1/asks/{ask['id']}/answer",
                                                    json=askdocs.aqp_answer("ship" if i % 2 else "hold"))
                                             for i, c in enumerate(clients)))
        finally:
            for c in clients:
                await c.aclose()
        wins = [r for r in results if r.status_code == 200]
        assert len(wins) == 1
        winner = wins[0].json()["outcome"]
        for r in results:
            if r.status_code != 200:
                body = assert_problem(r, 409, "conflict")
                assert body["outcome"] == winner and body["state"] == "answered"


async def test_consents_and_signals_over_http(api: Api) -> None:
    async with api.client("agent") as agent, api.client("bob") as bob, api.client("admin") as admin:
        doc = askdocs.aqp(consent="ask_once", scope="weekly-survey", timing="deferred")
        ask = (await agent.post("/v1/asks", params={"respondent": "bob"}, json=doc)).json()
        assert ask["state"] == "pending" and ask["hold"] == "held"
        assert_problem(await agent.post(f"/v1/asks/{ask['id']}/signal", json={"signal": "bogus"}), 422)
        ask = (await agent.post(f"/v1/asks/{ask['id']}/signal", json={"signal": "release"})).json()
        assert ask["hold"] == "awaiting_consent"
        r = await bob.post(f"/v1/asks/{ask['id']}/consent", json={"granted": True})
        assert r.status_code == 200 and r.json()["hold"] is None
        mine = (await bob.get("/v1/consents")).json()["items"]
        assert [(c["respondent"], c["scope"], c["granted"]) for c in mine] == [("bob", "weekly-survey", True)]
        assert_problem(await bob.get("/v1/consents", params={"respondent": "eve"}), 403)
        assert len((await admin.get("/v1/consents")).json()["items"]) == 1
        assert (await bob.delete("/v1/consents", params={"scope": "weekly-survey"})).status_code == 200
        assert (await bob.get("/v1/consents")).json()["items"] == []
        assert_problem(await bob.delete("/v1/consents", params={"scope": "weekly-survey"}), 404)


async def test_acs_session_audit_and_intent_over_http(api: Api) -> None:
    async with api.client("agent") as agent, api.client("lead") as lead:
        binding = json.dumps({"session_id": "s-77", "step_id": "st-1", "request_id": "rq-1"})
        ask = (await agent.post("/v1/asks", params={"dialect": "acs", "binding": binding},
                                json=askdocs.acs(session=True))).json()
        body = assert_problem(await lead.post(f"/v1/asks/{ask['id']}/answer", json={"decision": "ask"}), 422)
        assert body["acs_error"]["code"] == -32003
        grant = {"decision": "allow", "reasoning": "fine", "intent_extension": {
            "capabilities": [{"tool": "shell", "operation": "exec"}], "scope": "session"}}
        done = (await lead.post(f"/v1/asks/{ask['id']}/answer", json=grant)).json()
        session = (await agent.get("/v1/sessions/s-77/audit")).json()
        assert session["verification"]["ok"] and session["length"] >= 4
        assert done["response"]["result"]["chain_hash"] == session["entries"][-1]["entry_hash"]
        intent = (await agent.get("/v1/sessions/s-77/intent")).json()
        assert intent["capabilities"] == [{"tool": "shell", "operation": "exec"}]
        async with api.client("other-agent") as other:
            assert_problem(await other.get("/v1/sessions/s-77/audit"), 404)


async def test_openapi_lists_the_endpoints(api: Api) -> None:
    async with api.client(None) as anon:
        spec = (await anon.get("/openapi.json")).json()
    for path in ("/v1/asks", "/v1/asks/{ask_id}", "/v1/asks/{ask_id}/answer", "/v1/asks/{ask_id}/wait",
                 "/v1/asks/{ask_id}/events", "/v1/asks/{ask_id}/audit", "/v1/consents", "/v1/asks/{ask_id}/callbacks"):
        assert path in spec["paths"]


async def test_an_unexpected_error_is_a_bare_500_problem(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    async def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("internal detail that must not leak")

    monkeypatch.setattr(api.app.state.broker, "list_for", boom)
    async with api.client("agent") as agent:
        r = await agent.get("/v1/asks")
    body = assert_problem(r, 500, "internal")
    assert "internal detail" not in r.text and "RuntimeError" not in r.text and body["faults"] == []
