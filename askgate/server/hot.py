"""A short way in for the two busiest requests: create an ask, answer an ask.

Under load the broker spent a fifth of its CPU in Starlette's router, FastAPI's request/response wrapper
and its dependency and parameter solving before the endpoint ran, and a few per cent more in the layers
every request crosses first (FastAPI's error, telemetry and body-limit middleware). :class:`HotFastAPI`
recognises ``POST /v1/asks`` and ``POST /v1/asks/{ask_id}/answer`` before any of that and calls the *same
endpoint functions* the FastAPI routes call (so every check, the idempotency hash, the view and the
response are the same code), authenticating with the same function as the ``Who`` dependency. Errors go
to the app's own exception handlers (found by the exception's MRO, as Starlette does), so problems are
the same RFC 9457 documents; anything unexpected becomes the same bare 500 as
:class:`~askgate.server.problems.CrashGuard` makes (and is logged the same way).

It takes only what it can parse exactly as FastAPI would: a create whose query has nothing but
``respondent`` (any number, none blank) and at most one non-blank ``dialect``; every other create (a
``timeout``, ``rule``, ``routing``... that FastAPI validates against the route's declared constraints)
goes down the normal FastAPI path untouched, as does every other request. The routes stay declared in
FastAPI, so OpenAPI is unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from askgate.server import logs
from askgate.server.problems import log, log_crash, send_internal_error

ANSWER_PREFIX = "/v1/asks/"
ANSWER_SUFFIX = "/answer"
CREATE_PARAMS = frozenset({"respondent", "dialect"})


class HotPath:
    """Recognises the two busy requests and serves them; the app must have put its endpoints into
    ``app.state.hot_endpoints`` and its authentication function into ``app.state.authenticate``."""

    def match(self, scope: Scope) -> tuple[str, dict[str, Any]] | None:
        """(which endpoint, its parameters) when this request is one the hot path serves exactly."""
        if scope["method"] != "POST" or scope.get("root_path"):
            return None
        path: str = scope["path"]
        if path == "/v1/asks":
            params = _create_params(scope.get("query_string", b""))
            return ("create", params) if params is not None else None
        if path.startswith(ANSWER_PREFIX) and path.endswith(ANSWER_SUFFIX):
            ask_id = path[len(ANSWER_PREFIX):-len(ANSWER_SUFFIX)]
            if ask_id and "/" not in ask_id:  # what the route's {ask_id} ([^/]+) matches
                return "answer", {"ask_id": ask_id}
        return None

    async def _run(self, app: Any, scope: Scope, receive: Receive, send: Send, which: str,
                   params: dict[str, Any]) -> None:
        """Serve one request; guarded as CrashGuard guards the rest (without wrapping ``send``: nothing is
        sent before the response is built)."""
        t0 = time.perf_counter()
        request = Request(scope, receive, send)
        try:
            try:
                who = await app.state.authenticate(request)
                endpoint: Callable[..., Awaitable[Any]] = app.state.hot_endpoints[which]
                response = await endpoint(request=request, who=who, **params)
            except Exception as exc:  # noqa: BLE001 - handled exactly as Starlette's ExceptionMiddleware would
                handler = _handler_for(app, exc)
                if handler is None:
                    raise
                response = await handler(request, exc)
        except Exception as exc:  # noqa: BLE001 - last line of defence, as in CrashGuard
            log_crash(exc, scope)
            await send_internal_error(send)
            return
        try:
            await response(scope, receive, send)
        except Exception as exc:  # noqa: BLE001 - the response may have started: log it, as CrashGuard does
            log_crash(exc, scope)
            return
        if logs.debug_enabled():
            log.debug("request", method=scope.get("method"), path=scope.get("path"), status=response.status_code,
                      ms=round((time.perf_counter() - t0) * 1000, 2))


class HotFastAPI(FastAPI):
    """FastAPI with :class:`HotPath` in front of its middleware stack (``hot_path = None`` turns it off)."""

    hot_path: HotPath | None = HotPath()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hot = self.hot_path
        if hot is not None and scope["type"] == "http":
            found = hot.match(scope)
            if found is not None:
                scope["app"] = self  # what Starlette.__call__ sets; Request.app and the handlers read it
                which, params = found
                await hot._run(self, scope, receive, send, which, params)
                return
        await super().__call__(scope, receive, send)


def _create_params(query_string: bytes) -> dict[str, Any] | None:
    """``respondent``/``dialect`` as FastAPI would bind them, or None when the request needs FastAPI."""
    if not query_string:
        return {"respondent": None, "dialect": None}
    respondents: list[str] = []
    dialect: str | None = None
    for key, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if key not in CREATE_PARAMS or not value:
            return None
        if key == "respondent":
            respondents.append(value)
        elif dialect is not None:
            return None  # a repeated scalar: leave FastAPI's own rule to decide
        else:
            dialect = value
    return {"respondent": respondents or None, "dialect": dialect}


def _handler_for(app: Any, exc: Exception) -> Any:
    handlers = app.exception_handlers
    for cls in type(exc).__mro__:
        if cls in handlers:
            return handlers[cls]
    return None
