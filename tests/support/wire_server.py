"""A real askgate (create_app under uvicorn, in a thread) on 127.0.0.1 for the wire tests.

The server trusts the test's own CA for outbound calls and may reach 127.0.0.1 (the operator
allow-list), serves HTTPS with the test's server certificate, and asks for (but does not require) a
client certificate, so ACS ``mtls`` approvers can present one. Tokens are made before start-up.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from askgate.server.app import create_app
from askgate.server.settings import Settings
from askgate.server.tls import PeerCertH11Protocol
from askgate.store import Store
from tests.support.tls_peers import Pki, uvicorn_thread

SECRET_KEY = "wire-tests-secret-key-0123456789"


@dataclass
class Askgate:
    url: str
    tokens: dict[str, str]
    pki: Pki
    tmp: Path
    settings: Settings
    app: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def client(self, principal: str | None = None, *, cert: Any = None, timeout: float = 30.0) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[principal]}"} if principal else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout, trust_env=False,
                            verify=self.pki.client_context(cert))

    def aclient(self, principal: str | None = None, *, cert: Any = None, timeout: float = 30.0) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {self.tokens[principal]}"} if principal else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=timeout, trust_env=False,
                                 verify=self.pki.client_context(cert))


async def _make_tokens(db_url: str, principals: dict[str, str]) -> dict[str, str]:
    store = await Store.open(db_url, secret_key=SECRET_KEY)
    try:
        return {p: await store.create_token(p, role) for p, role in principals.items()}
    finally:
        await store.close()


@contextmanager
def running_askgate(tmp: Path, pki: Pki, principals: dict[str, str], **settings: Any) -> Iterator[Askgate]:
    """Start askgate; ``principals`` maps principal id -> role; ``settings`` override :class:`Settings`."""
    db_url = f"sqlite:///{tmp / 'askgate.db'}"
    tokens = asyncio.run(_make_tokens(db_url, principals))
    files = pki.write_files(tmp)
    cfg = Settings(db_url=db_url, secret_key=SECRET_KEY, outbound_allow=("127.0.0.1",), outbound_ca_file=files["ca"],
                   sqlite_synchronous="NORMAL", log_level="warning", auth_cache_seconds=0, **settings)
    app = create_app(cfg)
    with uvicorn_thread(app, ssl_certfile=files["cert"], ssl_keyfile=files["key"], ssl_ca_certs=files["ca"],
                        ssl_cert_reqs=ssl.CERT_OPTIONAL, http=PeerCertH11Protocol) as url:
        yield Askgate(url=url, tokens=tokens, pki=pki, tmp=tmp, settings=cfg, app=app)
