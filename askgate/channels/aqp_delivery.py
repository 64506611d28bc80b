"""One push attempt of an AQP QueryResponse over its ``delivery.binding`` (protocols.md §3.4).

- ``https``: ``POST`` the document to ``endpoint`` with ``Idempotency-Key: <queryId>`` and the
  ``authorization`` value *exactly as given* as the ``Authorization`` header (no ``Bearer `` added).
- ``a2a``: one ``ROLE_USER`` message to the A2A agent at ``endpoint`` (a2a-sdk client; the card's
  preferred binding, ``message:send`` over HTTP+JSON or JSON-RPC): a text summary part and a data part
  ``{"aqp/QueryResponse": {...}}``; ``operation`` goes into ``metadata.operation``.
- ``mcp``: ``tools/call`` of the tool ``operation`` on the MCP server at ``endpoint`` (streamable HTTP,
  mcp SDK client) with the QueryResponse as ``arguments``.

Every connection goes through the guarded outbound client. Each function makes one attempt and
reports it as an :class:`~askgate.channels.outbound.OutboundResult` (``status`` None = no answer, worth
retrying); :class:`~askgate.channels.outbound.OutboundRefused` is raised for a refused target. The
retry loop, expiry and audit live in :mod:`askgate.broker.push`.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from askgate.channels.outbound import OutboundPolicy, OutboundResult, guard_url, guarded_client, post_json

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
        if isinstance(cur, httpx.HTTPStatusError):
            return cur.response.status_code
        if isinstance(cur, (httpx.TransportError, TimeoutError)):
            return None
        status = getattr(cur, "status_code", None)
        if isinstance(status, int):
            return status
        cur = cur.__cause__ or cur.__context__
    return None


async def deliver_a2a(endpoint: str, doc: dict[str, Any], *, authorization: str | None, operation: str | None,
                      policy: OutboundPolicy, timeout: float) -> OutboundResult:
    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest
    from google.protobuf.json_format import ParseDict
    from google.protobuf.struct_pb2 import Value

    await guard_url(endpoint, policy)
    headers = {"Idempotency-Key": str(doc["queryId"]), **_headers(authorization)}
    data = Value()
    ParseDict({"aqp/QueryResponse": doc}, data)
    message = Message(message_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"aqp:{doc['queryId']}")), role=Role.ROLE_USER,
                      parts=[Part(text=summary(doc)), Part(data=data, media_type="application/json")])
    if operation is not None:
        message.metadata.update({"operation": operation})
    async with guarded_client(policy, timeout=timeout, headers=headers) as http:
        try:
            client = await create_client(endpoint, ClientConfig(httpx_client=http, streaming=False,
                                                                supported_protocol_bindings=["HTTP+JSON", "JSONRPC"]))
            async for _event in client.send_message(SendMessageRequest(message=message)):
                pass
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a reported attempt
            status = _status_of(exc)
            if status is None and not isinstance(exc, (httpx.HTTPError, TimeoutError)) and "Network" not in str(exc) \
                    and "timed out" not in str(exc):
                status = 400  # the agent refused the message (protocol error): permanent
            return OutboundResult(status=status, error=f"a2a: {type(exc).__name__}")
    return OutboundResult(status=200)


async def deliver_mcp(endpoint: str, doc: dict[str, Any], *, authorization: str | None, operation: str | None,
                      policy: OutboundPolicy, timeout: float) -> OutboundResult:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    await guard_url(endpoint, policy)
    if not operation:
        return OutboundResult(status=400, error="mcp: no operation (tool name)")
    headers = {"Idempotency-Key": str(doc["queryId"]), **_headers(authorization)}

    def factory(headers: dict[str, str] | None = None, timeout: httpx.Timeout | None = None,
                auth: httpx.Auth | None = None) -> httpx.AsyncClient:
        client = guarded_client(policy, headers=headers)
        if timeout is not None:
            client.timeout = timeout
        if auth is not None:
            client.auth = auth
        return client

    try:
        async with streamablehttp_client(endpoint, headers=headers, timeout=timeout,
                                         httpx_client_factory=factory) as (read, write, _sid):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(operation, arguments=doc)
    except Exception as exc:  # noqa: BLE001
        status = _status_of(exc)
        return OutboundResult(status=status, error=f"mcp: {type(exc).__name__}")
    if result.isError:
        return OutboundResult(status=422, error="mcp: the tool reported an error")
    return OutboundResult(status=200)


SENDERS: dict[str, Sender] = {"https": deliver_https, "a2a": deliver_a2a, "mcp": deliver_mcp}
