"""Push delivery of AQP answers (bindings ``https``, ``a2a``, ``mcp``), run by the broker after commit.

Durability: the transaction that makes a push-bound AQP ask terminal with ``answered``, ``declined``
or ``cancelled`` (withdrawn) also writes a pending push row and keeps the sealed ``authorization``
(:meth:`PushDelivery.on_terminal`). After the commit the push runs in the background; after a restart
every pending row is re-driven (:meth:`PushDelivery.start`, and every ``sweep_seconds`` for a push whose
task ended unexpectedly). The push ends as:

- ``delivered``: an attempt was acknowledged (any 2xx);
- ``delivery_failed``: a permanent refusal (any other 4xx, a refused target); the answer stays
  pullable until ``expiresAt``;
- ``expired``: ``expiresAt`` came first. Nothing is sent at or after ``expiresAt``: each attempt's
  timeout is cut to the time left, and the loop stops at the deadline.

Network errors, 5xx, 408 and 429 are retried with exponential backoff (always with the same
``Idempotency-Key``). Every attempt is an audit entry (``step_type: delivery``) on the ask's chain: the
binding, the endpoint's host, attempt number, status or error class, and whether an authorization
was present — never its value. The credential is deleted when the push ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import structlog

from askgate.broker import records
from askgate.broker.plugins import BrokerPlugin
from askgate.channels.outbound import OutboundPolicy, OutboundRefused, OutboundResult
from askgate.core import audit as chain
from askgate.core.lifecycle import AskRecord, Deliver, State, Transition, past_expiry
from askgate.core.model import Dialect
from askgate.store import deliveries
from askgate.store.deliveries import PushState

if TYPE_CHECKING:
    from askgate.broker.broker import Broker
    from askgate.channels.aqp_delivery import Sender
    from askgate.store import Tx

log = structlog.get_logger("askgate.push")

PUSH_BINDINGS = ("https", "a2a", "mcp")
PUSHED_STATES = (State.ANSWERED, State.DECLINED, State.WITHDRAWN, State.CANCELLED)
ATTEMPT_TIMEOUT = 10.0


def needs_push(record: AskRecord) -> bool:
    """Whether this terminal record's outcome is pushed to the asker (AQP push binding, not expired)."""
    ask = record.ask
    return (ask.dialect == Dialect.AQP and ask.delivery.binding in PUSH_BINDINGS
            and record.state in PUSHED_STATES)


