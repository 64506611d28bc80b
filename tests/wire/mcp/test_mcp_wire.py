"""askgate's MCP endpoint against the mcp SDK's own client (streamable HTTP, ClientSession): asking a
person (ask_human, relay_elicitation, request_approval) and being asked (answer_asks: elicitation/create
to the client, results checked by the codec)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from askgate.protocols import mcp_elicitation as codec
from tests.wire.mcp.conftest import Askgate, Person

SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "title": "Name", "minLength": 1},
    "count": {"type": "integer", "minimum": 1, "maximum": 9},
    "ok": {"type": "boolean"}}, "required": ["name", "count"]}


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """The structured content, checked against the text block that must carry the same JSON."""
    assert result.structured_content is not None
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    assert texts and json.loads(texts[0]) == result.structured_content
    return result.structured_content


def create_ask(gate: Askgate, doc: dict[str, Any], respondent: str, **params: Any) -> str:
    with gate.http("other-agent") as http:
        r = http.post("/v1/asks", json=doc, params={"respondent": respondent, **params})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def view(gate: Askgate, ask_id: str) -> dict[str, Any]:
    with gate.http("root") as http:
        return http.get(f"/v1/asks/{ask_id}").json()


# ---- asking a person ---------------------------------------------------------------------------------


async def test_ask_human_returns_the_persons_elicit_result(gate: Askgate) -> None:
    def reply(v: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada", "count": 3}}

    with Person(gate, "alice", reply).answering() as alice:
        async with gate.session("agent") as s:
            result = await s.call_tool("ask_human", {"message": "Who and how many?", "requested_schema": SCHEMA,
                                                     "respondent": "alice", "timeout_seconds": 30})
    out = structured(result)
    assert result.is_error is False
    assert out["action"] == "accept" and out["content"] == {"name": "Ada", "count": 3}
    assert out["state"] == "answered" and out["timed_out"] is False and out["respondent"] == "alice"
    assert [v["dialect"] for v in alice.seen] == ["mcp-elicitation"] and alice.seen[0]["prompt"] == "Who and how many?"
    assert view(gate, out["ask_id"])["asker"] == "agent"


async def test_a_bad_answer_from_the_person_is_refused_and_the_call_keeps_waiting(gate: Askgate) -> None:
    replies = iter([{"action": "accept", "content": {"name": "", "count": 12}},
                    {"action": "decline"}])
    with Person(gate, "bob", lambda v: None).answering() as bob:
        async with gate.session("agent") as s:
            call = asyncio.create_task(s.call_tool("ask_human", {"message": "Count?", "requested_schema": SCHEMA,
                                                                 "respondent": "bob", "timeout_seconds": 30}))
            while not bob.seen:
                await asyncio.sleep(0.05)
            ask_id = bob.seen[0]["id"]
            with gate.http("bob") as http:
                bad = http.post(f"/v1/asks/{ask_id}/answer", json=next(replies))
                assert not call.done()
                good = http.post(f"/v1/asks/{ask_id}/answer", json=next(replies))
            result = await asyncio.wait_for(call, 20)
    assert bad.status_code == 422
    pointers = {f["pointer"] for f in bad.json()["faults"]}
    assert {"/content/name", "/content/count"} <= pointers
    assert good.status_code == 200
    out = structured(result)
    assert out["action"] == "decline" and "content" not in out and out["state"] == "declined"


async def test_ask_human_times_out_with_a_clear_result(gate: Askgate) -> None:
    started = time.monotonic()
    async with gate.session("agent") as s:
        result = await s.call_tool("ask_human", {"message": "Anyone?", "requested_schema": SCHEMA,
                                                 "respondent": "dave", "timeout_seconds": 1})
    out = structured(result)
    assert out["action"] == "cancel" and out["timed_out"] is True and out["state"] == "timed_out"
    assert "content" not in out
    assert time.monotonic() - started < 15


async def test_invalid_schema_is_an_error_result_with_every_fault(gate: Askgate) -> None:
    bad = {"type": "object", "properties": {"addr": {"type": "object"}, "password": {"type": "string"},
                                            "n": {"type": "integer", "minimum": 5, "maximum": 1}}}
    async with gate.session("agent") as s:
        result = await s.call_tool("ask_human", {"message": "x", "requested_schema": bad, "respondent": "dave"})
        out = structured(result)
    assert result.is_error is True and out["error"] == "invalid_request"
    pointers = {f["pointer"] for f in out["faults"]}
    assert any(p.startswith("/requestedSchema/properties/addr") for p in pointers)
    assert any(p.startswith("/requestedSchema/properties/password") for p in pointers)
    assert any(p.startswith("/requestedSchema/properties/n") for p in pointers)
    with gate.http("root") as http:
        assert http.get("/v1/asks", params={"respondent": "dave", "state": "delivered"}).json()["items"] == []


async def test_only_askers_create_asks(gate: Askgate) -> None:
    async with gate.session("alice") as s:
        result = await s.call_tool("request_approval", {"question": "Deploy?", "respondent": "bob"})
    assert result.is_error is True and structured(result)["error"] == "forbidden"


@pytest.mark.parametrize("request_doc, rule", [
    ({"mode": "url", "message": "Sign in", "url": "https://example.com/login", "elicitationId": "e1"}, "mcp.url-mode"),
    ({"message": "x", "requestedSchema": {"type": "object", "properties": {}}, "task": {"ttl": 1000}},
     "mcp.task-augmented"),
])
async def test_url_mode_and_task_augmented_requests_are_refused_with_32602(gate: Askgate, request_doc: dict[str, Any],
                                                                           rule: str) -> None:
    async with gate.session("agent") as s:
        with pytest.raises(MCPError) as err:
            await s.call_tool("relay_elicitation", {"request": request_doc, "respondent": "alice"})
    assert err.value.error.code == -32602
    assert [f["rule"] for f in err.value.error.data["faults"]] == [rule]
    with gate.http("agent") as http:
        assert all(v["prompt"] != "Sign in" for v in http.get("/v1/asks").json()["items"])


async def test_relay_elicitation_takes_a_whole_jsonrpc_request(gate: Askgate) -> None:
    req = {"jsonrpc": "2.0", "id": 41, "method": "elicitation/create",
           "params": {"mode": "form", "message": "Pick", "requestedSchema": {"type": "object", "properties": {
               "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]}},
               "required": ["color"]}}}
    with Person(gate, "erin", lambda v: {"action": "accept", "content": {"color": "g"}}).answering():
        async with gate.session("agent") as s:
            result = await s.call_tool("relay_elicitation", {"request": req, "respondent": "erin",
                                                             "timeout_seconds": 30})
    out = structured(result)
    assert out["action"] == "accept" and out["content"] == {"color": "g"}
    assert view(gate, out["ask_id"])["external_id"] == "41"


# ---- approvals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("decision", ["allow", "deny"])
async def test_request_approval_returns_the_decision(gate: Askgate, decision: str) -> None:
    def reply(v: dict[str, Any]) -> dict[str, Any]:
        value = {"decision": decision, "reasoning": "checked"}
        if decision == "allow":
            value["selected_option"] = "canary"
        return {"outcome": "accept", "value": value}

    with Person(gate, "alice", reply).answering() as alice:
        async with gate.session("agent") as s:
            result = await s.call_tool("request_approval", {
                "question": "Deploy v2?", "options": ["canary", "full"], "respondent": "alice",
                "timeout_seconds": 30})
    out = structured(result)
    assert out["decision"] == decision and out["decided_by"] == "approver" and out["reasoning"] == "checked"
    assert out.get("selected_option") == ("canary" if decision == "allow" else None)
    assert out["respondent"] == "alice" and out["state"] == "answered"
    assert alice.seen[0]["spec"] == {"kind": "approval", "options": ["canary", "full"]}
    assert all(r.status_code == 200 for r in alice.responses)


@pytest.mark.parametrize("disposition", ["allow", "deny"])
async def test_request_approval_timeout_disposition(gate: Askgate, disposition: str) -> None:
    async with gate.session("agent") as s:
        result = await s.call_tool("request_approval", {"question": "Nobody home?", "respondent": "dave",
                                                        "timeout_seconds": 1, "on_timeout": disposition})
    out = structured(result)
    assert out["decision"] == disposition and out["decided_by"] == "timeout" and out["state"] == "timed_out"


async def test_an_allow_must_name_one_of_the_options(gate: Askgate) -> None:
    replies = [{"outcome": "accept", "value": {"decision": "allow"}},
               {"outcome": "accept", "value": {"decision": "allow", "selected_option": "nope"}},
               {"outcome": "accept", "value": {"decision": "allow", "selected_option": "b"}}]
    with Person(gate, "carol", lambda v: None).answering() as carol:
        async with gate.session("agent") as s:
            call = asyncio.create_task(s.call_tool("request_approval", {
                "question": "Which?", "options": ["a", "b"], "respondent": "carol", "timeout_seconds": 30}))
            while not carol.seen:
                await asyncio.sleep(0.05)
            with gate.http("carol") as http:
                codes = [http.post(f"/v1/asks/{carol.seen[0]['id']}/answer", json=r).status_code for r in replies]
            out = structured(await asyncio.wait_for(call, 20))
    assert codes == [422, 422, 200]
    assert out["decision"] == "allow" and out["selected_option"] == "b"


# ---- askgate puts asks to an MCP client session (elicitation/create) -------------------------------------


class Elicited:
    """An elicitation_callback answering from a script; records what it was sent."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.params: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        self.params.append(params)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return answer if isinstance(answer, types.ErrorData) else types.ElicitResult.model_validate(answer)


