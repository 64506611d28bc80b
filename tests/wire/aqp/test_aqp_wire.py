"""AQP on the wire against a running askgate (HTTPS, uvicorn): intake, idempotency, signals, pull, and
push delivery over ``https`` to a real local HTTPS server (retries, permanent failure, expiry)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from askgate.core.audit import verify_chain
from tests.support.tls_peers import Pki, Received, https_server
from tests.support.wire_server import Askgate, running_askgate

AUTH = "Token aqp-delivery-credential-7f3a"  # sent exactly as given; must never appear in the audit chain
PRINCIPALS = {"agent-a": "asker", "agent-b": "asker", "alice": "respondent", "admin": "admin"}


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki.make()


@pytest.fixture(scope="module")
def gate(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Askgate]:
    with running_askgate(tmp_path_factory.mktemp("aqp"), pki, PRINCIPALS) as g:
        yield g


def at(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def query(binding: str = "other", endpoint: str | None = None, *, expires_in: float = 120.0, fmt: str = "choice",
          **extra: Any) -> dict[str, Any]:
    delivery: dict[str, Any] = {"binding": binding}
    if endpoint is not None:
        delivery["endpoint"] = endpoint
        delivery["authorization"] = AUTH
    response: dict[str, Any] = {"format": fmt}
    if fmt == "choice":
        response["choices"] = ["Ship it", "Hold"]
    doc = {"protocolVersion": "2026-07-30", "queryId": str(uuid.uuid4()), "type": "approval",
           "subject": {"pr": 42}, "prompt": "Ship release 1.2?", "timing": "immediate",
           "consentMode": "not_required", "response": response, "delivery": delivery, "expiresAt": at(expires_in)}
    doc.update(extra)
    return doc


def submit(gate: Askgate, doc: Any, asker: str = "agent-a", respondent: str = "alice") -> httpx.Response:
    with gate.client(asker) as c:
        if isinstance(doc, bytes):
            return c.post("/aqp/queries", params={"respondent": respondent}, content=doc,
                          headers={"Content-Type": "application/json"})
        return c.post("/aqp/queries", params={"respondent": respondent}, json=doc)


def ask_id_for(gate: Askgate, query_id: str, principal: str = "alice", asker: str = "agent-a") -> str:
    with gate.client(principal) as c:
        items = c.get("/v1/asks", params={"limit": 500}).json()["items"]
    return next(i["id"] for i in items if i["external_id"] == query_id and i["asker"] == asker)


def answer(gate: Askgate, query_id: str, payload: dict[str, Any], principal: str = "alice") -> httpx.Response:
    with gate.client(principal) as c:
        return c.post(f"/v1/asks/{ask_id_for(gate, query_id, principal)}/answer", json=payload)


def status(gate: Askgate, query_id: str, asker: str = "agent-a") -> httpx.Response:
    with gate.client(asker) as c:
        return c.get(f"/aqp/queries/{query_id}")


def wait_state(gate: Askgate, query_id: str, want: set[str], timeout: float = 20.0) -> httpx.Response:
    end = time.monotonic() + timeout
    while True:
        r = status(gate, query_id)
        if r.headers.get("aqp-query-state") in want or time.monotonic() > end:
            return r
        time.sleep(0.1)


def audit(gate: Askgate, query_id: str) -> dict[str, Any]:
    with gate.client("admin") as c:
        return c.get(f"/v1/asks/{ask_id_for(gate, query_id, 'admin')}/audit").json()


# ---- intake -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "code", "path"),
    [
        (lambda d: d.pop("prompt"), "invalid_query", "/prompt"),
        (lambda d: d.update(type="nonsense"), "invalid_query", "/type"),
        (lambda d: d["response"].pop("choices"), "invalid_query", "/response/choices"),
        (lambda d: d.update(consentMode="ask_once"), "invalid_query", "/consentScope"),
        (lambda d: d.update(expiresAt=at(-5)), "already_expired", "/expiresAt"),
        (lambda d: d.update(delivery={"binding": "https"}), "endpoint_required", "/delivery/endpoint"),
        (lambda d: d.update(delivery={"binding": "https", "endpoint": "http://example.com/x"}), "endpoint_required",
         "/delivery/endpoint"),
        (lambda d: d.update(delivery={"binding": "mcp", "endpoint": "https://example.com/mcp"}), "endpoint_required",
         "/delivery/operation"),
        (lambda d: d.update(response={"format": "structured", "jsonSchema": {"type": "object", "properties": {
            "nested": {"type": "object"}}}}), "unsupported_json_schema", "/response/jsonSchema"),
    ],
)
def test_intake_errors(gate: Askgate, mutate: Any, code: str, path: str) -> None:
    doc = query()
    mutate(doc)
    r = submit(gate, doc)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["code"] == code and err["path"] == path and err["message"]
    assert AUTH not in r.text


def test_not_json_and_duplicate_keys(gate: Askgate) -> None:
    for body in (b"{not json", b'{"queryId": "a", "queryId": "b"}'):
        r = submit(gate, body)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"


def test_only_askers_submit_and_tokens_are_required(gate: Askgate) -> None:
    assert submit(gate, query(), asker="alice").status_code == 403
    with gate.client() as c:
        assert c.post("/aqp/queries", json=query()).status_code == 401


def test_query_id_is_idempotent_per_asker(gate: Askgate) -> None:
    doc = query()
    first = submit(gate, doc)
    assert first.status_code == 202, first.text
    assert first.json() == {"protocolVersion": "2026-07-30", "queryId": doc["queryId"], "status": "open",
                            "expiresAt": first.json()["expiresAt"]}
    replay = submit(gate, doc)
    assert replay.status_code == 200 and replay.json()["status"] == "open"
    changed = dict(doc, prompt="Something else?")
    dup = submit(gate, changed)
    assert dup.status_code == 409 and dup.json()["error"]["code"] == "duplicate_query_id"
    other = submit(gate, doc, asker="agent-b")  # another asker's namespace
    assert other.status_code == 202
    assert status(gate, doc["queryId"], "agent-b").json()["status"] == "open"
    answer(gate, doc["queryId"], {"format": "choice", "value": "Hold"})
    replay = submit(gate, doc)
    assert replay.status_code == 200 and replay.json()["status"] == "answered"


def test_timing_and_signals(gate: Askgate) -> None:
    doc = query(timing="after_task_complete")
    assert submit(gate, doc).json()["status"] == "held"
    with gate.client("alice") as c:
        assert all(i["external_id"] != doc["queryId"] for i in c.get("/v1/asks").json()["items"])  # invisible
    with gate.client("agent-a") as c:
        sig = f"/aqp/queries/{doc['queryId']}/signals"
        assert c.post(sig, json={"signal": "outcome_known"}).json()["status"] == "held"  # no-op
        assert c.post(sig, json={"signal": "bogus"}).json()["error"]["code"] == "invalid_signal"
        r = c.post(sig, json={"signal": "task_complete"})
        assert r.json()["status"] == "open" and r.headers["aqp-query-state"] == "open"
        assert c.post(sig, json={"signal": "release"}).json()["status"] == "open"  # idempotent
    with gate.client("agent-b") as c:  # only the submitting principal
        assert c.post(f"/aqp/queries/{doc['queryId']}/signals", json={"signal": "release"}).status_code == 404


def test_pull_binding_returns_the_query_response(gate: Askgate) -> None:
    doc = query(fmt="text")
    submit(gate, doc)
    pending = status(gate, doc["queryId"])
    assert pending.json()["status"] == "open" and "answer" not in pending.json()
    bad = answer(gate, doc["queryId"], {"format": "text", "value": ""})
    assert bad.status_code == 422
    assert answer(gate, doc["queryId"], {"format": "text", "value": "Looks good"}).status_code == 200
    got = status(gate, doc["queryId"])
    body = got.json()
    assert got.headers["aqp-query-state"] == "answered"
    assert body["status"] == "answered" and body["answer"] == {"format": "text", "value": "Looks good"}
    assert body["respondent"] == {"id": "alice", "kind": "human"}
    assert body["consent"] == {"mode": "not_required", "basis": "not_required"}
    assert set(body) == {"protocolVersion", "queryId", "status", "answer", "respondent", "answeredAt", "consent",
                         "issuedAt"}


def test_cancel_by_the_asker(gate: Askgate) -> None:
    doc = query()
    submit(gate, doc)
    with gate.client("agent-a") as c:
        r = c.delete(f"/aqp/queries/{doc['queryId']}")
    assert r.json()["status"] == "cancelled"
    got = status(gate, doc["queryId"]).json()
    assert got == {"protocolVersion": "2026-07-30", "queryId": doc["queryId"], "status": "cancelled",
                   "issuedAt": got["issuedAt"]}


# ---- https push ------------------------------------------------------------------------------------


def test_https_push_retries_then_delivers(gate: Askgate, pki: Pki) -> None:
    replies = iter([(503, b"{}"), (429, b"{}"), (200, b"{}")])
    with https_server(pki, lambda _r: next(replies)) as hook:
        doc = query("https", hook.url + "/aqp/inbox")
        assert submit(gate, doc).status_code == 202
        assert answer(gate, doc["queryId"], {"format": "choice", "value": "Ship it"}).status_code == 200
        final = wait_state(gate, doc["queryId"], {"delivered", "delivery_failed"})
        got = hook.wait_for(3)
    assert final.headers["aqp-query-state"] == "delivered"
    assert len(got) == 3
    for rec in got:
        assert rec.path == "/aqp/inbox"
        assert rec.headers["authorization"] == AUTH  # exactly as given, no "Bearer " added
        assert rec.headers["idempotency-key"] == doc["queryId"]
        assert rec.headers["content-type"] == "application/json"
    body = got[-1].json()
    assert body["status"] == "answered" and body["queryId"] == doc["queryId"]
    assert body["answer"] == {"format": "choice", "value": "Ship it"}
    chain = audit(gate, doc["queryId"])
    assert chain["verification"]["ok"]
    deliveries = [e for e in chain["entries"] if e["step_type"] == "delivery"]
    assert [e["result"] for e in deliveries] == ["retry", "retry", "delivered"]
    assert [e.get("status") for e in deliveries] == [503, 429, 200]
    assert deliveries[0]["authorization_present"] is True and deliveries[0]["host"] == "127.0.0.1"
    assert AUTH not in json.dumps(chain) and "aqp-delivery-credential" not in json.dumps(chain)
    pulled = status(gate, doc["queryId"]).json()  # a delivered answer stays readable
    assert pulled["status"] == "answered"


def test_permanent_4xx_is_delivery_failed_and_stays_pullable(gate: Askgate, pki: Pki) -> None:
    with https_server(pki, lambda _r: (401, b'{"error":"no"}')) as hook:
        doc = query("https", hook.url)
        submit(gate, doc)
        answer(gate, doc["queryId"], {"format": "choice", "value": "Hold"})
        final = wait_state(gate, doc["queryId"], {"delivered", "delivery_failed"})
        assert len(hook.wait_for(1)) == 1
    assert final.headers["aqp-query-state"] == "delivery_failed"
    assert final.json()["status"] == "answered" and final.json()["answer"]["value"] == "Hold"
    entries = [e for e in audit(gate, doc["queryId"])["entries"] if e["step_type"] == "delivery"]
    assert [(e["result"], e["status"]) for e in entries] == [("delivery_failed", 401)]


def test_declined_is_pushed(gate: Askgate, pki: Pki) -> None:
    with https_server(pki) as hook:
        doc = query("https", hook.url)
        submit(gate, doc)
        assert answer(gate, doc["queryId"], {"status": "declined"}).status_code == 200
        wait_state(gate, doc["queryId"], {"delivered"})
        got = hook.wait_for(1)
    assert got[0].json()["status"] == "declined" and "answer" not in got[0].json()


def test_undelivered_answer_expires_and_nothing_is_sent_after_expiry(gate: Askgate, pki: Pki) -> None:
    stamps: list[float] = []

    def always_busy(_r: Received) -> tuple[int, bytes]:
        stamps.append(time.time())
        return 503, b"{}"

    with https_server(pki, always_busy) as hook:
        doc = query("https", hook.url, expires_in=6.0)
        submit(gate, doc)
        answer(gate, doc["queryId"], {"format": "choice", "value": "Ship it"})
        final = wait_state(gate, doc["queryId"], {"expired", "delivered", "delivery_failed"}, timeout=25)
        settled = len(hook.received)
        time.sleep(1.0)
        after = len(hook.received)
    expires = datetime.fromisoformat(doc["expiresAt"]).timestamp()
    assert final.headers["aqp-query-state"] == "expired"
    assert final.json() == {"protocolVersion": "2026-07-30", "queryId": doc["queryId"], "status": "expired",
                            "issuedAt": final.json()["issuedAt"]}  # the recorded answer is never released
    assert settled >= 2 and after == settled
    assert all(s < expires for s in stamps)
    with gate.client("agent-a") as c:  # nor through the /v1 API
        view = c.get(f"/v1/asks/{ask_id_for(gate, doc['queryId'])}").json()
    assert view["outcome"]["outcome"] == "expired" and view["response"]["status"] == "expired"
    assert "Ship it" not in json.dumps([view["outcome"], view["response"]])
    results = [e["result"] for e in audit(gate, doc["queryId"])["entries"] if e["step_type"] == "delivery"]
    assert results[-1] == "expired" and set(results[:-1]) == {"retry"}


def test_refused_endpoint_fails_without_contact(gate: Askgate) -> None:
    doc = query("https", "https://10.0.0.1/hook")
    submit(gate, doc)
    answer(gate, doc["queryId"], {"format": "choice", "value": "Hold"})
    final = wait_state(gate, doc["queryId"], {"delivery_failed", "delivered"})
    assert final.headers["aqp-query-state"] == "delivery_failed"
    entry = [e for e in audit(gate, doc["queryId"])["entries"] if e["step_type"] == "delivery"][-1]
    assert entry["error"] == "refused: outbound.address" and "status" not in entry


def test_chains_verify(gate: Askgate) -> None:
    doc = query()
    submit(gate, doc)
    assert verify_chain(audit(gate, doc["queryId"])["entries"]).ok


def _unused(p: Path) -> None:  # pragma: no cover - keeps the Path import meaningful for type checkers
    del p


# ---- a2a and mcp push bindings -------------------------------------------------------------------------


class HeaderRecorder:
    """ASGI middleware that records the headers of every POST (what the peer saw on the wire)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.headers: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            self.headers.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


