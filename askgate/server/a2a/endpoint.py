"""Mount the A2A agent on the askgate FastAPI app (one call from ``create_app``).

The SDK's REST and JSON-RPC routes live in a Starlette sub-app at ``/a2a`` behind a bearer-token
``AuthenticationMiddleware``; the Agent Card is public. The app's lifespan is wrapped so the A2A
request handler drains on shutdown and the A2A respondent channel (askgate/channels/a2a_respondent.py)
joins the broker once it runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse

from askgate.protocols.a2a_carriage import EXTENSION_URI
from askgate.server.a2a.auth import BearerBackend, ContextBuilder, auth_error
from askgate.server.a2a.card import REST_PATH, agent_card
from askgate.server.a2a.executor import AskgateExecutor
from askgate.server.a2a.handler import AskgateRequestHandler
from askgate.server.a2a.rawbody import RawMessageMiddleware

#: A task parked in input-required leaves memory after this long; a later message reloads it from the store.
INTERRUPTED_RELEASE_SECONDS = 300.0


def card_json(base_url: str) -> dict[str, Any]:
    """The card as JSON; proto3 drops ``false``, so the extension's ``required: false`` is written back."""
    data = agent_card_to_dict(agent_card(base_url))
    for ext in data.get("capabilities", {}).get("extensions", []):
        if ext.get("uri") == EXTENSION_URI:
            ext["required"] = False
    return data


def mount_a2a(app: FastAPI) -> None:
    executor = AskgateExecutor(app)
    handler = AskgateRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(),
                                    agent_card=agent_card("http://askgate.invalid"),
                                    interrupted_task_timeout=INTERRUPTED_RELEASE_SECONDS)
    builder = ContextBuilder()
    routes = [*create_jsonrpc_routes(handler, rpc_url="/rpc", context_builder=builder),
              *create_rest_routes(handler, context_builder=builder)]
    sub = Starlette(routes=routes, middleware=[
        Middleware(AuthenticationMiddleware, backend=BearerBackend(app), on_error=auth_error),
        Middleware(RawMessageMiddleware)])
    app.mount(REST_PATH, sub, name="a2a")

    async def card(request: Request) -> JSONResponse:
        return JSONResponse(card_json(str(request.base_url)), headers={"Cache-Control": "max-age=300"})

    app.add_api_route(AGENT_CARD_WELL_KNOWN_PATH, card, methods=["GET"], tags=["a2a"], include_in_schema=True)
    app.state.a2a_handler = handler
    app.state.a2a_executor = executor

    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        async with inner(a) as state:
            plugins: list[Any] = []
            broker = getattr(a.state, "broker", None)
            if broker is not None:
                from askgate.channels.a2a_respondent import A2ARespondents
                from askgate.server.a2a.sessions import A2ASessions

                plugins = [A2ARespondents.for_app(a), A2ASessions(handler, executor)]
                for plugin in plugins:
                    broker.plugins.append(plugin)
                    await plugin.start(broker)
            try:
                yield state
            finally:
                for plugin in plugins:
                    await plugin.stop()
                await handler.aclose()

    app.router.lifespan_context = lifespan
