"""askgate as an A2A agent: the ``AgentExecutor`` the SDK's request handler runs.

A new task is one of two things (docs/wire.md "A2A"):

- **an ask** — the caller (an asker) sends a question: an ``elicitation/v1`` request data part, or any
  askgate dialect document in an ``askgate/ask`` data part. askgate creates the ask through the broker
  (the caller is its asker), the task goes to ``working``, and it completes with the outcome (an
  ``answer`` artifact holding the text summary, the dialect response and the neutral outcome);
- **an answer session** — any other message: askgate puts the next ask offered to the caller (the caller
  is the respondent) as ``input-required``: a text part, and the typed ``elicitation/v1`` part only when
  the caller activated the extension. The caller's next message on the task is the answer, checked by
  the codec and recorded through the broker; a bad answer keeps the task in ``input-required`` with the
  faults stated; the outcome completes the task.

The broker's record is the durable truth; the A2A task is a view of it kept in the SDK's task store.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from typing import Any

import structlog
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message, Part, Role, Task, TaskState, TaskStatus
from google.protobuf import json_format, struct_pb2

from askgate.broker import Broker, BrokerError, Idempotency, body_hash, records
from askgate.core.lifecycle import AskRecord, Routing, final_answer
from askgate.core.model import Dialect, Respondent
from askgate.errors import AskgateError, Fault
from askgate.protocols import a2a_carriage as carriage
from askgate.server.a2a.auth import principal_of
from askgate.server.a2a.rawbody import raw_message
from askgate.store import AskQuery, Principal

log = structlog.get_logger("askgate.a2a")

ASK_KEY = "askgate/ask"
FAULTS_KEY = "askgate/faults"
META = "askgate"
_WAIT_SLICE = 30.0
MAX_HISTORY = 200
_POLL = 0.25


def to_dict(message: Any) -> dict[str, Any]:
    """A protobuf message as ProtoJSON (camelCase), numbers as the SDK gives them."""
    return json_format.MessageToDict(message)


def message_dict(message: Message) -> dict[str, Any]:
    """The user message: ids from the SDK (it fills in the ones it generated), parts and metadata as the
    caller wrote them (key order and integers intact) when the raw body is at hand."""
    out = to_dict(message)
    raw = raw_message(message.message_id)
    if raw is not None:
        for key in ("parts", "metadata"):
            if key in raw:
                out[key] = raw[key]
    return out


def _struct(data: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(data)
    return s


def _agent_message(task_id: str, context_id: str, parts: list[Part], *, extensions: list[str] | None = None,
                   metadata: dict[str, Any] | None = None) -> Message:
    msg = Message(role=Role.ROLE_AGENT, message_id=str(uuid.uuid4()), task_id=task_id, context_id=context_id,
                  parts=parts, extensions=extensions or [])
    if metadata:
        msg.metadata.CopyFrom(_struct(metadata))
    return msg


def _parts(dicts: list[dict[str, Any]]) -> list[Part]:
    return [new_text_part(d["text"]) if "text" in d else new_data_part(d["data"]) for d in dicts]


def _faults_json(faults: list[Fault] | tuple[Fault, ...]) -> list[dict[str, str]]:
    return [{"pointer": f.pointer, "message": f.message, "rule": f.rule} for f in faults]


class AskRequest:
    """What a caller's message asks askgate to create (parsed from its data parts and metadata)."""

    def __init__(self, doc: Any, *, dialect: str | None, routing: Routing | None, binding: Any,
                 timeout: float | None) -> None:
        self.doc, self.dialect, self.routing, self.binding, self.timeout = doc, dialect, routing, binding, timeout


