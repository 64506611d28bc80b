"""askgate as an A2A agent, end to end: a real askgate (uvicorn, 127.0.0.1) and the a2a-sdk client.

(b) askgate asks its A2A caller (the caller is the respondent): input-required with the text fallback
and, only when the caller activated elicitation/v1, the typed data part; bad answers keep the task in
input-required with the faults; the outcome completes the task. (a) an A2A caller asks (the caller is
the asker): the task works until the respondent answers, then completes with the answer.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.types.a2a_pb2 import CancelTaskRequest, GetTaskRequest
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import A2AError
from google.protobuf import json_format

from askgate.protocols.a2a_carriage import EXTENSION_URI
from tests.wire.a2a.conftest import Askgate, send, user_message

REGION = {"message": "Which region should I deploy to?", "requestedSchema": {"type": "object", "properties": {
    "region": {"type": "string", "enum": ["eu", "us"], "enumNames": ["Europe", "United States"]},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 9}}, "required": ["region"]}}
NAME = {"message": "Your name?", "requestedSchema": {"type": "object", "properties": {
    "name": {"type": "string", "minLength": 2}}, "required": ["name"]}}


def offer(server: Askgate, doc: dict[str, Any], respondent: str, kind: str = "agent") -> str:
    with server.http("agent") as c:
        r = c.post("/v1/asks", params={"dialect": "a2a-elicitation", "respondent": respondent,
                                       "respondent_kind": kind}, json=doc)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def ask_view(server: Askgate, ask_id: str) -> dict[str, Any]:
    with server.http("agent") as c:
        r = c.get(f"/v1/asks/{ask_id}")
    assert r.status_code == 200, r.text
    return dict(r.json())


def answer_part(action: str, content: dict[str, Any] | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"action": action}
    if content is not None:
        payload["content"] = content
    return {"data": {"elicitation/v1": payload}}


async def test_agent_card_declares_the_optional_extension(askgate_server: Askgate) -> None:
    async with httpx.AsyncClient() as http:
        raw = (await http.get(askgate_server.url + "/.well-known/agent-card.json")).json()
    exts = raw["capabilities"]["extensions"]
    assert [e["uri"] for e in exts] == [EXTENSION_URI]
    assert exts[0]["required"] is False  # written out explicitly, not merely defaulted
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, askgate_server.url).get_agent_card()
    assert {i.protocol_binding for i in card.supported_interfaces} == {"HTTP+JSON", "JSONRPC"}
    assert all(i.url.startswith(askgate_server.url + "/a2a") for i in card.supported_interfaces)
    assert "bearer" in card.security_schemes


def test_a2a_calls_need_a_token(askgate_server: Askgate) -> None:
    body = {"message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "hi"}]}}
    r = httpx.post(askgate_server.url + "/a2a/message:send", json=body, headers={"A2A-Version": "1.0"})
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    r = httpx.post(askgate_server.url + "/a2a/message:send", json=body,
                   headers={"A2A-Version": "1.0", "Authorization": "Bearer agk_not_a_token"})
    assert r.status_code == 401


async def test_typed_answer_session_with_the_extension(askgate_server: Askgate) -> None:
    ask_id = offer(askgate_server, REGION, "bob")
    client = await askgate_server.client("bob")
    first = (await send(client, user_message({"text": "ready"}, extensions=True), extensions=True))["task"]
    status = first["status"]
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    msg = status["message"]
    assert msg["role"] == "ROLE_AGENT" and msg["extensions"] == [EXTENSION_URI]
    assert msg["metadata"]["askgate"]["ask_id"] == ask_id
    assert [list(p) for p in msg["parts"]] == [["text"], ["data"]]
    assert msg["parts"][0]["text"] == REGION["message"]
    typed = msg["parts"][1]["data"]["elicitation/v1"]
    assert typed["message"] == REGION["message"]
    assert typed["requestedSchema"]["properties"]["region"]["enum"] == ["eu", "us"]
    assert typed["requestedSchema"]["required"] == ["region"]

    # a bad answer: stays input-required, every fault stated (JSON pointers into the message)
    bad = user_message(answer_part("accept", {"region": "mars", "replicas": 12}), task_id=first["id"],
                       context_id=first["contextId"], extensions=True)
    second = (await send(client, bad, extensions=True))["task"]
    assert second["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    parts = second["status"]["message"]["parts"]
    faults = next(p["data"]["askgate/faults"] for p in parts if "askgate/faults" in p.get("data", {}))
    pointers = {f["pointer"] for f in faults}
    assert pointers == {"/parts/0/data/elicitation~1v1/content/region", "/parts/0/data/elicitation~1v1/content/replicas"}
    assert "not accepted" in parts[0]["text"] and "region" in parts[0]["text"]
    assert ask_view(askgate_server, ask_id)["state"] == "delivered"  # an invalid answer does not consume the ask

    # decline is not content-bearing: content on decline is a fault too
    wrong = user_message(answer_part("decline", {"region": "eu"}), task_id=first["id"], context_id=first["contextId"],
                         extensions=True)
    assert (await send(client, wrong, extensions=True))["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"

    good = user_message({"text": "accepted region: eu, replicas: 3"}, answer_part("accept", {"region": "eu", "replicas": 3}),
                        task_id=first["id"], context_id=first["contextId"], extensions=True)
    done = (await send(client, good, extensions=True))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    outcome = done["artifacts"][-1]["parts"][1]["data"]["askgate/outcome"]
    assert outcome["ask_id"] == ask_id and outcome["state"] == "answered"
    view = ask_view(askgate_server, ask_id)
    assert view["state"] == "answered"
    assert view["outcome"]["value"] == {"region": "eu", "replicas": 3}
    assert isinstance(view["outcome"]["value"]["replicas"], int)  # protobuf doubles narrowed back
    assert view["outcome"]["respondent"] == {"kind": "agent", "id": "bob"}
    assert view["response"] == {"action": "accept", "content": {"region": "eu", "replicas": 3}}

    # the task is terminal: a further answer on it is refused by the A2A layer
    late = user_message(answer_part("accept", {"region": "us"}), task_id=first["id"], context_id=first["contextId"])
    with pytest.raises(A2AError) as err:
        await send(client, late)
    assert "terminal" in str(err.value).lower() or "unsupported" in str(err.value).lower()
    assert ask_view(askgate_server, ask_id)["outcome"]["value"]["region"] == "eu"
    await client.close()


async def test_without_the_extension_only_text_and_text_answers(askgate_server: Askgate) -> None:
    ask_id = offer(askgate_server, NAME, "carol")
    client = await askgate_server.client("carol")
    task = (await send(client, user_message({"text": "anything for me?"})))["task"]
    msg = task["status"]["message"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert msg["parts"] == [{"text": "Your name?"}] and "extensions" not in msg

    # text answers are checked by the codec too: one character is below minLength
    short = user_message({"text": "Q"}, task_id=task["id"], context_id=task["contextId"])
    again = (await send(client, short))["task"]
    assert again["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert "minLength" in again["status"]["message"]["parts"][0]["text"]
    assert not any("data" in p and "elicitation/v1" in p["data"] for p in again["status"]["message"]["parts"])

    done = (await send(client, user_message({"text": "Carol Q."}, task_id=task["id"], context_id=task["contextId"])))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert ask_view(askgate_server, ask_id)["outcome"]["value"] == {"name": "Carol Q."}
    await client.close()


async def test_activation_by_message_extensions_alone_and_multi_field_text_needs_json(askgate_server: Askgate) -> None:
    ask_id = offer(askgate_server, REGION, "eve")
    client = await askgate_server.client("eve")
    # message.extensions lists the URI, no header: active (the latest user message decides)
    task = (await send(client, user_message({"text": "go"}, extensions=True)))["task"]
    assert any("data" in p for p in task["status"]["message"]["parts"])
    # an answer without the extension in plain text for a two-field form: needs a JSON object
    vague = (await send(client, user_message({"text": "europe please"}, task_id=task["id"],
                                             context_id=task["contextId"])))["task"]
    assert vague["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert [p for p in vague["status"]["message"]["parts"] if "data" in p][-1]["data"]["askgate/faults"][0]["rule"] \
        == "a2a.text-answer"
    # that latest message did not activate the extension: the re-asked status message is text only
    assert all("elicitation/v1" not in p.get("data", {}) for p in vague["status"]["message"]["parts"])
    done = (await send(client, user_message({"text": '{"region": "us"}'}, task_id=task["id"],
                                            context_id=task["contextId"])))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert ask_view(askgate_server, ask_id)["outcome"]["value"] == {"region": "us"}
    await client.close()


async def test_continuation_guards(askgate_server: Askgate) -> None:
    offer(askgate_server, NAME, "bob")
    bob = await askgate_server.client("bob")
    carol = await askgate_server.client("carol")
    task = (await send(bob, user_message({"text": "ready"})))["task"]
    # another principal cannot continue (or even see) bob's task
    with pytest.raises(A2AError) as err:
        await send(carol, user_message({"text": "Mallory"}, task_id=task["id"], context_id=task["contextId"]))
    assert "not found" in str(err.value).lower()
    with pytest.raises(A2AError):
        await carol.get_task(GetTaskRequest(id=task["id"]))
    # a contextId that is not the task's is refused
    with pytest.raises(A2AError) as err:
        await send(bob, user_message({"text": "Bobby"}, task_id=task["id"], context_id="some-other-context"))
    assert "context" in str(err.value).lower()
    still = json_format.MessageToDict(await bob.get_task(GetTaskRequest(id=task["id"])))
    assert still["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    done = (await send(bob, user_message({"text": "Bobby"}, task_id=task["id"], context_id=task["contextId"])))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    await bob.close()
    await carol.close()


async def test_nothing_to_answer_is_a_message_not_a_stranded_task(askgate_server: Askgate) -> None:
    client = await askgate_server.client("bot")
    reply = await send(client, user_message({"text": "anything?"}))
    assert "message" in reply and "task" not in reply
    assert "Nothing is waiting" in reply["message"]["parts"][0]["text"]
    await client.close()


async def test_an_a2a_asker_gets_the_answer_of_an_a2a_respondent(askgate_server: Askgate) -> None:
    """(a) and (b) together: the asker's task works until the respondent's session answers it."""
    asker = await askgate_server.client("agent")
    bot = await askgate_server.client("bot")
    ask = user_message({"text": REGION["message"]}, {"data": {"elicitation/v1": REGION}}, extensions=True,
                       metadata={"askgate": {"respondents": ["bot"], "respondent_kind": "agent"}})
    working = (await send(asker, ask, extensions=True, immediately=True))["task"]
    assert working["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    ask_id = working["metadata"]["askgate"]["ask_id"]
    assert ask_view(askgate_server, ask_id)["offered_to"] == ["bot"]

    session = (await send(bot, user_message({"text": "ready"}, metadata={"askgate": {"ask_id": ask_id}}),
                          extensions=True))["task"]
    assert session["metadata"]["askgate"]["ask_id"] == ask_id
    await send(bot, user_message(answer_part("accept", {"region": "us", "replicas": 2}), task_id=session["id"],
                                 context_id=session["contextId"], extensions=True), extensions=True)

    final = await _until_terminal(asker, working["id"])
    assert final["status"]["state"] == "TASK_STATE_COMPLETED"
    parts = final["artifacts"][-1]["parts"]
    # the a2a-sdk client sent the schema through protobuf Struct, so the field order is not the caller's
    assert parts[0]["text"].startswith("accepted ")
    assert sorted(parts[0]["text"].removeprefix("accepted ").split(", ")) == ["region: us", "replicas: 2"]
    assert parts[1]["data"]["elicitation/v1"] == {"action": "accept", "content": {"region": "us", "replicas": 2.0}}
    assert parts[2]["data"]["askgate/outcome"]["state"] == "answered"
    await asker.close()
    await bot.close()


async def test_an_a2a_asker_blocks_until_a_person_answers_over_http(askgate_server: Askgate) -> None:
    asker = await askgate_server.client("agent")
    doc = {"document": {"ask": {"dialect": "canonical", "prompt": "Ship it?", "spec": {"kind": "yes_no"}}},
           "routing": {"respondents": [{"kind": "human", "id": "carol"}]}}
    msg = user_message({"text": "Ship it?"}, {"data": {"askgate/ask": doc}})

    async def answer_when_offered() -> None:
        for _ in range(200):
            with askgate_server.http("carol") as c:
                items = c.get("/v1/asks", params={"state": "delivered"}).json()["items"]
                mine = [a for a in items if a["prompt"] == "Ship it?"]
                if mine:
                    r = c.post(f"/v1/asks/{mine[0]['id']}/answer", json={"outcome": "accept", "value": True})
                    assert r.status_code == 200, r.text
                    return
            await asyncio.sleep(0.05)
        raise AssertionError("never offered")

    blocking, _ = await asyncio.gather(send(asker, msg), answer_when_offered())
    task = blocking["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    parts = task["artifacts"][-1]["parts"]
    assert parts[0]["text"] == "accepted True"
    assert parts[1]["data"]["askgate/response"]["dialect"] == "canonical"
    assert parts[2]["data"]["askgate/outcome"]["outcome"]["value"] is True
    await asker.close()


async def test_a_bad_ask_is_rejected_with_every_fault_and_creates_nothing(askgate_server: Askgate) -> None:
    asker = await askgate_server.client("agent")
    bad = {"message": "", "requestedSchema": {"type": "object", "properties": {
        "pw": {"type": "string", "title": "Password"}, "n": {"type": "integer", "minimum": 5, "maximum": 1}}}}
    with askgate_server.http("agent") as c:
        before = len(c.get("/v1/asks", params={"limit": 500}).json()["items"])
    task = (await send(asker, user_message({"data": {"elicitation/v1": bad}}, metadata={"askgate": {"respondents": ["bob"]}})))["task"]
    assert task["status"]["state"] == "TASK_STATE_REJECTED"
    faults = task["status"]["message"]["parts"][1]["data"]["askgate/faults"]
    rules = {f["rule"] for f in faults}
    assert "minLength" in rules and any("minimum" in f["message"] for f in faults) and len(faults) >= 3
    assert all(f["pointer"].startswith("/elicitation~1v1") for f in faults)
    with askgate_server.http("agent") as c:
        assert len(c.get("/v1/asks", params={"limit": 500}).json()["items"]) == before
    # a respondent token may not create asks
    bob = await askgate_server.client("bob")
    refused = (await send(bob, user_message({"data": {"elicitation/v1": NAME}})))["task"]
    assert refused["status"]["state"] == "TASK_STATE_REJECTED"
    await asker.close()
    await bob.close()


async def test_a_retried_ask_message_is_one_ask_and_cancel_withdraws(askgate_server: Askgate) -> None:
    asker = await askgate_server.client("agent")
    mid = str(uuid.uuid4())

    def msg() -> Any:
        return user_message({"data": {"elicitation/v1": NAME}}, message_id=mid,
                            metadata={"askgate": {"respondents": ["eve"]}})

    first = (await send(asker, msg(), immediately=True))["task"]
    second = (await send(asker, msg(), immediately=True))["task"]
    assert first["id"] != second["id"]
    assert first["metadata"]["askgate"]["ask_id"] == second["metadata"]["askgate"]["ask_id"]
    ask_id = first["metadata"]["askgate"]["ask_id"]
    cancelled = json_format.MessageToDict(await asker.cancel_task(CancelTaskRequest(id=first["id"])))
    assert cancelled["status"]["state"] == "TASK_STATE_CANCELED"
    assert ask_view(askgate_server, ask_id)["state"] == "withdrawn"
    await asker.close()


async def test_json_rpc_binding(askgate_server: Askgate) -> None:
    ask_id = offer(askgate_server, NAME, "eve")
    client = await askgate_server.client("eve", binding=TransportProtocol.JSONRPC.value)
    task = (await send(client, user_message({"text": "ready"}, metadata={"askgate": {"ask_id": ask_id}}),
                       extensions=True))["task"]
    assert task["status"]["message"]["parts"][1]["data"]["elicitation/v1"]["message"] == "Your name?"
    done = (await send(client, user_message(answer_part("decline"), task_id=task["id"], context_id=task["contextId"],
                                            extensions=True), extensions=True))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert ask_view(askgate_server, ask_id)["state"] == "declined"
    await client.close()


async def _until_terminal(client: Any, task_id: str, timeout: float = 20.0) -> dict[str, Any]:
    end = asyncio.get_running_loop().time() + timeout
    while True:
        task = json_format.MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
        if task["status"]["state"] in ("TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED",
                                       "TASK_STATE_REJECTED"):
            return task
        assert asyncio.get_running_loop().time() < end, task["status"]
        await asyncio.sleep(0.05)


def test_only_a2a_version_1_0_is_served(askgate_server: Askgate) -> None:
    body = {"message": {"role": "ROLE_USER", "messageId": "v1", "parts": [{"text": "hi"}]}}
    auth = {"Authorization": f"Bearer {askgate_server.tokens['bot']}"}
    for version in ("0.3", "2.0"):
        r = httpx.post(askgate_server.url + "/a2a/message:send", json=body, headers={**auth, "A2A-Version": version})
        assert r.status_code == 400 and "VERSION_NOT_SUPPORTED" in r.text
    r = httpx.post(askgate_server.url + "/a2a/message:send", json=body, headers={**auth, "A2A-Version": "1.0"})
    assert r.status_code == 200 and "message" in r.json()


async def test_a_retried_answer_gets_the_earlier_outcome_and_a_changed_one_is_refused(askgate_server: Askgate) -> None:
    ask_id = offer(askgate_server, NAME, "carol")
    client = await askgate_server.client("carol")
    task = (await send(client, user_message({"text": "ready"}, metadata={"askgate": {"ask_id": ask_id}})))["task"]
    mid = str(uuid.uuid4())
    answer = user_message({"text": "Carla"}, task_id=task["id"], context_id=task["contextId"], message_id=mid)
    done = (await send(client, answer))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    again = (await send(client, user_message({"text": "Carla"}, task_id=task["id"], context_id=task["contextId"],
                                             message_id=mid)))["task"]
    assert again["status"] == done["status"] and again["artifacts"] == done["artifacts"]
    with pytest.raises(A2AError) as err:
        await send(client, user_message({"text": "Someone else"}, task_id=task["id"], context_id=task["contextId"],
                                        message_id=mid))
    assert "DUPLICATE_MESSAGE_ID" in str(err.value)
    assert ask_view(askgate_server, ask_id)["outcome"]["value"] == {"name": "Carla"}
    await client.close()


async def test_streaming_answer_session(askgate_server: Askgate) -> None:
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import SendMessageRequest

    from tests.wire.a2a.conftest import ext_context

    ask_id = offer(askgate_server, NAME, "eve")
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {askgate_server.tokens['eve']}"}, timeout=30)
    client = await create_client(askgate_server.url, client_config=ClientConfig(
        httpx_client=http, streaming=True, supported_protocol_bindings=[TransportProtocol.HTTP_JSON.value]))
    events = [json_format.MessageToDict(e) async for e in client.send_message(
        SendMessageRequest(message=user_message({"text": "ready"}, metadata={"askgate": {"ask_id": ask_id}},
                                                extensions=True)), context=ext_context(True))]
    assert "task" in events[0]
    last = events[-1]
    status = last.get("statusUpdate", last.get("task", {})).get("status")
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert status["message"]["parts"][1]["data"]["elicitation/v1"]["message"] == "Your name?"
    task_id = events[0]["task"]["id"]
    context_id = events[0]["task"]["contextId"]
    final = [json_format.MessageToDict(e) async for e in client.send_message(
        SendMessageRequest(message=user_message(answer_part("accept", {"name": "Eve"}), task_id=task_id,
                                                context_id=context_id, extensions=True)), context=ext_context(True))]
    states = [e.get("statusUpdate", {}).get("status", {}).get("state") for e in final]
    assert "TASK_STATE_COMPLETED" in states
    assert ask_view(askgate_server, ask_id)["outcome"]["value"] == {"name": "Eve"}
    await client.close()
    await http.aclose()


def test_an_a2a_ask_keeps_the_callers_field_order(askgate_server: Askgate) -> None:
    """protobuf Struct keeps neither key order nor integers; askgate reads the JSON the caller sent (a
    client that builds protobuf first, like a2a-sdk's, has lost both before sending)."""
    doc = {"message": "Two things", "requestedSchema": {"type": "object", "properties": {
        "zulu": {"type": "integer", "default": 3}, "alpha": {"type": "string"}, "mike": {"type": "boolean"}}}}
    body = {"message": {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"data": {"elicitation/v1": doc}}],
                        "metadata": {"askgate": {"respondents": ["bob"]}}},
            "configuration": {"returnImmediately": True}}
    with askgate_server.http("agent") as c:
        r = c.post("/a2a/message:send", json=body, headers={"A2A-Version": "1.0"})
        assert r.status_code == 200, r.text
        task = r.json()["task"]
        view = ask_view(askgate_server, task["metadata"]["askgate"]["ask_id"])
        assert [f["name"] for f in view["spec"]["fields"]] == ["zulu", "alpha", "mike"]
        assert view["spec"]["fields"][0]["default"] == 3 and isinstance(view["spec"]["fields"][0]["default"], int)
        assert c.post(f"/a2a/tasks/{task['id']}:cancel", headers={"A2A-Version": "1.0"}).status_code == 200


