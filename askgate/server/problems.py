"""RFC 9457 problem documents for every error, and the guard that keeps stack traces out of responses."""

from __future__ import annotations

import json
import time
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from askgate.broker.errors import BrokerError
from askgate.errors import AskgateError, Fault, pointer_join
from askgate.server import logs

PROBLEM_TYPE = "https://askgate.dev/problems/"
MEDIA_TYPE = "application/problem+json"
log = structlog.get_logger("askgate.server")

_TITLES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
           409: "Conflict", 413: "Content Too Large", 415: "Unsupported Media Type", 422: "Unprocessable Content",
           500: "Internal Server Error", 503: "Service Unavailable"}


def problem(status: int, code: str, title: str | None = None, *, detail: str | None = None,
            faults: list[Fault] | None = None, instance: str | None = None, **extra: Any) -> JSONResponse:
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE + code,
        "title": title or _TITLES.get(status, "Error"),
        "status": status,
        "code": code,
    }
    if detail:
        body["detail"] = detail
    if instance:
        body["instance"] = instance
    body["faults"] = [f.as_dict() for f in (faults or [])]
    body.update(extra)
    headers = {"WWW-Authenticate": 'Bearer realm="askgate"'} if status == 401 else None
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


def install(app: FastAPI) -> None:
    @app.exception_handler(BrokerError)
    async def _broker(request: Request, exc: BrokerError) -> JSONResponse:
        return problem(exc.status, exc.code, exc.title, detail=exc.detail, faults=exc.faults,
                       instance=request.url.path, **exc.extra)

    @app.exception_handler(AskgateError)
    async def _askgate(request: Request, exc: AskgateError) -> JSONResponse:
        status = 400 if exc.code == "not_json" else 422
        return problem(status, exc.code, exc.summary, detail=exc.summary, faults=exc.faults,
                       instance=request.url.path)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        faults = []
        for err in exc.errors():
            loc = list(err.get("loc", ()))
            where = loc[0] if loc else ""
            pointer = pointer_join("", *loc[1:]) if where == "body" else pointer_join("", *loc)
            faults.append(Fault(pointer, str(err.get("msg", "invalid")), str(err.get("type", "invalid"))))
        return problem(422, "invalid_parameters", "invalid request parameters", faults=faults,
                       instance=request.url.path)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed", 401: "unauthorized"}.get(exc.status_code, "http_error")
        detail = exc.detail if isinstance(exc.detail, str) else None
        return problem(exc.status_code, code, detail=detail, instance=request.url.path)


class CrashGuard:
    """Outermost ASGI middleware: an unexpected exception becomes a bare 500 problem (logged by type only)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await guarded(self.app, scope, receive, send)


async def guarded(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Run ``app`` for one HTTP request; an exception it lets through becomes a bare 500 problem."""
    started = False
    status = 0
    t0 = time.perf_counter()

    async def guarded_send(message: Any) -> None:
        nonlocal started, status
        if message["type"] == "http.response.start":
            started = True
            status = message["status"]
        await send(message)

    try:
        await app(scope, receive, guarded_send)
        if logs.debug_enabled():
            log.debug("request", method=scope.get("method"), path=scope.get("path"), status=status,
                      ms=round((time.perf_counter() - t0) * 1000, 2))
    except Exception as exc:  # noqa: BLE001 - last line of defence
        log_crash(exc, scope)
        if not started:
            await send_internal_error(send)


def log_crash(exc: Exception, scope: Scope) -> None:
    """An unexpected exception, logged by type only (its message may hold request data)."""
    log.error("unhandled_error", error=type(exc).__name__, path=scope.get("path"))


async def send_internal_error(send: Send) -> None:
    """The bare 500 problem answered for an unexpected exception (nothing of the response sent yet)."""
    body = json.dumps({"type": PROBLEM_TYPE + "internal", "title": "Internal Server Error", "status": 500,
                       "code": "internal", "faults": []}).encode()
    await send({"type": "http.response.start", "status": 500,
                "headers": [(b"content-type", MEDIA_TYPE.encode()),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