def test_mcp_binding_calls_the_operation_as_a_tool(gate: Askgate, pki: Pki) -> None:
    from mcp.server import MCPServer

    from tests.support.tls_peers import uvicorn_thread

    calls: list[dict[str, Any]] = []
    server = MCPServer("aqp-receiver")

    @server.tool()
    def receive_answer(protocolVersion: str, queryId: str, status: str, issuedAt: str,
                       answer: dict[str, Any] | None = None, respondent: dict[str, Any] | None = None,
                       answeredAt: str | None = None, consent: dict[str, Any] | None = None) -> str:
        calls.append({"protocolVersion": protocolVersion, "queryId": queryId, "status": status, "answer": answer,
                      "respondent": respondent})
        return "stored"

    files = pki.write_files(gate.tmp)
    recorder = HeaderRecorder(server.streamable_http_app())
    with uvicorn_thread(recorder, ssl_certfile=files["cert"], ssl_keyfile=files["key"]) as url:
        doc = query("mcp", url + "/mcp", operation="receive_answer")
        doc["delivery"]["operation"] = doc.pop("operation")
        assert submit(gate, doc).status_code == 202
        answer(gate, doc["queryId"], {"format": "choice", "value": "Ship it"})
        final = wait_state(gate, doc["queryId"], {"delivered", "delivery_failed", "expired"})
    assert final.headers["aqp-query-state"] == "delivered", audit(gate, doc["queryId"])["entries"][-1]
    assert len(calls) == 1 and calls[0]["queryId"] == doc["queryId"] and calls[0]["status"] == "answered"
    assert calls[0]["answer"] == {"format": "choice", "value": "Ship it"}
    assert recorder.headers and all(h["authorization"] == AUTH for h in recorder.headers)