async def test_a_session_whose_ask_settles_elsewhere_completes_with_that_outcome(askgate_server: Askgate) -> None:
    """Never strand a task: the deadline passing, or another respondent winning, completes the parked
    input-required session at once (no message from the caller needed); a late answer is then refused."""
    with askgate_server.http("agent") as c:
        r = c.post("/v1/asks", params={"dialect": "a2a-elicitation", "respondent": "bob", "timeout": 1}, json=NAME)
        late_id = r.json()["id"]
        r = c.post("/v1/asks", params={"dialect": "a2a-elicitation", "respondent": ["bob", "carol"]}, json=NAME)
        raced_id = r.json()["id"]
    bob = await askgate_server.client("bob")
    late = (await send(bob, user_message({"text": "ready"}, metadata={"askgate": {"ask_id": late_id}})))["task"]
    raced = (await send(bob, user_message({"text": "ready"}, metadata={"askgate": {"ask_id": raced_id}})))["task"]
    assert late["status"]["state"] == raced["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"

    done = await _until_terminal(bob, late["id"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][-1]["parts"][1]["data"]["askgate/outcome"]["state"] == "timed_out"
    assert ask_view(askgate_server, late_id)["state"] == "timed_out"
    with pytest.raises(A2AError):
        await send(bob, user_message({"text": "Bob"}, task_id=late["id"], context_id=late["contextId"]))

    with askgate_server.http("carol") as c:
        assert c.post(f"/v1/asks/{raced_id}/answer",
                      json={"action": "accept", "content": {"name": "Carol"}}).status_code == 200
    done = await _until_terminal(bob, raced["id"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    outcome = done["artifacts"][-1]["parts"][1]["data"]["askgate/outcome"]["outcome"]
    assert outcome["value"] == {"name": "Carol"} and outcome["respondent"]["id"] == "carol"
    assert ask_view(askgate_server, raced_id)["outcome"]["respondent"]["id"] == "carol"
    await bob.close()


async def test_a_bearer_agent_approver_answers_an_acs_ask_over_a2a(askgate_server: Askgate) -> None:
    """An ACS approver without an endpoint (auth bearer) pulls the ASK over A2A: the principal ``bot`` maps to
    approver ``agent:ops``; the decision form's answer becomes the ACS decision."""
    doc = {"approver": {"type": "agent", "id": "agent:ops", "auth": {"method": "bearer"}},
           "question": "Rotate the keys?", "timeout_seconds": 60, "options": ["now", "tonight"]}
    with askgate_server.http("agent") as c:
        r = c.post("/v1/asks", params={"dialect": "acs"}, json=doc)
        assert r.status_code == 201, r.text
        ask_id = r.json()["id"]
    bot = await askgate_server.client("bot")
    task = (await send(bot, user_message({"text": "ready"}, metadata={"askgate": {"ask_id": ask_id}}),
                       extensions=True))["task"]
    schema = task["status"]["message"]["parts"][1]["data"]["elicitation/v1"]["requestedSchema"]
    assert schema["properties"]["decision"]["enum"] == ["allow", "deny"]
    # allow without naming one of the options is refused by the ACS rules; the task stays input-required
    vague = (await send(bot, user_message(answer_part("accept", {"decision": "allow"}), task_id=task["id"],
                                          context_id=task["contextId"], extensions=True), extensions=True))["task"]
    assert vague["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    done = (await send(bot, user_message(answer_part("accept", {"decision": "allow", "selected_option": "tonight",
                                                                "reasoning": "maintenance window"}),
                                         task_id=task["id"], context_id=task["contextId"], extensions=True),
                       extensions=True))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    view = ask_view(askgate_server, ask_id)
    assert view["outcome"]["value"]["decision"] == "allow" and view["outcome"]["value"]["selected_option"] == "tonight"
    assert view["outcome"]["respondent"]["id"] == "agent:ops"
    result = view["response"]["result"]
    assert result["decision"] == "allow" and result["policy_data"]["askgate"]["approver"]["id"] == "agent:ops"
    await bot.close()


