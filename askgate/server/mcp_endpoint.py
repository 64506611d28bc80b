"""askgate as an MCP server (mcp SDK, streamable HTTP at ``/mcp``): tools an agent calls to ask a person,
and a tool that makes the calling MCP session a respondent. See docs/wire.md "MCP".

- ``ask_human`` / ``relay_elicitation``: an MCP-elicitation ask through the broker; the call waits for
  the outcome and returns the ``ElicitResult`` (``action``, ``content``) as structured content. A
  ``mode: "url"`` (or task-augmented) request is refused with JSON-RPC ``-32602``.
- ``request_approval``: an approval ask (allow / deny, options, timeout disposition); returns the decision.
- ``answer_asks``: the asks offered to the calling principal are put to this client with form-mode
  ``elicitation/create`` on the negotiated revision; each ``ElicitResult`` is checked by the codec (a bad
  one is asked again with the faults stated) and recorded through the broker. A client that did not
  declare elicitation gets an immediate error result (askgate/server/mcp_respondent.py).

Authentication uses the SDK's own pieces: Starlette's ``AuthenticationMiddleware`` with the SDK's
``BearerAuthBackend`` over :class:`AskgateTokenVerifier` (askgate API tokens), and ``RequireAuthMiddleware``.
The session manager binds every MCP session to the principal that opened it. It runs inside the
FastAPI lifespan (wrapped here), after the broker has started and before it stops. Results and their
models: askgate/server/mcp_results.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any, Literal

import anyio
import structlog
from fastapi import FastAPI
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import Field, ValidationError
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route

from askgate.broker import Broker, BrokerError
from askgate.core.lifecycle import AskRecord, Routing, final_answer
from askgate.core.model import ApprovalDecision, ApprovalSpec, Ask, Deadline, Dialect, Respondent
from askgate.errors import AskgateError, Fault
from askgate.protocols import mcp_elicitation as codec
from askgate.server.mcp_respondent import answer_offered_asks
from askgate.server.mcp_results import (
    AnswerAsksOutcome,
    ApprovalOutcome,
    ElicitOutcome,
    broker_error,
    tool_error,
    tool_result,
)
from askgate.store import Principal

log = structlog.get_logger("askgate.mcp")

PATH = "/mcp"
#: An ask_human / request_approval call without a timeout waits this long for a person [ours].
DEFAULT_TIMEOUT = 120.0
#: ... and never longer than this (MCP clients time requests out; protocols.md §2.5).
MAX_TIMEOUT = 3600.0
PROGRESS_SECONDS = 10.0


# --------------------------------------------------------------------------------------------------
# Authentication: askgate API tokens through the SDK's bearer backend.
# --------------------------------------------------------------------------------------------------


class AskgateTokenVerifier:
    """The SDK's ``TokenVerifier`` over askgate API tokens: ``client_id`` and ``subject`` are the askgate
    principal, ``scopes`` its role. The session manager compares these to bind sessions to principals."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    async def verify_token(self, token: str) -> AccessToken | None:
        state = self.app.state
        cache = getattr(state, "auth_cache", None)
        who = cache.get(token) if cache is not None else None
        if who is None:
            store = getattr(state, "store", None)
            who = await store.principal_for_token(token) if store is not None else None
            if who is None:
                return None
            if cache is not None and cache.ttl > 0:
                cache.put(token, who)
        return AccessToken(token=token, client_id=who.id, subject=who.id, scopes=[who.role],
                           claims={"role": who.role})


def principal_of(ctx: Context) -> Principal:
    """The askgate principal of the HTTP request that carried this MCP call."""
    request = ctx.request_context.request
    user = request.scope.get("user") if request is not None and hasattr(request, "scope") else None
    if not isinstance(user, AuthenticatedUser):  # pragma: no cover - RequireAuthMiddleware lets nobody else in
        raise MCPError(code=INVALID_PARAMS, message="unauthenticated")
    token = user.access_token
    return Principal(id=token.client_id, role=str((token.claims or {}).get("role", "")))