def test_a2a_binding_sends_one_user_message(gate: Askgate, pki: Pki) -> None:
    from tests.wire.a2a.agent import running_agent

    files = pki.write_files(gate.tmp)
    with running_agent(lambda n, msg, task: ("message", {"action": "accept", "content": {}}), ssl=files) as (url,
                                                                                                          agent):
        doc = query("a2a", url, operation="aqp.receive")
        doc["delivery"]["operation"] = doc.pop("operation")
        submit(gate, doc)
        answer(gate, doc["queryId"], {"format": "choice", "value": "Hold"})
        final = wait_state(gate, doc["queryId"], {"delivered", "delivery_failed", "expired"})
    assert final.headers["aqp-query-state"] == "delivered", audit(gate, doc["queryId"])["entries"][-1]
    assert len(agent.seen.messages) == 1
    assert agent.seen.headers[0].get("authorization") == AUTH
    msg = agent.seen.messages[0]
    assert msg["role"] == "ROLE_USER" and msg["metadata"] == {"operation": "aqp.receive"}
    text, data = msg["parts"]
    assert doc["queryId"] in text["text"] and "Hold" in text["text"]
    sent = data["data"]["aqp/QueryResponse"]
    assert sent["status"] == "answered" and sent["answer"] == {"format": "choice", "value": "Hold"}


