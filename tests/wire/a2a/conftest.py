"""A real askgate (uvicorn on 127.0.0.1, SQLite) and a2a-sdk clients for the A2A wire tests."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from a2a.client import ClientCallContext, ClientConfig, create_client
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest
from a2a.utils.constants import TransportProtocol
from google.protobuf import json_format, struct_pb2

from askgate.channels.outbound import OutboundPolicy
from askgate.protocols.a2a_carriage import EXTENSION_URI
from askgate.server.app import create_app
from askgate.server.settings import Settings
from askgate.store import Store
from tests.support.tls_peers import uvicorn_thread

PRINCIPALS = (("agent", "asker"), ("bob", "respondent"), ("carol", "respondent"), ("eve", "respondent"),
              ("bot", "respondent"), ("dave", "respondent"))


@dataclass
class Askgate:
    url: str
    tokens: dict[str, str]
    app: Any

    def http(self, who: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.tokens[who]}"},
                            timeout=30, trust_env=False)

    async def client(self, who: str, *, binding: str = TransportProtocol.HTTP_JSON.value) -> Any:
        """An a2a-sdk client for ``who`` (card resolved from askgate's well-known URL)."""
        http = httpx.AsyncClient(headers={"Authorization": f"Bearer {self.tokens[who]}"}, timeout=30,
                                 trust_env=False)
        config = ClientConfig(httpx_client=http, streaming=False, supported_protocol_bindings=[binding])
        return await create_client(self.url, client_config=config)


async def _make_tokens(db_url: str) -> dict[str, str]:
    store = await Store.open(db_url, secret_key="a2a-tests")
    try:
        return {pid: await store.create_token(pid, role) for pid, role in PRINCIPALS}
    finally:
        await store.close()


@pytest.fixture(scope="module")
def askgate_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Askgate]:
    db = tmp_path_factory.mktemp("a2a") / "askgate.db"
    db_url = f"sqlite+aiosqlite:///{db}"
    tokens = asyncio.run(_make_tokens(db_url))
    app = create_app(Settings(db_url=db_url, secret_key="a2a-tests", auth_cache_seconds=0, log_level="warning",
                              sqlite_synchronous="NORMAL", approver_identities=(("mtls:127.0.0.1", "bot"),
                                                                                ("principal:bot", "agent:ops"))))
    app.state.outbound_policy = OutboundPolicy(allow=("127.0.0.1",), allow_http_loopback=True, timeout=10)
    with uvicorn_thread(app) as url:
        yield Askgate(url, tokens, app)


def user_message(*parts: dict[str, Any], task_id: str = "", context_id: str = "", extensions: bool = False,
                 metadata: dict[str, Any] | None = None, message_id: str | None = None) -> Message:
    msg = Message(role=Role.ROLE_USER, message_id=message_id or str(uuid.uuid4()), task_id=task_id,
                  context_id=context_id, extensions=[EXTENSION_URI] if extensions else [])
    for p in parts:
        part = Part()
        json_format.ParseDict(p, part)
        msg.parts.append(part)
    if metadata:
        s = struct_pb2.Struct()
        s.update(metadata)
        msg.metadata.CopyFrom(s)
    return msg


def ext_context(active: bool) -> ClientCallContext | None:
    return ClientCallContext(service_parameters={"A2A-Extensions": EXTENSION_URI}) if active else None


async def send(client: Any, msg: Message, *, extensions: bool = False, immediately: bool = False) -> dict[str, Any]:
    """Send and return the final task (or message) as ProtoJSON."""
    req = SendMessageRequest(message=msg)
    req.configuration.return_immediately = immediately
    last = None
    async for event in client.send_message(req, context=ext_context(extensions)):
        last = event
    assert last is not None
    return json_format.MessageToDict(last)
