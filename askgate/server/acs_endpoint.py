"""ACS on the wire: one JSON-RPC 2.0 endpoint, ``POST /acs`` (protocols.md §4, askgate's own legs §4.8).

Methods:

- ``ask/submit`` — a Guardian (or an Observed Agent), authenticated by its askgate token (role asker),
  hands over an ASK: ``params = {"ask": <ask_details | the Guardian's ask result | its JSON-RPC
  envelope>, "binding": {session_id, agent_id, step_id, request_id, method, request_hash, reasoning}?,
  "wait": true}``. With ``wait`` (the default) the request blocks until the ASK is decided — by the
  approver, or by ``timeout_disposition`` when ``timeout_seconds`` pass — and the response *is* the
  resolution envelope of §4.8 (``type: final``, ``decision`` allow|deny, ``reasoning``,
  ``reason_codes``, ``policy_data.askgate`` with the approver's identity, ``decided_by``, any
  ``selected_option`` and granted ``intent_extension``, and ``chain_hash``), carrying the caller's
  JSON-RPC ``id``. With ``wait: false`` the result is ``{"ask_id", "state"}`` at once.
- ``ask/get`` — ``{"ask_id", "wait_seconds"?}``: the resolution once decided, else ``{"ask_id", "state"}``.
- ``ask/answer`` — the approver's decision, ``{"ask_id", "decision": {decision, reasoning,
  selected_option?, intent_extension?}}`` (an ACS-shaped result; an envelope is accepted too).

Approver authentication (§4.4) always happens, whether or not the ASK names ``approver.auth``:

- ``mtls``: the client certificate (verified by the TLS layer; see :mod:`askgate.server.tls`) must carry
  an identity (SAN or subject CN) equal to ``approver.id`` or mapped to it by
  ``Settings.approver_identities`` (``("mtls:<identity>", "<approver id>")``). A bearer token alone is
  refused, here and on ``/v1`` (the broker checks it).
- ``bearer``, and any approver without ``auth``: an askgate API token whose principal is ``approver.id``
  or is mapped to it (``("principal:<principal>", "<approver id>")``). For agent and service approvers
  without ``auth`` a mapped client certificate is accepted as well. Humans sign in through the inbox
  or the API with their own token the same way.

An approver answering ``ask`` gets ``-32003`` (CAPABILITY_NOT_NEGOTIATED); the refusal is audited and the
ASK stays pending. Other errors: ``-32700`` not JSON, ``-32600`` not a JSON-RPC request, ``-32601``
unknown method, ``-32602`` invalid params (faults in ``error.data.faults``), ``-32000``
(SESSION_REFUSED) unauthenticated or not the approver, ``-32005`` (REPLAY_DETECTED) an answer to an ASK
that is already decided (the resolution is in ``error.data``), or a different ASK submitted under a
``request_id`` already used (the same ASK again is the same ask: a retried submission gets its resolution). HTTP status is 200 for every JSON-RPC
response.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from askgate.broker import Broker, BrokerError, Idempotency, body_hash
from askgate.broker.records import _ACS_NS
from askgate.core.lifecycle import AskRecord, AuditEvent
from askgate.core.model import Dialect
from askgate.errors import AskgateError
from askgate.jsonload import loads_strict
from askgate.protocols import acs
from askgate.server.tls import client_identities
from askgate.store import Principal

router = APIRouter(tags=["acs"])
GRACE_SECONDS = 5.0  # how long past the ASK's deadline a blocked submit waits for the scheduler to settle it


class RpcError(Exception):
    def __init__(self, name: str, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.name, self.message, self.data = name, message, data


def _broker(request: Request) -> Broker:
    return request.app.state.broker


async def _bearer(request: Request) -> Principal | None:
    """The askgate principal of the bearer token, None without one; RpcError for a bad token."""
    if not request.headers.get("authorization"):
        return None
    from askgate.server.app import principal

    try:
        return await principal(request)
    except BrokerError:
        raise RpcError("SESSION_REFUSED", "unknown or revoked token") from None


def _identity_map(request: Request) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for identity, approver in request.app.state.settings.approver_identities:
        out.setdefault(identity, set()).add(approver)
    return out


async def authenticate_approver(request: Request, record: AskRecord) -> tuple[Principal, str]:
    """The approver ``record`` waits for, if the caller proves to be it (§4.4); else RpcError.

    Returns the principal to answer as (``approver.id``, role respondent) and how it was proven.
    """
    approver = record.ask.respondent
    if approver is None:
        raise RpcError("INVALID_PARAMS", "this ask has no ACS approver")
    mapping = _identity_map(request)

    def maps(identity: str, raw: str) -> bool:
        return raw == approver.id or approver.id in mapping.get(identity, set())

    method = approver.auth_method
    if method in (None, "mtls") and not (method is None and approver.kind == "human"):
        for ident in client_identities(request):
            if maps("mtls:" + ident, ident):
                return Principal(approver.id, "respondent"), "mtls"
        if method == "mtls":
            raise RpcError("SESSION_REFUSED", "this approver must present a client certificate that maps to it")
    who = await _bearer(request)
    if who is not None and maps("principal:" + who.id, who.id):
        return Principal(approver.id, "respondent"), "bearer"
    raise RpcError("SESSION_REFUSED", "the caller is not authenticated as this ask's approver")


async def resolution(broker: Broker, record: AskRecord, rpc_id: Any) -> dict[str, Any] | None:
    """The §4.8 resolution envelope of a decided ASK, with the caller's JSON-RPC id (None while pending)."""
    from askgate.core.lifecycle import final_answer

    outcome = final_answer(record)
    if outcome is None:
        return None
    head = await broker.chain_head(record)
    try:
        return acs.render_answer(record.ask, outcome, request_id=str(uuid.uuid5(_ACS_NS, record.id)),
                                 jsonrpc_id=rpc_id, chain_hash=head)
    except AskgateError:  # withdrawn: ACS has no "cancelled"
        raise RpcError("SESSION_REFUSED", "the ask was withdrawn by its asker; it has no decision") from None