def test_ask_once_consent_is_asked_then_remembered(gate: Askgate) -> None:
    scope = f"scope-{uuid.uuid4().hex[:12]}"
    first = query(fmt="text", consentMode="ask_once", consentScope=scope)
    assert submit(gate, first).json()["status"] == "awaiting_consent"
    assert answer(gate, first["queryId"], {"format": "text", "value": "too early"}).status_code == 403
    with gate.client("alice") as c:
        r = c.post(f"/v1/asks/{ask_id_for(gate, first['queryId'])}/consent", json={"granted": True})
        assert r.status_code == 200, r.text
    assert status(gate, first["queryId"]).json()["status"] == "open"
    answer(gate, first["queryId"], {"format": "text", "value": "fine"})
    assert status(gate, first["queryId"]).json()["consent"] == {"mode": "ask_once", "basis": "granted_now"}
    second = query(fmt="text", consentMode="ask_once", consentScope=scope)
    assert submit(gate, second).json()["status"] == "open"  # the stored grant opens it without asking
    answer(gate, second["queryId"], {"format": "text", "value": "again"})
    assert status(gate, second["queryId"]).json()["consent"] == {"mode": "ask_once", "basis": "stored_grant"}


def test_consent_refusal_looks_like_a_decline(gate: Askgate) -> None:
    doc = query(fmt="text", consentMode="ask_always")
    assert submit(gate, doc).json()["status"] == "awaiting_consent"
    with gate.client("alice") as c:
        c.post(f"/v1/asks/{ask_id_for(gate, doc['queryId'])}/consent", json={"granted": False})
    got = status(gate, doc["queryId"])
    assert got.json() == {"protocolVersion": "2026-07-30", "queryId": doc["queryId"], "status": "declined",
                          "issuedAt": got.json()["issuedAt"]}
