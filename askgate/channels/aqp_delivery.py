"""One push attempt of an AQP QueryResponse over its ``delivery.binding`` (protocols.md §3.4).

- ``https``: ``POST`` the document to ``endpoint`` with ``Idempotency-Key: <queryId>`` and the
  ``authorization`` value *exactly as given* as the ``Authorization`` header (no ``Bearer `` added).
- ``a2a``: one ``ROLE_USER`` message to the A2A agent at ``endpoint`` (a2a-sdk client through
  :func:`askgate.channels.a2a_respondent.send_a2a_message`; ``message:send`` over HTTP+JSON, or
  JSON-RPC): a text summary part and a data part ``{"aqp/QueryResponse": {...}}``; ``operation`` goes
  into ``metadata.operation``. An A2A error without an HTTP status is retried (unknown outcome).
- ``mcp``: ``tools/call`` of the tool ``operation`` on the MCP server at ``endpoint`` (streamable HTTP,
  mcp SDK client) with the QueryResponse as ``arguments``; a tool result with ``isError`` is a
  permanent failure, an MCP error without an HTTP status is retried.

Every connection goes through the guarded outbound client. Each function makes one attempt and
reports it as an :class:`~askgate.channels.outbound.OutboundResult` (``status`` None = no answer, worth
retrying); :class:`~askgate.channels.outbound.OutboundRefused` is raised for a refused target. The
retry loop, expiry and audit live in :mod:`askgate.broker.push`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from askgate.channels.outbound import OutboundPolicy, OutboundResult, guard_url, guarded_client2, post_json

Sender = Callable[..., Awaitable[OutboundResult]]


def summary(doc: dict[str, Any]) -> str:
    """A one-line human summary of a QueryResponse (the A2A text part)."""
    status = doc.get("status")
    qid = doc.get("queryId")
    if status == "answered":
        value = doc.get("answer", {}).get("value")
        shown = value if isinstance(value, (str, int, float, bool)) else "structured answer"
        return f"AQP query {qid} answered: {shown}"
    return f"AQP query {qid} {status}"


def _headers(authorization: str | None) -> dict[str, str]:
    return {"Authorization": authorization} if authorization is not None else {}


async def deliver_https(endpoint: str, doc: dict[str, Any], *, authorization: str | None, operation: str | None,
                        policy: OutboundPolicy, timeout: float) -> OutboundResult:
    headers = {"Idempotency-Key": str(doc["queryId"]), **_headers(authorization)}
    return await post_json(endpoint, doc, headers=headers, policy=policy, timeout=timeout)


def _status_of(exc: BaseException) -> int | None:
    """The HTTP status behind an SDK exception (None for network errors and timeouts)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, BaseExceptionGroup):  # anyio task groups (the mcp client) wrap the cause
            inner = [_status_of(e) for e in cur.exceptions]
            return next((s for s in inner if s is not None), None)
        if type(cur).__name__ == "HTTPStatusError":  # httpx and httpx2 alike
            return int(cur.response.status_code)  # type: ignore[attr-defined]
        if isinstance(cur, (httpx.TransportError, TimeoutError)) or type(cur).__module__.startswith("httpx2"):
            return None
        status = getattr(cur, "status_code", None)
        if isinstance(status, int):
            return status
        cur = cur.__cause__ or cur.__context__
    return None


async def deliver_a2a(endpoint: str, doc: dict[str, Any], *, authorization: str | None, operation: str | None,
                      policy: OutboundPolicy, timeout: float) -> OutboundResult:
    """One A2A message via the A2A engineer's sender (:func:`askgate.channels.a2a_respondent.send_a2a_message`).

    The message id is derived from the queryId, so a retried attempt is the same message to the agent.
    """
    from askgate.channels.a2a_respondent import A2ASendError, send_a2a_message

    message: dict[str, Any] = {
        "role": "ROLE_USER",
        "messageId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"aqp:{doc['queryId']}")),
        "parts": [{"text": summary(doc)}, {"data": {"aqp/QueryResponse": doc}, "mediaType": "application/json"}],
    }
    if operation is not None:
        message["metadata"] = {"operation": operation}
    headers = {"Idempotency-Key": str(doc["queryId"]), **_headers(authorization)}
    try:
        await send_a2a_message(endpoint, message, policy=policy, headers=headers, timeout=timeout)
    except A2ASendError as exc:
        found = re.search(r"HTTP Error (\d{3})", str(exc))
        return OutboundResult(status=int(found.group(1)) if found else None, error=f"a2a: {str(exc)[:120]}")
    return OutboundResult(status=200)


async def deliver_mcp(endpoint: str, doc: dict[str, Any], *, authorization: str | None, operation: str | None,
                      policy: OutboundPolicy, timeout: float) -> OutboundResult:
    """``tools/call`` of ``operation`` with the QueryResponse as ``arguments`` (mcp SDK 2.x client over
    streamable HTTP, through :func:`~askgate.channels.outbound.guarded_client2`)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    await guard_url(endpoint, policy)
    if not operation:
        return OutboundResult(status=400, error="mcp: no operation (tool name)")
    headers = {"Idempotency-Key": str(doc["queryId"]), **_headers(authorization)}
    try:
        async with (guarded_client2(policy, headers=headers, timeout=timeout) as http,
                    streamable_http_client(endpoint, http_client=http) as (read, write),
                    ClientSession(read, write) as session):
            await session.initialize()
            result = await session.call_tool(operation, arguments=doc, read_timeout_seconds=timeout)
    except Exception as exc:  # noqa: BLE001 - transport and protocol failures become a reported attempt
        return OutboundResult(status=_status_of(exc), error=f"mcp: {type(exc).__name__}")
    if result.is_error:
        return OutboundResult(status=422, error="mcp: the tool reported an error")
    return OutboundResult(status=200)


SENDERS: dict[str, Sender] = {"https": deliver_https, "a2a": deliver_a2a, "mcp": deliver_mcp}