def _pending(record: AskRecord) -> dict[str, Any]:
    return {"ask_id": record.id, "state": record.state.value}


def _params(doc: dict[str, Any]) -> dict[str, Any]:
    params = doc.get("params", {})
    if not isinstance(params, dict):
        raise RpcError("INVALID_PARAMS", "params must be an object")
    return params


async def _own_ask(broker: Broker, ask_id: Any, who: Principal) -> AskRecord:
    if not isinstance(ask_id, str):
        raise RpcError("INVALID_PARAMS", "ask_id must be a string")
    try:
        record = await broker.get_for(ask_id, who)
    except BrokerError:
        raise RpcError("INVALID_PARAMS", "no such ask") from None
    if record.ask.dialect != Dialect.ACS:
        raise RpcError("INVALID_PARAMS", "not an ACS ask")
    return record


async def _submit(request: Request, params: dict[str, Any], rpc_id: Any) -> dict[str, Any]:
    who = await _bearer(request)
    if who is None or who.role not in ("asker", "admin"):
        raise RpcError("SESSION_REFUSED", "ask/submit needs an askgate asker token")
    if "ask" not in params:
        raise RpcError("INVALID_PARAMS", 'params.ask is required (ask_details, an ask result or its envelope)')
    broker = _broker(request)
    try:
        created = await broker.create(params["ask"], asker=who, dialect="acs", binding=params.get("binding"),
                                      idempotency=_idempotency(params))
    except BrokerError as exc:
        if exc.code == "idempotency_conflict":
            raise RpcError("REPLAY_DETECTED", "this request_id was already used for a different ASK") from None
        name = "UNSUPPORTED_VERSION" if exc.code == "unsupported_version" else "INVALID_PARAMS"
        raise RpcError(name, exc.title, {"faults": [f.as_dict() for f in exc.faults]}) from None
    record = created.record
    if params.get("wait", True) is False:
        return {"jsonrpc": "2.0", "id": rpc_id, "result": _pending(record)}
    return await _await_resolution(broker, record, who, rpc_id, None)


def _idempotency(params: dict[str, Any]) -> Idempotency | None:
    """The ASK's ``request_id`` (binding, else the Guardian's result) keys a retried submission: the same
    ASK again is the same ask (its resolution once decided); a different ASK under it is a replay."""
    ask, binding = params.get("ask"), params.get("binding")
    rid = binding.get("request_id") if isinstance(binding, dict) else None
    if rid is None and isinstance(ask, dict):
        result = ask.get("result") if isinstance(ask.get("result"), dict) else ask
        rid = result.get("request_id")
    if not isinstance(rid, str) or not rid or len(rid) > 200:
        return None
    return Idempotency("acs:" + rid, body_hash(json.dumps([ask, binding], sort_keys=True, separators=(",", ":"),
                                                          ensure_ascii=False)))


async def _await_resolution(broker: Broker, record: AskRecord, who: Principal, rpc_id: Any,
                            wait_seconds: float | None) -> dict[str, Any]:
    if not record.terminal:
        if wait_seconds is None:
            left = (record.deadline_at - broker.clock()).total_seconds() if record.deadline_at else 3600.0
            wait_seconds = max(left, 0.0) + GRACE_SECONDS
        record = await broker.wait(record.id, who, wait_seconds)
    envelope = await resolution(broker, record, rpc_id)
    if envelope is None:
        return {"jsonrpc": "2.0", "id": rpc_id, "result": _pending(record)}
    return envelope