def parse_ask_request(msg: dict[str, Any]) -> AskRequest | None:
    """An ask in the message, or None (the caller wants to answer). Raises AskgateError for bad routing."""
    parts = msg.get("parts") or []
    meta = _askgate_meta(msg)
    found, payload, index = carriage.data_payload(parts, ASK_KEY)
    if found:
        if not isinstance(payload, dict) or "document" not in payload:
            raise AskgateError("invalid askgate/ask part", [Fault(f"/parts/{index}/data/askgate~1ask",
                                                                  "askgate/ask must be an object with a document",
                                                                  "required")], code="invalid_request")
        opts = {**meta, **{k: v for k, v in payload.items() if k != "document"}}
        doc = payload["document"]
        dialect = opts.get("dialect") if isinstance(opts.get("dialect"), str) else None
    else:
        found, payload, index = carriage.data_payload(parts, carriage.PAYLOAD_KEY)
        if not found or (isinstance(payload, dict) and "action" in payload and "requestedSchema" not in payload):
            return None  # no ask here (an answer-shaped part on a new task is not an ask either)
        opts, doc, dialect = meta, {carriage.PAYLOAD_KEY: payload}, Dialect.A2A_ELICITATION.value
    return AskRequest(doc, dialect=dialect, routing=_routing(opts), binding=opts.get("binding"),
                      timeout=_timeout(opts.get("timeout_seconds")))


def _askgate_meta(msg: dict[str, Any]) -> dict[str, Any]:
    """``message.metadata.askgate`` when it is an object (anything else reads as absent)."""
    meta = msg.get("metadata")
    inner = meta.get(META) if isinstance(meta, dict) else None
    return inner if isinstance(inner, dict) else {}


def _routing(opts: dict[str, Any]) -> Routing | None:
    try:
        if isinstance(opts.get("routing"), dict):
            return Routing.from_json(carriage.narrow_numbers(opts["routing"]))
        ids = opts.get("respondents")
        if isinstance(ids, list) and ids:
            kind = opts.get("respondent_kind", "human")
            return Routing(respondents=tuple(Respondent(kind=kind, id=str(i)) for i in ids))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else "invalid routing"
        raise AskgateError("invalid routing", [Fault("/metadata/askgate/routing", msg, "routing")],
                           code="invalid_request") from None
    return None


