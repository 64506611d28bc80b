"""Push delivery state is durable: a push pending when askgate died is retried after a restart (while
before expiresAt), with the credential that was sealed in the store; after expiresAt nothing is sent."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from askgate.broker import Broker
from askgate.broker.push import PushDelivery
from askgate.channels.outbound import OutboundPolicy, OutboundResult
from askgate.core.lifecycle import Routing
from askgate.core.model import Respondent
from askgate.store import Principal, Store, deliveries
from tests.support.tls_peers import Pki, https_server

AUTH = "Basic dXNlcjpwYXNz"
ASKER, ALICE = Principal("agent-a", "asker"), Principal("alice", "respondent")


def doc(endpoint: str, expires_in: float) -> dict[str, Any]:
    return {"protocolVersion": "2026-07-30", "queryId": str(uuid.uuid4()), "type": "status", "subject": "build 7",
            "prompt": "Did build 7 pass?", "timing": "immediate", "consentMode": "not_required",
            "response": {"format": "boolean"},
            "delivery": {"binding": "https", "endpoint": endpoint, "authorization": AUTH},
            "expiresAt": (datetime.now(UTC) + timedelta(seconds=expires_in)).isoformat()}


async def unreachable(*_a: Any, **_k: Any) -> OutboundResult:
    return OutboundResult(status=None, error="network error: ConnectError")


async def answered_with_push_pending(store: Store, endpoint: str, expires_in: float) -> str:
    broker = Broker(store, plugins=[PushDelivery(OutboundPolicy(), backoff=(60,), senders={"https": unreachable})])
    await broker.start()
    try:
        created = await broker.create(doc(endpoint, expires_in), asker=ASKER, dialect="aqp",
                                      routing=Routing(respondents=(Respondent(kind="human", id="alice"),)))
        ask_id = created.record.id
        await broker.answer(ask_id, {"format": "boolean", "value": True}, who=ALICE)
        for _ in range(200):
            state = await deliveries.get(store, ask_id)
            if state is not None and state.attempts >= 1:
                break
            await asyncio.sleep(0.02)
        assert state is not None and state.state == "pending" and state.attempts == 1
    finally:
        await broker.stop()  # askgate "dies" while the push waits for its next attempt
    return ask_id


async def test_pending_push_is_retried_after_restart(tmp_path: Path) -> None:
    pki = Pki.make()
    url = f"sqlite:///{tmp_path / 'a.db'}"
    store = await Store.open(url, secret_key="k" * 32)
    try:
        with https_server(pki) as hook:
            ask_id = await answered_with_push_pending(store, hook.url + "/in", 60)
            assert hook.received == []
            assert await store.get_secret(ask_id, "authorization") == AUTH  # sealed, kept for the push
            policy = OutboundPolicy(allow=("127.0.0.1",), ssl_context=pki.client_context())
            again = Broker(store, plugins=[PushDelivery(policy)])
            await again.start()
            try:
                for _ in range(300):
                    state = await deliveries.get(store, ask_id)
                    if state is not None and state.state != "pending":
                        break
                    await asyncio.sleep(0.02)
            finally:
                await again.stop()
            got = hook.wait_for(1)
        assert state is not None and state.state == "delivered" and state.attempts == 2
        assert len(got) == 1 and got[0].headers["authorization"] == AUTH and got[0].json()["answer"]["value"] is True
        assert await store.get_secret(ask_id, "authorization") is None  # deleted once the push ended
        results = [e["result"] for e in await store.audit_chain("ask", ask_id) if e["step_type"] == "delivery"]
        assert results == ["retry", "delivered"]
    finally:
        await store.close()


async def test_restart_after_expiry_sends_nothing(tmp_path: Path) -> None:
    pki = Pki.make()
    store = await Store.open(f"sqlite:///{tmp_path / 'b.db'}", secret_key="k" * 32)
    try:
        with https_server(pki) as hook:
            ask_id = await answered_with_push_pending(store, hook.url, 1.5)
            await asyncio.sleep(1.6)
            again = Broker(store, plugins=[PushDelivery(OutboundPolicy(allow=("127.0.0.1",),
                                                                       ssl_context=pki.client_context()))])
            await again.start()
            try:
                for _ in range(300):
                    state = await deliveries.get(store, ask_id)
                    if state is not None and state.state != "pending":
                        break
                    await asyncio.sleep(0.02)
            finally:
                await again.stop()
        assert state is not None and state.state == "expired"
        assert hook.received == [] and hook.connections == 0
        assert await store.get_secret(ask_id, "authorization") is None
    finally:
        await store.close()


async def test_a_push_that_crashed_is_swept_up_again(tmp_path: Path) -> None:
    calls: list[str] = []

    async def flaky(endpoint: str, doc: dict[str, Any], **_k: Any) -> OutboundResult:
        calls.append(doc["status"])
        if len(calls) == 1:
            raise RuntimeError("a bug in a sender")  # not a delivery outcome: the push task dies
        return OutboundResult(status=204)

    store = await Store.open(f"sqlite:///{tmp_path / 'c.db'}", secret_key="k" * 32)
    broker = Broker(store, plugins=[PushDelivery(OutboundPolicy(), senders={"https": flaky}, sweep_seconds=0.2)])
    await broker.start()
    try:
        created = await broker.create(doc("https://hooks.example/aqp", 60), asker=ASKER, dialect="aqp",
                                      routing=Routing(respondents=(Respondent(kind="human", id="alice"),)))
        await broker.answer(created.record.id, {"format": "boolean", "value": False}, who=ALICE)
        for _ in range(300):
            state = await deliveries.get(store, created.record.id)
            if state is not None and state.state != "pending":
                break
            await asyncio.sleep(0.02)
    finally:
        await broker.stop()
        await store.close()
    assert state is not None and state.state == "delivered" and calls == ["answered", "answered"]
