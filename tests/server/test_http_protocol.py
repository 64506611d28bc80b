"""A response's head and body leave in one send (askgate/server/http_protocol.py), over real sockets."""

from __future__ import annotations

import asyncio
import socket

from askgate.server.http_protocol import _Corked


class _Sink(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport


async def _corked_pair() -> tuple[_Corked, asyncio.Transport, socket.socket]:
    ours, theirs = socket.socketpair()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_accepted_socket(_Sink, ours)
    theirs.setblocking(False)
    return _Corked(transport, loop), transport, theirs  # type: ignore[arg-type]


async def _recv_once(sock: socket.socket) -> bytes:
    return await asyncio.wait_for(asyncio.get_running_loop().sock_recv(sock, 65536), 2)


async def test_writes_of_one_loop_step_leave_together_and_the_next_step_is_not_held_back() -> None:
    corked, transport, peer = await _corked_pair()
    try:
        corked.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        corked.write(bytearray(b"{}"))
        assert corked.get_write_buffer_size() > 0  # held until the step ends
        assert await _recv_once(peer) == b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"
        corked.write(b"next")
        assert await _recv_once(peer) == b"next"
    finally:
        transport.close()
        peer.close()


async def test_close_sends_what_is_held_and_abort_drops_it() -> None:
    corked, _transport, peer = await _corked_pair()
    corked.write(b"last words")
    corked.close()
    assert await _recv_once(peer) == b"last words"
    peer.close()

    corked, _transport, peer = await _corked_pair()
    corked.write(b"never sent")
    corked.abort()
    assert await _recv_once(peer) == b""  # the connection ends with nothing sent
    peer.close()


def test_serve_uses_it_unless_mtls_needs_its_own_protocol() -> None:
    from askgate.server.cli import _with_http_protocol
    from askgate.server.http_protocol import CoalescingHttpToolsProtocol
    from askgate.server.tls import PeerCertH11Protocol

    assert _with_http_protocol({})["http"] is CoalescingHttpToolsProtocol
    assert _with_http_protocol({"ssl_certfile": "c"})["http"] is CoalescingHttpToolsProtocol
    assert _with_http_protocol({"http": PeerCertH11Protocol})["http"] is PeerCertH11Protocol


async def test_a_real_uvicorn_server_on_it_serves_keep_alive_requests() -> None:
    """The protocol under uvicorn: several requests on one connection, each answered whole."""
    import uvicorn

    from askgate.server.http_protocol import CoalescingHttpToolsProtocol
    from tests.support.postgres import free_port

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        body = scope["path"].encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, http=CoalescingHttpToolsProtocol,
                                           lifespan="off", log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for path in ("/one", "/two", "/three"):
            writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            assert head.startswith(b"HTTP/1.1 200")
            assert await asyncio.wait_for(reader.readexactly(len(path)), 5) == path.encode()
        writer.close()
    finally:
        server.should_exit = True
        await task
