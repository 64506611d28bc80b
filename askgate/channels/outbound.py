"""The one guarded HTTP client every outbound call of askgate goes through.

askgate posts to URLs that askers and ask documents name (AQP ``delivery.endpoint``, ACS
``approver.endpoint``, service webhooks, A2A and MCP peers). Such a URL must never become a way to
reach askgate's own network (server-side request forgery), so every request is vetted twice:

1. :func:`guard_url` (before anything is sent): ``https`` only (plain ``http`` only to loopback, and
   only when the policy says so); no userinfo; the host resolves, and **every** address it resolves to
   is globally routable — not loopback, private, link-local, multicast, reserved, shared or
   unspecified, and never a cloud metadata address — unless the operator allow-list names the host or
   a network holding the address.
2. At connect time (:class:`GuardedBackend`, the transport's network backend) the host is resolved
   again, the addresses are vetted again, and the TCP connection is made to a *vetted address*, never
   to the name. A DNS answer that changes between the check and the connect (rebinding) cannot reach
   a refused address. TLS still verifies the certificate against the URL's host name.

No redirect is ever followed (a redirect could carry the ``Authorization`` header to another host).
Header values are never logged: only the host, the status and the error class are.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx
import structlog

from askgate.errors import AskgateError, Fault

log = structlog.get_logger("askgate.outbound")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Cloud instance-metadata endpoints: refused even when an allow-listed network contains them (only an
#: allow-list entry naming the exact address lets one through).
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "fd00:ec2::254", "169.254.170.2", "100.100.100.200", "168.63.129.16")
)

DEFAULT_TIMEOUT = 10.0


class OutboundRefused(AskgateError):
    """A target the policy refuses. Raised before any connection to it is attempted."""

    def __init__(self, message: str, rule: str) -> None:
        super().__init__("outbound target refused", [Fault("", message, rule)], code="outbound_refused")
        self.rule = rule
        self.reason = message


@dataclass(frozen=True)
class OutboundPolicy:
    """What outbound targets the operator permits, and how TLS is done.

    ``allow``: host names (exact, case-insensitive) or IP networks in CIDR form (a bare address is a
    /32 or /128) that may be reached although they are not globally routable. ``allow_http_loopback``:
    plain ``http`` to a loopback address (development and tests; loopback must still be allowed).
    ``ssl_context``: the trust store and, for mTLS, the client certificate askgate presents; ``None``
    means the system trust store and no client certificate.
    """

    allow: tuple[str, ...] = ()
    allow_http_loopback: bool = False
    ssl_context: ssl.SSLContext | None = None
    timeout: float = DEFAULT_TIMEOUT
    _hosts: frozenset[str] = field(init=False, repr=False, compare=False)
    _nets: tuple[IPNetwork, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        hosts: set[str] = set()
        nets: list[IPNetwork] = []
        for item in self.allow:
            try:
                nets.append(ipaddress.ip_network(item.strip(), strict=False))
            except ValueError:
                hosts.add(item.strip().lower().rstrip("."))
        object.__setattr__(self, "_hosts", frozenset(hosts))
        object.__setattr__(self, "_nets", tuple(nets))

    @classmethod
    def from_settings(cls, allow: Iterable[str] = (), *, allow_http_loopback: bool = False,
                      ca_file: str | None = None, client_cert: str | None = None,
                      client_key: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> OutboundPolicy:
        """A policy from operator settings (file paths for the CA bundle and the mTLS client pair)."""
        ctx: ssl.SSLContext | None = None
        if ca_file or client_cert:
            ctx = ssl.create_default_context(cafile=ca_file)
            if client_cert:
                ctx.load_cert_chain(client_cert, client_key)
        return cls(allow=tuple(allow), allow_http_loopback=allow_http_loopback, ssl_context=ctx, timeout=timeout)

    def host_allowed(self, host: str) -> bool:
        return host.lower().rstrip(".") in self._hosts

    def address_allowed(self, addr: IPAddress) -> bool:
        exact = ipaddress.ip_network(addr)
        if addr in METADATA_ADDRESSES:
            return exact in self._nets
        return any(addr in net for net in self._nets)


@dataclass(frozen=True)
class OutboundResult:
    """The outcome of one attempt. ``status`` is None when no HTTP response arrived (``error`` says why)."""

    status: int | None
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def retryable(self) -> bool:
        """Network errors, 5xx, 408 and 429 may succeed later; any other 4xx never will."""
        return self.status is None or self.status >= 500 or self.status in (408, 429)

    def json(self) -> Any:
        from askgate.jsonload import loads_strict

        return loads_strict(self.body)


# --------------------------------------------------------------------------------------------------
# Address vetting.
# --------------------------------------------------------------------------------------------------

Resolver = Callable[[str, int], Awaitable[list[str]]]


async def _system_resolve(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


#: The resolver used by the guard and the transport. Tests replace it to simulate DNS answers.
resolver: Resolver = _system_resolve


def _ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def address_refusal(addr: IPAddress, policy: OutboundPolicy) -> str | None:
    """Why ``addr`` may not be reached under ``policy`` (None: it may)."""
    if policy.address_allowed(addr):
        return None
    mapped = getattr(addr, "ipv4_mapped", None) or getattr(addr, "sixtofour", None)
    if mapped is not None:
        inner = address_refusal(mapped, policy)
        if inner is not None:
            return inner
    if addr in METADATA_ADDRESSES:
        return "a cloud metadata address"
    for name, bad in (("loopback", addr.is_loopback), ("link-local", addr.is_link_local),
                      ("multicast", addr.is_multicast), ("unspecified", addr.is_unspecified),
                      ("private", addr.is_private), ("reserved", addr.is_reserved)):
        if bad:
            return f"a {name} address"
    if not addr.is_global:
        return "not a globally routable address"
    return None


def _check_url(url: str, policy: OutboundPolicy) -> tuple[str, str, int]:
    """Syntax checks: scheme, userinfo, host. Returns (scheme, host, port)."""
    if not isinstance(url, str) or not url or len(url) > 2048:
        raise OutboundRefused("the URL must be a string of 1-2048 characters", "outbound.url")
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise OutboundRefused("the URL is malformed", "outbound.url") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise OutboundRefused(f"scheme {scheme or '(none)'!r} is not allowed; use https", "outbound.scheme")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise OutboundRefused("the URL must not carry userinfo", "outbound.userinfo")
    if not host:
        raise OutboundRefused("the URL has no host", "outbound.url")
    return scheme, host, port or (443 if scheme == "https" else 80)


async def vet_host(host: str, port: int, policy: OutboundPolicy, *, scheme: str = "https") -> list[str]:
    """Resolve ``host`` and return its addresses, all vetted; raise :class:`OutboundRefused` otherwise.

    An allow-listed host name skips the address checks (the operator vouched for it); otherwise every
    resolved address must pass :func:`address_refusal` — one bad address refuses the host, so a name
    with both a public and a private record cannot be used to reach the private one.
    """
    literal = _ip(host)
    try:
        addresses = [str(literal)] if literal is not None else await resolver(host, port)
    except (OSError, UnicodeError) as exc:
        raise OutboundRefused(f"host {host!r} does not resolve ({type(exc).__name__})", "outbound.resolve") from None
    if not addresses:
        raise OutboundRefused(f"host {host!r} does not resolve", "outbound.resolve")
    named_ok = literal is None and policy.host_allowed(host)
    for text in addresses:
        addr = _ip(text)
        if addr is None:
            raise OutboundRefused(f"host {host!r} resolved to something that is not an IP address", "outbound.resolve")
        if scheme == "http" and not addr.is_loopback:
            raise OutboundRefused("plain http is allowed only to loopback; use https", "outbound.scheme")
        if named_ok:
            continue
        why = address_refusal(addr, policy)
        if why is not None:
            shown = f"host {host!r} resolves to {why}" if literal is None else f"{host} is {why}"
            raise OutboundRefused(f"{shown}, which the outbound policy refuses", "outbound.address")
    return addresses


async def guard_url(url: str, policy: OutboundPolicy) -> list[str]:
    """Refuse ``url`` (raise :class:`OutboundRefused`) unless the policy permits it; return its vetted
    addresses. Nothing is sent and no connection is opened."""
    scheme, host, port = _check_url(url, policy)
    if scheme == "http" and not policy.allow_http_loopback:
        raise OutboundRefused("plain http is not allowed; use https", "outbound.scheme")
    return await vet_host(host, port, policy, scheme=scheme)


# --------------------------------------------------------------------------------------------------
# The transport: vetted addresses at connect time, URL checks per request, no redirects.
# --------------------------------------------------------------------------------------------------


def _backend_class(core: Any) -> Any:
    """The guarded network backend for one httpcore flavour (``httpcore`` or ``httpcore2``)."""

    class _GuardedBackend(core.AsyncNetworkBackend):  # type: ignore[misc,name-defined]
        """Connects only to vetted addresses of the requested host (TLS keeps the host name for SNI)."""

        def __init__(self, policy: OutboundPolicy, inner: Any = None) -> None:
            self.policy = policy
            if inner is None:
                from importlib import import_module

                inner = import_module(f"{core.__name__}._backends.auto").AutoBackend()
            self.inner = inner

        async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                              local_address: str | None = None, socket_options: Iterable[Any] | None = None) -> Any:
            try:  # the scheme was checked per request (the transport); here: the addresses, again
                addresses = await vet_host(host, port, self.policy)
            except OutboundRefused as exc:
                raise core.ConnectError(f"refused by the outbound policy: {exc.reason}") from exc
            last: Exception | None = None
            for address in addresses:
                try:
                    return await self.inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                        socket_options=socket_options)
                except (core.ConnectError, core.ConnectTimeout, OSError) as exc:
                    last = exc
            raise core.ConnectError(f"could not connect: {type(last).__name__}")

        async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                      socket_options: Iterable[Any] | None = None) -> Any:
            raise core.ConnectError("unix sockets are not outbound targets")

        async def sleep(self, seconds: float) -> None:
            await self.inner.sleep(seconds)

    return _GuardedBackend


def _transport_class(lib: Any, core: Any, backend_cls: Any) -> Any:
    """The guarded transport for one httpx flavour: :func:`guard_url` per request, vetted connects."""

    class _GuardedTransport(lib.AsyncHTTPTransport):  # type: ignore[misc,name-defined]
        def __init__(self, policy: OutboundPolicy, *, backend: Any = None) -> None:
            verify: ssl.SSLContext | bool = policy.ssl_context if policy.ssl_context is not None else True
            super().__init__(verify=verify, trust_env=False)
            self.policy = policy
            ctx = policy.ssl_context if policy.ssl_context is not None else lib.create_ssl_context(trust_env=False)
            self._pool = core.AsyncConnectionPool(ssl_context=ctx, max_connections=20, keepalive_expiry=5.0,
                                                  network_backend=backend_cls(policy, backend))

        async def handle_async_request(self, request: Any) -> Any:
            await guard_url(str(request.url), self.policy)
            return await super().handle_async_request(request)

    return _GuardedTransport


#: The guarded backend and transport for ``httpx`` (a2a-sdk and askgate's own calls).
GuardedBackend = _backend_class(httpcore)
GuardedTransport = _transport_class(httpx, httpcore, GuardedBackend)


def guarded_client(policy: OutboundPolicy, *, timeout: float | None = None,
                   headers: Mapping[str, str] | None = None, backend: Any = None) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` over :class:`GuardedTransport`: no redirects, no proxies from the
    environment, the policy's TLS settings. Use it for SDK clients built on httpx (a2a-sdk)."""
    return httpx.AsyncClient(transport=GuardedTransport(policy, backend=backend), follow_redirects=False,
                             trust_env=False, timeout=timeout or policy.timeout, headers=dict(headers or {}))


