"""The HTTP API (FastAPI): a thin edge over the broker. See docs/http-api.md.

Bodies are read raw and decoded with :func:`askgate.jsonload.loads_strict` (duplicate keys, NaN and
overflowing numbers are refused), because a dialect document must be validated by its own codec with
its own JSON pointers, not by a pydantic body model. Every error leaves as an RFC 9457 problem document.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import structlog
from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from sse_starlette.sse import EventSourceResponse

from askgate.broker import Broker, BrokerError, Idempotency, body_hash
from askgate.broker.errors import forbidden
from askgate.core.audit import verify_chain
from askgate.core.lifecycle import Routing
from askgate.core.model import Respondent
from askgate.errors import Fault
from askgate.jsonload import loads_strict
from askgate.server import logs, problems
from askgate.server.settings import Settings
from askgate.store import AskQuery, Principal, Store
from askgate.store.jsontext import dumps_bytes
from askgate.store.tokens import ROLES

log = structlog.get_logger("askgate.server")
MAX_BODY = 1024 * 1024


class ViewResponse(JSONResponse):
    """The view as compact JSON (orjson: askgate/store/jsontext.py). The hot endpoints return it directly,
    so FastAPI skips re-encoding the view through ``jsonable_encoder`` (the view is plain JSON data already)."""

    def render(self, content: Any) -> bytes:
        return dumps_bytes(content)
ANY_JSON_BODY = {"requestBody": {"required": True, "content": {"application/json": {"schema": {}}}}}


# ---------------------------------------------------------------------------------------------------
# Authentication
# ---------------------------------------------------------------------------------------------------


class _AuthCache:
    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._items: dict[str, tuple[float, Principal]] = {}

    def get(self, token: str) -> Principal | None:
        hit = self._items.get(token)
        if hit and hit[0] > time.monotonic():
            return hit[1]
        return None

    def put(self, token: str, who: Principal) -> None:
        if len(self._items) > 10000:
            self._items.clear()
        self._items[token] = (time.monotonic() + self.ttl, who)


async def principal(request: Request) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise BrokerError(401, "unauthorized", "a bearer token is required",
                          detail="send Authorization: Bearer <token>")
    token = token.strip()
    cache: _AuthCache = request.app.state.auth_cache
    who = cache.get(token)
    if who is None:
        who = await request.app.state.store.principal_for_token(token)
        if who is None:
            raise BrokerError(401, "unauthorized", "unknown or revoked token")
        if cache.ttl > 0:
            cache.put(token, who)
    return who


Who = Annotated[Principal, Depends(principal)]


def broker_of(request: Request) -> Broker:
    return request.app.state.broker


async def json_body(request: Request) -> Any:
    data = await request.body()
    if len(data) > MAX_BODY:
        raise BrokerError(413, "too_large", "request body too large", detail=f"at most {MAX_BODY} bytes")
    return loads_strict(data)  # AskgateError(code="not_json") -> 400 problem


def idempotency_of(request: Request, body: bytes) -> Idempotency | None:
    key = request.headers.get("idempotency-key")
    if key is None:
        return None
    if not key or len(key) > 256:
        raise BrokerError(400, "invalid_idempotency_key", "Idempotency-Key must be 1-256 characters")
    query = "&".join(sorted(f"{k}={v}" for k, v in request.query_params.multi_items()))
    return Idempotency(key, body_hash(request.method, request.url.path, query, body))


# ---------------------------------------------------------------------------------------------------
# The app
# ---------------------------------------------------------------------------------------------------


def _warm_a2ui() -> None:
    from askgate.a2ui.catalog import A2uiCatalog

    for version in ("0.8", "0.9"):
        A2uiCatalog.basic(version).validator()


def create_app(settings: Settings | None = None, *, store: Store | None = None,
               broker: Broker | None = None) -> FastAPI:
    """The askgate HTTP app. It opens (and migrates) the store and starts a broker on start-up, unless one
    is handed in: ``broker`` already started by the caller (``askgate serve`` starts it first, so deadlines
    that fell due while askgate was down are settled before the HTTP edges are even imported), or ``store``.
    Whatever is handed in is the caller's to stop."""
    settings = settings or Settings.from_env()
    logs.configure(settings.log_level)
    given = broker

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        st = given.store if given is not None else (
            store or await Store.open(settings.db_url, secret_key=settings.secret_key,
                                      sqlite_synchronous=settings.sqlite_synchronous))
        if given is None:
            from askgate.server.wire import make_broker

            running = make_broker(settings, st)
            await running.start()
        else:
            running = given
        app.state.store, app.state.broker = st, running
        log.info("askgate_started", backend=st.backend)
        # Build the A2UI catalogs now rather than on the first inbox page (~1.5 s of schema generation).
        warm = asyncio.create_task(asyncio.to_thread(_warm_a2ui))
        try:
            yield
        finally:
            await asyncio.gather(warm, return_exceptions=True)
            if given is None:
                await running.stop()
                if store is None:
                    await st.close()

    from askgate.server.hot import HotFastAPI

    # HotFastAPI: create/answer served in front of the middleware stack (askgate/server/hot.py)
    app = HotFastAPI(title="askgate", version="0.1.0", lifespan=lifespan,
                  description="One broker for every way an AI agent stops to ask. See docs/http-api.md.")
    app.state.settings = settings
    app.state.auth_cache = _AuthCache(settings.auth_cache_seconds)
    problems.install(app)
    app.state.authenticate = principal  # also what HotFastAPI authenticates with
    app.add_middleware(problems.CrashGuard)  # outermost of the user middleware
    _routes(app, settings)
    from askgate.server.aqp_endpoint import router as aqp_router

    app.include_router(aqp_router)  # AQP on the wire (askgate/server/aqp_endpoint.py)
    from askgate.server.acs_endpoint import router as acs_router

    app.include_router(acs_router)  # ACS JSON-RPC at /acs (askgate/server/acs_endpoint.py)
    from askgate.server.a2a import mount_a2a

    mount_a2a(app)  # the A2A agent: /.well-known/agent-card.json, /a2a (askgate/server/a2a)
    from askgate.server.mcp_endpoint import mount_mcp

    mount_mcp(app)  # MCP (streamable HTTP) at /mcp: ask_human, request_approval, answer_asks (askgate/server/mcp_endpoint.py)
    from askgate.server.inbox import mount_inbox

    mount_inbox(app)  # the web inbox at / (askgate/server/inbox)
    return app


