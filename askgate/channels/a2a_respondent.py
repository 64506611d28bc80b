"""A2A respondents: put an ask to an agent over A2A and record its reply as the answer.

An ask offered to a respondent of kind ``agent`` with an ``endpoint`` (an ACS ``approver.type: agent``,
or a canonical ask's agent respondent) is sent to that agent as an A2A message: the question as text,
the ``elicitation/v1`` request as a data part (an ACS approval as the decision form of
:func:`askgate.protocols.a2a_carriage.approval_schema`, plus the §4.8 approval request in an
``askgate/acs-approval-request`` data part), with the extension activated. The agent's reply — a
message, or a task followed until it completes — carries the ``elicitation/v1`` response (or a text
answer); it is checked by the codec and recorded through the broker as that respondent's answer. A bad
answer, or a task that stops in ``input-required``, gets another round on the same task (or context)
with the faults stated, up to :data:`MAX_ROUNDS`.

Every outbound request goes through the guarded client of :mod:`askgate.channels.outbound` (card
fetch included): https only, vetted addresses, no redirects. :func:`send_a2a_message` is the small
reusable sender (the AQP ``a2a`` delivery binding uses it too).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import structlog
from a2a.client import A2ACardResolver, Client, ClientCallContext, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import AgentCard, GetTaskRequest, Message, SendMessageRequest
from a2a.utils.constants import TransportProtocol
from google.protobuf import json_format

from askgate.broker.plugins import BrokerPlugin
from askgate.channels.outbound import OutboundPolicy, guarded_client
from askgate.core.lifecycle import AskRecord
from askgate.core.model import ApprovalSpec, Respondent
from askgate.errors import AskgateError, Fault
from askgate.protocols import a2a_carriage as carriage

log = structlog.get_logger("askgate.a2a_respondent")

MAX_ROUNDS = 3
POLL_SECONDS = 0.25
#: How long a task without a deadline is followed before askgate gives up on that agent.
MAX_FOLLOW_SECONDS = 3600.0
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
INTERRUPTED = {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}
CARD_PATH = "/.well-known/agent-card.json"


class A2ASendError(Exception):
    """The agent could not be reached or answered with an A2A error (never carries credentials)."""


@dataclass(frozen=True)
class A2AReply:
    """What the agent answered: a task or a message, as ProtoJSON dicts (camelCase)."""

    task: dict[str, Any] | None = None
    message: dict[str, Any] | None = None

    @property
    def state(self) -> str | None:
        return ((self.task or {}).get("status") or {}).get("state")

    @property
    def task_id(self) -> str | None:
        return (self.task or {}).get("id")

    @property
    def context_id(self) -> str | None:
        return (self.task or self.message or {}).get("contextId")

    def answer_message(self) -> dict[str, Any]:
        """The parts the answer is read from: the first part holding an ``elicitation/v1`` payload
        anywhere in the reply (message; task artifacts, newest first; status message; agent history);
        failing that, the texts of the artifacts or else of the status message / message."""
        if self.message is not None:
            return {"parts": list(self.message.get("parts") or [])}
        task = self.task or {}
        artifacts = [a.get("parts") or [] for a in reversed(task.get("artifacts") or [])]
        status = (task.get("status") or {}).get("message") or {}
        history = [m.get("parts") or [] for m in reversed(task.get("history") or []) if m.get("role") == "ROLE_AGENT"]
        for parts in [*artifacts, status.get("parts") or [], *history]:
            found, payload, _ = carriage.data_payload(parts, carriage.PAYLOAD_KEY)
            if found:
                return {"parts": [{"data": {carriage.PAYLOAD_KEY: payload}}]}
        texts = [p for parts in artifacts for p in parts if "text" in p] or \
                [p for p in status.get("parts") or [] if "text" in p]
        return {"parts": texts}


def describe(exc: BaseException) -> str:
    """An error as ``Type`` plus the HTTP status if any: never URLs (they may carry tokens) or bodies."""
    import re

    found = re.search(r"HTTP Error (\d{3})", str(exc))
    return f"{type(exc).__name__}" + (f": HTTP Error {found.group(1)}" if found else "")


def _proto_message(message: Mapping[str, Any] | Message) -> Message:
    if isinstance(message, Message):
        return message
    msg = Message()
    json_format.ParseDict(dict(message), msg)
    if not msg.message_id:
        msg.message_id = str(uuid.uuid4())
    return msg


async def resolve_card(http: httpx.AsyncClient, endpoint: str) -> AgentCard:
    """The agent card at ``endpoint``/.well-known/agent-card.json, else at the endpoint's origin."""
    tried: list[str] = []
    candidates = [endpoint.rstrip("/")]
    origin = str(httpx.URL(endpoint).copy_with(path="/", query=None, fragment=None)).rstrip("/")
    if origin not in candidates:
        candidates.append(origin)
    for base in candidates:
        try:
            return await A2ACardResolver(http, base).get_agent_card()
        except Exception as exc:  # noqa: BLE001 - the SDK wraps HTTP, JSON and refusal errors alike
            tried.append(describe(exc))
    raise A2ASendError(f"no agent card at host {httpx.URL(endpoint).host} ({'; '.join(tried)})")


