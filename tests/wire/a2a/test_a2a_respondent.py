"""A2A respondents end to end: askgate (uvicorn) puts asks to a scripted a2a-sdk agent on 127.0.0.1 through
the guarded outbound client; the agent's reply is checked by the codec and recorded as its answer."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from askgate.channels.a2a_respondent import A2ASendError, send_a2a_message
from askgate.channels.outbound import OutboundPolicy, OutboundRefused
from askgate.protocols.a2a_carriage import ACS_APPROVAL_KEY, EXTENSION_URI
from tests.support.tls_peers import Pki, listening_socket
from tests.wire.a2a.agent import running_agent
from tests.wire.a2a.conftest import Askgate

LOOPBACK = OutboundPolicy(allow=("127.0.0.1",), allow_http_loopback=True, timeout=10)
FORM = {"kind": "form", "fields": [
    {"kind": "choice", "name": "region", "required": True, "options": [{"value": "eu"}, {"value": "us"}]},
    {"kind": "integer", "name": "replicas", "minimum": 1, "maximum": 9}]}


@pytest.fixture
def server(askgate_server: Askgate) -> Iterator[Askgate]:
    askgate_server.app.state.outbound_policy = LOOPBACK
    yield askgate_server
    askgate_server.app.state.outbound_policy = LOOPBACK


def create(server: Askgate, doc: dict[str, Any], *, params: dict[str, str] | None = None) -> str:
    with server.http("agent") as c:
        r = c.post("/v1/asks", params=params or {}, json=doc)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def canonical(endpoint: str, spec: dict[str, Any], prompt: str = "Where to deploy?") -> dict[str, Any]:
    return {"ask": {"dialect": "canonical", "prompt": prompt, "spec": spec},
            "routing": {"respondents": [{"kind": "agent", "id": "bot", "endpoint": endpoint}]}}


def wait_done(server: Askgate, ask_id: str, timeout: float = 20) -> dict[str, Any]:
    with server.http("agent") as c:
        view = c.get(f"/v1/asks/{ask_id}/wait", params={"timeout": timeout}).json()
    assert view["terminal"], view
    return dict(view)


def test_an_agent_respondent_answers_with_the_typed_part(server: Askgate) -> None:
    answer = {"action": "accept", "content": {"region": "us", "replicas": 3}}
    with running_agent(lambda n, msg, task: ("complete", answer)) as (url, agent):
        ask_id = create(server, canonical(url, FORM))
        view = wait_done(server, ask_id)
    assert view["state"] == "answered"
    assert view["outcome"]["value"] == {"region": "us", "replicas": 3}
    assert view["outcome"]["respondent"] == {"kind": "agent", "id": "bot", "endpoint": url}
    (msg,) = agent.seen.messages
    assert msg["role"] == "ROLE_USER" and msg["extensions"] == [EXTENSION_URI]
    assert EXTENSION_URI in agent.seen.extensions[0]  # activated by the A2A-Extensions header as well
    assert msg["metadata"]["askgate"]["ask_id"] == ask_id
    assert msg["parts"][0] == {"text": "Where to deploy?"}
    typed = msg["parts"][1]["data"]["elicitation/v1"]
    assert typed["message"] == "Where to deploy?"
    assert typed["requestedSchema"]["properties"]["region"]["enum"] == ["eu", "us"]
    assert typed["requestedSchema"]["required"] == ["region"]


def test_faults_and_input_required_get_further_rounds(server: Askgate) -> None:
    def script(n: int, msg: dict[str, Any], task: dict[str, Any] | None) -> tuple[str, Any]:
        if n == 1:
            return "complete", {"action": "accept", "content": {"region": "mars"}}
        if n == 2:
            return "input", "Which cloud account?"
        return "complete", {"action": "accept", "content": {"region": "eu"}}

    with running_agent(script) as (url, agent):
        ask_id = create(server, canonical(url, FORM))
        view = wait_done(server, ask_id)
    assert view["state"] == "answered" and view["outcome"]["value"] == {"region": "eu"}
    first, second, third = agent.seen.messages
    # round 2: a new message in the same context, referring to the completed task, with the faults
    assert second["contextId"] == first["contextId"] and agent.seen.task_ids[1] != agent.seen.task_ids[0]
    assert second["referenceTaskIds"] == [agent.seen.task_ids[0]]
    faults = next(p["data"]["askgate/faults"] for p in second["parts"] if "askgate/faults" in p.get("data", {}))
    assert faults[0]["pointer"] == "/parts/0/data/elicitation~1v1/content/region" and faults[0]["rule"] == "enum"
    assert any("elicitation/v1" in p.get("data", {}) for p in second["parts"])  # the question again
    # round 3: the agent's task was input-required, so askgate continues that very task
    assert third["taskId"] == agent.seen.task_ids[1] and third["contextId"] == first["contextId"]


def test_a_slow_agent_is_followed_until_it_answers(server: Askgate) -> None:
    """askgate does not block on message:send: a task that works for a while is polled to its end."""
    server.app.state.outbound_policy = OutboundPolicy(allow=("127.0.0.1",), allow_http_loopback=True, timeout=1.0)
    answer = {"action": "accept", "content": {"answer": False}}
    # the agent works longer than askgate's per-request timeout: a blocking send would have failed
    with running_agent(lambda n, m, t: ("working_then_complete", (answer, 1.8))) as (url, agent):
        ask_id = create(server, canonical(url, {"kind": "yes_no"}, "Slow?"))
        view = wait_done(server, ask_id)
    assert view["state"] == "answered" and view["outcome"]["value"] is False
    assert len(agent.seen.messages) == 1


def test_a_plain_message_reply_and_a_rejected_task(server: Askgate) -> None:
    with running_agent(lambda n, m, t: ("message", {"action": "accept", "content": {"answer": True}})) as (url, _):
        ask_id = create(server, canonical(url, {"kind": "yes_no"}, "Ship it?"))
        view = wait_done(server, ask_id)
    assert view["state"] == "answered" and view["outcome"]["value"] is True
    with running_agent(lambda n, m, t: ("reject", None)) as (url, agent):
        ask_id = create(server, canonical(url, {"kind": "yes_no"}, "Ship it?"))
        view = wait_done(server, ask_id)
    assert view["state"] == "declined" and len(agent.seen.messages) == 1
    assert view["outcome"]["outcome"] == "decline"


def test_an_acs_ask_approved_by_an_agent_over_https(server: Askgate, tmp_path: Any) -> None:
    pki = Pki.make()
    files = pki.write_files(tmp_path)
    server.app.state.outbound_policy = OutboundPolicy(allow=("127.0.0.1",), ssl_context=pki.client_context())
    proposal = {"capabilities": [{"tool": "shell", "operation": "exec", "resource": "posix:///srv/app"}],
                "scope": "this_request"}

    def approve(n: int, msg: dict[str, Any], task: dict[str, Any] | None) -> tuple[str, Any]:
        return "complete", {"action": "accept", "content": {"decision": "allow", "reasoning": "looks safe",
                                                            "selected_option": "once", "grant_intent_extension": True}}

    with running_agent(approve, ssl=files) as (url, agent):
        assert url.startswith("https://")
        doc = {"approver": {"type": "agent", "id": "bot", "endpoint": url, "auth": {"method": "mtls"}},
               "question": "Run the migration?", "context": "prod database", "timeout_seconds": 60,
               "options": ["once", "always"], "intent_extension": proposal}
        binding = {"agent_id": "agent-7", "step_id": "step-19", "request_id": "req-1",
                   "method": "steps/toolCallRequest", "request_hash": "ab" * 32, "reasoning": "risky tool call"}
        ask_id = create(server, doc, params={"dialect": "acs", "binding": json.dumps(binding)})
        view = wait_done(server, ask_id)
    assert view["state"] == "answered"
    decision = view["outcome"]["value"]
    assert decision["decision"] == "allow" and decision["selected_option"] == "once"
    assert decision["intent_extension"]["capabilities"] == proposal["capabilities"]
    result = view["response"]["result"] if "result" in view["response"] else view["response"]
    assert result["decision"] == "allow"
    assert result["policy_data"]["askgate"]["approver"]["id"] == "bot"
    (msg,) = agent.seen.messages
    schema = msg["parts"][1]["data"]["elicitation/v1"]["requestedSchema"]
    assert schema["properties"]["decision"]["enum"] == ["allow", "deny"]
    assert schema["properties"]["selected_option"]["enum"] == ["once", "always"]
    approval = next(p["data"][ACS_APPROVAL_KEY] for p in msg["parts"] if ACS_APPROVAL_KEY in p.get("data", {}))
    assert approval["payload"]["ask_details"]["question"] == "Run the migration?"
    assert approval["payload"]["step"] == {k: binding[k] for k in ("method", "step_id", "request_id", "request_hash")}
    assert approval["metadata"]["agent_id"] == "agent-7"


def test_an_mtls_approver_whose_certificate_does_not_map_is_not_asked(server: Askgate, tmp_path: Any) -> None:
    pki = Pki.make()
    files = pki.write_files(tmp_path)
    server.app.state.outbound_policy = OutboundPolicy(allow=("127.0.0.1",), ssl_context=pki.client_context())
    with running_agent(lambda n, m, t: ("complete", {"action": "accept", "content": {"decision": "allow"}}),
                       ssl=files) as (url, agent):
        doc = {"approver": {"type": "agent", "id": "stranger", "endpoint": url, "auth": {"method": "mtls"}},
               "question": "Deploy?", "timeout_seconds": 60}
        ask_id = create(server, doc, params={"dialect": "acs"})
        time.sleep(1.5)
        with server.http("agent") as c:
            assert c.get(f"/v1/asks/{ask_id}").json()["state"] == "delivered"
        assert agent.seen.messages == []


def test_an_approver_answering_nonsense_keeps_the_ask_open(server: Askgate) -> None:
    bad = {"action": "accept", "content": {"decision": "ask"}}
    with running_agent(lambda n, m, t: ("complete", bad)) as (url, agent):
        doc = {"approver": {"type": "agent", "id": "bot", "endpoint": url}, "question": "Deploy?",
               "timeout_seconds": 2, "timeout_disposition": "deny"}
        ask_id = create(server, doc, params={"dialect": "acs"})
        view = wait_done(server, ask_id)
    assert len(agent.seen.messages) == 3  # every round refused: "ask" is not in the decision enum
    assert view["state"] == "timed_out"
    assert view["outcome"]["value"]["decision"] == "deny" and view["outcome"]["value"]["decided_by"] == "timeout"


def test_refused_targets_are_never_contacted(server: Askgate) -> None:
    server.app.state.outbound_policy = OutboundPolicy()  # the default: no loopback, no http
    with listening_socket() as (port, accepted):
        ask_id = create(server, canonical(f"http://127.0.0.1:{port}", {"kind": "yes_no"}, "Refused?"))
        time.sleep(1.0)
        with server.http("agent") as c:
            assert c.get(f"/v1/asks/{ask_id}").json()["state"] == "delivered"
        assert accepted == []


@pytest.mark.parametrize("url_policy", [
    ("http://127.0.0.1:{port}/", OutboundPolicy()),
    ("https://127.0.0.1:{port}/", OutboundPolicy()),
    ("http://127.0.0.1:{port}/", OutboundPolicy(allow=("127.0.0.1",))),  # allowed host, but plain http
    ("https://localhost:{port}/", OutboundPolicy()),  # a name resolving to loopback
    ("https://user:pw@127.0.0.1:{port}/", LOOPBACK),
    ("https://10.0.0.1:{port}/", OutboundPolicy()),
    ("https://169.254.169.254:{port}/", OutboundPolicy(allow=("169.254.0.0/16",))),
])
async def test_send_a2a_message_refuses_before_connecting(url_policy: tuple[str, OutboundPolicy],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[Any] = []
    real = httpx.AsyncHTTPTransport.handle_async_request

    async def record(self: Any, request: httpx.Request) -> httpx.Response:
        attempts.append(request.url)
        return await real(self, request)

    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", record)
    template, policy = url_policy
    with listening_socket() as (port, accepted):
        with pytest.raises(OutboundRefused):
            await send_a2a_message(template.format(port=port), {"role": "ROLE_USER", "parts": [{"text": "hi"}]},
                                   policy=policy)
        assert accepted == [] and attempts == []


async def test_send_a2a_message_is_reusable_for_any_message() -> None:
    seen: list[dict[str, Any]] = []

    def echo(n: int, msg: dict[str, Any], task: dict[str, Any] | None) -> tuple[str, Any]:
        seen.append(msg)
        return "complete_text", "received"

    with running_agent(echo) as (url, agent):
        reply = await send_a2a_message(url, {"role": "ROLE_USER", "parts": [{"data": {"aqp": {"answer": 1}}}]},
                                       policy=LOOPBACK, headers={"Authorization": "Bearer s3cret"})
        assert reply.state == "TASK_STATE_COMPLETED"
        assert reply.task is not None and reply.task["artifacts"][0]["parts"][0]["text"] == "received"
        assert agent.seen.headers[0]["authorization"] == "Bearer s3cret"
        assert seen[0]["parts"][0]["data"] == {"aqp": {"answer": 1.0}} and seen[0]["messageId"]
    with pytest.raises(A2ASendError):  # nobody there any more: a clean error, not a raw transport exception
        await send_a2a_message(url, {"role": "ROLE_USER", "parts": [{"text": "hi"}]}, policy=LOOPBACK)


@pytest.mark.parametrize("dialect", ["aqp", "mcp-elicitation"])
def test_asks_of_other_dialects_are_put_to_agents_too(server: Askgate, dialect: str) -> None:
    from tests.support import askdocs

    doc = askdocs.aqp() if dialect == "aqp" else askdocs.mcp()
    reply = ({"action": "accept", "content": {"answer": "hold"}} if dialect == "aqp"
             else {"action": "accept", "content": {"colour": "green"}})
    routing = json.dumps({"respondents": [{"kind": "agent", "id": "bot", "endpoint": "{url}"}]})
    with running_agent(lambda n, m, t: ("complete", reply)) as (url, agent):
        ask_id = create(server, doc, params={"dialect": dialect, "routing": routing.replace("{url}", url)})
        view = wait_done(server, ask_id)
    assert view["state"] == "answered", view
    typed = agent.seen.messages[0]["parts"][1]["data"]["elicitation/v1"]
    if dialect == "aqp":
        assert view["outcome"]["value"] == "hold"
        assert typed["requestedSchema"]["properties"]["answer"]["enum"] == ["ship", "hold"]
        assert view["response"]["status"] == "answered"
        assert view["response"]["answer"] == {"format": "choice", "value": "hold"}
        assert view["response"]["respondent"]["id"] == "bot"
    else:
        assert view["outcome"]["value"] == {"colour": "green"}
        assert view["response"] == {"action": "accept", "content": {"colour": "green"}}