# --------------------------------------------------------------------------------------------------
# Waiting for an outcome.
# --------------------------------------------------------------------------------------------------


async def _await_outcome(broker: Broker, ask_id: str, who: Principal, ctx: Context, budget: float) -> AskRecord:
    """Wait until the ask is terminal (its deadline settles it), reporting progress to a client that asked
    for it. If the call is cancelled (the client gave up), the ask is withdrawn: nobody waits any more."""
    end = time.monotonic() + budget + 30.0  # the scheduler settles at the deadline; this is a safety net
    started = time.monotonic()
    try:
        while True:
            record = await broker.wait(ask_id, who, min(PROGRESS_SECONDS, max(0.0, end - time.monotonic())))
            if record.terminal:
                return record
            if time.monotonic() >= end:
                return await broker.withdraw(ask_id, who=who)
            with contextlib.suppress(Exception):
                await ctx.report_progress(time.monotonic() - started, budget, "waiting for a person")
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            await broker.withdraw(ask_id, who=who)
        raise


def _budget(timeout_seconds: float | None) -> float:
    return min(float(timeout_seconds) if timeout_seconds else DEFAULT_TIMEOUT, MAX_TIMEOUT)


def _routing(respondent: str | None) -> Routing:
    return Routing(respondents=(Respondent(kind="human", id=respondent),))


def _no_respondent() -> CallToolResult:
    return tool_error("respondent_required", "name the person to ask (respondent: an askgate id); this server has no "
                  "default respondent (ASKGATE_MCP_DEFAULT_RESPONDENT)",
                  [Fault("/respondent", "respondent is required here", "required")])