async def test_respondent_session_answers_an_mcp_ask_from_another_asker(gate: Askgate) -> None:
    """agent asks carol through ask_human (MCP); carol's MCP session answers through elicitation/create."""
    callback = Elicited({"action": "accept", "content": {"name": "Bo", "count": 4, "ok": True}})
    async with gate.session("agent") as asker, gate.session("carol", elicitation_callback=callback) as carol:
        call = asyncio.create_task(asker.call_tool("ask_human", {"message": "Who?", "requested_schema": SCHEMA,
                                                                 "respondent": "carol", "timeout_seconds": 30}))
        answered = await carol.call_tool("answer_asks", {"max_asks": 1, "wait_seconds": 20})
        result = await asyncio.wait_for(call, 20)
    report = structured(answered)
    assert report["protocol_version"] == "2025-11-25"
    assert [(a["status"], a["outcome"], a["state"]) for a in report["asks"]] == [("recorded", "accept", "answered")]
    sent = callback.params[0]
    assert sent.message == "Who?"
    shown = (sent.meta or {})["askgate/ask"]
    assert shown["asker"] == "agent" and shown["id"] == structured(result)["ask_id"] and shown["deadline"].endswith("Z")
    assert sent.requested_schema == SCHEMA
    out = structured(result)
    assert out["action"] == "accept" and out["content"] == {"name": "Bo", "count": 4, "ok": True}
    assert out["respondent"] == "carol"