async def _get(request: Request, params: dict[str, Any], rpc_id: Any) -> dict[str, Any]:
    who = await _bearer(request)
    if who is None:
        raise RpcError("SESSION_REFUSED", "ask/get needs an askgate token")
    broker = _broker(request)
    record = await _own_ask(broker, params.get("ask_id"), who)
    wait = params.get("wait_seconds", 0)
    if not isinstance(wait, (int, float)) or isinstance(wait, bool) or wait < 0:
        raise RpcError("INVALID_PARAMS", "wait_seconds must be a non-negative number")
    return await _await_resolution(broker, record, who, rpc_id, min(float(wait), 300.0))


async def _answer(request: Request, params: dict[str, Any], rpc_id: Any) -> dict[str, Any]:
    broker = _broker(request)
    ask_id = params.get("ask_id")
    record = await broker.get(ask_id) if isinstance(ask_id, str) else None
    if record is None or record.ask.dialect != Dialect.ACS:
        raise RpcError("INVALID_PARAMS", "no such ACS ask")
    who, how = await authenticate_approver(request, record)
    if "decision" not in params:
        raise RpcError("INVALID_PARAMS", "params.decision is required")
    try:
        record = await broker.answer(record.id, params["decision"], who=who, authenticated_by=how)
    except BrokerError as exc:
        data = {"faults": [f.as_dict() for f in exc.faults]}
        if exc.code == "capability_not_negotiated":
            await _audit_refusal(broker, record, who, "an approver may not answer ask (ACS is single-hop)")
            raise RpcError("CAPABILITY_NOT_NEGOTIATED", "an approver must decide allow or deny, never ask",
                           data) from None
        if exc.status == 409:
            current = await broker.get(record.id)
            done = await resolution(broker, current, rpc_id) if current is not None else None
            raise RpcError("REPLAY_DETECTED", "this ask is already decided",
                           {"resolution": done["result"] if done else None}) from None
        if exc.status == 403:
            raise RpcError("SESSION_REFUSED", exc.detail or exc.title) from None
        raise RpcError("INVALID_PARAMS", exc.title, data) from None
    envelope = await resolution(broker, record, rpc_id)
    return envelope if envelope is not None else {"jsonrpc": "2.0", "id": rpc_id, "result": _pending(record)}


async def _audit_refusal(broker: Broker, record: AskRecord, who: Principal, reason: str) -> None:
    now = broker.clock()
    event = AuditEvent(ask_id=record.id, step_type="refused", at=now, version=record.version,
                       data={"reason": reason, "by": who.id, "rule": "acs.approver-ask", "error_code": -32003},
                       session_id=record.ask.session_id)
    async with broker.store.write(now) as tx:
        await broker._append(tx, [event], refused=True)


METHODS = {"ask/submit": _submit, "ask/get": _get, "ask/answer": _answer}


@router.post("/acs", openapi_extra={"requestBody": {"required": True,
                                                     "content": {"application/json": {"schema": {}}}}})
async def acs_rpc(request: Request) -> Response:
    """The ACS JSON-RPC 2.0 endpoint (see the module docstring for methods and errors)."""
    rpc_id: Any = None
    try:
        try:
            doc = loads_strict(await request.body())
        except AskgateError:
            raise RpcError("PARSE_ERROR", "the body is not strict JSON") from None
        if not isinstance(doc, dict) or doc.get("jsonrpc") != "2.0" or not isinstance(doc.get("method"), str):
            raise RpcError("INVALID_REQUEST", "not a JSON-RPC 2.0 request (a single request object)")
        rpc_id = doc.get("id")
        if rpc_id is not None and (isinstance(rpc_id, bool) or not isinstance(rpc_id, (str, int, float))):
            rpc_id = None
            raise RpcError("INVALID_REQUEST", "id must be a string, a number or null")
        handler = METHODS.get(doc["method"])
        if handler is None:
            raise RpcError("METHOD_NOT_FOUND", f"unknown method {doc['method']!r}; askgate serves "
                           + ", ".join(METHODS))
        body = await handler(request, _params(doc), rpc_id)
        if "id" not in doc:
            return Response(status_code=204)  # a notification gets no response
    except RpcError as exc:
        body = acs.acs_error(exc.name, exc.message, rpc_id, exc.data)
    return JSONResponse(body)