def _elicit_outcome(record: AskRecord, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = final_answer(record)
    assert answer is not None
    wire = codec.render_answer(record.ask, answer, meta=meta)
    out = {**wire, "ask_id": record.id, "state": record.state.value, "timed_out": record.state.value == "timed_out"}
    if answer.respondent is not None:
        out["respondent"] = answer.respondent.id
    return ElicitOutcome.model_validate(out).model_dump(mode="json", by_alias=True, exclude_none=True)


def _approval_outcome(record: AskRecord) -> dict[str, Any]:
    answer = final_answer(record)
    assert answer is not None
    value = answer.value if isinstance(answer.value, ApprovalDecision) else None
    out: dict[str, Any] = {"ask_id": record.id, "state": record.state.value, "outcome": answer.outcome,
                           "decision": value.decision if value else "deny",
                           "decided_by": value.decided_by if value else "none"}
    if value is not None:
        out.update(selected_option=value.selected_option, reasoning=value.reasoning)
    if answer.respondent is not None:
        out["respondent"] = answer.respondent.id
    return ApprovalOutcome.model_validate(out).model_dump(mode="json", exclude_none=True)


def _may_ask(who: Principal) -> CallToolResult | None:
    if who.role not in ("asker", "admin"):
        return tool_error("forbidden", "only an asker (or an admin) token may create asks")
    return None


# --------------------------------------------------------------------------------------------------
# The server.
# --------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _no_logging_setup() -> Iterator[None]:
    """MCPServer() calls ``logging.basicConfig`` (root at INFO with a rich handler): that would make every
    library log at INFO in askgate's process, httpx's request lines (outbound URLs) included. basicConfig
    does nothing while the root logger has a handler, so one is held for the construction only."""
    root = logging.getLogger()
    guard = logging.NullHandler()
    root.addHandler(guard)
    try:
        yield
    finally:
        root.removeHandler(guard)


def build_server(app: FastAPI) -> MCPServer:
    """The MCP server with askgate's tools, bound to ``app``'s broker (looked up per call)."""
    with _no_logging_setup():
        server: MCPServer = MCPServer(
            "askgate", version="0.1.0",
            instructions="Ask a person (ask_human, request_approval, relay_elicitation), or answer the asks "
                         "offered to you (answer_asks) through elicitation/create.")

    def broker() -> Broker:
        return app.state.broker

    def respondent_or_default(respondent: str | None) -> str | None:
        return respondent or getattr(app.state.settings, "mcp_default_respondent", None)

    async def elicit_through_broker(ctx: Context, doc: Any, respondent: str | None,
                                    timeout_seconds: float | None) -> CallToolResult:
        who = principal_of(ctx)
        refused = _may_ask(who)
        if refused is not None:
            return refused
        version = ctx.protocol_version if ctx.protocol_version in codec.VERSIONS else codec.LATEST
        try:
            ask = codec.parse_request(doc, version)
        except AskgateError as exc:
            if exc.code == "unsupported":  # URL mode, task-augmented: JSON-RPC -32602 (protocols.md §2.4)
                log.info("mcp_elicitation_refused", rule=exc.faults[0].rule if exc.faults else None, asker=who.id)
                raise MCPError(code=INVALID_PARAMS, message=exc.summary,
                               data={"faults": [f.as_dict() for f in exc.faults]}) from None
            return tool_error(exc.code, exc.summary, exc.faults)
        respondent = respondent_or_default(respondent)
        if respondent is None:
            return _no_respondent()
        budget = _budget(timeout_seconds)
        try:
            created = await broker().create_ask(ask, asker=who, routing=_routing(respondent), timeout_seconds=budget)
        except BrokerError as exc:
            return broker_error(exc)
        record = await _await_outcome(broker(), created.record.id, who, ctx, budget)
        return tool_result(_elicit_outcome(record))

    @server.tool(annotations=ToolAnnotations(title="Ask a person", read_only_hint=False, open_world_hint=True))
    async def ask_human(
        message: Annotated[str, Field(description="what to ask the person")],
        requested_schema: Annotated[dict[str, Any], Field(
            description='flat MCP requestedSchema: {"type": "object", "properties": {...}, "required": [...]}')],
        ctx: Context,
        respondent: Annotated[str | None, Field(
            description="askgate id of the person to ask (default: the server's default respondent)")] = None,
        timeout_seconds: Annotated[float | None, Field(gt=0, description="give up after this long (seconds)")] = None,
    ) -> Annotated[CallToolResult, ElicitOutcome]:
        """Ask a person a question with a small form and wait for the answer (an MCP ElicitResult:
        action accept/decline/cancel and the content). A timeout ends as action cancel, timed_out true."""
        return await elicit_through_broker(ctx, {"message": message, "requestedSchema": requested_schema},
                                           respondent, timeout_seconds)

    @server.tool(annotations=ToolAnnotations(title="Relay an elicitation/create request", open_world_hint=True))
    async def relay_elicitation(
        request: Annotated[dict[str, Any], Field(
            description="the elicitation/create params (or the whole JSON-RPC request) another server sent you")],
        ctx: Context,
        respondent: Annotated[str | None, Field(description="askgate id of the person to ask")] = None,
        timeout_seconds: Annotated[float | None, Field(gt=0)] = None,
    ) -> Annotated[CallToolResult, ElicitOutcome]:
        """Put an MCP elicitation/create request you received to a person and return their ElicitResult.
        Form mode only: a URL-mode or task-augmented request is refused with -32602."""
        return await elicit_through_broker(ctx, request, respondent, timeout_seconds)

    @server.tool(annotations=ToolAnnotations(title="Request approval", open_world_hint=True))
    async def request_approval(
        question: Annotated[str, Field(min_length=1, description="what needs approving")],
        ctx: Context,
        options: Annotated[list[str] | None, Field(description="choices; an allow names exactly one")] = None,
        respondent: Annotated[str | None, Field(description="askgate id of the approver")] = None,
        timeout_seconds: Annotated[float | None, Field(gt=0)] = None,
        on_timeout: Annotated[Literal["deny", "allow"], Field(description="the decision if nobody answers")] = "deny",
        details: Annotated[str | None, Field(description="context shown with the question")] = None,
    ) -> Annotated[CallToolResult, ApprovalOutcome]:
        """Ask a person to allow or deny, and wait for the decision. Nobody answering in time gives the
        on_timeout decision (decided_by timeout); anything else that is not an allow is a deny."""
        who = principal_of(ctx)
        refused = _may_ask(who)
        if refused is not None:
            return refused
        respondent = respondent_or_default(respondent)
        if respondent is None:
            return _no_respondent()
        opts = tuple(options or ())
        faults = [Fault(f"/options/{i}", "options must be unique non-empty strings", "uniqueItems")
                  for i, o in enumerate(opts) if not o or o in opts[:i]]
        if faults:
            return tool_error("invalid_request", "invalid options", faults)
        budget = _budget(timeout_seconds)
        try:
            ask = Ask(dialect=Dialect.CANONICAL, prompt=question, details=details, purpose="approval",
                      spec=ApprovalSpec(options=opts), deadline=Deadline(timeout_seconds=budget, on_timeout=on_timeout))
        except ValidationError as exc:
            from askgate.broker.broker import pydantic_faults

            return tool_error("invalid_request", "invalid approval request", pydantic_faults(exc))
        try:
            created = await broker().create_ask(ask, asker=who, routing=_routing(respondent))
        except BrokerError as exc:
            return broker_error(exc)
        record = await _await_outcome(broker(), created.record.id, who, ctx, budget)
        return tool_result(_approval_outcome(record))

    @server.tool(annotations=ToolAnnotations(title="Answer the asks offered to me", open_world_hint=False))
    async def answer_asks(
        ctx: Context,
        max_asks: Annotated[int, Field(ge=1, le=100, description="stop after this many asks")] = 1,
        wait_seconds: Annotated[float, Field(ge=0, le=600, description="wait this long for asks to arrive")] = 30.0,
    ) -> Annotated[CallToolResult, AnswerAsksOutcome] | InputRequiredResult:
        """Put the asks offered to you to this client through elicitation/create (form mode) and record the
        answers. Needs the elicitation capability; returns what happened to each ask."""
        return await answer_offered_asks(broker(), principal_of(ctx), ctx, max_asks, wait_seconds)

    return server



# --------------------------------------------------------------------------------------------------
# Mounting.
# --------------------------------------------------------------------------------------------------


def mount_mcp(app: FastAPI) -> None:
    """Serve MCP at ``/mcp`` (one call from ``create_app``); the session manager runs in the app lifespan."""
    server = build_server(app)
    # Builds (and keeps) the server's session manager; askgate routes to it itself, behind its own auth.
    # A non-loopback host: no Host/Origin allow-list (the bearer token, not the Host header, guards /mcp).
    server.streamable_http_app(streamable_http_path=PATH, host="askgate")
    manager: StreamableHTTPSessionManager = server.session_manager
    endpoint = AuthenticationMiddleware(
        RequireAuthMiddleware(manager.handle_request, required_scopes=[]),
        backend=BearerAuthBackend(AskgateTokenVerifier(app)))
    app.router.routes.append(Route(PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    app.state.mcp_server = server
    app.state.mcp_sessions = manager

    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        async with inner(a) as state, _sessions_running(manager):
            yield state

    app.router.lifespan_context = lifespan


@contextlib.asynccontextmanager
async def _sessions_running(manager: StreamableHTTPSessionManager) -> AsyncIterator[None]:
    """Run the session manager in a task of its own for as long as the context is open.

    ``manager.run()`` holds an anyio task group, which must be exited by the task that entered it. A
    lifespan is not always entered and exited by one task (a test fixture that enters the app's
    lifespan during setup and leaves it during teardown runs them in different tasks), so the manager
    gets its own task, started and stopped from here, whoever calls.
    """
    ready, stop = asyncio.Event(), asyncio.Event()

    async def serve() -> None:
        async with manager.run():
            ready.set()
            await stop.wait()

    task = asyncio.create_task(serve(), name="askgate-mcp-sessions")
    started = asyncio.create_task(ready.wait())
    await asyncio.wait({task, started}, return_when=asyncio.FIRST_COMPLETED)
    if not ready.is_set():
        started.cancel()
        await task  # raises what stopped the manager from starting
    try:
        yield
    finally:
        stop.set()
        await task


__all__ = ["AskgateTokenVerifier", "build_server", "mount_mcp", "principal_of"]