@contextlib.asynccontextmanager
async def a2a_client(endpoint: str, *, policy: OutboundPolicy, headers: Mapping[str, str] | None = None,
                     timeout: float | None = None) -> AsyncIterator[Client]:
    """An a2a-sdk client for the agent at ``endpoint``; every request (card fetch included) goes through
    the guarded transport of ``policy``."""
    http = guarded_client(policy, timeout=timeout, headers=headers)
    try:
        card = await resolve_card(http, endpoint)
        config = ClientConfig(httpx_client=http, streaming=False,
                              supported_protocol_bindings=[TransportProtocol.HTTP_JSON.value,
                                                           TransportProtocol.JSONRPC.value])
        client = ClientFactory(config).create(card)
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                await client.close()
    finally:
        await http.aclose()


def _call_context(extensions: Iterable[str]) -> ClientCallContext:
    exts = sorted(set(extensions))
    return ClientCallContext(service_parameters={"A2A-Extensions": ",".join(exts)} if exts else None)


def _reply(event: Any) -> A2AReply:
    if event.HasField("task"):
        return A2AReply(task=json_format.MessageToDict(event.task))
    if event.HasField("message"):
        return A2AReply(message=json_format.MessageToDict(event.message))
    raise A2ASendError("the agent answered with neither a task nor a message")


async def send_with(client: Client, message: Mapping[str, Any] | Message, *,
                    extensions: Iterable[str] = (), immediately: bool = False) -> A2AReply:
    """Send one message with an open client; the last task/message the agent returned.
    ``immediately``: ``returnImmediately`` — the agent answers at its first event (follow the task)."""
    request = SendMessageRequest(message=_proto_message(message))
    request.configuration.return_immediately = immediately
    last: A2AReply | None = None
    try:
        async for event in client.send_message(request, context=_call_context(extensions)):
            last = _reply(event)
    except A2ASendError:
        raise
    except Exception as exc:  # noqa: BLE001 - transport, refusal and A2A errors: reported, never raised raw
        raise A2ASendError(f"sending failed: {describe(exc)}") from None
    if last is None:
        raise A2ASendError("the agent returned nothing")
    return last


async def send_a2a_message(endpoint: str, message: Mapping[str, Any] | Message, *, policy: OutboundPolicy,
                           headers: Mapping[str, str] | None = None, extensions: Iterable[str] = (),
                           timeout: float | None = None) -> A2AReply:
    """Send one A2A message (a ProtoJSON dict or a protobuf ``Message``) to the agent at ``endpoint``.

    Resolves the agent card, picks HTTP+JSON or JSON-RPC, and returns the agent's reply. Raises
    :class:`askgate.channels.outbound.OutboundRefused` (before connecting) for a refused target and
    :class:`A2ASendError` for anything else that went wrong. ``headers`` (e.g. Authorization) are sent
    with every request and never logged.
    """
    from askgate.channels.outbound import guard_url

    await guard_url(endpoint, policy)  # refuse before anything else, with the policy's own reason
    try:
        async with a2a_client(endpoint, policy=policy, headers=headers, timeout=timeout) as client:
            return await send_with(client, message, extensions=extensions)
    except A2ASendError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise A2ASendError(f"A2A call failed: {describe(exc)}") from None