def _timeout(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _message_hash(msg: dict[str, Any], *, with_task: bool = False) -> str:
    """What a retry must repeat: the content (ids the server generated for a new task are left out)."""
    keys = ("parts", "metadata", "extensions", "taskId", "contextId") if with_task else ("parts", "metadata", "extensions")
    body = {k: msg.get(k) for k in keys}
    return body_hash(json.dumps(body, sort_keys=True, separators=(",", ":"), default=str))


@dataclass(frozen=True)
class Claim:
    """An answer session holding an ask: its task and the principal that owns the task."""

    task_id: str
    who: Principal


class AskgateExecutor(AgentExecutor):
    """Runs each A2A request against the broker of the app that mounts the A2A routes."""

    def __init__(self, main_app: Any) -> None:
        self.main_app = main_app
        self._claimed: dict[str, dict[str, Principal]] = {}  # ask id -> {session task id: its owner}

    @property
    def broker(self) -> Broker:
        return self.main_app.state.broker

    # ---- entry points ------------------------------------------------------------------------------

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        who = principal_of(context.call_context)
        if context.message is None:  # askgate's own follow-up on a parked session (sessions.py)
            await self._settled(context, event_queue)
            return
        assert context.task_id and context.context_id
        msg = message_dict(context.message)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        task = context.current_task
        if task is not None:
            await self._continue(context, updater, who, msg, task)
            return
        try:
            request = parse_ask_request(msg)
        except AskgateError as exc:
            await self._reject(context, updater, exc.summary, exc.faults)
            return
        if request is not None:
            await self._ask(context, updater, who, msg, request)
        else:
            await self._offer(context, updater, who, msg)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancelling an ask task withdraws the ask; cancelling an answer session releases it."""
        task = context.current_task
        if task is None or not context.task_id or not context.context_id:
            return
        meta = _task_meta(task)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if meta.get("mode") == "ask" and meta.get("ask_id"):
            try:
                await self.broker.withdraw(meta["ask_id"], who=principal_of(context.call_context))
            except BrokerError as exc:
                log.info("a2a_withdraw_refused", ask_id=meta["ask_id"], code=exc.code)
        if meta.get("ask_id"):
            self._release(meta["ask_id"], context.task_id)
        await updater.cancel()

    # ---- (a) the caller asks --------------------------------------------------------------------------

    async def _ask(self, context: RequestContext, updater: TaskUpdater, who: Principal, msg: dict[str, Any],
                   request: AskRequest) -> None:
        if who.role not in ("asker", "admin"):
            await self._reject(context, updater, "only an asker (or an admin) may create asks",
                               [Fault("", "this token's role may not create asks", "forbidden")])
            return
        idem = Idempotency("a2a:" + str(msg.get("messageId", "")), _message_hash(msg)) if msg.get("messageId") else None
        try:
            created = await self.broker.create(request.doc, asker=who, dialect=request.dialect,
                                               binding=request.binding, routing=request.routing,
                                               timeout_seconds=request.timeout, idempotency=idem)
        except BrokerError as exc:
            await self._reject(context, updater, exc.detail or exc.title, _broker_faults(exc))
            return
        record = created.record
        await self._enqueue_task(context, updater, {"mode": "ask", "ask_id": record.id})
        offered = ", ".join(record.offered_to) or "nobody yet"
        await updater.start_work(_agent_message(updater.task_id, updater.context_id,
                                                [new_text_part(f"Ask {record.id} is offered to {offered}.")],
                                                metadata={META: {"ask_id": record.id, "state": record.state.value}}))
        while not record.terminal:
            record = await self.broker.wait(record.id, who, _WAIT_SLICE)
        await self._finish_ask(updater, record)

    async def _finish_ask(self, updater: TaskUpdater, record: AskRecord) -> None:
        view = await self.broker.view(record)
        outcome = final_answer(record)
        text = carriage.summary(outcome)
        parts: list[Part] = [new_text_part(text)]
        response = view.get("response")
        if record.ask.dialect == Dialect.A2A_ELICITATION and response is not None:
            parts.append(new_data_part({carriage.PAYLOAD_KEY: response}))
        elif response is not None:
            parts.append(new_data_part({carriage.RESPONSE_KEY: {"dialect": record.ask.dialect.value,
                                                                "document": response}}))
        parts.append(new_data_part({carriage.OUTCOME_KEY: {"ask_id": record.id, "state": record.state.value,
                                                          "outcome": view.get("outcome")}}))
        await updater.add_artifact(parts, name="answer")
        done = _agent_message(updater.task_id, updater.context_id, [new_text_part(text)])
        if record.state.value == "withdrawn":
            await updater.cancel(done)
        else:
            await updater.complete(done)

    # ---- (b) askgate asks the caller ------------------------------------------------------------------

    async def _offer(self, context: RequestContext, updater: TaskUpdater, who: Principal,
                     msg: dict[str, Any]) -> None:
        meta = _askgate_meta(msg)
        wanted = meta.get("ask_id") if isinstance(meta.get("ask_id"), str) else None
        wait = min(_timeout(meta.get("wait_seconds")) or 0.0, self._max_wait())
        record = await self._next_ask(who, wanted, wait)
        if record is None:
            reply = Message(role=Role.ROLE_AGENT, message_id=str(uuid.uuid4()), context_id=updater.context_id,
                            parts=[new_text_part("Nothing is waiting for your answer." if wanted is None else
                                                 f"Ask {wanted} is not waiting for your answer.")])
            await updater.event_queue.enqueue_event(reply)
            return
        self._claimed.setdefault(record.id, {})[updater.task_id] = who
        await self._enqueue_task(context, updater, {"mode": "answer", "ask_id": record.id})
        await self._require_input(updater, record, msg, context)

    async def _require_input(self, updater: TaskUpdater, record: AskRecord, msg: dict[str, Any],
                             context: RequestContext, faults: list[Fault] | tuple[Fault, ...] = ()) -> None:
        active = carriage.extension_active(msg, context.requested_extensions)
        parts = carriage.status_parts(record.ask, extension_active=active)
        if faults:
            parts = [{"text": carriage.faults_text(faults)}, *parts,
                     {"data": {FAULTS_KEY: _faults_json(faults)}}]
        info: dict[str, Any] = {"ask_id": record.id}
        if record.deadline_at is not None:
            info["deadline_at"] = records.iso(record.deadline_at)
        status = _agent_message(updater.task_id, updater.context_id, _parts(parts),
                                extensions=[carriage.EXTENSION_URI] if active else None, metadata={META: info})
        await updater.requires_input(status)

    async def _next_ask(self, who: Principal, wanted: str | None, wait: float) -> AskRecord | None:
        loop = asyncio.get_running_loop()
        end = loop.time() + wait
        while True:
            found = await self._find_ask(who, wanted)
            if found is not None or loop.time() >= end:
                return found
            await asyncio.sleep(_POLL)

    def respondent_ids(self, who: Principal) -> list[str]:
        """Whom the caller answers for: itself, and the approver ids its principal maps to
        (``Settings.approver_identities`` entries ``("principal:<id>", "<approver id>")``: bearer approvers)."""
        settings = getattr(self.main_app.state, "settings", None)
        mapped = [a for i, a in getattr(settings, "approver_identities", ()) if i == f"principal:{who.id}"]
        return list(dict.fromkeys([who.id, *mapped]))

    def acting_for(self, who: Principal, record: AskRecord) -> Principal | None:
        """The respondent the caller answers ``record`` as (None: it is not offered to the caller)."""
        for rid in self.respondent_ids(who):
            if rid in record.offered_to:
                return who if rid == who.id else Principal(id=rid, role="respondent")
        return None

    async def _find_ask(self, who: Principal, wanted: str | None) -> AskRecord | None:
        if wanted is not None:
            row = await self.broker.store.get_ask(wanted)
            rows = [row] if row is not None else []
        else:
            found: dict[str, Any] = {}
            for rid in self.respondent_ids(who):
                page = await self.broker.store.list_asks(AskQuery(state="delivered", respondent=rid, limit=200))
                found.update({r.id: r for r in page.items})
            rows = sorted(found.values(), key=lambda r: r.created_at, reverse=True)
        for row in reversed(rows):  # oldest first
            record = records.from_row(row)
            acting = self.acting_for(who, record)
            # an ask named by id may be taken over from an abandoned session; otherwise skip held ones
            if acting is not None and self._answerable(record, acting.id) and (
                    wanted is not None or not self._claimed.get(record.id)):
                return record
        return None

    @staticmethod
    def _answerable(record: AskRecord, rid: str) -> bool:
        if record.terminal or rid not in record.offered_to:
            return False
        if any(v.respondent_id == rid for v in record.votes):
            return False
        if record.consent_of(rid) not in (None, "not_required", "granted_now", "stored_grant"):
            return False
        try:
            carriage.request_for(record.ask)  # what elicitation/v1 cannot carry cannot be answered here either
        except AskgateError:
            return False
        return True

    def _max_wait(self) -> float:
        settings = getattr(self.main_app.state, "settings", None)
        return float(getattr(settings, "max_wait_seconds", 300.0))

    # ---- the caller's next message on a task --------------------------------------------------------

    async def _continue(self, context: RequestContext, updater: TaskUpdater, who: Principal, msg: dict[str, Any],
                        task: Task) -> None:
        meta = _task_meta(task)
        ask_id = meta.get("ask_id")
        if meta.get("mode") != "answer" or not isinstance(ask_id, str):
            # An ask task runs until its outcome; nothing the asker says changes it.
            await updater.update_status(task.status.state, _agent_message(
                updater.task_id, updater.context_id,
                [new_text_part("This task is waiting for the respondent; it completes with the answer.")]))
            return
        if len(task.history) >= MAX_HISTORY:  # protocols.md §1.2: a task's history holds at most 200 messages
            self._release(ask_id, updater.task_id)
            await updater.failed(_agent_message(updater.task_id, updater.context_id, [new_text_part(
                f"Too many messages on this task (at most {MAX_HISTORY}); start a new session to answer.")]))
            return
        current = await self.broker.get(ask_id)
        acting = self.acting_for(who, current) if current is not None else None
        if current is None or acting is None:
            await updater.failed(_agent_message(updater.task_id, updater.context_id,
                                                [new_text_part("The ask is no longer available.")]))
            return
        record = current
        if record.terminal:
            await self._finish_answer(updater, record)
            return
        try:
            answer, _typed = carriage.answer_from_message(record.ask, msg)
        except AskgateError as exc:
            await self._require_input(updater, record, msg, context, exc.faults)
            return
        payload = carriage.canonical_answer(answer)
        held = self._release(ask_id, updater.task_id)  # this session settles it now: no follow-up for it
        idem = (Idempotency("a2a:" + str(msg.get("messageId", "")), _message_hash(msg, with_task=True))
                if msg.get("messageId") else None)
        try:
            record = await self.broker.answer(ask_id, payload, who=acting, idempotency=idem,
                                              authenticated_by="bearer")
        except BrokerError as exc:
            if exc.status == 409 and exc.code == "conflict":
                current = await self.broker.get(ask_id)
                if current is not None:
                    await self._finish_answer(updater, current)
                    return
            faults = _broker_faults(exc)
            if exc.status == 403:
                await updater.reject(_agent_message(updater.task_id, updater.context_id,
                                                    [new_text_part(carriage.faults_text(faults))]))
                return
            if held:
                self._claimed.setdefault(ask_id, {})[updater.task_id] = who
            await self._require_input(updater, record, msg, context, faults)
            return
        await self._finish_answer(updater, record)

    async def _settled(self, context: RequestContext, event_queue: EventQueue) -> None:
        """The ask of a parked answer session settled elsewhere: complete the task with that outcome."""
        task = context.current_task
        meta = _task_meta(task) if task is not None else {}
        ask_id = meta.get("ask_id")
        if task is None or meta.get("mode") != "answer" or not isinstance(ask_id, str):
            return
        if task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
            return
        record = await self.broker.get(ask_id)
        if record is not None and record.terminal:
            await self._finish_answer(TaskUpdater(event_queue, task.id, task.context_id), record)

    def claims_of(self, ask_id: str) -> list[Claim]:
        """The answer sessions holding ``ask_id`` (an abandoned one and the one that took it over)."""
        return [Claim(task_id, who) for task_id, who in self._claimed.get(ask_id, {}).items()]

    def _release(self, ask_id: str, task_id: str | None) -> bool:
        sessions = self._claimed.get(ask_id)
        if not sessions or task_id not in sessions:
            return False
        del sessions[task_id]
        if not sessions:
            del self._claimed[ask_id]
        return True

    async def _finish_answer(self, updater: TaskUpdater, record: AskRecord) -> None:
        """Complete an answer session: the ask's outcome (which may be another respondent's, or a timeout)."""
        self._release(record.id, updater.task_id)
        outcome = final_answer(record) if record.terminal else None
        text = carriage.summary(outcome) if record.terminal else "Your answer was recorded."
        parts: list[Part] = [new_text_part(text)]
        if outcome is not None:
            parts.append(new_data_part({carriage.OUTCOME_KEY: {"ask_id": record.id, "state": record.state.value,
                                                              "outcome": records.answer_json(outcome)}}))
        else:
            parts.append(new_data_part({carriage.OUTCOME_KEY: {"ask_id": record.id, "state": record.state.value}}))
        await updater.add_artifact(parts, name="outcome")
        await updater.complete(_agent_message(updater.task_id, updater.context_id, [new_text_part(text)]))

    # ---- helpers --------------------------------------------------------------------------------------

    async def _enqueue_task(self, context: RequestContext, updater: TaskUpdater, meta: dict[str, Any]) -> None:
        assert context.message is not None
        task = Task(id=updater.task_id, context_id=updater.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED), history=[context.message])
        task.metadata.CopyFrom(_struct({META: meta}))
        await updater.event_queue.enqueue_event(task)

    async def _reject(self, context: RequestContext, updater: TaskUpdater, summary: str,
                      faults: list[Fault] | tuple[Fault, ...]) -> None:
        await self._enqueue_task(context, updater, {"mode": "rejected"})
        parts = [new_text_part(f"{summary}\n{carriage.faults_text(faults)}" if faults else summary)]
        if faults:
            parts.append(new_data_part({FAULTS_KEY: _faults_json(faults)}))
        await updater.reject(_agent_message(updater.task_id, updater.context_id, parts))


def _broker_faults(exc: BrokerError) -> list[Fault]:
    if exc.code in ("idempotency_conflict", "duplicate_query_id"):
        return [Fault("/messageId", "this messageId was already used with a different message",
                      "DUPLICATE_MESSAGE_ID")]
    return list(exc.faults) or [Fault("", exc.detail or exc.title, exc.code)]


def _task_meta(task: Task) -> dict[str, Any]:
    meta = json_format.MessageToDict(task.metadata) if task.HasField("metadata") else {}
    inner = meta.get(META)
    return inner if isinstance(inner, dict) else {}


__all__ = ["AskgateExecutor", "parse_ask_request"]