async def test_a_bad_elicit_result_is_asked_again_with_its_faults(gate: Askgate) -> None:
    ask_id = create_ask(gate, {"message": "How many?", "requestedSchema": SCHEMA}, "bob", dialect="mcp-elicitation")
    callback = Elicited({"action": "accept", "content": {"name": "x", "count": "three"}},
                        {"action": "accept", "content": {"name": "x", "count": 3}})
    async with gate.session("bob", elicitation_callback=callback) as bob:
        report = structured(await bob.call_tool("answer_asks", {"wait_seconds": 10}))
    assert [a["status"] for a in report["asks"]] == ["recorded"]
    assert len(callback.params) == 2
    assert callback.params[0].message == "How many?"
    assert callback.params[1].message.startswith("The answer was not accepted")
    assert "/content/count" in callback.params[1].message and callback.params[1].message.endswith("How many?")
    final = view(gate, ask_id)
    assert final["state"] == "answered" and final["outcome"]["value"] == {"name": "x", "count": 3}
    assert final["outcome"]["respondent"]["id"] == "bob"


async def test_a_respondent_that_never_answers_well_leaves_the_ask_open(gate: Askgate) -> None:
    ask_id = create_ask(gate, {"message": "Bad forever", "requestedSchema": SCHEMA}, "dave", dialect="mcp-elicitation")
    callback = Elicited({"action": "accept", "content": {"count": 99, "extra": "x"}})
    async with gate.session("dave", elicitation_callback=callback) as dave:
        report = structured(await dave.call_tool("answer_asks", {"wait_seconds": 5}))
    [entry] = [a for a in report["asks"] if a["ask_id"] == ask_id]
    assert entry["status"] == "refused" and len(callback.params) == 3
    assert [(f["pointer"], f["rule"]) for f in entry["faults"]] == [
        ("/content", "required"), ("/content/count", "maximum"), ("/content/extra", "additionalProperties")]
    assert view(gate, ask_id)["state"] == "delivered"
    with gate.http("other-agent") as http:
        http.post(f"/v1/asks/{ask_id}/withdraw")