async def follow(client: Client, reply: A2AReply, *, until: datetime | None, poll: float = POLL_SECONDS) -> A2AReply:
    """Poll a task that is still submitted/working until it is terminal or interrupted (or ``until``)."""
    while reply.task is not None and reply.state not in TERMINAL | INTERRUPTED:
        if until is not None and datetime.now(UTC) >= until:
            return reply
        await asyncio.sleep(poll)
        try:
            task = await client.get_task(GetTaskRequest(id=reply.task_id or ""))
        except Exception as exc:  # noqa: BLE001
            raise A2ASendError(f"polling the task failed: {describe(exc)}") from None
        reply = A2AReply(task=json_format.MessageToDict(task))
    return reply


async def peer_identities(endpoint: str, *, policy: OutboundPolicy) -> set[str]:
    """The identities (SAN DNS names and IP addresses, subject CN) of the certificate the agent at
    ``endpoint`` presents, verified against the policy's trust store; empty for plain http."""
    if httpx.URL(endpoint).scheme != "https":
        return set()
    async with guarded_client(policy) as http, http.stream("GET", endpoint.rstrip("/") + CARD_PATH) as resp:
        stream = resp.extensions.get("network_stream")
        ssl_object = stream.get_extra_info("ssl_object") if stream is not None else None
        cert = ssl_object.getpeercert() if ssl_object is not None else None
    out: set[str] = set()
    for kind, value in (cert or {}).get("subjectAltName", ()):
        if kind in ("DNS", "IP Address"):
            out.add(str(value))
    for rdn in (cert or {}).get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                out.add(str(value))
    return out


# --------------------------------------------------------------------------------------------------
# Asks -> messages.
# --------------------------------------------------------------------------------------------------


def approval_request(record: AskRecord, *, now: datetime) -> dict[str, Any]:
    """The ACS approval request of protocols.md §4.8 for an approval ask."""
    ask = record.ask
    original = ask.original if isinstance(ask.original, dict) else {}
    details = original.get("ask_details")
    if details is None and isinstance(original.get("result"), dict):
        details = original["result"].get("ask_details")
    if details is None:
        details = original
    b = ask.binding or {}
    step = {k: b[k] for k in ("method", "step_id", "request_id", "request_hash") if k in b}
    body: dict[str, Any] = {
        "acs_version": "0.1.0", "request_id": str(uuid.uuid4()),
        "timestamp": now.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "metadata": {k: v for k, v in (("agent_id", b.get("agent_id")), ("session_id", ask.session_id)) if v},
        "payload": {"ask_details": details, "step": step},
    }
    if b.get("reasoning"):
        body["payload"]["reasoning"] = b["reasoning"]
    return body


def ask_message(record: AskRecord, *, now: datetime, context_id: str | None = None,
                faults: list[Fault] | tuple[Fault, ...] = (), task_id: str | None = None,
                reference: str | None = None) -> dict[str, Any]:
    """The A2A message that puts ``record``'s ask to an agent (again, with ``faults``, on a later round)."""
    ask = record.ask
    parts: list[dict[str, Any]] = []
    if faults:
        parts.append({"text": carriage.faults_text(faults)})
    parts.extend(carriage.status_parts(ask, extension_active=True))
    if isinstance(ask.spec, ApprovalSpec):
        parts.append({"data": {carriage.ACS_APPROVAL_KEY: approval_request(record, now=now)}})
    if faults:
        parts.append({"data": {"askgate/faults": [{"pointer": f.pointer, "message": f.message, "rule": f.rule}
                                                  for f in faults]}})
    meta: dict[str, Any] = {"ask_id": record.id}
    if record.deadline_at is not None:
        meta["deadline_at"] = record.deadline_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    msg: dict[str, Any] = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()),
                           "contextId": context_id or f"askgate-{record.id}", "parts": parts,
                           "extensions": [carriage.EXTENSION_URI], "metadata": {"askgate": meta}}
    if task_id:
        msg["taskId"] = task_id
    if reference:
        msg["referenceTaskIds"] = [reference]
    return msg