def _routes(app: FastAPI, settings: Settings) -> None:  # noqa: C901 - one place that lists every endpoint
    @app.get("/healthz", tags=["meta"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/me", tags=["meta"])
    async def me(who: Who) -> dict[str, str]:
        return {"principal": who.id, "role": who.role}

    # ---- asks ------------------------------------------------------------------------------------

    @app.post("/v1/asks", status_code=201, tags=["asks"], openapi_extra=ANY_JSON_BODY)
    async def create_ask(
        request: Request, who: Who,
        dialect: Annotated[str | None, Query(description="a2a-elicitation, mcp-elicitation, aqp, acs or canonical; "
                                             "omitted: detected from the body")] = None,
        respondent: Annotated[list[str] | None, Query(description="respondent id (repeatable)")] = None,
        respondent_kind: Annotated[str, Query(pattern="^(human|agent|service)$")] = "human",
        rule: Annotated[str | None, Query(pattern="^(first|all|quorum|deny_any)$")] = None,
        quorum: Annotated[int | None, Query(ge=1)] = None,
        routing: Annotated[str | None, Query(description="routing as JSON (respondents, rule, quorum, escalation)")] = None,
        timeout: Annotated[float | None, Query(gt=0, description="the caller's own deadline, seconds")] = None,
        binding: Annotated[str | None, Query(description="ACS binding context as JSON")] = None,
    ) -> JSONResponse:
        if who.role not in ("asker", "admin"):
            raise forbidden("only an asker or an admin may create asks")
        raw = await request.body()
        doc = await json_body(request)
        route = _routing(routing, respondent, respondent_kind, rule, quorum)
        bind = _json_param(binding, "binding") if binding is not None else None
        broker = broker_of(request)
        created = await broker.create(doc, asker=who, dialect=dialect, binding=bind, routing=route,
                                      timeout_seconds=timeout, idempotency=idempotency_of(request, raw))
        body = await broker.view(created.record)
        headers = {"Location": f"/v1/asks/{created.record.id}"}
        if not created.created:
            headers["Idempotent-Replayed"] = "true"
        return ViewResponse(body, status_code=201, headers=headers)

    @app.get("/v1/asks", tags=["asks"])
    async def list_asks(
        request: Request, who: Who,
        state: str | None = None, dialect: str | None = None, asker: str | None = None,
        respondent: str | None = None, session_id: str | None = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 50, cursor: str | None = None,
    ) -> dict[str, Any]:
        broker = broker_of(request)
        try:
            page = await broker.list_for(who, AskQuery(state=state, dialect=dialect, asker=asker, respondent=respondent,
                                                       session_id=session_id, limit=limit, cursor=cursor))
        except ValueError:
            raise BrokerError(422, "invalid_parameters", "invalid cursor",
                              faults=[Fault("/cursor", "malformed cursor", "format")]) from None
        from askgate.broker import records

        now = broker.clock()
        return {"items": [records.view(records.from_row(r), now=now) for r in page.items],
                "next_cursor": page.next_cursor}

    @app.get("/v1/asks/{ask_id}", tags=["asks"])
    async def get_ask(ask_id: str, request: Request, who: Who) -> dict[str, Any]:
        broker = broker_of(request)
        return ViewResponse(await broker.view(await broker.get_for(ask_id, who)))  # type: ignore[return-value]

    @app.post("/v1/asks/{ask_id}/answer", tags=["asks"], openapi_extra=ANY_JSON_BODY)
    async def answer(ask_id: str, request: Request, who: Who) -> dict[str, Any]:
        raw = await request.body()
        doc = await json_body(request)
        broker = broker_of(request)
        record = await broker.answer(ask_id, doc, who=who, idempotency=idempotency_of(request, raw))
        return ViewResponse(await broker.view(record))  # type: ignore[return-value]

    app.state.hot_endpoints = {"create": create_ask, "answer": answer}  # called by askgate/server/hot.py too

    @app.post("/v1/asks/{ask_id}/withdraw", tags=["asks"])
    async def withdraw(ask_id: str, request: Request, who: Who) -> dict[str, Any]:
        broker = broker_of(request)
        return await broker.view(await broker.withdraw(ask_id, who=who))

    @app.post("/v1/asks/{ask_id}/signal", tags=["asks"], openapi_extra=ANY_JSON_BODY)
    async def signal(ask_id: str, request: Request, who: Who) -> dict[str, Any]:
        doc = await json_body(request)
        kind = doc.get("signal") if isinstance(doc, dict) else None
        if not isinstance(kind, str):
            raise BrokerError(422, "invalid_request", "signal required",
                              faults=[Fault("/signal", "signal is required", "required")])
        broker = broker_of(request)
        return await broker.view(await broker.signal(ask_id, kind, who=who))

    @app.post("/v1/asks/{ask_id}/consent", tags=["asks"], openapi_extra=ANY_JSON_BODY)
    async def consent(ask_id: str, request: Request, who: Who) -> dict[str, Any]:
        doc = await json_body(request)
        granted = doc.get("granted") if isinstance(doc, dict) else None
        if not isinstance(granted, bool):
            raise BrokerError(422, "invalid_request", "granted must be true or false",
                              faults=[Fault("/granted", "granted must be true or false", "type")])
        broker = broker_of(request)
        return await broker.view(await broker.consent(ask_id, granted, who=who))

    @app.get("/v1/asks/{ask_id}/wait", tags=["asks"])
    async def wait(ask_id: str, request: Request, who: Who,
                   timeout: Annotated[float, Query(ge=0)] = 30.0) -> dict[str, Any]:
        broker = broker_of(request)
        record = await broker.wait(ask_id, who, min(timeout, settings.max_wait_seconds))
        return ViewResponse(await broker.view(record))  # type: ignore[return-value]

    @app.get("/v1/asks/{ask_id}/events", tags=["asks"], response_class=EventSourceResponse)
    async def events(ask_id: str, request: Request, who: Who) -> EventSourceResponse:
        broker = broker_of(request)
        await broker.get_for(ask_id, who)  # 404 before the stream starts

        async def stream() -> AsyncIterator[dict[str, Any]]:
            async for record in broker.changes(ask_id, who):
                if record is None:
                    yield {"comment": "keep-alive"}
                    continue
                data = json.dumps(await broker.view(record))
                yield {"event": "outcome" if record.terminal else "state", "id": str(record.version), "data": data}

        return EventSourceResponse(stream(), ping=15)

    @app.post("/v1/asks/{ask_id}/callbacks", status_code=201, tags=["asks"], openapi_extra=ANY_JSON_BODY)
    async def add_callback(ask_id: str, request: Request, who: Who) -> dict[str, Any]:
        doc = await json_body(request)
        url = doc.get("url") if isinstance(doc, dict) else None
        cb_id = await broker_of(request).add_callback(ask_id, url, who=who)
        return {"id": cb_id, "ask_id": ask_id, "url": url}

    # ---- audit, sessions, consent ----------------------------------------------------------------

    @app.get("/v1/asks/{ask_id}/audit", tags=["audit"])
    async def ask_audit(ask_id: str, request: Request, who: Who) -> dict[str, Any]:
        broker = broker_of(request)
        await broker.get_for(ask_id, who)
        return _chain("ask", ask_id, await broker.store.audit_chain("ask", ask_id))

    @app.get("/v1/sessions/{session_id}/audit", tags=["audit"])
    async def session_audit(session_id: str, request: Request, who: Who) -> dict[str, Any]:
        broker = broker_of(request)
        await _session_access(broker, session_id, who)
        return _chain("session", session_id, await broker.store.audit_chain("session", session_id))

    @app.get("/v1/sessions/{session_id}/intent", tags=["audit"])
    async def session_intent(session_id: str, request: Request, who: Who) -> dict[str, Any]:
        broker = broker_of(request)
        await _session_access(broker, session_id, who)
        return {"session_id": session_id, "capabilities": await broker.store.get_intent(session_id)}

    @app.get("/v1/consents", tags=["consent"])
    async def list_consents(request: Request, who: Who, respondent: str | None = None) -> dict[str, Any]:
        if who.role != "admin":
            if respondent is not None and respondent != who.id:
                raise forbidden("you may list only your own consent decisions")
            respondent = who.id
        grants = await broker_of(request).store.list_consents(respondent)
        return {"items": [{"respondent": g.respondent_id, "scope": g.scope, "granted": g.granted,
                           "decided_at": g.decided_at.isoformat().replace("+00:00", "Z"), "ask_id": g.ask_id}
                          for g in grants]}

    @app.delete("/v1/consents", tags=["consent"])
    async def revoke_consent(request: Request, who: Who, scope: str, respondent: str | None = None) -> dict[str, Any]:
        respondent = respondent or who.id
        if who.role != "admin" and respondent != who.id:
            raise forbidden("you may revoke only your own consent decisions")
        async with broker_of(request).store.write() as tx:
            found = await tx.revoke_consent(respondent, scope)
        if not found:
            raise BrokerError(404, "not_found", "no such consent decision")
        return {"respondent": respondent, "scope": scope, "revoked": True}

    # ---- tokens ----------------------------------------------------------------------------------

    @app.post("/v1/tokens", status_code=201, tags=["admin"], openapi_extra=ANY_JSON_BODY)
    async def create_token(request: Request, who: Who) -> dict[str, Any]:
        if who.role != "admin":
            raise forbidden("only an admin may create tokens")
        doc = await json_body(request)
        faults = []
        if not isinstance(doc, dict):
            faults.append(Fault("", "body must be an object", "type"))
            doc = {}
        pid, role = doc.get("principal"), doc.get("role")
        if not isinstance(pid, str) or not pid or len(pid) > 256:
            faults.append(Fault("/principal", "principal must be a string of 1-256 characters", "type"))
        if role not in ROLES:
            faults.append(Fault("/role", f"role must be one of {', '.join(ROLES)}", "enum"))
        if faults:
            raise BrokerError(422, "invalid_request", "invalid token request", faults=faults)
        try:
            token = await broker_of(request).store.create_token(pid, role)
        except ValueError as exc:
            raise BrokerError(409, "conflict", str(exc)) from None
        return {"principal": pid, "role": role, "token": token}


def _routing(raw: str | None, respondents: list[str] | None, kind: str, rule: str | None,
             quorum: int | None) -> Routing | None:
    try:
        if raw is not None:
            data = _json_param(raw, "routing")
            if not isinstance(data, dict):
                raise BrokerError(422, "invalid_parameters", "routing must be a JSON object",
                                  faults=[Fault("/routing", "routing must be a JSON object", "type")])
            return Routing.from_json(data)
        if not respondents:
            return None
        people = tuple(Respondent(kind=kind, id=r) for r in respondents)  # type: ignore[arg-type]
        return Routing(respondents=people, rule=rule or "first", quorum=quorum)  # type: ignore[arg-type]
    except (ValueError, TypeError, KeyError, ValidationError) as exc:
        if isinstance(exc, BrokerError):
            raise
        msg = str(exc).splitlines()[0] if str(exc) else "invalid routing"
        raise BrokerError(422, "invalid_parameters", "invalid routing", faults=[Fault("/routing", msg, "routing")]) from None


def _json_param(raw: str, name: str) -> Any:
    try:
        return loads_strict(raw)
    except Exception:  # noqa: BLE001 - AskgateError(not_json)
        raise BrokerError(400, "not_json", f"query parameter {name} is not JSON",
                          faults=[Fault(f"/{name}", f"{name} must be JSON", "not_json")]) from None


def _chain(kind: str, chain_id: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    v = verify_chain(entries)
    return {"chain": kind, "id": chain_id, "length": len(entries), "entries": entries,
            "verification": {"ok": v.ok, "first_bad": v.first_bad, "reason": v.reason, "head": v.head}}


async def _session_access(broker: Broker, session_id: str, who: Principal) -> None:
    if who.role == "admin":
        return
    page = await broker.list_for(who, AskQuery(session_id=session_id, limit=1))
    if not page.items:
        raise BrokerError(404, "not_found", "no such session")


# re-exported for uvicorn's --factory style use
def app_from_env() -> FastAPI:
    return create_app(Settings.from_env())


__all__ = ["create_app", "app_from_env"]
