"""The guarded outbound client: what it reaches, what it refuses, and that refused targets are never
contacted (a listening socket stays untouched; a recording network backend sees no connect)."""

from __future__ import annotations

import json
from typing import Any

import httpcore
import httpx
import pytest

from askgate.channels import outbound
from askgate.channels.outbound import (
    GuardedBackend,
    OutboundPolicy,
    OutboundRefused,
    OutboundResult,
    guard_url,
    guarded_client,
    post_json,
)
from tests.support.tls_peers import Pki, https_server, listening_socket

PUBLIC = "93.184.216.34"  # never contacted: every test that resolves to it stops at a recording backend


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki.make()


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """An inner network backend that records connect attempts and refuses them all."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: Any = None,
                          socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        self.attempts.append((host, port))
        raise httpcore.ConnectError("recording backend: no traffic")

    async def sleep(self, seconds: float) -> None:  # pragma: no cover - not used
        pass


def fake_dns(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[list[str]]]) -> list[str]:
    """Replace the resolver: each lookup of a name pops its next answer (the last one repeats)."""
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        queue = answers[host]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    monkeypatch.setattr(outbound, "resolver", resolve)
    return asked


async def test_allowed_loopback_https_delivers_headers_and_body(pki: Pki) -> None:
    policy = OutboundPolicy(allow=("127.0.0.1",), ssl_context=pki.client_context())
    with https_server(pki) as srv:
        result = await post_json(srv.url + "/hook", {"a": 1}, headers={"Authorization": "Token s3cr3t",
                                                                       "Idempotency-Key": "k1"}, policy=policy)
        got = srv.wait_for(1)
    assert result.ok and result.status == 200 and result.json() == {"ok": True}
    assert got[0].path == "/hook" and got[0].json() == {"a": 1}
    assert got[0].headers["authorization"] == "Token s3cr3t"
    assert got[0].headers["idempotency-key"] == "k1"
    assert got[0].headers["content-type"] == "application/json"


async def test_mtls_client_certificate_is_presented(pki: Pki) -> None:
    client = pki.client_cert("askgate.test")
    with https_server(pki, require_client_cert=True) as srv:
        ok = await post_json(srv.url, {}, policy=OutboundPolicy(allow=("127.0.0.1",),
                                                                ssl_context=pki.client_context(client)))
        no_cert = await post_json(srv.url, {}, policy=OutboundPolicy(allow=("127.0.0.1",),
                                                                     ssl_context=pki.client_context()))
        got = srv.wait_for(1)
    assert ok.ok
    sans = dict(got[0].peer_cert["subjectAltName"])  # type: ignore[index]
    assert sans["DNS"] == "askgate.test"
    assert no_cert.status is None and no_cert.retryable and len(got) == 1


async def test_untrusted_server_certificate_fails(pki: Pki) -> None:
    with https_server(pki) as srv:
        result = await post_json(srv.url, {}, policy=OutboundPolicy(allow=("127.0.0.1",)))  # system CAs only
    assert result.status is None and result.error is not None and not srv.received


@pytest.mark.parametrize(
    ("template", "policy_kwargs", "rule"),
    [
        ("https://127.0.0.1:{port}/", {}, "outbound.address"),
        ("https://localhost:{port}/", {}, "outbound.address"),
        ("https://[::ffff:127.0.0.1]:{port}/", {}, "outbound.address"),
        ("http://127.0.0.1:{port}/", {"allow": ("127.0.0.1",)}, "outbound.scheme"),
        ("https://user:pw@127.0.0.1:{port}/", {"allow": ("127.0.0.1",)}, "outbound.userinfo"),
        ("https://:pw@127.0.0.1:{port}/", {"allow": ("127.0.0.1",)}, "outbound.userinfo"),
        ("ftp://127.0.0.1:{port}/", {"allow": ("127.0.0.1",)}, "outbound.scheme"),
        ("https://127.0.0.1:{port}/", {"allow": ("10.0.0.0/8",)}, "outbound.address"),
    ],
)
async def test_refused_loopback_targets_are_never_contacted(template: str, policy_kwargs: dict[str, Any],
                                                            rule: str) -> None:
    with listening_socket() as (port, accepted):
        url = template.format(port=port)
        with pytest.raises(OutboundRefused) as info:
            await post_json(url, {"x": 1}, headers={"Authorization": "Bearer nope"},
                            policy=OutboundPolicy(**policy_kwargs))
        async with guarded_client(OutboundPolicy(**policy_kwargs)) as client:
            with pytest.raises((OutboundRefused, httpx.HTTPError)):
                await client.post(url, json={})
    assert info.value.rule == rule
    assert accepted == []


@pytest.mark.parametrize(
    ("url", "allow"),
    [
        ("https://10.0.0.1/hook", ()),
        ("https://192.168.1.20/hook", ()),
        ("https://172.16.5.4/hook", ()),
        ("https://100.64.0.1/hook", ()),
        ("https://169.254.169.254/latest/meta-data/", ()),
        ("https://169.254.169.254/latest/meta-data/", ("169.254.0.0/16",)),  # a network does not admit metadata
        ("https://[fd00:ec2::254]/", ()),
        ("https://[fe80::1]/", ()),
        ("https://[::1]/", ()),
        ("https://0.0.0.0/", ()),
        ("https://224.0.0.1/", ()),
        ("https://240.0.0.1/", ()),
    ],
)
async def test_non_public_addresses_refused_before_connecting(url: str, allow: tuple[str, ...]) -> None:
    backend = RecordingBackend()
    with pytest.raises(OutboundRefused):
        await post_json(url, {}, policy=OutboundPolicy(allow=allow))
    async with guarded_client(OutboundPolicy(allow=allow), backend=backend) as client:
        with pytest.raises((OutboundRefused, httpx.HTTPError)):
            await client.post(url, json={})
    assert backend.attempts == []


async def test_metadata_address_needs_an_exact_allow_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = RecordingBackend()
    policy = OutboundPolicy(allow=("169.254.169.254",))
    assert await guard_url("https://169.254.169.254/x", policy) == ["169.254.169.254"]
    async with guarded_client(policy, backend=backend) as client:
        with pytest.raises(httpx.ConnectError):
            await client.post("https://169.254.169.254/x", json={})
    assert backend.attempts == [("169.254.169.254", 443)]


async def test_a_name_with_one_private_address_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, {"mixed.example": [[PUBLIC, "10.1.2.3"]]})
    backend = RecordingBackend()
    with pytest.raises(OutboundRefused) as info:
        await guard_url("https://mixed.example/", OutboundPolicy())
    assert "private" in info.value.reason
    async with guarded_client(OutboundPolicy(), backend=backend) as client:
        with pytest.raises((OutboundRefused, httpx.HTTPError)):
            await client.post("https://mixed.example/", json={})
    assert backend.attempts == []


async def test_connection_goes_to_the_vetted_address(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, {"public.example": [[PUBLIC]]})
    backend = RecordingBackend()
    async with guarded_client(OutboundPolicy(), backend=backend) as client:
        with pytest.raises(httpx.ConnectError):
            await client.post("https://public.example:8443/x", json={})
    assert backend.attempts == [(PUBLIC, 8443)]  # the address, never the name


async def test_dns_rebinding_between_check_and_connect_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with listening_socket() as (port, accepted):
        # first answer (the per-request guard): public; every later one (the connect): loopback
        asked = fake_dns(monkeypatch, {"rebind.example": [[PUBLIC], ["127.0.0.1"]]})
        backend = RecordingBackend()
        async with guarded_client(OutboundPolicy(), backend=backend) as client:
            with pytest.raises(httpx.ConnectError, match="refused by the outbound policy"):
                await client.post(f"https://rebind.example:{port}/", json={})
    assert len(asked) == 2 and backend.attempts == [] and accepted == []


async def test_allow_listed_name_and_cidr(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, {"internal.corp": [["10.9.8.7"]], "other.corp": [["10.20.0.5"]]})
    assert await guard_url("https://internal.corp/", OutboundPolicy(allow=("Internal.Corp",))) == ["10.9.8.7"]
    assert await guard_url("https://other.corp/", OutboundPolicy(allow=("10.20.0.0/16",))) == ["10.20.0.5"]
    with pytest.raises(OutboundRefused):
        await guard_url("https://other.corp/", OutboundPolicy(allow=("10.21.0.0/16",)))


async def test_plain_http_only_to_allowed_loopback_in_dev_mode() -> None:
    with listening_socket() as (port, accepted):
        with pytest.raises(OutboundRefused):
            await guard_url(f"http://127.0.0.1:{port}/", OutboundPolicy(allow_http_loopback=True))  # not allowed
        assert await guard_url(f"http://127.0.0.1:{port}/",
                               OutboundPolicy(allow=("127.0.0.1",), allow_http_loopback=True)) == ["127.0.0.1"]
    assert accepted == []


async def test_redirects_are_not_followed(pki: Pki) -> None:
    policy = OutboundPolicy(allow=("127.0.0.1",), ssl_context=pki.client_context())
    with https_server(pki) as target:
        with https_server(pki, lambda _r: (307, b"")) as first:
            # the 307 response carries no Location here; the point is that the client never goes on
            result = await post_json(first.url, {}, headers={"Authorization": "secret-value"}, policy=policy)
        assert result.status == 307 and not result.ok and not result.retryable
    assert target.received == []


class RecordingLog:
    """Stands in for the module's structlog logger: records every event with its key-value pairs."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def _record(self, event: str, **kw: Any) -> None:
        self.events.append((event, kw))

    info = warning = error = debug = _record