# --------------------------------------------------------------------------------------------------
# The broker plugin.
# --------------------------------------------------------------------------------------------------


def policy_for_app(app: Any) -> OutboundPolicy:
    """The outbound policy: ``app.state.outbound_policy`` if set, else built from the settings."""
    explicit = getattr(app.state, "outbound_policy", None)
    if isinstance(explicit, OutboundPolicy):
        return explicit
    s = getattr(app.state, "settings", None)
    return OutboundPolicy.from_settings(
        tuple(getattr(s, "outbound_allow", ()) or ()),
        allow_http_loopback=bool(getattr(s, "outbound_allow_http_loopback", False)),
        ca_file=getattr(s, "outbound_ca_file", None), client_cert=getattr(s, "outbound_client_cert", None),
        client_key=getattr(s, "outbound_client_key", None))


class A2ARespondents(BrokerPlugin):
    """Sends each offer to an agent respondent with an endpoint; records the reply as its answer."""

    def __init__(self, policy: OutboundPolicy | Any, *, identities: Any = ()) -> None:
        self._policy = policy
        self._identities = identities
        self.broker: Any = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._inflight: set[tuple[str, str]] = set()  # (ask id, respondent id) being asked right now
        self._stopped = False

    @classmethod
    def for_app(cls, app: Any) -> A2ARespondents:
        return cls(lambda: policy_for_app(app),
                   identities=lambda: tuple(getattr(getattr(app.state, "settings", None), "approver_identities", ())))

    @property
    def policy(self) -> OutboundPolicy:
        return self._policy() if callable(self._policy) else self._policy

    @property
    def identity_map(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._identities() if callable(self._identities) else self._identities)

    async def start(self, broker: Any) -> None:
        self.broker = broker
        self._stopped = False
        await self._redrive()

    async def stop(self) -> None:
        self._stopped = True
        pending = [t for t in self._tasks if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2.0)

    def after_commit(self, tr: Any) -> None:
        from askgate.core import lifecycle as lc

        for effect in tr.effects:
            if isinstance(effect, lc.Notify) and effect.kind == "offer":
                for rid in effect.respondent_ids:
                    r = tr.record.routing.find(rid)
                    if r is not None and r.kind == "agent" and r.endpoint:
                        self._spawn(self.put(tr.record, r))

    def _spawn(self, coro: Any) -> None:
        if self._stopped or self.broker is None:
            coro.close()
            return
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _redrive(self) -> None:
        """Offers made while askgate was down (or whose send was interrupted) are sent again."""
        from askgate.broker import records
        from askgate.store import AskQuery

        with contextlib.suppress(Exception):
            page = await self.broker.store.list_asks(AskQuery(state="delivered", limit=500))
            for row in page.items:
                record = records.from_row(row)
                voted = {v.respondent_id for v in record.votes}
                for rid in record.offered_to:
                    r = record.routing.find(rid)
                    if r is not None and r.kind == "agent" and r.endpoint and rid not in voted:
                        self._spawn(self.put(record, r))

    async def put(self, record: AskRecord, respondent: Respondent) -> str:
        """Put the ask to the agent; returns what happened (``answered``, ``refused: ...``, ``no answer``...)."""
        key = (record.id, respondent.id)
        if key in self._inflight:
            return "already being asked"
        self._inflight.add(key)
        try:
            outcome = await self._put(record, respondent)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a failing agent must never take the broker down
            outcome = f"error: {describe(exc)}"
        finally:
            self._inflight.discard(key)
        host = httpx.URL(respondent.endpoint or "").host
        log.info("a2a_respondent", ask_id=record.id, respondent=respondent.id, host=host, outcome=outcome)
        return outcome

    async def _put(self, record: AskRecord, respondent: Respondent) -> str:
        from askgate.broker import BrokerError
        from askgate.channels.outbound import OutboundRefused, guard_url
        from askgate.store import Principal

        assert respondent.endpoint
        policy = self.policy
        try:
            await guard_url(respondent.endpoint, policy)
        except OutboundRefused as exc:
            return f"refused: {exc.reason}"
        ask = record.ask
        try:
            carriage.request_for(ask)
        except AskgateError as exc:
            return f"not expressible as elicitation/v1: {exc.summary}"
        who = Principal(id=respondent.id, role="respondent")
        authenticated_by = "endpoint"  # the reply comes back on the connection askgate opened to the endpoint
        if respondent.auth_method == "mtls":
            if not await self._server_maps(respondent, policy):
                return "refused: the agent's server certificate does not map to the approver (mtls)"
            authenticated_by = "mtls"
        message = ask_message(record, now=datetime.now(UTC))
        async with a2a_client(respondent.endpoint, policy=policy) as client:
            for n in range(MAX_ROUNDS):
                if n:  # settled meanwhile (another respondent, the deadline, a withdrawal): stop asking
                    current = await self.broker.get(record.id)
                    if current is None or current.terminal:
                        return "settled elsewhere"
                # not blocking: a slow agent (a person behind it, say) must not hit the HTTP timeout
                reply = await send_with(client, message, extensions=[carriage.EXTENSION_URI], immediately=True)
                until = record.deadline_at or datetime.now(UTC) + timedelta(seconds=MAX_FOLLOW_SECONDS)
                reply = await follow(client, reply, until=until)
                if reply.state in ("TASK_STATE_FAILED", "TASK_STATE_CANCELED"):
                    return f"no answer: the agent's task ended {reply.state}"
                if reply.state in TERMINAL | INTERRUPTED or reply.message is not None:
                    faults: list[Fault]
                    try:
                        answer, _typed = carriage.answer_from_message(ask, reply.answer_message())
                        if reply.state == "TASK_STATE_REJECTED" and answer.outcome == "accept":
                            answer = answer.model_copy(update={"outcome": "decline", "value": None})
                        await self.broker.answer(record.id, carriage.canonical_answer(answer), who=who,
                                                 authenticated_by=authenticated_by)
                        return "answered"
                    except AskgateError as exc:
                        faults = list(exc.faults)
                        if reply.state == "TASK_STATE_REJECTED":
                            declined = await self._decline(record, who, authenticated_by)
                            return "declined without an answer" if declined else "rejected"
                    except BrokerError as exc:
                        if exc.status in (403, 404, 409):
                            return f"refused: {exc.code}"
                        faults = exc.faults or [Fault("", exc.detail or exc.title, exc.code)]
                else:
                    return "no answer before the deadline"
                open_task = reply.state in INTERRUPTED
                message = ask_message(record, now=datetime.now(UTC), context_id=reply.context_id, faults=faults,
                                      task_id=reply.task_id if open_task else None,
                                      reference=reply.task_id if not open_task else None)
        return f"no valid answer in {MAX_ROUNDS} rounds"

    async def _server_maps(self, respondent: Respondent, policy: OutboundPolicy) -> bool:
        """mtls approvers (§4.4): the server certificate's identity is the approver id or maps to it by
        ``Settings.approver_identities`` (``("mtls:<identity>", "<approver id>")``)."""
        try:
            identities = await peer_identities(respondent.endpoint or "", policy=policy)
        except Exception:  # noqa: BLE001 - unreachable or untrusted: not authenticated
            return False
        mapped = {ident for ident, approver in self.identity_map if approver == respondent.id}
        return any(i == respondent.id or f"mtls:{i}" in mapped for i in identities)

    async def _decline(self, record: AskRecord, who: Any, authenticated_by: str) -> bool:
        from askgate.broker import BrokerError

        try:
            await self.broker.answer(record.id, {"outcome": "decline"}, who=who, authenticated_by=authenticated_by)
            return True
        except BrokerError:
            return False


__all__ = [
    "MAX_ROUNDS",
    "A2AReply",
    "A2ARespondents",
    "A2ASendError",
    "a2a_client",
    "approval_request",
    "ask_message",
    "follow",
    "peer_identities",
    "policy_for_app",
    "resolve_card",
    "send_a2a_message",
    "send_with",
]