_HTTPX2: dict[str, Any] = {}


def guarded_client2(policy: OutboundPolicy, *, timeout: Any = None, headers: Mapping[str, str] | None = None,
                    backend: Any = None) -> Any:
    """The same guarded client for ``httpx2`` (the HTTP library of the ``mcp`` SDK 2.x): pass it as
    ``http_client`` to ``mcp.client.streamable_http.streamable_http_client``."""
    import httpcore2
    import httpx2

    if not _HTTPX2:
        _HTTPX2["backend"] = _backend_class(httpcore2)
        _HTTPX2["transport"] = _transport_class(httpx2, httpcore2, _HTTPX2["backend"])
    return httpx2.AsyncClient(transport=_HTTPX2["transport"](policy, backend=backend), follow_redirects=False,
                              trust_env=False, timeout=timeout or policy.timeout, headers=dict(headers or {}))


async def post_json(url: str, body: Any, *, headers: Mapping[str, str] | None = None,
                    policy: OutboundPolicy, timeout: float | None = None,
                    content: bytes | None = None) -> OutboundResult:
    """POST ``body`` as JSON (or the exact bytes ``content``) to ``url``, once.

    Raises :class:`OutboundRefused` (before connecting) when the target is refused; returns an
    :class:`OutboundResult` for everything else, network errors included. Logs the host, status and
    error class only — never a header value or the body.
    """
    await guard_url(url, policy)
    host = urlsplit(url).hostname
    send_headers = {"Content-Type": "application/json", **(headers or {})}
    if content is None:
        import json

        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    async with guarded_client(policy, timeout=timeout) as client:
        try:
            resp = await client.post(url, content=content, headers=send_headers)
        except (httpx.HTTPError, OSError) as exc:
            # OSError: a TLS 1.3 server that refuses our client certificate sends its alert after the
            # handshake, so it can surface as a raw ssl.SSLError from the read rather than an httpx error.
            log.info("outbound_post", host=host, ok=False, error=type(exc).__name__)
            return OutboundResult(status=None, error=f"network error: {type(exc).__name__}")
    log.info("outbound_post", host=host, status=resp.status_code, ok=200 <= resp.status_code < 300)
    return OutboundResult(status=resp.status_code, body=resp.content[:1024 * 1024], headers=dict(resp.headers),
                          error=None if 200 <= resp.status_code < 300 else f"HTTP {resp.status_code}")


__all__ = [
    "METADATA_ADDRESSES",
    "GuardedBackend",
    "GuardedTransport",
    "OutboundPolicy",
    "OutboundRefused",
    "OutboundResult",
    "address_refusal",
    "guard_url",
    "guarded_client",
    "guarded_client2",
    "post_json",
    "vet_host",
]