def test_request_bodies_over_one_mebibyte_are_refused(askgate_server: Askgate) -> None:
    body = {"message": {"role": "ROLE_USER", "messageId": "big", "parts": [{"text": "x" * (1024 * 1024)}]}}
    with askgate_server.http("bot") as c:
        r = c.post("/a2a/message:send", json=body, headers={"A2A-Version": "1.0"})
    assert r.status_code == 413


async def test_a_session_is_bounded_to_200_history_messages(askgate_server: Askgate, monkeypatch: pytest.MonkeyPatch) -> None:
    from askgate.server.a2a import executor

    monkeypatch.setattr(executor, "MAX_HISTORY", 4)  # the same code path as 200, in fewer rounds
    ask_id = offer(askgate_server, NAME, "eve")
    client = await askgate_server.client("eve")
    task = (await send(client, user_message({"text": "ready"}, metadata={"askgate": {"ask_id": ask_id}})))["task"]
    states = []
    for _ in range(3):
        t = (await send(client, user_message({"text": "X"}, task_id=task["id"], context_id=task["contextId"])))["task"]
        states.append(t["status"]["state"])
    assert states[0] == "TASK_STATE_INPUT_REQUIRED" and states[-1] == "TASK_STATE_FAILED"
    assert ask_view(askgate_server, ask_id)["state"] == "delivered"  # the ask itself is untouched
    await client.close()


