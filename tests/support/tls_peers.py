"""Real local peers for the wire tests: a trustme CA, HTTPS servers (mTLS optional) on 127.0.0.1, and
uvicorn running an ASGI app in a thread.

Everything listens on 127.0.0.1 with a random port; nothing reaches beyond loopback.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import trustme
import uvicorn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Pki:
    """One CA; a server certificate for localhost/127.0.0.1; client certificates on demand."""

    ca: trustme.CA
    server: trustme.LeafCert

    @classmethod
    def make(cls) -> Pki:
        ca = trustme.CA()
        return cls(ca=ca, server=ca.issue_cert("localhost", "127.0.0.1"))

    def server_context(self, *, require_client_cert: bool = False) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.server.configure_cert(ctx)
        if require_client_cert:
            self.ca.configure_trust(ctx)
            ctx.verify_mode = ssl.CERT_REQUIRED
        return ctx

    def client_context(self, client: trustme.LeafCert | None = None) -> ssl.SSLContext:
        ctx = ssl.create_default_context()
        self.ca.configure_trust(ctx)
        if client is not None:
            client.configure_cert(ctx)
        return ctx

    def client_cert(self, *identities: str) -> trustme.LeafCert:
        return self.ca.issue_cert(*identities)

    def write_files(self, directory: Any) -> dict[str, str]:
        """PEM files for uvicorn: the server pair and the CA bundle."""
        paths = {"cert": f"{directory}/server.pem", "key": f"{directory}/server.key", "ca": f"{directory}/ca.pem"}
        self.server.cert_chain_pems[0].write_to_path(paths["cert"])
        for extra in self.server.cert_chain_pems[1:]:
            with open(paths["cert"], "ab") as fh:
                fh.write(extra.bytes())
        self.server.private_key_pem.write_to_path(paths["key"])
        self.ca.cert_pem.write_to_path(paths["ca"])
        return paths


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    peer_cert: dict[str, Any] | None

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class RecordingServer:
    """An HTTPS server that records every request and answers with ``responder(received) -> (status, body)``."""

    url: str
    received: list[Received] = field(default_factory=list)
    connections: int = 0

    def wait_for(self, n: int, timeout: float = 10.0) -> list[Received]:
        end = time.monotonic() + timeout
        while len(self.received) < n and time.monotonic() < end:
            time.sleep(0.02)
        return list(self.received)


Responder = Callable[[Received], tuple[int, bytes]]


@contextmanager
def https_server(pki: Pki, responder: Responder | None = None, *,
                 require_client_cert: bool = False) -> Iterator[RecordingServer]:
    ctx = pki.server_context(require_client_cert=require_client_cert)
    state = RecordingServer(url="")
    respond = responder or (lambda _r: (200, b'{"ok":true}'))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            cert = self.connection.getpeercert() if isinstance(self.connection, ssl.SSLSocket) else None
            rec = Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body, cert or None)
            state.received.append(rec)
            status, payload = respond(rec)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def get_request(self) -> tuple[socket.socket, Any]:
            sock, addr = self.socket.accept()
            state.connections += 1
            return ctx.wrap_socket(sock, server_side=True), addr

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass

    server = Server(("127.0.0.1", 0), Handler)
    state.url = f"https://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def listening_socket() -> Iterator[tuple[int, list[Any]]]:
    """A plain TCP listener on 127.0.0.1 that records every accepted connection (and never answers)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.05)
    accepted: list[Any] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, addr = sock.accept()
            except (TimeoutError, OSError):
                continue
            accepted.append(addr)
            conn.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield int(sock.getsockname()[1]), accepted
    finally:
        stop.set()
        thread.join(2)
        sock.close()


@contextmanager
def uvicorn_thread(app: Any, *, port: int | None = None, **config: Any) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 in a background thread; yields its base URL (https when ssl is given)."""
    port = port or free_port()
    cfg = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **config)
    server = uvicorn.Server(cfg)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    end = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > end or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    scheme = "https" if config.get("ssl_certfile") else "http"
    try:
        yield f"{scheme}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
