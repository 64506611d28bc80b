"""Service respondents: an ask offered to a ``service`` respondent is POSTed, signed, to its endpoint.

The body is JSON ``{"type": "askgate.ask.offered" | "askgate.consent.requested", "ask_id", "ask": <the
ask's view, as GET /v1/asks/{id} shows it>, "links": {"ask", "answer", "consent"}}``, sent through the
guarded outbound client with ``Askgate-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>``
(:mod:`askgate.channels.signing`) and ``Idempotency-Key: <ask id>:<type>``. The secret is configured per
service respondent id (``"*"`` is the fallback); without one the webhook is not sent. The service
verifies the signature (``verify_signature``) and answers through the HTTP API with its own token
(``POST /v1/asks/{id}/answer``), like any respondent.

Offers are retried a few times on network errors, 5xx, 408 and 429 (not durable: a service that misses
its offer still sees the ask in ``GET /v1/asks``). Each attempt is logged with the host and status only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import TYPE_CHECKING, Any

import structlog

from askgate.broker import records
from askgate.broker.plugins import BrokerPlugin
from askgate.channels.outbound import OutboundPolicy, OutboundRefused, post_json
from askgate.channels.signing import HEADER, sign
from askgate.core.lifecycle import Notify, Transition

if TYPE_CHECKING:
    from askgate.broker.broker import Broker
    from askgate.core.model import Respondent

log = structlog.get_logger("askgate.webhooks")


def webhook_body(kind: str, view: dict[str, Any]) -> bytes:
    ask_id = view["id"]
    doc = {
        "type": "askgate.consent.requested" if kind == "consent" else "askgate.ask.offered",
        "ask_id": ask_id,
        "ask": view,
        "links": {"ask": f"/v1/asks/{ask_id}", "answer": f"/v1/asks/{ask_id}/answer",
                  "consent": f"/v1/asks/{ask_id}/consent"},
    }
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class ServiceWebhooks(BrokerPlugin):
    """Sends each offer (or consent request) to service respondents with an endpoint."""

    def __init__(self, policy: OutboundPolicy, secrets: dict[str, str], *, attempts: int = 4,
                 backoff: float = 0.5) -> None:
        self.policy = policy
        self.secrets = secrets
        self.attempts = attempts
        self.backoff = backoff
        self.broker: Broker | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, broker: Broker) -> None:
        self.broker = broker

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    def after_commit(self, tr: Transition) -> None:
        if self.broker is None:
            return
        for effect in tr.effects:
            if not isinstance(effect, Notify):
                continue
            for rid in effect.respondent_ids:
                respondent = tr.record.routing.find(rid)
                if respondent is not None and respondent.kind == "service" and respondent.endpoint:
                    task = asyncio.create_task(self._send(tr.record.id, respondent, effect.kind))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)

    def secret_for(self, respondent_id: str) -> str | None:
        return self.secrets.get(respondent_id) or self.secrets.get("*")

    async def _send(self, ask_id: str, respondent: Respondent, kind: str) -> None:
        broker = self.broker
        assert broker is not None and respondent.endpoint is not None
        secret = self.secret_for(respondent.id)
        if secret is None:
            log.warning("webhook_unsigned_skipped", ask_id=ask_id, respondent=respondent.id)
            return
        record = await broker.get(ask_id)
        if record is None or record.terminal:
            return
        body = webhook_body(kind, records.view(record, now=broker.clock()))
        for attempt in range(1, self.attempts + 1):
            headers = {HEADER: sign(secret, body, timestamp=int(time.time())), "Idempotency-Key": f"{ask_id}:{kind}"}
            try:
                result = await post_json(respondent.endpoint, None, content=body, headers=headers, policy=self.policy)
            except OutboundRefused as exc:
                log.warning("webhook_refused", ask_id=ask_id, respondent=respondent.id, rule=exc.rule)
                return
            log.info("webhook", ask_id=ask_id, respondent=respondent.id, attempt=attempt, status=result.status)
            if result.ok or not result.retryable:
                return
            await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
