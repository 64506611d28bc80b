"""Any ask can be answered by any respondent kind (issue #5 item 6): one test per pair of the four asker
dialects (A2A typed elicitation, MCP elicitation, AQP, ACS) and the three respondent kinds (a person in
the inbox or through the API, an agent over A2A, a service over a signed webhook).

One real askgate (uvicorn, HTTPS, SQLite) serves every test. Askers use their own dialect's real client:
the a2a-sdk client against askgate's A2A agent, the mcp SDK client against askgate's MCP server, AQP's
``/aqp/queries`` and ACS's JSON-RPC ``/acs``. Respondents are real peers on 127.0.0.1: a person signed in
to the web inbox (A2UI action endpoint) or using the API with their token; a scripted a2a-sdk agent
(HTTPS) that askgate asks over A2A; an HTTPS service (mutual TLS) that verifies askgate's signed webhook
and answers through the API. Every test checks that the answer arrives in the asker's own dialect.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from askgate.channels.signing import ReplayGuard, verify_signature
from tests.support.tls_peers import Pki, Received, https_server
from tests.support.wire_server import Askgate, running_askgate

SECRET = "whsec-cross-dialect-4242"
PRINCIPALS = {"asker": "asker", "alice": "respondent", "svc": "respondent", "admin": "admin"}
FIELD = "approve"
FORM_SCHEMA = {"type": "object", "properties": {FIELD: {"type": "boolean", "title": "Approve?"}},
               "required": [FIELD]}


# --------------------------------------------------------------------------------------------------
# The server and the three respondents (module-scoped: one of each serves all twelve tests).
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki.make()


@pytest.fixture(scope="module")
def gate(pki: Pki, tmp_path_factory: pytest.TempPathFactory, agent: AgentPeer,
         service: ServicePeer) -> Iterator[Askgate]:
    """askgate, whose respondent directory knows ``bot`` (the A2A agent) and ``svc`` (the service): askers
    that can only name an id (MCP ``ask_human``) reach them too."""
    tmp = tmp_path_factory.mktemp("cross")
    pki.client_cert("askgate.test").private_key_and_cert_chain_pem.write_to_path(str(tmp / "client.pem"))
    directory = (("bot", "agent", agent.url), ("svc", "service", service.url))
    with running_askgate(tmp, pki, PRINCIPALS, webhook_secrets=(("svc", SECRET),), respondent_directory=directory,
                         outbound_client_cert=str(tmp / "client.pem")) as g:
        service.gate = g
        yield g


def decision_for(schema: dict[str, Any]) -> dict[str, Any]:
    """What every respondent decides: approve (a form) or allow (an ACS decision form)."""
    props = schema.get("properties", {})
    if "decision" in props:
        return {"decision": "allow", "reasoning": "checked and fine", "selected_option": "once"}
    return {FIELD: True}


@dataclass
class AgentPeer:
    url: str
    seen: Any


@pytest.fixture(scope="module")
def agent(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentPeer]:
    """A scripted a2a-sdk agent over HTTPS: it answers whatever askgate puts to it with the typed part."""
    from tests.wire.a2a.agent import running_agent

    def script(n: int, msg: dict[str, Any], task: dict[str, Any] | None) -> tuple[str, Any]:
        typed = next(p["data"]["elicitation/v1"] for p in msg["parts"] if "elicitation/v1" in p.get("data", {}))
        return "complete", {"action": "accept", "content": decision_for(typed["requestedSchema"])}

    with running_agent(script, ssl=pki.write_files(tmp_path_factory.mktemp("agent"))) as (url, executor):
        yield AgentPeer(url, executor.seen)


class ServicePeer:
    """A service respondent: verifies each signed webhook, then answers through askgate's API."""

    def __init__(self) -> None:
        self.gate: Askgate | None = None  # set once askgate runs (it is started after its respondents)
        self.guard = ReplayGuard()
        self.offers: list[dict[str, Any]] = []
        self.answers: list[httpx.Response] = []
        self.url = ""

    def __call__(self, rec: Received) -> tuple[int, bytes]:
        verify_signature(SECRET, rec.body, rec.headers.get("askgate-signature"), replay_guard=self.guard)
        offer = json.loads(rec.body)
        self.offers.append(offer)
        threading.Thread(target=self.answer, args=(offer,), daemon=True).start()
        return 202, b"{}"

    def answer(self, offer: dict[str, Any]) -> None:
        ask = offer["ask"]
        assert self.gate is not None
        with self.gate.client("svc") as c:
            if ask["dialect"] == "acs":  # an ACS approver answers over ACS (bearer token = approver id)
                body = {"jsonrpc": "2.0", "id": 1, "method": "ask/answer",
                        "params": {"ask_id": offer["ask_id"], "decision": decision_for(
                            {"properties": {"decision": {}, "selected_option": {}}})}}
                self.answers.append(c.post("/acs", json=body))
            else:
                self.answers.append(c.post(offer["links"]["answer"],
                                           json={"outcome": "accept", "value": {FIELD: True}}))