async def test_header_values_are_never_logged(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    rec = RecordingLog()
    monkeypatch.setattr(outbound, "log", rec)
    policy = OutboundPolicy(allow=("127.0.0.1",), ssl_context=pki.client_context())
    secret = "Bearer very-secret-token-123"
    with https_server(pki, lambda _r: (503, b"{}")) as srv:
        result = await post_json(srv.url, {"n": 1}, headers={"Authorization": secret}, policy=policy)
    with pytest.raises(OutboundRefused):
        await post_json("https://10.0.0.1/", {}, headers={"Authorization": secret}, policy=policy)
    assert result.status == 503 and result.retryable
    assert rec.events and rec.events[0][1] == {"host": "127.0.0.1", "status": 503, "ok": False}
    assert "very-secret" not in json.dumps(rec.events, default=str)


@pytest.mark.parametrize(("status", "retryable"), [(None, True), (500, True), (503, True), (408, True),
                                                   (429, True), (400, False), (401, False), (404, False),
                                                   (410, False), (302, False)])
def test_retry_classification(status: int | None, retryable: bool) -> None:
    assert OutboundResult(status=status).retryable is retryable


def test_guarded_backend_refuses_unix_sockets() -> None:
    import asyncio

    with pytest.raises(httpcore.ConnectError):
        asyncio.run(GuardedBackend(OutboundPolicy()).connect_unix_socket("/tmp/x"))


async def test_httpx2_flavour_for_the_mcp_sdk_is_guarded_too(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    from askgate.channels.outbound import guarded_client2

    with listening_socket() as (port, accepted):
        async with guarded_client2(OutboundPolicy()) as client:
            with pytest.raises(OutboundRefused):
                await client.post(f"https://127.0.0.1:{port}/mcp", json={})
        fake_dns(monkeypatch, {"rebind.example": [[PUBLIC], ["127.0.0.1"]]})
        async with guarded_client2(OutboundPolicy()) as client:
            with pytest.raises(Exception, match="refused by the outbound policy"):
                await client.post(f"https://rebind.example:{port}/mcp", json={})
    assert accepted == []
    monkeypatch.undo()
    with https_server(pki) as srv:
        async with guarded_client2(OutboundPolicy(allow=("127.0.0.1",), ssl_context=pki.client_context())) as client:
            r = await client.post(srv.url + "/mcp", json={"a": 1})
    assert r.status_code == 200 and srv.received[0].json() == {"a": 1}
