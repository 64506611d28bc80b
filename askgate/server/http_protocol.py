"""uvicorn's httptools protocol, with each response's writes sent as one.

uvicorn writes a response's status line and headers as soon as the app sends ``http.response.start``
and the body when it sends ``http.response.body``: two ``send`` system calls, two TCP segments and two
wake-ups of the client for every small JSON response. On loopback each send also runs the receiver's
side of TCP in the sender's time; profiling ``askgate serve`` under load put ~12% of its CPU there.
Here writes made in one step of the event loop are held and sent together with one ``send`` just after
the step (``call_soon``): an ASGI app's start and body messages for a small response arrive in the same
step, so they leave as one segment, with no added latency (nothing waits for more than that step).

``close()`` sends what is held first; ``abort()`` drops it, as a real transport's abort does. Anything
else is the real transport's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _Corked:
    """A transport proxy that gathers the writes of one loop step into one."""

    __slots__ = ("_transport", "_loop", "_held")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._held:
            self._loop.call_soon(self._flush)
        self._held.append(bytes(data))

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def _flush(self) -> None:
        held, self._held = self._held, []
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held = []
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(x) for x in self._held)

    def __getattr__(self, name: str) -> Any:  # pause_reading, is_closing, get_extra_info, ...
        return getattr(self._transport, name)


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """Pass as ``http=`` to ``uvicorn.Config``: the httptools protocol on a :class:`_Corked` transport."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_Corked(transport, self.loop))  # type: ignore[arg-type]