@pytest.fixture(scope="module")
def service(pki: Pki) -> Iterator[ServicePeer]:
    peer = ServicePeer()
    with https_server(pki, peer, require_client_cert=True) as srv:
        peer.url = srv.url + "/askgate/offers"
        yield peer


def answer_in_inbox(gate: Askgate, prompt: str, principal: str = "alice", timeout: float = 20.0) -> dict[str, Any]:
    """A person signs in to the web inbox, finds the ask and presses Accept with the box ticked: the A2UI
    ``userAction`` the inbox page's script posts to the inbox's action endpoint (session cookie + CSRF)."""
    with httpx.Client(base_url=gate.url, verify=gate.pki.client_context(), trust_env=False, timeout=20,
                      follow_redirects=False) as c:
        nonce = re.search(r'name="csrf" value="([^"]+)"', c.get("/").text)
        assert nonce
        assert c.post("/inbox/login", data={"csrf": nonce.group(1), "token": gate.tokens[principal]}).status_code == 303
        csrf = re.search(r'<meta name="csrf-token" content="([^"]+)"', c.get("/").text)
        assert csrf
        ask_id = find_offered(gate, prompt, principal, timeout)
        event = {"version": "v0.9", "action": {
            "name": "elicitation.accept", "surfaceId": f"elicit-{ask_id}", "sourceComponentId": "btn-accept",
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"), "context": {FIELD: True}}}
        r = c.post(f"/inbox/asks/{ask_id}/action", json=event, headers={"X-CSRF-Token": csrf.group(1)})
        assert r.status_code == 200, r.text
        return dict(r.json())


def find_offered(gate: Askgate, prompt: str, principal: str = "alice", timeout: float = 20.0) -> str:
    end = time.monotonic() + timeout
    with gate.client(principal) as c:
        while True:
            items = c.get("/v1/asks", params={"state": "delivered"}).json()["items"]
            mine = [i["id"] for i in items if i["prompt"].startswith(prompt)]
            if mine:
                return str(mine[0])
            assert time.monotonic() < end, f"never offered: {prompt}"
            time.sleep(0.05)


def answer_by_api_acs(gate: Askgate, prompt: str) -> dict[str, Any]:
    """A person (the approver) answers an ACS ASK with their own token over ACS."""
    ask_id = find_offered(gate, prompt)
    with gate.client("alice") as c:
        body = {"jsonrpc": "2.0", "id": 9, "method": "ask/answer",
                "params": {"ask_id": ask_id, "decision": {"decision": "allow", "reasoning": "checked and fine",
                                                          "selected_option": "once"}}}
        return dict(c.post("/acs", json=body).json())


# --------------------------------------------------------------------------------------------------
# The askers, each in its own dialect.
# --------------------------------------------------------------------------------------------------


def respondent_for(kind: str, agent: AgentPeer, service: ServicePeer) -> dict[str, Any]:
    if kind == "human":
        return {"kind": "human", "id": "alice"}
    if kind == "agent":
        return {"kind": "agent", "id": "bot", "endpoint": agent.url}
    return {"kind": "service", "id": "svc", "endpoint": service.url}


async def in_background(fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.to_thread(fn, *args)


async def ask_a2a(gate: Askgate, respondent: dict[str, Any], prompt: str,
                  human: Callable[[], Awaitable[Any]] | None) -> dict[str, Any]:
    """An A2A asker (a2a-sdk client) sends an elicitation/v1 request; returns the elicitation/v1 response
    in the completed task's artifact."""
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import GetTaskRequest
    from google.protobuf import json_format

    from tests.wire.a2a.conftest import send, user_message

    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {gate.tokens['asker']}"}, timeout=30,
                             trust_env=False, verify=gate.pki.client_context())
    client = await create_client(gate.url, client_config=ClientConfig(
        httpx_client=http, streaming=False, supported_protocol_bindings=["HTTP+JSON"]))
    try:
        msg = user_message({"text": prompt}, {"data": {"elicitation/v1": {"message": prompt,
                                                                          "requestedSchema": FORM_SCHEMA}}},
                           extensions=True, metadata={"askgate": {"routing": {"respondents": [respondent]}}})
        task = (await send(client, msg, extensions=True, immediately=True))["task"]
        if human is not None:
            await human()
        end = asyncio.get_running_loop().time() + 30
        while task["status"]["state"] not in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"):
            assert asyncio.get_running_loop().time() < end, task["status"]
            await asyncio.sleep(0.1)
            task = json_format.MessageToDict(await client.get_task(GetTaskRequest(id=task["id"])))
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
        parts = task["artifacts"][-1]["parts"]
        return next(p["data"]["elicitation/v1"] for p in parts if "elicitation/v1" in p.get("data", {}))
    finally:
        await client.close()
        await http.aclose()


async def ask_aqp(gate: Askgate, respondent: dict[str, Any], prompt: str,
                  human: Callable[[], Awaitable[Any]] | None) -> dict[str, Any]:
    """An AQP asker submits a structured QueryRequest (pull binding); returns the QueryResponse."""
    doc = {"protocolVersion": "2026-07-30", "queryId": str(uuid.uuid4()), "type": "approval",
           "subject": {"change": "CHG-7"}, "prompt": prompt, "timing": "immediate", "consentMode": "not_required",
           "response": {"format": "structured", "jsonSchema": FORM_SCHEMA}, "delivery": {"binding": "other"},
           "expiresAt": (datetime.now(UTC) + timedelta(minutes=5)).isoformat().replace("+00:00", "Z")}
    async with gate.aclient("asker") as c:
        r = await c.post("/aqp/queries", params={"routing": json.dumps({"respondents": [respondent]})}, json=doc)
        assert r.status_code == 202, r.text
        if human is not None:
            await human()
        end = asyncio.get_running_loop().time() + 30
        while True:
            out = (await c.get(f"/aqp/queries/{doc['queryId']}")).json()
            if out["status"] not in ("open", "held", "awaiting_consent"):
                return dict(out)
            assert asyncio.get_running_loop().time() < end, out
            await asyncio.sleep(0.1)


async def ask_acs(gate: Askgate, respondent: dict[str, Any], prompt: str,
                  human: Callable[[], Awaitable[Any]] | None) -> dict[str, Any]:
    """A Guardian hands over an ASK (the respondent is its approver) and blocks for the resolution."""
    approver = {"type": respondent["kind"], "id": respondent["id"]}
    if "endpoint" in respondent:
        approver["endpoint"] = respondent["endpoint"]
    ask = {"approver": approver, "question": prompt, "timeout_seconds": 60, "options": ["once"]}
    binding = {"session_id": f"s-{uuid.uuid4()}", "agent_id": "agent-7", "step_id": "step-3",
               "request_id": str(uuid.uuid4()), "method": "steps/toolCallRequest"}
    body = {"jsonrpc": "2.0", "id": "g-1", "method": "ask/submit", "params": {"ask": ask, "binding": binding}}
    async with gate.aclient("asker", timeout=90) as c:
        call = asyncio.ensure_future(c.post("/acs", json=body))
        if human is not None:
            await human()
        r = await call
    assert r.status_code == 200
    return dict(r.json())


async def ask_mcp(gate: Askgate, respondent: dict[str, Any], prompt: str,
                  human: Callable[[], Awaitable[Any]] | None) -> dict[str, Any]:
    """An MCP agent (mcp SDK client session over streamable HTTP) calls askgate's ``ask_human`` tool with a
    flat requested schema, naming the respondent by id; returns the tool's ElicitResult."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {gate.tokens['asker']}"},
                              timeout=httpx2.Timeout(90.0), trust_env=False, verify=gate.pki.client_context())
    async with (http, streamable_http_client(gate.url + "/mcp", http_client=http) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        call = asyncio.ensure_future(session.call_tool("ask_human", {
            "message": prompt, "requested_schema": FORM_SCHEMA, "respondent": respondent["id"],
            "timeout_seconds": 60}))
        if human is not None:
            await human()
        result = await call
    assert not result.is_error, result
    assert result.structured_content is not None
    return dict(result.structured_content)


ASKERS = {"a2a-elicitation": ask_a2a, "mcp-elicitation": ask_mcp, "aqp": ask_aqp, "acs": ask_acs}


# --------------------------------------------------------------------------------------------------
# Checks: the answer in the asker's own dialect.
# --------------------------------------------------------------------------------------------------


def check_a2a(out: dict[str, Any], kind: str) -> None:
    assert out == {"action": "accept", "content": {FIELD: True}}


def check_aqp(out: dict[str, Any], kind: str) -> None:
    assert out["status"] == "answered" and out["protocolVersion"] == "2026-07-30"
    assert out["answer"] == {"format": "structured", "value": {FIELD: True}}
    assert out["respondent"]["kind"] == kind


def check_acs(out: dict[str, Any], kind: str) -> None:
    assert out["jsonrpc"] == "2.0" and out["id"] == "g-1", out
    result = out["result"]
    assert result["type"] == "final" and result["decision"] == "allow"
    assert result["reason_codes"] == ["approver_decision"]
    assert result["policy_data"]["askgate"]["decided_by"] == "approver"
    assert result["policy_data"]["askgate"]["approver"]["type"] == kind
    assert result["policy_data"]["askgate"]["selected_option"] == "once"
    assert re.fullmatch(r"[0-9a-f]{64}", result["chain_hash"])


def check_mcp(out: dict[str, Any], kind: str) -> None:
    assert out["action"] == "accept" and out["content"] == {FIELD: True}, out
    assert out["state"] == "answered" and out["timed_out"] is False
    assert out["respondent"] == {"human": "alice", "agent": "bot", "service": "svc"}[kind]


CHECKS = {"a2a-elicitation": check_a2a, "mcp-elicitation": check_mcp, "aqp": check_aqp, "acs": check_acs}


async def run_pair(dialect: str, kind: str, gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    prompt = f"[{dialect}/{kind}] Approve change CHG-7? {uuid.uuid4().hex[:8]}"
    respondent = respondent_for(kind, agent, service)
    human = None
    if kind == "human":
        if dialect == "acs":
            async def human() -> Any:
                return await in_background(answer_by_api_acs, gate, prompt)
        else:
            async def human() -> Any:
                return await in_background(answer_in_inbox, gate, prompt)
    sent_to_agent = len(agent.seen.messages)
    offers = len(service.offers)
    out = await ASKERS[dialect](gate, respondent, prompt, human)
    CHECKS[dialect](out, kind)
    if kind == "agent":  # the agent really was asked, over A2A, with the typed part
        asked = agent.seen.messages[sent_to_agent:]
        assert any(prompt in json.dumps(m) for m in asked)
    if kind == "service":  # the service really got the signed offer and answered through the API
        got = [o for o in service.offers[offers:] if o["ask"]["prompt"].startswith(prompt)]
        assert len(got) == 1 and got[0]["type"] == "askgate.ask.offered"


# --------------------------------------------------------------------------------------------------
# The twelve pairs.
# --------------------------------------------------------------------------------------------------


async def test_a2a_elicitation_answered_by_a_person(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("a2a-elicitation", "human", gate, agent, service)


async def test_a2a_elicitation_answered_by_an_agent(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("a2a-elicitation", "agent", gate, agent, service)


async def test_a2a_elicitation_answered_by_a_service(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("a2a-elicitation", "service", gate, agent, service)


async def test_mcp_elicitation_answered_by_a_person_in_the_inbox(gate: Askgate, agent: AgentPeer,
                                                                 service: ServicePeer) -> None:
    await run_pair("mcp-elicitation", "human", gate, agent, service)


async def test_mcp_elicitation_answered_by_an_agent(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("mcp-elicitation", "agent", gate, agent, service)


async def test_mcp_elicitation_answered_by_a_service(gate: Askgate, agent: AgentPeer,
                                                     service: ServicePeer) -> None:
    await run_pair("mcp-elicitation", "service", gate, agent, service)


async def test_aqp_query_answered_by_a_person(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("aqp", "human", gate, agent, service)


async def test_aqp_query_answered_by_an_agent(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("aqp", "agent", gate, agent, service)


async def test_aqp_query_answered_by_a_service(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("aqp", "service", gate, agent, service)


async def test_acs_ask_approved_by_a_person(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("acs", "human", gate, agent, service)


async def test_acs_ask_approved_by_an_a2a_agent(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("acs", "agent", gate, agent, service)


async def test_acs_ask_approved_by_a_service(gate: Askgate, agent: AgentPeer, service: ServicePeer) -> None:
    await run_pair("acs", "service", gate, agent, service)
