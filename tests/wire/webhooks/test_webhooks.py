"""Service respondents: askgate POSTs the offer, signed, over mutual TLS to a real local HTTPS service;
the service verifies the signature and answers through the HTTP API with its own token."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from askgate.channels.signing import ReplayGuard, SignatureError, verify_signature
from tests.support.tls_peers import Pki, Received, https_server
from tests.support.wire_server import Askgate, running_askgate

SECRET = "whsec-payments-0123456789abcdef"
PRINCIPALS = {"agent-a": "asker", "svc": "respondent", "quiet": "respondent", "admin": "admin"}


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki.make()


@pytest.fixture(scope="module")
def gate(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Askgate]:
    tmp = tmp_path_factory.mktemp("webhooks")
    client = pki.client_cert("askgate.test")  # the certificate askgate presents to services
    client.private_key_and_cert_chain_pem.write_to_path(str(tmp / "askgate-client.pem"))
    with running_askgate(tmp, pki, PRINCIPALS, webhook_secrets=(("svc", SECRET),),
                         outbound_client_cert=str(tmp / "askgate-client.pem")) as g:
        yield g


class Service:
    """A service respondent: verifies each webhook and answers the ask through askgate's API."""

    def __init__(self, gate: Askgate, decide: Any) -> None:
        self.gate = gate
        self.decide = decide
        self.guard = ReplayGuard()
        self.verified: list[dict[str, Any]] = []
        self.rejected: list[str] = []
        self.answers: list[httpx.Response] = []

    def __call__(self, rec: Received) -> tuple[int, bytes]:
        try:
            verify_signature(SECRET, rec.body, rec.headers.get("askgate-signature"), replay_guard=self.guard)
        except SignatureError as exc:
            self.rejected.append(exc.reason)
            return 401, b'{"error":"bad signature"}'
        doc = json.loads(rec.body)
        self.verified.append(doc)
        threading.Thread(target=self._answer, args=(doc,), daemon=True).start()
        return 202, b"{}"

    def _answer(self, doc: dict[str, Any]) -> None:
        with self.gate.client("svc") as c:
            self.answers.append(c.post(doc["links"]["answer"], json=self.decide(doc["ask"])))


def aqp_query(expires_in: float = 60) -> dict[str, Any]:
    return {"protocolVersion": "2026-07-30", "queryId": str(uuid.uuid4()), "type": "evaluation",
            "subject": {"invoice": "INV-7"}, "prompt": "Is invoice INV-7 a duplicate?", "timing": "immediate",
            "consentMode": "not_required", "response": {"format": "boolean"}, "delivery": {"binding": "other"},
            "expiresAt": (datetime.now(UTC) + timedelta(seconds=expires_in)).isoformat()}


def routing(endpoint: str, rid: str = "svc") -> str:
    return json.dumps({"respondents": [{"kind": "service", "id": rid, "endpoint": endpoint}]})


def wait_for(predicate: Any, timeout: float = 15) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def test_service_gets_a_signed_mtls_webhook_and_answers_via_the_api(gate: Askgate, pki: Pki) -> None:
    service = Service(gate, lambda ask: {"format": "boolean", "value": True})
    with https_server(pki, service, require_client_cert=True) as hook:
        doc = aqp_query()
        doc["delivery"]["authorization"] = "Token must-never-reach-a-respondent"
        with gate.client("agent-a") as c:
            r = c.post("/aqp/queries", params={"routing": routing(hook.url + "/askgate/offers")}, json=doc)
        assert r.status_code == 202, r.text
        wait_for(lambda: service.answers)
        got = hook.received[0]
    assert got.path == "/askgate/offers"
    assert b"must-never-reach" not in got.body  # the asker's credential never reaches a respondent
    assert dict(got.peer_cert["subjectAltName"])["DNS"] == "askgate.test"  # type: ignore[index]
    assert got.headers["content-type"] == "application/json"
    assert got.headers["idempotency-key"].endswith(":offer")
    offer = service.verified[0]
    assert offer["type"] == "askgate.ask.offered" and offer["ask"]["external_id"] == doc["queryId"]
    assert offer["ask"]["prompt"] == doc["prompt"] and offer["ask"]["spec"] == {"kind": "yes_no"}
    assert service.answers[0].status_code == 200, service.answers[0].text
    with gate.client("agent-a") as c:
        out = c.get(f"/aqp/queries/{doc['queryId']}").json()
    assert out["status"] == "answered" and out["answer"] == {"format": "boolean", "value": True}
    assert out["respondent"] == {"id": "svc", "kind": "service"}
    # the signature binds the body and the timestamp: a replay and a tampered copy are refused
    with pytest.raises(SignatureError, match="already received"):
        verify_signature(SECRET, got.body, got.headers["askgate-signature"], replay_guard=service.guard)
    with pytest.raises(SignatureError):
        verify_signature(SECRET, got.body.replace(b"INV-7", b"INV-8"), got.headers["askgate-signature"])


def test_service_answer_is_checked_like_any_other(gate: Askgate, pki: Pki) -> None:
    answers = iter([{"outcome": "accept", "value": {"amount": "lots"}},  # wrong type: refused with faults
                    {"outcome": "accept", "value": {"amount": 12.5}}])
    service = Service(gate, lambda ask: next(answers))
    canonical = {"ask": {"dialect": "canonical", "prompt": "Refund amount?", "spec": {
        "kind": "form", "fields": [{"kind": "number", "name": "amount", "required": True, "minimum": 0}]}}}
    with https_server(pki, service, require_client_cert=True) as hook:
        with gate.client("agent-a") as c:
            created = c.post("/v1/asks", params={"routing": routing(hook.url)}, json=canonical)
        assert created.status_code == 201, created.text
        ask_id = created.json()["id"]
        wait_for(lambda: len(service.answers) == 1)
        bad = service.answers[0]
        assert bad.status_code == 422
        assert [f["pointer"] for f in bad.json()["faults"]] == ["/value/amount"]
        service._answer(service.verified[0])  # the service corrects itself
        assert service.answers[1].status_code == 200, service.answers[1].text
    with gate.client("agent-a") as c:
        view = c.get(f"/v1/asks/{ask_id}").json()
    assert view["state"] == "answered" and view["outcome"]["value"] == {"amount": 12.5}
    assert view["outcome"]["respondent"] == {"kind": "service", "id": "svc", "endpoint": hook.url}


def test_unsigned_services_and_refused_endpoints_get_nothing(gate: Askgate, pki: Pki) -> None:
    service = Service(gate, lambda ask: {"format": "boolean", "value": False})
    with https_server(pki, service, require_client_cert=True) as hook:
        with gate.client("agent-a") as c:  # no secret configured for "quiet": never sent unsigned
            c.post("/aqp/queries", params={"routing": routing(hook.url, "quiet")}, json=aqp_query())
            c.post("/aqp/queries", params={"routing": routing("https://10.0.0.1/hook")}, json=aqp_query())
            c.post("/aqp/queries", params={"routing": routing(hook.url.replace("https", "http"))}, json=aqp_query())
        time.sleep(1.0)
    assert hook.received == [] and hook.connections == 0
