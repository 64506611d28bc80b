"""Keep the caller's own JSON of the message being sent, next to the SDK's protobuf copy.

protobuf ``Struct`` neither keeps key order (a ``requestedSchema``'s field order is the order a form is
shown in) nor integers (every number becomes a double). This ASGI middleware reads the request body once
(refusing bodies over 1 MiB, protocols.md §1.2), decodes it strictly (:func:`askgate.jsonload.loads_strict`)
and puts the ``message`` object (HTTP+JSON ``{message}`` or JSON-RPC ``params.message``) in a context
variable; the SDK runs the executor in the sending request's context, so the executor reads it back.
Bodies that are not strict JSON are passed on untouched for the SDK to refuse or accept as it will.
"""

from __future__ import annotations

import contextvars
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from askgate.jsonload import loads_strict

MAX_BODY = 1024 * 1024
RAW_MESSAGE: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("askgate_a2a_raw_message",
                                                                                   default=None)


def _message_of(doc: Any) -> dict[str, Any] | None:
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("message"), dict):
        return doc["message"]
    params = doc.get("params")
    if isinstance(params, dict) and isinstance(params.get("message"), dict):
        return params["message"]
    return None


class RawMessageMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            event = await receive()
            if event["type"] != "http.request":
                break
            body = event.get("body", b"")
            size += len(body)
            if size > MAX_BODY:
                await _too_large(send)
                return
            chunks.append(body)
            more = event.get("more_body", False)
        data = b"".join(chunks)
        token = None
        try:
            token = RAW_MESSAGE.set(_message_of(loads_strict(data)))
        except Exception:  # noqa: BLE001 - AskgateError(not_json): the SDK answers in its own terms
            token = RAW_MESSAGE.set(None)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        try:
            await self.app(scope, replay, send)
        finally:
            RAW_MESSAGE.reset(token)


async def _too_large(send: Send) -> None:
    body = b'{"error":{"code":413,"status":"INVALID_ARGUMENT","message":"request body larger than 1 MiB"}}'
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def raw_message(message_id: str | None) -> dict[str, Any] | None:
    """The caller's JSON of the message with this ``messageId`` in the current request, if any."""
    raw = RAW_MESSAGE.get()
    if raw is not None and message_id and raw.get("messageId") == message_id:
        return raw
    return None
