"""AQP on the wire (protocols.md §3.4): ``POST /aqp/queries``, ``GET /aqp/queries/{queryId}``,
``POST /aqp/queries/{queryId}/signals``, ``DELETE /aqp/queries/{queryId}``.

Errors use AQP's own shape, ``{"error": {"code", "message", "path"}}`` (plus ``faults``: every fault
with its JSON pointer and rule), not the RFC 9457 problems of ``/v1``. ``queryId`` is the idempotency
key per asker principal: an identical replay answers 200 with the current status, a different body
under the same id 409 ``duplicate_query_id``. Who answers is chosen as for ``/v1/asks``
(``respondent``/``respondent_kind``/``routing`` query parameters).

The status document (intake, replay, and ``GET`` while the query is unsettled) is
``{"protocolVersion", "queryId", "status", "expiresAt"}`` where ``status`` is the §3.4 lifecycle state
(``held``, ``awaiting_consent``, ``open``, ``answered``, ``delivered``, ``delivery_failed``, ``declined``,
``cancelled``, ``expired``). Once settled, ``GET`` returns the QueryResponse (pull; the ``other``
binding) and the lifecycle state in the ``AQP-Query-State`` header. From ``expiresAt`` on, an answer
that was not delivered is never released: the QueryResponse says ``expired``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from askgate.broker import Broker, BrokerError, body_hash
from askgate.broker.push import PUSH_BINDINGS
from askgate.core.lifecycle import AskRecord, State, final_answer, past_expiry
from askgate.errors import AskgateError
from askgate.jsonload import loads_strict
from askgate.protocols import aqp
from askgate.store import Principal, deliveries

router = APIRouter(tags=["aqp"])
STATE_HEADER = "AQP-Query-State"
_ANY_JSON = {"requestBody": {"required": True, "content": {"application/json": {"schema": {}}}}}


async def _who(request: Request) -> Principal:
    from askgate.server.app import principal

    return await principal(request)


Who = Annotated[Principal, Depends(_who)]


def aqp_error(status: int, code: str, message: str, path: str = "", faults: list[dict[str, str]] | None = None,
              headers: dict[str, str] | None = None) -> JSONResponse:
    error: dict[str, Any] = {"code": code, "message": message, "path": path}
    if faults:
        error["faults"] = faults
    return JSONResponse({"error": error}, status_code=status, headers=headers)


def _from_broker(exc: BrokerError) -> JSONResponse:
    code = "invalid_query" if exc.code == "invalid_request" else exc.code
    faults = [f.as_dict() for f in exc.faults]
    message = exc.faults[0].message if exc.faults and code == "invalid_query" else (exc.detail or exc.title)
    return aqp_error(exc.status, code, message, exc.faults[0].pointer if exc.faults else "", faults)


def _from_askgate(exc: AskgateError, status: int = 422) -> JSONResponse:
    code = {"invalid_request": "invalid_query", "not_json": "invalid_json"}.get(exc.code, exc.code)
    if exc.code == "not_json":
        status = 400
    first = exc.faults[0] if exc.faults else None
    return aqp_error(status, code, first.message if first else str(exc), first.pointer if first else "",
                     [f.as_dict() for f in exc.faults])


def _broker(request: Request) -> Broker:
    return request.app.state.broker


async def lifecycle_state(broker: Broker, record: AskRecord, now: datetime) -> str:
    """The §3.4 lifecycle state of an AQP query."""
    state = record.state
    if state is State.PENDING:
        return "held" if record.hold == "held" else "open"
    if state is State.DELIVERED:
        return "awaiting_consent" if record.hold == "awaiting_consent" else "open"
    if state is State.EXPIRED or state is State.TIMED_OUT:
        return "expired"
    settled = {State.ANSWERED: "answered", State.DECLINED: "declined", State.WITHDRAWN: "cancelled",
               State.CANCELLED: "cancelled"}[state]
    if record.ask.delivery.binding in PUSH_BINDINGS:
        push = await deliveries.get(broker.store, record.id)
        if push is not None and push.state != "pending":
            return push.state
    if past_expiry(record, now):
        return "expired"  # recorded but never released: not pushed, and no longer pullable
    return settled


def status_doc(record: AskRecord, state: str) -> dict[str, Any]:
    out: dict[str, Any] = {"protocolVersion": aqp.PROTOCOL_VERSION, "queryId": record.ask.external_id,
                           "status": state}
    if record.deadline_at is not None:
        out["expiresAt"] = record.deadline_at.isoformat().replace("+00:00", "Z")
    return out


async def query_response(broker: Broker, record: AskRecord, state: str, now: datetime) -> dict[str, Any] | None:
    """The QueryResponse the asker may read now (None while unsettled)."""
    outcome = final_answer(record)
    if outcome is None:
        return None
    released = state == "delivered" or not past_expiry(record, now)
    if state == "expired" or not released or outcome.outcome in ("expired", "timed_out"):
        return {"protocolVersion": aqp.PROTOCOL_VERSION, "queryId": record.ask.external_id, "status": "expired",
                "issuedAt": now.isoformat().replace("+00:00", "Z")}
    return aqp.render_answer(record.ask, outcome, issued_at=now, consent_basis=outcome.consent_basis)


async def find_query(broker: Broker, who: Principal, query_id: str) -> AskRecord | None:
    prior = await broker.store.find_idempotent(who.id, "create", "aqp:" + query_id)
    if prior is None:
        return None
    return await broker.get(prior[1])


@router.post("/aqp/queries", status_code=202, openapi_extra=_ANY_JSON)
async def submit(
    request: Request, who: Who,
    respondent: Annotated[list[str] | None, Query()] = None,
    respondent_kind: Annotated[str, Query(pattern="^(human|agent|service)$")] = "human",
    rule: Annotated[str | None, Query(pattern="^(first|all|quorum|deny_any)$")] = None,
    quorum: Annotated[int | None, Query(ge=1)] = None,
    routing: Annotated[str | None, Query()] = None,
) -> JSONResponse:
    """Take a QueryRequest: 202 with the status document, 200 for an identical replay."""
    from askgate.broker.broker import _stable
    from askgate.server.app import _routing

    if who.role not in ("asker", "admin"):
        return aqp_error(403, "forbidden", "only an asker may submit queries")
    broker = _broker(request)
    raw = await request.body()
    if len(raw) > 1024 * 1024:
        return aqp_error(413, "too_large", "request body too large")
    try:
        doc = loads_strict(raw)
    except AskgateError as exc:
        return _from_askgate(exc, 400)
    query_id = doc.get("queryId") if isinstance(doc, dict) else None
    if isinstance(query_id, str):  # replay first: an identical replay is answered even after expiry
        prior = await broker.store.find_idempotent(who.id, "create", "aqp:" + query_id)
        if prior is not None:
            try:
                replay_hash = body_hash(_stable(aqp.parse_request(doc).original))
            except AskgateError:
                replay_hash = ""
            if replay_hash != prior[0]:
                return aqp_error(409, "duplicate_query_id", "this queryId was already used for a different query",
                                 "/queryId")
            record = await broker.get(prior[1])
            assert record is not None
            now = broker.clock()
            return JSONResponse(status_doc(record, await lifecycle_state(broker, record, now)), status_code=200)
    try:
        route = _routing(routing, respondent, respondent_kind, rule, quorum)
        created = await broker.create(doc, asker=who, dialect="aqp", routing=route)
    except BrokerError as exc:
        return _from_broker(exc)
    record = created.record
    now = broker.clock()
    body = status_doc(record, await lifecycle_state(broker, record, now))
    return JSONResponse(body, status_code=202 if created.created else 200,
                        headers={"Location": f"/aqp/queries/{query_id}"})


@router.get("/aqp/queries/{query_id}")
async def read(query_id: str, request: Request, who: Who) -> JSONResponse:
    """The QueryResponse once settled (pull), else the status document."""
    broker = _broker(request)
    record = await find_query(broker, who, query_id)
    if record is None:
        return aqp_error(404, "not_found", "no such query", "/queryId")
    now = broker.clock()
    state = await lifecycle_state(broker, record, now)
    doc = await query_response(broker, record, state, now)
    return JSONResponse(doc if doc is not None else status_doc(record, state), headers={STATE_HEADER: state})


@router.post("/aqp/queries/{query_id}/signals", openapi_extra=_ANY_JSON)
async def signal(query_id: str, request: Request, who: Who) -> JSONResponse:
    """``{"signal": "outcome_known" | "task_complete" | "release"}``; only the submitting principal."""
    broker = _broker(request)
    try:
        doc = loads_strict(await request.body())
    except AskgateError as exc:
        return _from_askgate(exc, 400)
    kind = doc.get("signal") if isinstance(doc, dict) else None
    if kind not in ("outcome_known", "task_complete", "release"):
        return aqp_error(422, "invalid_signal", 'signal must be "outcome_known", "task_complete" or "release"',
                         "/signal")
    record = await find_query(broker, who, query_id)
    if record is None:
        return aqp_error(404, "not_found", "no such query", "/queryId")
    try:
        record = await broker.signal(record.id, kind, who=who)
    except BrokerError as exc:
        return _from_broker(exc)
    state = await lifecycle_state(broker, record, broker.clock())
    return JSONResponse(status_doc(record, state), headers={STATE_HEADER: state})


@router.delete("/aqp/queries/{query_id}")
async def cancel(query_id: str, request: Request, who: Who) -> JSONResponse:
    """The asker withdraws the query: it ends ``cancelled`` (pushed to a push binding)."""
    broker = _broker(request)
    record = await find_query(broker, who, query_id)
    if record is None:
        return aqp_error(404, "not_found", "no such query", "/queryId")
    try:
        record = await broker.withdraw(record.id, who=who)
    except BrokerError as exc:
        return _from_broker(exc)
    state = await lifecycle_state(broker, record, broker.clock())
    return JSONResponse(status_doc(record, state), headers={STATE_HEADER: state})