async def test_a_held_ask_is_skipped_taken_over_by_id_and_every_session_completes(askgate_server: Askgate) -> None:
    ask_id = offer(askgate_server, NAME, "dave")  # dave is offered nothing else in this module
    client = await askgate_server.client("dave")
    first = (await send(client, user_message({"text": "ready"})))["task"]
    assert first["metadata"]["askgate"]["ask_id"] == ask_id
    # held by the first session: a session without an ask id does not get it again
    other = await send(client, user_message({"text": "anything else?"}))
    assert "message" in other and "Nothing is waiting" in other["message"]["parts"][0]["text"]
    second = (await send(client, user_message({"text": "again"}, metadata={"askgate": {"ask_id": ask_id}})))["task"]
    assert second["id"] != first["id"] and second["metadata"]["askgate"]["ask_id"] == ask_id
    done = (await send(client, user_message({"text": "Carmen"}, task_id=second["id"],
                                            context_id=second["contextId"])))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    abandoned = await _until_terminal(client, first["id"])
    assert abandoned["status"]["state"] == "TASK_STATE_COMPLETED"
    assert abandoned["artifacts"][-1]["parts"][1]["data"]["askgate/outcome"]["outcome"]["value"] == {"name": "Carmen"}
    await client.close()


@pytest.mark.parametrize(("message", "problem"), [
    ({"messageId": "-starts-with-a-dash", "parts": [{"text": "hi"}]}, "messageId"),
    ({"messageId": "x" * 129, "parts": [{"text": "hi"}]}, "messageId"),
    ({"messageId": "ok-1", "contextId": "bad context", "parts": [{"text": "hi"}]}, "contextId"),
    ({"messageId": "ok-2", "parts": []}, "at least one part"),
    ({"messageId": "ok-3", "parts": [{"text": "x" * (300 * 1024)}]}, "at most"),
])
def test_reference_message_limits(askgate_server: Askgate, message: dict[str, Any], problem: str) -> None:
    body = {"message": {"role": "ROLE_USER", **message}}
    with askgate_server.http("dave") as c:
        r = c.post("/a2a/message:send", json=body, headers={"A2A-Version": "1.0"})
    assert r.status_code == 400 and problem in r.text, r.text
