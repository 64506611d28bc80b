"""The broker: loads asks from the store, applies pure lifecycle transitions, saves them atomically with
their audit entries, wakes waiters, settles deadlines and posts outcome callbacks.

Every change follows one pattern (:meth:`Broker._change`): read the record, apply the event with the
lifecycle, then compare-and-set the new version together with its audit entries, remembered consent,
intent extensions and credential deletion in one transaction. A lost compare-and-set re-reads and
re-applies, so two racing answers end with exactly one winner and the loser sees the winning outcome.
Only after the commit are effects run and the caller answered: nothing is acknowledged before it is
durable.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import structlog
from pydantic import ValidationError

from askgate.broker import records
from askgate.broker.callbacks import check_callback_url, post_outcome
from askgate.broker.errors import BrokerError, forbidden, not_found
from askgate.broker.plugins import BrokerPlugin
from askgate.broker.sqlite_peers import SqlitePeers
from askgate.broker.waiters import PgListener, Waiters
from askgate.core import audit as chain
from askgate.core import lifecycle as lc
from askgate.core.lifecycle import AskRecord, AuditEvent, Routing, Transition
from askgate.core.model import Answer, Ask, Dialect, Respondent
from askgate.errors import AskgateError, Fault, pointer_join
from askgate.store import AskQuery, AskRow, IdempotentReplay, Page, Principal, Store, Tx, VersionConflict

log = structlog.get_logger("askgate.broker")

Clock = Callable[[], datetime]
SETTLE_GRANULARITY = 0.05  # seconds: deadlines due within this of each other are settled in one pass
SETTLE_BATCH_MAX = 1600  # asks settled in one transaction at most, when a backlog makes batches grow


def utcnow() -> datetime:
    return datetime.now(UTC)


def body_hash(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class Idempotency:
    key: str
    request_hash: str


@dataclass(frozen=True)
class Created:
    record: AskRecord
    created: bool  # False: an idempotent replay of an earlier identical request


def pydantic_faults(exc: ValidationError, base: str = "") -> list[Fault]:
    out = []
    for err in exc.errors():
        out.append(Fault(pointer_join(base, *err.get("loc", ())), err.get("msg", "invalid"), err.get("type", "invalid")))
    return out


class Broker:
    """Orchestration over a :class:`Store`. Start it (scheduler, listener) before use; stop it after."""

    def __init__(self, store: Store, *, clock: Clock = utcnow, allow_http_callbacks: bool = False,
                 scheduler: bool = True, max_idle: float = 2.0, plugins: Sequence[BrokerPlugin] = (),
                 directory: Mapping[str, Respondent] | None = None) -> None:
        self.store = store
        self.plugins = list(plugins)
        self.directory = dict(directory or {})  # askgate/broker/directory.py: operator-known agents/services
        self.clock = clock
        self.waiters = Waiters()
        self.allow_http_callbacks = allow_http_callbacks
        self._scheduler_enabled = scheduler
        self._max_idle = max_idle
        self._wake = asyncio.Event()
        self._stopping = False
        self._deliveries: asyncio.Queue[str] = asyncio.Queue()
        self._tasks: list[asyncio.Task[Any]] = []
        self._bg: set[asyncio.Task[Any]] = set()
        self._listener: PgListener | None = None
        self._peers: SqlitePeers | None = None  # other processes on the same SQLite file
        self._http: httpx.AsyncClient | None = None
        self._planned: datetime | None = None  # when the scheduler means to wake next (None: max_idle)
        store.on_commit(self.waiters.changed)

    # ---- life ------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._http = httpx.AsyncClient(follow_redirects=False, trust_env=False)
        for plugin in self.plugins:  # before deadlines are settled, so plugins see those transitions too
            await plugin.start(self)
        if self.store.backend == "postgresql":
            self._listener = PgListener(str(self.store.engines.write.url.render_as_string(hide_password=False)),
                                        self.waiters)
            self._listener.start()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._listener.ready.wait(), 10)
        else:
            database = self.store.engines.write.url.database
            if database and database != ":memory:":
                peers = SqlitePeers(database, self.waiters)
                try:
                    peers.start()
                except OSError as exc:  # one process still works; only cross-process wake-ups are lost
                    log.warning("sqlite_peers_unavailable", error=type(exc).__name__, detail=str(exc))
                else:
                    self._peers = peers
                    self.store.on_commit(peers.publish)
        if self._scheduler_enabled:
            await self.settle_due()  # deadlines that passed while nobody was running: settle them now
            self._tasks.append(asyncio.create_task(self._scheduler(), name="askgate-scheduler"))
        self._tasks.append(asyncio.create_task(self._delivery_worker(), name="askgate-callbacks"))
        self._spawn(self._redrive_callbacks())

    async def stop(self) -> None:
        for plugin in self.plugins:
            with contextlib.suppress(Exception):
                await plugin.stop()
        # A flag as well as cancel(): Python 3.11's wait_for can swallow a cancellation that races its timeout.
        self._stopping = True
        self._wake.set()
        pending = [t for t in self._tasks + list(self._bg) if not t.done()]
        while pending:
            for task in pending:
                task.cancel()
            _done, still = await asyncio.wait(pending, timeout=1.0)
            pending = list(still)
        self._tasks.clear()
        if self._listener is not None:
            await self._listener.stop()
        if self._peers is not None:
            self._peers.stop()
        if self._http is not None:
            await self._http.aclose()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._bg.add(task)
        task.add_done_callback(self._bg.discard)

    # ---- reading ---------------------------------------------------------------------------------

    async def get(self, ask_id: str) -> AskRecord | None:
        row = await self.store.get_ask(ask_id)
        return records.from_row(row) if row is not None else None

    async def get_for(self, ask_id: str, who: Principal) -> AskRecord:
        """The ask if ``who`` may see it: its asker, a respondent it was offered to, or an admin."""
        row = await self.store.get_ask(ask_id)
        if row is None or not self.may_see(row, who):
            raise not_found()  # do not reveal that an ask exists to someone who may not see it
        return records.from_row(row)

    @staticmethod
    def may_see(row: AskRow, who: Principal) -> bool:
        if who.role == "admin":
            return True
        if row.asker == who.id:
            return True
        return who.role == "respondent" and who.id in row.offered_to

    async def list_for(self, who: Principal, query: AskQuery) -> Page:
        if who.role == "asker":
            query = AskQuery(**{**query.__dict__, "asker": who.id})
        elif who.role == "respondent":
            query = AskQuery(**{**query.__dict__, "respondent": who.id})
        return await self.store.list_asks(query)

    async def chain_head(self, record: AskRecord) -> str | None:
        kind, cid = ("session", record.ask.session_id) if record.ask.session_id else ("ask", record.id)
        return await self.store.chain_head(kind, cid)

    async def view(self, record: AskRecord) -> dict[str, Any]:
        head = await self.chain_head(record) if record.ask.dialect == Dialect.ACS and record.terminal else None
        return records.view(record, now=self.clock(), chain_hash=head)

    # ---- creating --------------------------------------------------------------------------------

    def parse(self, doc: Any, *, dialect: str | None, binding: Any = None, now: datetime) -> Ask:
        """A dialect document (or the canonical ``{"ask": ...}`` form) -> canonical Ask, or BrokerError."""
        from askgate.protocols.detect import detect_dialect
        from askgate.protocols.registry import codec_for

        try:
            if dialect == "canonical" or (dialect is None and _is_canonical(doc)):
                if not isinstance(doc, dict) or "ask" not in doc:
                    raise AskgateError("invalid canonical ask", [Fault("", "the canonical form is {\"ask\": {...}}",
                                                                       "required")], code="invalid_request")
                try:
                    ask = Ask.model_validate(doc["ask"])
                except ValidationError as exc:
                    raise AskgateError("invalid canonical ask", pydantic_faults(exc, "/ask"),
                                       code="invalid_request") from None
                if ask.dialect != Dialect.CANONICAL:
                    ask = ask.model_copy(update={"dialect": Dialect.CANONICAL})
                return ask
            resolved = dialect or detect_dialect(doc).value
            codec = codec_for(resolved)
            if resolved == Dialect.ACS.value:
                return codec.parse_request(doc, binding=binding)
            if resolved == Dialect.AQP.value:
                return codec.parse_request(doc, now=now)  # intake rules (already_expired, ...) need the time
            return codec.parse_request(doc)
        except AskgateError as exc:
            raise BrokerError.from_askgate(exc) from None

    async def create(self, doc: Any, *, asker: Principal, dialect: str | None = None, binding: Any = None,
                     respondents: tuple[Respondent, ...] | None = None, routing: Routing | None = None,
                     timeout_seconds: float | None = None, idempotency: Idempotency | None = None) -> Created:
        now = self.clock()
        ask = self.parse(doc, dialect=dialect, binding=binding, now=now)
        if routing is None and isinstance(doc, dict) and isinstance(doc.get("routing"), dict) and _is_canonical(doc):
            try:
                routing = Routing.from_json(doc["routing"])
            except (ValueError, TypeError, KeyError, ValidationError) as exc:
                raise BrokerError(422, "invalid_request", "invalid routing",
                                  faults=[Fault("/routing", str(exc).splitlines()[0], "routing")]) from None
        if timeout_seconds is None and _is_canonical(doc) and isinstance(doc, dict):
            t = doc.get("timeout_seconds")
            timeout_seconds = float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None
        return await self.create_ask(ask, asker=asker, respondents=respondents, routing=routing,
                                     timeout_seconds=timeout_seconds, idempotency=idempotency, now=now)

    async def create_ask(self, ask: Ask, *, asker: Principal, respondents: tuple[Respondent, ...] | None = None,
                         routing: Routing | None = None, timeout_seconds: float | None = None,
                         idempotency: Idempotency | None = None, now: datetime | None = None) -> Created:
        now = now or self.clock()
        ask_id = str(uuid.uuid4())
        secret = ask.delivery.authorization.get_secret_value() if ask.delivery.authorization else None
        ask = ask.model_copy(update={"id": ask_id, "asker": asker.id})
        if routing is None:
            chosen = respondents if respondents else ((ask.respondent,) if ask.respondent else ())
            try:
                routing = Routing(respondents=tuple(chosen))
            except ValueError as exc:
                raise BrokerError(422, "invalid_request", "invalid routing",
                                  faults=[Fault("", str(exc), "routing")]) from None
        if self.directory:
            from askgate.broker.directory import resolve

            routing = resolve(routing, self.directory)
        idem = idempotency
        if idem is None and ask.dialect == Dialect.AQP and ask.external_id:
            idem = Idempotency("aqp:" + ask.external_id, body_hash(_stable(ask.original)))
        consent = await self._consent_lookup(routing, ask)
        try:
            tr = lc.open_ask(ask, ask_id=ask_id, routing=routing, now=now, stored_consent=consent,
                             timeout_seconds=timeout_seconds)
        except lc.LifecycleError as exc:
            raise BrokerError(422, "invalid_request", exc.message,
                              faults=[Fault("", exc.message, "lifecycle." + exc.code)]) from None
        try:
            async with self.store.write(now) as tx:
                if idem is not None:
                    await tx.claim_idempotency(asker.id, "create", idem.key, idem.request_hash, ask_id)
                await tx.insert_ask(records.to_row(tr.record))
                if secret is not None and not tr.record.terminal:
                    await tx.put_secret(ask_id, "authorization", secret)
                await self._persist_effects(tx, tr)
        except IdempotentReplay as replay:
            if not replay.same_body:
                code = "duplicate_query_id" if idem and idem.key.startswith("aqp:") else "idempotency_conflict"
                raise BrokerError(409, code, "idempotency key reused with a different request",
                                  detail="this idempotency key was already used for a different request body",
                                  extra={"ask_id": replay.ask_id}) from None
            first = await self.get(replay.ask_id)
            assert first is not None
            return Created(first, created=False)
        log.info("ask_created", ask_id=ask_id, dialect=ask.dialect.value, state=tr.record.state.value)
        self._after_commit(tr)
        return Created(tr.record, created=True)

    # ---- changing --------------------------------------------------------------------------------

    async def answer(self, ask_id: str, payload: Any, *, who: Principal,
                     idempotency: Idempotency | None = None, authenticated_by: str | None = None) -> AskRecord:
        """Check ``payload`` with the ask's codec (or as a canonical answer) and record it, exactly once.

        Anyone authenticated may try; the lifecycle refuses (403, audited) whoever the ask was not offered to.
        ``authenticated_by``: how the edge verified ``who`` (``"mtls"`` from askgate/server/acs_endpoint.py);
        an ACS approver whose ASK says ``auth.method: mtls`` may answer only over mTLS.
        """
        if idempotency is not None:
            replay = await self._replay(ask_id, who, idempotency)
            if replay is not None:
                return replay
        row = await self.store.get_ask(ask_id)
        if row is None:
            raise not_found()
        record = records.from_row(row)
        respondent = record.routing.find(who.id) or Respondent(kind="human", id=who.id)
        if respondent.auth_method == "mtls" and authenticated_by != "mtls":
            raise forbidden("this approver must answer over mutual TLS (approver.auth.method is mtls)")
        answer = self._check_answer(record, payload, respondent, self.clock())
        return await self._change(ask_id, lc.Respond(respondent=respondent, answer=answer), who=who,
                                  idempotency=idempotency, operation="answer", row=row, record=record)

    async def _replay(self, ask_id: str, who: Principal, idem: Idempotency, operation: str = "answer") -> AskRecord | None:
        prior = await self.store.find_idempotent(who.id, f"{operation}:{ask_id}", idem.key)
        if prior is None:
            return None
        if prior[0] != idem.request_hash:
            raise BrokerError(409, "idempotency_conflict", "idempotency key reused with a different request",
                              detail="this idempotency key was already used for a different request body")
        return await self.get(ask_id)

    def _check_answer(self, record: AskRecord, payload: Any, respondent: Respondent, now: datetime) -> Answer:
        from askgate.core.answers import check_value, normalise_value
        from askgate.protocols.registry import codec_for

        ask = record.ask
        try:
            if ask.dialect == Dialect.CANONICAL or _is_canonical_answer(payload):
                if not isinstance(payload, dict):
                    raise AskgateError("invalid answer", [Fault("", "an answer must be a JSON object", "type")],
                                       code="invalid_answer")
                outcome = payload.get("outcome")
                if outcome not in ("accept", "decline", "cancel"):
                    raise AskgateError("invalid answer", [Fault("/outcome", 'outcome must be "accept", "decline" '
                                                                'or "cancel"', "enum")], code="invalid_answer")
                value = payload.get("value")
                if outcome == "accept":
                    faults = check_value(ask.spec, value, "/value")
                    if faults:
                        raise AskgateError("invalid answer", faults, code="invalid_answer")
                    if ask.spec.kind == "approval":
                        from askgate.core.approval import decision_model

                        value = decision_model(value)
                    else:
                        value = normalise_value(ask.spec, value)
                else:
                    value = None
                reason = payload.get("reason") if isinstance(payload.get("reason"), str) else None
                return Answer(outcome=outcome, value=value, respondent=respondent, answered_at=now, reason=reason)
            return codec_for(ask.dialect).check_answer(ask, payload, respondent=respondent, answered_at=now)
        except AskgateError as exc:
            err = BrokerError.from_askgate(exc, status=422)
            if exc.code == "capability_not_negotiated":
                err.extra["acs_error"] = {"code": -32003, "message": "CAPABILITY_NOT_NEGOTIATED"}
            raise err from None

    async def withdraw(self, ask_id: str, *, who: Principal) -> AskRecord:
        record = await self.get_for(ask_id, who)
        if who.role != "admin" and record.ask.asker != who.id:
            raise forbidden("only the asker (or an admin) may withdraw an ask")
        return await self._change(ask_id, lc.Withdraw(by=who.id), who=who)

    async def signal(self, ask_id: str, kind: str, *, who: Principal) -> AskRecord:
        record = await self.get_for(ask_id, who)
        if who.role != "admin" and record.ask.asker != who.id:
            raise forbidden("only the submitting principal may signal an ask")
        if kind not in ("outcome_known", "task_complete", "release"):
            raise BrokerError(422, "invalid_request", "unknown signal",
                              faults=[Fault("/signal", 'signal must be "outcome_known", "task_complete" or '
                                            '"release"', "enum")])
        return await self._change(ask_id, lc.Signal(kind=kind), who=who)  # type: ignore[arg-type]

    async def consent(self, ask_id: str, granted: bool, *, who: Principal) -> AskRecord:
        await self.get_for(ask_id, who)
        return await self._change(ask_id, lc.ConsentReply(respondent_id=who.id, granted=granted), who=who)

    async def _change(self, ask_id: str, event: lc.Event, *, who: Principal,
                      idempotency: Idempotency | None = None, operation: str = "",
                      row: AskRow | None = None, record: AskRecord | None = None) -> AskRecord:
        """``row`` (and its ``record``): what the caller just read, saving a read; the compare-and-set
        catches any change since."""
        for _attempt in range(50):
            if row is None:
                row, record = await self.store.get_ask(ask_id), None
            if row is None:
                raise not_found()
            if record is None:
                record = records.from_row(row)
            now = self.clock()
            consent = await self._consent_lookup(record.routing, record.ask)
            refusal: lc.LifecycleError | None = None
            try:
                tr = lc.apply(record, event, now=now, stored_consent=consent)
            except lc.LifecycleError as exc:
                refusal = exc
                tr = exc.transition or Transition(record)
            try:
                async with self.store.write(now) as tx:
                    if idempotency is not None and refusal is None:
                        await tx.claim_idempotency(who.id, f"{operation}:{ask_id}", idempotency.key,
                                                   idempotency.request_hash, ask_id)
                    if tr.changed:
                        await tx.cas_ask(records.to_row(tr.record), record.version,
                                         offers_changed=tr.record.offered_to != record.offered_to)
                        await self._persist_effects(tx, tr)
                    if refusal is not None and refusal.audit is not None and refusal.code == "forbidden":
                        await self._append(tx, [refusal.audit], refused=True)
            except VersionConflict:
                row = record = None
                continue
            except IdempotentReplay as replay:
                if not replay.same_body:
                    raise BrokerError(409, "idempotency_conflict", "idempotency key reused with a different request",
                                      detail="this idempotency key was already used for a different request body",
                                      ) from None
                current = await self.get(ask_id)
                assert current is not None
                return current
            if tr.changed:
                self._after_commit(tr)
            if refusal is not None:
                if idempotency is not None:  # an identical request that raced us and won
                    replay = await self._replay(ask_id, who, idempotency, operation)
                    if replay is not None:
                        return replay
                raise self._refusal(refusal, tr.record)
            return tr.record
        raise BrokerError(503, "busy", "the ask is changing too fast; retry")

    def _refusal(self, exc: lc.LifecycleError, record: AskRecord) -> BrokerError:
        if exc.code == "conflict":
            outcome = exc.outcome or lc.final_answer(record)
            return BrokerError(409, "conflict", "the ask already has its outcome", detail=exc.message,
                               extra={"state": record.state.value, "outcome": records.answer_json(outcome)})
        if exc.code == "forbidden":
            return forbidden(exc.message)
        return BrokerError(422, "invalid", exc.message, faults=[Fault("", exc.message, "lifecycle.invalid")])

    # ---- persistence helpers ---------------------------------------------------------------------

    async def _consent_lookup(self, routing: Routing, ask: Ask) -> Callable[[str, str], bool | None]:
        if ask.consent.mode != "ask_once":  # the lifecycle looks stored decisions up only for ask_once
            return _no_consent
        stored = await self.store.consent_map(r.id for r in routing.everyone())
        return lambda respondent_id, scope: stored.get((respondent_id, scope))

    async def _persist_effects(self, tx: Tx, tr: Transition) -> None:
        await self._append(tx, tr.audit)
        for effect in tr.effects:
            if isinstance(effect, lc.RememberConsent):
                await tx.put_consent(effect.respondent_id, effect.scope, effect.granted, tr.record.id)
            elif isinstance(effect, lc.ExtendIntent):
                caps = [c.model_dump(mode="json", exclude_none=True) for c in effect.capabilities]
                await tx.extend_intent(effect.session_id, caps)
        if tr.record.terminal:
            keep = False
            for plugin in self.plugins:
                keep = await plugin.on_terminal(tx, tr.record) or keep
            if not keep:
                await tx.delete_secrets(tr.record.id)

    async def _append(self, tx: Tx, events: Any, *, refused: bool = False) -> None:
        for n, ev in enumerate(events):
            entry_id = ev.entry_id or (f"{ev.ask_id}/v{ev.version}/refused/{uuid.uuid4().hex[:12]}" if refused
                                       else f"{ev.ask_id}/v{ev.version}/{n}")
            factory = _entry_factory(ev, entry_id)
            await tx.append_audit("ask", ev.ask_id, factory)
            if ev.session_id:
                await tx.append_audit("session", ev.session_id, factory)

    def _after_commit(self, tr: Transition) -> None:
        for plugin in self.plugins:
            plugin.after_commit(tr)
        for effect in tr.effects:
            if isinstance(effect, lc.Deliver):
                self._deliveries.put_nowait(effect.ask_id)
            elif isinstance(effect, lc.ScheduleWake):
                # wake the scheduler only when this is earlier than what it already sleeps until: waking it
                # on every commit cost a scan (and, on SQLite, a write transaction) per request
                if self._planned is None or effect.at < self._planned:
                    self._wake.set()
            elif isinstance(effect, lc.Notify):
                log.info("ask_offered", ask_id=effect.ask_id, kind=effect.kind, respondents=len(effect.respondent_ids))

    # ---- waiting ---------------------------------------------------------------------------------

    async def wait(self, ask_id: str, who: Principal, timeout: float) -> AskRecord:
        """Return as soon as the ask is terminal, or its current state after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        end = loop.time() + max(0.0, timeout)
        while True:
            ev = self.waiters.event_for(ask_id)
            record = await self.get_for(ask_id, who)
            remaining = end - loop.time()
            if record.terminal or remaining <= 0:
                return record
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(ev.wait(), remaining)

    async def changes(self, ask_id: str, who: Principal, *, heartbeat: float = 15.0) -> AsyncIterator[AskRecord | None]:
        """Yield the record now and after every change until it is terminal; None as a keep-alive."""
        last = -1
        while True:
            ev = self.waiters.event_for(ask_id)
            record = await self.get_for(ask_id, who)
            if record.version != last:
                last = record.version
                yield record
            if record.terminal:
                return
            try:
                await asyncio.wait_for(ev.wait(), heartbeat)
            except asyncio.TimeoutError:
                yield None

    # ---- deadlines -------------------------------------------------------------------------------

    async def settle_due(self, *, batch: int = 200) -> int:
        """Settle every ask whose deadline or escalation has come; each exactly once (row locks + CAS).

        Each claim is one transaction, so one commit (an fsync on SQLite). When a claim comes back full the
        next may take twice as many (up to :data:`SETTLE_BATCH_MAX`): with a backlog, or a disk slowed by
        other work, the commits would otherwise bound the rate (200 per fsync). The loop yields to other
        tasks every ``batch`` asks, so a large claim does not stall requests meanwhile."""
        total = 0
        nxt = await self.store.next_wake()  # a read: no write transaction (and no fsync) when nothing is due
        if nxt is None or nxt > self.clock():
            return 0
        size = batch
        while True:
            now = self.clock()
            done: list[Transition] = []
            async with self.store.claim_due(now, limit=size) as (tx, rows):
                recs = [records.from_row(row) for row in rows]
                everyone = {r.id for record in recs if record.ask.consent.mode == "ask_once"
                            for r in record.routing.everyone()}
                stored = await self.store.consent_map(everyone) if everyone else {}
                consent = lambda rid, scope: stored.get((rid, scope))  # noqa: E731
                updates = []
                for i, record in enumerate(recs):
                    if i and i % batch == 0:
                        await asyncio.sleep(0)  # let requests run; writers wait for this unit as they would anyway
                    try:
                        tr = lc.apply(record, lc.Tick(), now=now, stored_consent=consent)
                    except lc.LifecycleError as exc:  # pragma: no cover - a tick is never refused
                        log.error("tick_refused", ask_id=record.id, code=exc.code)
                        continue
                    if tr.changed:
                        updates.append((records.to_row(tr.record), record.version,
                                        tr.record.offered_to != record.offered_to))
                        done.append(tr)
                    else:  # stale wake time: correct it so the scan does not spin
                        updates.append((records.to_row(record), record.version, False))
                await tx.cas_asks(updates)  # one batched compare-and-set for the whole claim
                for tr in done:
                    await self._persist_effects(tx, tr)
            for tr in done:
                self._after_commit(tr)
            total += len(done)
            if len(rows) < size:
                return total
            size = min(size * 2, max(batch, SETTLE_BATCH_MAX))

    async def _scheduler(self) -> None:
        """Sleep until the earliest wake time (or ``max_idle``), settle what is due, repeat. A new earlier
        wake time (a ScheduleWake effect) interrupts the sleep; anything else does not."""
        loop = asyncio.get_running_loop()
        while not self._stopping:
            try:
                self._wake.clear()
                self._planned = None
                await self.settle_due()
                nxt = await self.store.next_wake()
                now = self.clock()
                delay = self._max_idle
                if nxt is not None:
                    # at least SETTLE_GRANULARITY between passes: a pass has a fixed cost (a scan, a commit),
                    # so thousands of deadlines a second are settled in batches, each at most that late
                    delay = min(delay, max(SETTLE_GRANULARITY, (nxt - now).total_seconds()))
                self._planned = now + timedelta(seconds=delay)
                if delay > 0 and not self._wake.is_set():
                    waiter = loop.create_task(self._wake.wait())
                    try:
                        await asyncio.wait((waiter,), timeout=delay)
                    finally:
                        waiter.cancel()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the scheduler must outlive a bad moment of the database
                log.error("scheduler_error", error=type(exc).__name__)
                await asyncio.sleep(0.5)

    # ---- callbacks -------------------------------------------------------------------------------

    async def add_callback(self, ask_id: str, url: Any, *, who: Principal) -> int:
        record = await self.get_for(ask_id, who)
        if who.role != "admin" and record.ask.asker != who.id:
            raise forbidden("only the asker (or an admin) may register a callback")
        faults = check_callback_url(url, allow_http=self.allow_http_callbacks)
        if faults:
            raise BrokerError(422, "invalid_request", "invalid callback URL", faults=faults)
        async with self.store.write() as tx:
            cb_id = await tx.add_callback(ask_id, url)
        current = await self.get(ask_id)
        if current is not None and current.terminal:
            self._deliveries.put_nowait(ask_id)
        return cb_id

    async def _delivery_worker(self) -> None:
        """One worker drains terminal asks in batches: one query finds which have callbacks at all."""
        while not self._stopping:
            ids = [await self._deliveries.get()]
            while not self._deliveries.empty() and len(ids) < 500:
                ids.append(self._deliveries.get_nowait())
            try:
                pending = await self.store.pending_callbacks_for(ids)
                for ask_id in dict.fromkeys(cb.ask_id for cb in pending):
                    await self._deliver(ask_id, [cb for cb in pending if cb.ask_id == ask_id])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a failed delivery must not stop later ones
                log.error("callback_worker_error", error=type(exc).__name__)

    async def _deliver(self, ask_id: str, pending: list[Any] | None = None) -> None:
        record = await self.get(ask_id)
        if record is None or not record.terminal or self._http is None:
            return
        if pending is None:
            pending = await self.store.callbacks_for(ask_id, pending_only=True)
        body = await self.view(record)
        for cb in pending:
            error = None
            for attempt in range(3):
                error = await post_outcome(self._http, cb.url, body, idempotency_key=f"{ask_id}:{cb.id}")
                if error is None:
                    break
                await asyncio.sleep(0.2 * (attempt + 1))
            async with self.store.write() as tx:
                await tx.mark_callback(cb.id, delivered=error is None, error=error)
            log.info("callback", ask_id=ask_id, callback_id=cb.id, ok=error is None)

    async def _redrive_callbacks(self) -> None:
        with contextlib.suppress(Exception):
            for ask_id in dict.fromkeys(cb.ask_id for cb in await self.store.pending_callbacks()):
                await self._deliver(ask_id)


def _no_consent(_respondent_id: str, _scope: str) -> bool | None:
    return None


def _entry_factory(ev: AuditEvent, entry_id: str) -> Callable[[str | None, int], dict[str, Any]]:
    def make(previous_hash: str | None, _seq: int) -> dict[str, Any]:
        return chain.chain_entry(
            entry_id=entry_id,
            step_id=ev.step_id or ev.ask_id,
            step_type=ev.step_type,
            timestamp=ev.at,
            request_hash=ev.request_hash,
            data={"ask_id": ev.ask_id, "ask_version": ev.version, **ev.data},
            previous_hash=previous_hash,
        )

    return make


def _is_canonical(doc: Any) -> bool:
    return isinstance(doc, dict) and "ask" in doc and set(doc) <= {"ask", "routing", "timeout_seconds"}


def _is_canonical_answer(payload: Any) -> bool:
    return isinstance(payload, dict) and "outcome" in payload and set(payload) <= {"outcome", "value", "reason"}


def _stable(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