class PushDelivery(BrokerPlugin):
    """The broker plugin that pushes AQP QueryResponses. ``senders`` maps a binding to a sender
    (default: :data:`askgate.channels.aqp_delivery.SENDERS`); ``backoff`` is the delay schedule in
    seconds (the last value repeats)."""

    def __init__(self, policy: OutboundPolicy, *, backoff: tuple[float, ...] = (0.5, 1, 2, 4, 8, 15, 30),
                 attempt_timeout: float = ATTEMPT_TIMEOUT, senders: dict[str, Sender] | None = None,
                 sweep_seconds: float = 30.0) -> None:
        self.policy = policy
        self.sweep_seconds = sweep_seconds
        self._sweeper: asyncio.Task[None] | None = None
        self.backoff = backoff
        self.attempt_timeout = attempt_timeout
        self._senders = senders
        self.broker: Broker | None = None
        self._running: dict[str, asyncio.Task[None]] = {}

    # ---- plugin hooks ----------------------------------------------------------------------------

    async def start(self, broker: Broker) -> None:
        self.broker = broker
        await self._redrive()
        self._sweeper = asyncio.create_task(self._sweep(), name="askgate-push-sweep")

    async def _redrive(self) -> None:
        assert self.broker is not None
        for state in await deliveries.pending(self.broker.store):
            self._launch(state.ask_id)

    async def _sweep(self) -> None:
        """Now and then, re-drive pending pushes that are not running (one that failed unexpectedly)."""
        while True:
            await asyncio.sleep(self.sweep_seconds)
            with contextlib.suppress(Exception):
                await self._redrive()

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(BaseException):
                await self._sweeper
            self._sweeper = None
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        self._running.clear()

    async def on_terminal(self, tx: Tx, record: AskRecord) -> bool:
        if needs_push(record) and not past_expiry(record, tx.now):
            await deliveries.add_pending(tx, record.id, record.ask.delivery.binding)
            return True
        return False

    def after_commit(self, tr: Transition) -> None:
        if self.broker is None:
            return
        if any(isinstance(e, Deliver) for e in tr.effects) and needs_push(tr.record):
            self._launch(tr.record.id)

    # ---- the push --------------------------------------------------------------------------------

    def _launch(self, ask_id: str) -> None:
        if ask_id in self._running and not self._running[ask_id].done():
            return
        task = asyncio.create_task(self._run(ask_id), name=f"askgate-push-{ask_id}")
        self._running[ask_id] = task
        task.add_done_callback(lambda _t: self._running.pop(ask_id, None) if self._running.get(ask_id) is _t else None)

    def _sender(self, binding: str) -> Sender:
        if self._senders is not None and binding in self._senders:
            return self._senders[binding]
        from askgate.channels.aqp_delivery import SENDERS

        return SENDERS[binding]

    async def _run(self, ask_id: str) -> None:
        broker = self.broker
        assert broker is not None
        try:
            await self._push(broker, ask_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a push must never take the broker down; it is re-driven on start
            log.error("push_error", ask_id=ask_id, error=type(exc).__name__)

    async def _push(self, broker: Broker, ask_id: str) -> None:
        state = await deliveries.get(broker.store, ask_id)
        record = await broker.get(ask_id)
        if state is None or state.state != "pending" or record is None:
            return
        ask = record.ask
        binding, endpoint, operation = ask.delivery.binding, ask.delivery.endpoint or "", ask.delivery.operation
        authorization = await broker.store.get_secret(ask_id, "authorization")
        host = _host(endpoint)
        attempt = state.attempts
        while True:
            now = broker.clock()
            if past_expiry(record, now):
                await self._finish(broker, record, state, "expired", attempt, host, None, now)
                return
            doc = records.dialect_response(record, now=now)
            left = (record.deadline_at - now).total_seconds() if record.deadline_at is not None else self.attempt_timeout
            attempt += 1
            try:
                result = await asyncio.wait_for(
                    self._sender(binding)(endpoint, doc, authorization=authorization, operation=operation,
                                          policy=self.policy, timeout=min(self.attempt_timeout, max(left, 0.05))),
                    timeout=max(min(self.attempt_timeout, left), 0.05) + 1.0)
            except OutboundRefused as exc:
                result = OutboundResult(status=None, error=f"refused: {exc.rule}")
                await self._finish(broker, record, state, "delivery_failed", attempt, host, result, broker.clock())
                return
            except TimeoutError:
                result = OutboundResult(status=None, error="timeout")
            now = broker.clock()
            if result.ok:
                await self._finish(broker, record, state, "delivered", attempt, host, result, now)
                return
            if not result.retryable:
                await self._finish(broker, record, state, "delivery_failed", attempt, host, result, now)
                return
            state = PushState(ask_id, binding, "pending", attempt, result.error)
            async with broker.store.write(now) as tx:
                await deliveries.update(tx, state, now)
                await _audit(tx, record, attempt, host, result, "retry", authorization is not None)
            delay = self.backoff[min(attempt - 1, len(self.backoff) - 1)]
            if record.deadline_at is not None:
                delay = min(delay, max((record.deadline_at - now).total_seconds(), 0.0))
            await asyncio.sleep(delay)

    async def _finish(self, broker: Broker, record: AskRecord, state: PushState, final: str, attempt: int,
                      host: str | None, result: OutboundResult | None, now: datetime) -> None:
        done = PushState(record.id, state.binding, final, attempt,
                         result.error if result is not None else state.last_error)
        async with broker.store.write(now) as tx:
            await deliveries.update(tx, done, now)
            await _audit(tx, record, attempt, host, result, final, None)
            await tx.delete_secrets(record.id)
            tx.changed.add(record.id)  # wake waiters (and, on PostgreSQL, other processes)
        log.info("push", ask_id=record.id, binding=state.binding, host=host, result=final, attempts=attempt)


def _host(endpoint: str) -> str | None:
    try:
        return urlsplit(endpoint).hostname
    except ValueError:
        return None


async def _audit(tx: Tx, record: AskRecord, attempt: int, host: str | None, result: OutboundResult | None,
                 outcome: str, authorization_present: bool | None) -> None:
    data: dict[str, Any] = {"ask_id": record.id, "binding": record.ask.delivery.binding, "host": host,
                            "attempt": attempt, "result": outcome}
    if result is not None:
        data["status"] = result.status
        data["error"] = result.error
    if authorization_present is not None:
        data["authorization_present"] = authorization_present
    entry_id = f"{record.id}/delivery/{attempt}/{outcome}"

    def make(previous_hash: str | None, _seq: int) -> dict[str, Any]:
        return chain.chain_entry(entry_id=entry_id, step_id=record.id, step_type="delivery", timestamp=tx.now,
                                 data=data, previous_hash=previous_hash)

    await tx.append_audit("ask", record.id, make)


async def push_state(broker: Broker, record: AskRecord) -> PushState | None:
    return await deliveries.get(broker.store, record.id)