async def test_an_approval_is_put_as_the_decision_form(gate: Askgate) -> None:
    doc = {"ask": {"dialect": "canonical", "prompt": "Release?", "spec": {"kind": "approval", "options": ["now", "later"]}}}
    ask_id = create_ask(gate, doc, "erin")
    callback = Elicited({"action": "accept", "content": {"decision": "allow", "selected_option": "later",
                                                         "reasoning": "after lunch"}})
    async with gate.session("erin", elicitation_callback=callback) as erin:
        report = structured(await erin.call_tool("answer_asks", {"wait_seconds": 10}))
    assert [a["status"] for a in report["asks"]] == ["recorded"]
    schema = callback.params[0].requested_schema
    assert schema["properties"]["decision"]["enum"] == ["allow", "deny"]
    assert schema["properties"]["selected_option"]["enum"] == ["now", "later"]
    assert view(gate, ask_id)["outcome"]["value"] == {"decision": "allow", "selected_option": "later",
                                                      "reasoning": "after lunch", "decided_by": "approver"}


async def test_a_2025_06_18_peer_gets_the_bare_form(gate: Askgate, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp.client.session as client_session

    monkeypatch.setattr(client_session, "LATEST_HANDSHAKE_VERSION", "2025-06-18")
    titled = {"type": "object", "properties": {"size": {"type": "string", "oneOf": [
        {"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}}, "required": ["size"]}
    ask_id = create_ask(gate, {"message": "Size?", "requestedSchema": titled}, "alice", dialect="mcp-elicitation")
    callback = Elicited({"action": "accept", "content": {"size": "l"}})
    async with gate.session("alice", elicitation_callback=callback) as alice:
        assert alice.protocol_version == "2025-06-18"
        report = structured(await alice.call_tool("answer_asks", {"wait_seconds": 10}))
    assert report["protocol_version"] == "2025-06-18" and report["asks"][0]["status"] == "recorded"
    sent = callback.params[0]
    assert "mode" not in sent.model_fields_set  # no 2025-11-25 member for an old peer
    assert sent.requested_schema["properties"]["size"] == {"type": "string", "enum": ["s", "l"],
                                                           "enumNames": ["Small", "Large"]}
    assert view(gate, ask_id)["outcome"]["value"] == {"size": "l"}


async def test_multi_select_cannot_go_to_a_2025_06_18_peer(gate: Askgate, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp.client.session as client_session

    monkeypatch.setattr(client_session, "LATEST_HANDSHAKE_VERSION", "2025-06-18")
    multi = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}}
    ask_id = create_ask(gate, {"message": "Tags?", "requestedSchema": multi}, "bob", dialect="mcp-elicitation")
    callback = Elicited({"action": "decline"})
    async with gate.session("bob", elicitation_callback=callback) as bob:
        report = structured(await bob.call_tool("answer_asks", {"wait_seconds": 5}))
    [entry] = [a for a in report["asks"] if a["ask_id"] == ask_id]
    assert entry["status"] == "unsupported" and callback.params == []
    assert view(gate, ask_id)["state"] == "delivered"
    with gate.http("other-agent") as http:
        http.post(f"/v1/asks/{ask_id}/withdraw")


async def test_a_client_without_elicitation_gets_a_clear_error_not_a_hang(gate: Askgate) -> None:
    ask_id = create_ask(gate, {"message": "Waiting", "requestedSchema": SCHEMA}, "carol", dialect="mcp-elicitation")
    started = time.monotonic()
    async with gate.session("carol") as carol:  # no elicitation_callback: no elicitation capability
        result = await carol.call_tool("answer_asks", {"wait_seconds": 60})
    out = structured(result)
    assert result.is_error is True and out["error"] == "elicitation_unavailable"
    assert "did not declare the elicitation capability" in out["message"]
    assert time.monotonic() - started < 10
    assert view(gate, ask_id)["state"] == "delivered"
    with gate.http("other-agent") as http:
        http.post(f"/v1/asks/{ask_id}/withdraw")


async def test_a_client_error_for_the_elicitation_is_reported(gate: Askgate) -> None:
    ask_id = create_ask(gate, {"message": "Err", "requestedSchema": SCHEMA}, "erin", dialect="mcp-elicitation")
    callback = Elicited(types.ErrorData(code=-32602, message="form mode not supported here"))
    async with gate.session("erin", elicitation_callback=callback) as erin:
        report = structured(await erin.call_tool("answer_asks", {"wait_seconds": 5}))
    [entry] = [a for a in report["asks"] if a["ask_id"] == ask_id]
    assert entry["status"] == "failed" and "-32602" in entry["detail"]
    with gate.http("other-agent") as http:
        http.post(f"/v1/asks/{ask_id}/withdraw")


# ---- authentication and the app lifespan -------------------------------------------------------------------


def test_mcp_needs_an_askgate_token_and_sessions_stay_with_their_principal(gate: Askgate) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(base_url=gate.url, timeout=10, trust_env=False) as http:
        assert http.post("/mcp", json=init, headers=headers).status_code == 401
        assert http.post("/mcp", json=init, headers={**headers, "Authorization": "Bearer nope"}).status_code == 401
        opened = http.post("/mcp", json=init, headers={**headers, "Authorization": f"Bearer {gate.tokens['alice']}"})
        assert opened.status_code == 200
        sid = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        stolen = http.post("/mcp", json=ping, headers={**headers, "Authorization": f"Bearer {gate.tokens['bob']}",
                                                       "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
        assert stolen.status_code == 404


def test_the_session_manager_runs_inside_the_app_lifespan(tmp_path: Any) -> None:
    from tests.wire.mcp.conftest import make_gate

    async def use(g: Askgate) -> list[str]:
        async with g.session("agent") as s:
            return sorted(t.name for t in (await s.list_tools()).tools)

    for _round in range(2):  # a fresh app each time: a session manager runs once
        (tmp_path / f"r{_round}").mkdir()
        gen = make_gate(tmp_path / f"r{_round}")
        g = next(gen)
        manager = g.app.state.mcp_sessions
        assert asyncio.run(use(g)) == ["answer_asks", "ask_human", "relay_elicitation", "request_approval"]
        assert manager._task_group is not None
        started = time.monotonic()
        with pytest.raises(StopIteration):
            next(gen)
        assert time.monotonic() - started < 10
        assert manager._task_group is None  # stopped with the app


def test_codec_rendering_is_what_the_peer_receives() -> None:
    """The bare 2025-06-18 shape the endpoint sends is the codec's (the wire tests above compare to it)."""
    ask = codec.parse_request({"message": "m", "requestedSchema": SCHEMA})
    assert codec.render_request(ask, "2025-06-18") == {"message": "m", "requestedSchema": SCHEMA}
    assert codec.client_capabilities("2025-06-18") == {}


async def test_an_ask_settled_elsewhere_cancels_the_pending_elicitation(gate: Askgate) -> None:
    with gate.http("other-agent") as http:
        r = http.post("/v1/asks", json={"message": "First wins", "requestedSchema": SCHEMA},
                      params={"dialect": "mcp-elicitation", "respondent": ["alice", "bob"], "rule": "first"})
    ask_id = r.json()["id"]
    got_it = asyncio.Event()
    cancelled: list[bool] = []

    async def slow(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        got_it.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return types.ElicitResult(action="decline")

    async def alice_answers() -> int:
        await got_it.wait()
        with gate.http("alice") as http:
            return (await asyncio.to_thread(http.post, f"/v1/asks/{ask_id}/answer",
                                            json={"action": "accept", "content": {"name": "A", "count": 1}})).status_code

    started = time.monotonic()
    async with gate.session("bob", elicitation_callback=slow) as bob:
        alice = asyncio.create_task(alice_answers())
        report = structured(await bob.call_tool("answer_asks", {"wait_seconds": 5}))
        assert await alice == 200
    [entry] = [a for a in report["asks"] if a["ask_id"] == ask_id]
    assert entry["status"] == "lost" and entry["state"] == "answered"
    assert cancelled == [True]  # the client was told: notifications/cancelled
    assert time.monotonic() - started < 10
    assert view(gate, ask_id)["outcome"]["respondent"]["id"] == "alice"


async def test_an_asker_that_gives_up_withdraws_its_ask(gate: Askgate) -> None:
    async with gate.session("agent") as s:
        with pytest.raises(MCPError) as err:
            await s.call_tool("ask_human", {"message": "Impatient", "requested_schema": SCHEMA, "respondent": "dave",
                                            "timeout_seconds": 60}, read_timeout_seconds=1)
        assert err.value.error.code == -32001  # the SDK's own request timeout (it sends notifications/cancelled)
        with gate.http("agent") as http:
            [mine] = [v for v in http.get("/v1/asks").json()["items"] if v["prompt"] == "Impatient"]
            for _ in range(100):
                if http.get(f"/v1/asks/{mine['id']}").json()["state"] == "withdrawn":
                    break
                await asyncio.sleep(0.05)
            assert http.get(f"/v1/asks/{mine['id']}").json()["state"] == "withdrawn"


async def test_a_respondent_is_named_or_the_operators_default_is_asked(gate: Askgate,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    async with gate.session("agent") as s:
        result = await s.call_tool("ask_human", {"message": "Whom?", "requested_schema": SCHEMA})
        assert result.is_error is True and structured(result)["error"] == "respondent_required"
        monkeypatch.setattr(gate.app.state, "settings",
                            dataclasses.replace(gate.app.state.settings, mcp_default_respondent="erin"))
        with Person(gate, "erin", lambda v: {"outcome": "accept", "value": {"decision": "deny"}}).answering() as erin:
            out = structured(await s.call_tool("request_approval", {"question": "Default?", "timeout_seconds": 30}))
    assert out["decision"] == "deny" and out["respondent"] == "erin" and erin.seen[0]["prompt"] == "Default?"


async def test_the_sdks_auto_negotiating_client(gate: Askgate) -> None:
    """mcp.Client in auto mode picks the newest revision (2026-07-28, the per-request era): asking a person
    works, and answer_asks puts asks through the multi-round-trip flow (InputRequiredResult carrying
    elicitation/create, the ElicitResult on the retry) with fault rounds; without elicitation: a clear error."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    def transport(who: str) -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {gate.tokens[who]}"}, trust_env=False,
                                  timeout=httpx2.Timeout(60.0))
        return streamable_http_client(gate.url + "/mcp", http_client=http)

    with Person(gate, "alice", lambda v: {"action": "accept", "content": {"name": "Z", "count": 2}}).answering():
        async with Client(transport("agent"), mode="auto") as agent:
            assert agent.session.protocol_version == "2026-07-28"
            asked = await agent.call_tool("ask_human", {"message": "Modern?", "requested_schema": SCHEMA,
                                                        "respondent": "alice", "timeout_seconds": 30})
    assert structured(asked)["content"] == {"name": "Z", "count": 2}

    first = create_ask(gate, {"message": "Round one", "requestedSchema": SCHEMA}, "bob", dialect="mcp-elicitation")
    second = create_ask(gate, {"ask": {"dialect": "canonical", "prompt": "Go?", "spec": {"kind": "approval"}}}, "bob")
    callback = Elicited({"action": "accept", "content": {"name": "M", "count": 0}},
                        {"action": "accept", "content": {"name": "M", "count": 5}},
                        {"action": "accept", "content": {"decision": "allow"}})
    async with Client(transport("bob"), mode="auto", elicitation_callback=callback) as bob:
        report = structured(await bob.call_tool("answer_asks", {"max_asks": 2, "wait_seconds": 5}))
    assert report["protocol_version"] == "2026-07-28"
    assert [(a["ask_id"], a["status"]) for a in report["asks"]] == [(first, "recorded"), (second, "recorded")]
    assert [p.message.splitlines()[0] for p in callback.params] == [
        "Round one", "The answer was not accepted:", "Go?"]
    assert "/content/count" in callback.params[1].message
    assert view(gate, first)["outcome"]["value"] == {"name": "M", "count": 5}
    assert view(gate, second)["outcome"]["value"]["decision"] == "allow"

    async with Client(transport("bob"), mode="auto") as plain:  # no elicitation capability
        refused = await plain.call_tool("answer_asks", {"wait_seconds": 1})
    assert refused.is_error is True and structured(refused)["error"] == "elicitation_unavailable"


async def test_waiting_reports_progress_and_a_withdrawn_approval_is_a_deny(gate: Askgate,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from askgate.server import mcp_endpoint

    monkeypatch.setattr(mcp_endpoint, "PROGRESS_SECONDS", 0.2)
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with gate.session("agent") as s:
        call = asyncio.create_task(s.call_tool("request_approval", {
            "question": "Slow?", "respondent": "bob", "timeout_seconds": 30}, progress_callback=on_progress))
        while len(progress) < 2:
            await asyncio.sleep(0.05)
        with gate.http("agent") as http:
            [mine] = [v for v in http.get("/v1/asks", params={"state": "delivered"}).json()["items"]
                      if v["prompt"] == "Slow?"]
            assert http.post(f"/v1/asks/{mine['id']}/withdraw").status_code == 200
        out = structured(await asyncio.wait_for(call, 20))
    assert all(total == 30 and message == "waiting for a person" for _d, total, message in progress)
    assert [d for d, _t, _m in progress] == sorted(d for d, _t, _m in progress)
    assert out["decision"] == "deny" and out["decided_by"] == "none" and out["state"] == "withdrawn"


async def test_ask_human_reads_the_schema_on_the_callers_revision(gate: Askgate, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp.client.session as client_session

    titled = {"type": "object", "properties": {"size": {"type": "string", "oneOf": [{"const": "s", "title": "S"}]}}}
    monkeypatch.setattr(client_session, "LATEST_HANDSHAKE_VERSION", "2025-06-18")
    async with gate.session("agent") as old:
        refused = await old.call_tool("ask_human", {"message": "Size?", "requested_schema": titled, "respondent": "dave"})
    assert refused.is_error is True
    assert any(f["pointer"].startswith("/requestedSchema/properties/size") for f in structured(refused)["faults"])


def test_building_the_mcp_server_leaves_process_logging_alone() -> None:
    """MCPServer() would call logging.basicConfig (root at INFO): httpx would then log outbound URLs."""
    import logging

    from fastapi import FastAPI

    from askgate.server.mcp_endpoint import build_server

    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    root.handlers.clear()
    root.setLevel(logging.WARNING)
    try:
        build_server(FastAPI())
        assert root.handlers == [] and root.level == logging.WARNING
    finally:
        root.handlers[:] = saved
        root.setLevel(level)


async def test_the_lifespan_may_be_entered_and_left_by_different_tasks(tmp_path: Any) -> None:
    """As pytest-asyncio fixtures do (setup and teardown in different tasks): the session manager's task
    group lives in a task of its own, so this must neither raise nor leave the manager running."""
    from askgate.server.app import create_app
    from askgate.server.settings import Settings

    app = create_app(Settings(db_url=f"sqlite+aiosqlite:///{tmp_path / 'a.db'}", secret_key="k", log_level="warning"))
    manager = app.state.mcp_sessions
    lifespan = app.router.lifespan_context(app)
    await asyncio.create_task(lifespan.__aenter__())
    assert manager._task_group is not None and app.state.broker is not None
    await asyncio.create_task(lifespan.__aexit__(None, None, None))
    assert manager._task_group is None
