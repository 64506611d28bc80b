"""ACS on the wire: the JSON-RPC endpoint of a running askgate (HTTPS, client certificates optional).

A Guardian submits ASKs and blocks for the resolution (or polls); approvers answer and are
authenticated as the ASK says: bearer tokens mapped to approver ids, client certificates (made by
trustme, verified by the TLS layer) mapped to approver ids, humans by their own token.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from askgate.core.audit import verify_chain
from tests.support.tls_peers import Pki
from tests.support.wire_server import Askgate, running_askgate

PRINCIPALS = {"guardian": "asker", "lead": "respondent", "alice": "respondent", "svc-principal": "respondent",
              "ops-bot": "respondent", "admin": "admin"}
IDENTITIES = (("principal:svc-principal", "service:payments"), ("mtls:approver.ops.test", "agent:ops"),
              ("principal:ops-bot", "agent:ops"))


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki.make()


@pytest.fixture(scope="module")
def gate(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Askgate]:
    with running_askgate(tmp_path_factory.mktemp("acs"), pki, PRINCIPALS, approver_identities=IDENTITIES) as g:
        yield g


def details(approver: dict[str, Any], *, timeout: int = 30, **extra: Any) -> dict[str, Any]:
    return {"approver": approver, "question": f"Run the migration? {uuid.uuid4()}", "timeout_seconds": timeout,
            **extra}


def binding(**extra: str) -> dict[str, str]:
    return {"session_id": f"sess-{uuid.uuid4()}", "agent_id": "agent-7", "step_id": "step-19",
            "request_id": str(uuid.uuid4()), "method": "steps/toolCallRequest", "request_hash": "ab" * 32, **extra}


def rpc(method: str, params: dict[str, Any], rpc_id: Any = "r-1") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


async def call(client: httpx.AsyncClient, method: str, params: dict[str, Any], rpc_id: Any = "r-1") -> dict[str, Any]:
    r = await client.post("/acs", json=rpc(method, params, rpc_id))
    assert r.status_code == 200, r.text
    return r.json()


async def submit_nowait(gate: Askgate, ask: Any, bind: dict[str, str] | None = None) -> str:
    async with gate.aclient("guardian") as c:
        out = await call(c, "ask/submit", {"ask": ask, "binding": bind or binding(), "wait": False})
    assert "result" in out, out
    return str(out["result"]["ask_id"])


async def pending_state(gate: Askgate, ask_id: str) -> str:
    async with gate.aclient("guardian") as c:
        out = await call(c, "ask/get", {"ask_id": ask_id})
    return str(out["result"]["state"])


async def test_blocking_submit_returns_the_approvers_decision(gate: Askgate) -> None:
    bind = binding()
    ext = {"capabilities": [{"tool": "shell", "operation": "exec", "resource": "posix:///srv/app"}],
           "scope": "session"}
    ask = details({"type": "human", "id": "lead"}, options=["once", "always"], intent_extension=ext)

    async def guardian() -> dict[str, Any]:
        async with gate.aclient("guardian", timeout=60) as c:
            return await call(c, "ask/submit", {"ask": ask, "binding": bind}, rpc_id="r-41")

    async def approver() -> dict[str, Any]:
        async with gate.aclient("lead") as c:
            for _ in range(100):
                items = (await c.get("/v1/asks", params={"state": "delivered"})).json()["items"]
                mine = [i for i in items if i["prompt"] == ask["question"]]
                if mine:
                    break
                await asyncio.sleep(0.05)
            decision = {"decision": "allow", "reasoning": "Approved by on-call lead", "selected_option": "once",
                        "intent_extension": {"capabilities": ext["capabilities"], "scope": "this_request"}}
            return await call(c, "ask/answer", {"ask_id": mine[0]["id"], "decision": decision}, rpc_id=7)

    resolved, answered = await asyncio.gather(guardian(), approver())
    assert resolved["id"] == "r-41" and set(resolved) == {"jsonrpc", "id", "result"}
    result = resolved["result"]
    assert result["type"] == "final" and result["acs_version"] == "0.1.0"
    assert result["decision"] == "allow" and result["reasoning"] == "Approved by on-call lead"
    assert result["reason_codes"] == ["approver_decision"]
    meta = result["policy_data"]["askgate"]
    assert meta["decided_by"] == "approver" and meta["approver"] == {"type": "human", "id": "lead"}
    assert meta["selected_option"] == "once" and meta["ask_step_id"] == "step-19"
    assert meta["ask_request_id"] == bind["request_id"]
    assert meta["intent_extension"]["scope"] == "this_request"
    assert answered["id"] == 7 and answered["result"]["decision"] == "allow"
    async with gate.aclient("admin") as c:
        chain = (await c.get(f"/v1/sessions/{bind['session_id']}/audit")).json()
    assert verify_chain(chain["entries"]).ok and result["chain_hash"] == chain["verification"]["head"]


async def test_session_grant_extends_the_intent(gate: Askgate) -> None:
    bind = binding()
    caps = [{"tool": "deploy", "operation": "run"}]
    ask_id = await submit_nowait(gate, details({"type": "human", "id": "lead"},
                                               intent_extension={"capabilities": caps, "scope": "session"}), bind)
    async with gate.aclient("lead") as c:
        out = await call(c, "ask/answer", {"ask_id": ask_id, "decision": {
            "decision": "allow", "reasoning": "ok", "intent_extension": {"capabilities": caps, "scope": "session"}}})
    assert out["result"]["policy_data"]["askgate"]["intent_extension"]["scope"] == "session"
    async with gate.aclient("admin") as c:
        intent = (await c.get(f"/v1/sessions/{bind['session_id']}/intent")).json()
        chain = (await c.get(f"/v1/sessions/{bind['session_id']}/audit")).json()["entries"]
    assert intent["capabilities"] == caps
    grant = [e for e in chain if e["step_type"] == "intent_extension"]
    assert grant and grant[0]["entry_id"] == f"{bind['request_id']}/intent_extension"


@pytest.mark.parametrize(("disposition", "decision"), [(None, "deny"), ("allow", "allow"), ("deny", "deny")])
async def test_timeout_disposition_when_nobody_answers(gate: Askgate, disposition: str | None, decision: str) -> None:
    extra = {"timeout_disposition": disposition} if disposition else {}
    ask = details({"type": "human", "id": "lead"}, timeout=1, **extra)
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with gate.aclient("guardian") as c:
        out = await call(c, "ask/submit", {"ask": ask, "binding": binding()})
    elapsed = loop.time() - started
    result = out["result"]
    assert result["decision"] == decision and result["reason_codes"] == ["ask_timeout"]
    assert result["policy_data"]["askgate"]["decided_by"] == "timeout"
    assert "approver" not in result["policy_data"]["askgate"]
    assert 0.9 <= elapsed < 5  # settled by the scheduler at the 1 s deadline, not by the submit giving up


async def test_approver_answering_ask_is_refused_and_the_ask_stays_pending(gate: Askgate) -> None:
    bind = binding()
    ask_id = await submit_nowait(gate, details({"type": "human", "id": "lead"}), bind)
    async with gate.aclient("lead") as c:
        out = await call(c, "ask/answer", {"ask_id": ask_id, "decision": {
            "decision": "ask", "reasoning": "not sure", "ask_details": details({"type": "human", "id": "x"})}})
        assert out["error"]["code"] == -32003 and "result" not in out
        assert await pending_state(gate, ask_id) == "delivered"
        ok = await call(c, "ask/answer", {"ask_id": ask_id, "decision": {"decision": "deny", "reasoning": "no"}})
    assert ok["result"]["decision"] == "deny" and ok["result"]["reasoning"] == "no"
    async with gate.aclient("admin") as c:
        entries = (await c.get(f"/v1/asks/{ask_id}/audit")).json()["entries"]
    refused = [e for e in entries if e["step_type"] == "refused"]
    assert refused and refused[0]["error_code"] == -32003 and refused[0]["by"] == "lead"


async def test_only_the_approver_may_answer(gate: Askgate) -> None:
    ask_id = await submit_nowait(gate, details({"type": "human", "id": "lead"}))
    for principal in ("alice", "guardian", None):
        async with gate.aclient(principal) as c:
            out = await call(c, "ask/answer", {"ask_id": ask_id, "decision": {"decision": "allow", "reasoning": "x"}})
        assert out["error"]["code"] == -32000, (principal, out)
    assert await pending_state(gate, ask_id) == "delivered"


async def test_bearer_token_mapped_to_the_approver(gate: Askgate) -> None:
    ask = details({"type": "service", "id": "service:payments", "auth": {"method": "bearer"}})
    ask_id = await submit_nowait(gate, ask)
    async with gate.aclient("alice") as c:
        assert (await call(c, "ask/answer", {"ask_id": ask_id, "decision": {"decision": "allow"}}))["error"][
            "code"] == -32000
    async with gate.aclient("svc-principal") as c:
        out = await call(c, "ask/answer", {"ask_id": ask_id, "decision": {"decision": "allow", "reasoning": "fine"}})
    assert out["result"]["policy_data"]["askgate"]["approver"] == {"type": "service", "id": "service:payments"}


async def test_mtls_approver_must_present_a_mapped_certificate(gate: Askgate, pki: Pki) -> None:
    ask = details({"type": "agent", "id": "agent:ops", "auth": {"method": "mtls"}})
    ask_id = await submit_nowait(gate, ask)
    decision = {"ask_id": ask_id, "decision": {"decision": "allow", "reasoning": "cert ok"}}
    async with gate.aclient("ops-bot") as c:  # a mapped bearer token is not enough for an mtls approver
        assert (await call(c, "ask/answer", decision))["error"]["code"] == -32000
        r = await c.post(f"/v1/asks/{ask_id}/answer", json={"decision": "allow", "reasoning": "via v1"})
        assert r.status_code == 403
    stranger = pki.client_cert("someone-else.test")
    async with gate.aclient(cert=stranger) as c:
        assert (await call(c, "ask/answer", decision))["error"]["code"] == -32000
    other_ca = Pki.make().client_cert("approver.ops.test")  # right name, untrusted issuer: the handshake fails
    with pytest.raises(httpx.HTTPError):
        async with httpx.AsyncClient(base_url=gate.url, verify=pki.client_context(other_ca), trust_env=False) as c:
            await c.post("/acs", json=rpc("ask/answer", decision))
    assert await pending_state(gate, ask_id) == "delivered"
    async with gate.aclient(cert=pki.client_cert("approver.ops.test")) as c:
        out = await call(c, "ask/answer", decision)
    assert out["result"]["decision"] == "allow"
    assert out["result"]["policy_data"]["askgate"]["approver"] == {"type": "agent", "id": "agent:ops"}


async def test_agent_without_auth_is_still_authenticated(gate: Askgate, pki: Pki) -> None:
    ask_id = await submit_nowait(gate, details({"type": "agent", "id": "agent:ops"}))
    async with gate.aclient("alice") as c:
        assert (await call(c, "ask/answer", {"ask_id": ask_id, "decision": {"decision": "deny", "reasoning": "x"}})
                )["error"]["code"] == -32000
    async with gate.aclient("ops-bot") as c:
        out = await call(c, "ask/answer", {"ask_id": ask_id, "decision": {"decision": "deny", "reasoning": "no"}})
    assert out["result"]["decision"] == "deny"


async def test_non_blocking_mode_and_get(gate: Askgate) -> None:
    ask_id = await submit_nowait(gate, details({"type": "human", "id": "lead"}))
    async with gate.aclient("guardian") as g:
        pending = await call(g, "ask/get", {"ask_id": ask_id})
        assert pending["result"] == {"ask_id": ask_id, "state": "delivered"}

        async def later() -> None:
            await asyncio.sleep(0.3)
            async with gate.aclient("lead") as c:
                await call(c, "ask/answer", {"ask_id": ask_id, "decision": {"decision": "allow", "reasoning": "go"}})

        waited, _ = await asyncio.gather(call(g, "ask/get", {"ask_id": ask_id, "wait_seconds": 10}, rpc_id=5),
                                         later())
    assert waited["id"] == 5 and waited["result"]["decision"] == "allow"
    async with gate.aclient("alice") as c:  # somebody else's ask
        assert (await call(c, "ask/get", {"ask_id": ask_id}))["error"]["code"] == -32602


async def test_answer_to_a_decided_ask_is_a_replay(gate: Askgate) -> None:
    ask_id = await submit_nowait(gate, details({"type": "human", "id": "lead"}))
    async with gate.aclient("lead") as c:
        await call(c, "ask/answer", {"ask_id": ask_id, "decision": {"decision": "deny", "reasoning": "first"}})
        again = await call(c, "ask/answer", {"ask_id": ask_id, "decision": {"decision": "allow", "reasoning": "2"}})
    assert again["error"]["code"] == -32005
    assert again["error"]["data"]["resolution"]["decision"] == "deny"


async def test_guardian_result_envelope_is_accepted(gate: Askgate) -> None:
    request_id = str(uuid.uuid4())
    envelope = {"jsonrpc": "2.0", "id": "g-1", "result": {
        "type": "final", "acs_version": "0.1.0", "request_id": request_id, "decision": "ask",
        "reasoning": "needs a human", "ask_details": details({"type": "human", "id": "lead"}, timeout=1)}}
    async with gate.aclient("guardian") as c:
        out = await call(c, "ask/submit", {"ask": envelope, "binding": binding(request_id=request_id)}, rpc_id=3)
    assert out["id"] == 3 and out["result"]["decision"] == "deny"
    assert out["result"]["policy_data"]["askgate"]["ask_request_id"] == request_id


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{nope", -32700),
        (b'{"a": 1, "a": 2}', -32700),
        (b"[]", -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "ask/submit"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "steps/toolCallRequest", "params": {}}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ask/submit", "params": []}', -32602),
    ],
)
async def test_json_rpc_errors(gate: Askgate, body: bytes, code: int) -> None:
    async with gate.aclient("guardian") as c:
        r = await c.post("/acs", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 200 and r.json()["error"]["code"] == code and r.json()["jsonrpc"] == "2.0"


async def test_invalid_asks_carry_every_fault(gate: Askgate) -> None:
    bad = {"approver": {"type": "robot", "id": 5}, "question": "", "timeout_seconds": 0}
    async with gate.aclient("guardian") as c:
        out = await call(c, "ask/submit", {"ask": bad, "binding": {"method": "steps/sessionStart"}})
        version = await call(c, "ask/submit", {"ask": {"type": "final", "acs_version": "0.9.0",
                                                       "request_id": str(uuid.uuid4()), "decision": "ask",
                                                       "reasoning": "r",
                                                       "ask_details": details({"type": "human", "id": "lead"})}})
    assert out["error"]["code"] == -32602
    pointers = {f["pointer"] for f in out["error"]["data"]["faults"]}
    assert {"/approver/type", "/approver/id", "/question", "/timeout_seconds", "/binding/method"} <= pointers
    assert version["error"]["code"] == -32001
    async with gate.aclient("lead") as c:  # a respondent may not submit
        assert (await call(c, "ask/submit", {"ask": details({"type": "human", "id": "lead"})}))["error"][
            "code"] == -32000


async def test_a_retried_submission_is_the_same_ask_and_a_reused_request_id_is_a_replay(gate: Askgate) -> None:
    bind = binding()
    ask = details({"type": "human", "id": "lead"})
    first = await submit_nowait(gate, ask, bind)
    assert await submit_nowait(gate, ask, bind) == first
    async with gate.aclient("guardian") as c:
        other = await call(c, "ask/submit", {"ask": dict(ask, question="Something else?"), "binding": bind,
                                             "wait": False})
        assert other["error"]["code"] == -32005
        async with gate.aclient("lead") as lead:
            await call(lead, "ask/answer", {"ask_id": first, "decision": {"decision": "deny", "reasoning": "no"}})
        again = await call(c, "ask/submit", {"ask": ask, "binding": bind}, rpc_id="retry")
    assert again["id"] == "retry" and again["result"]["decision"] == "deny"
