"""Mutual TLS for askgate's own server: the client certificate's identities, for ACS ``mtls`` approvers.

uvicorn verifies a client certificate against ``ssl_ca_certs`` (with ``ssl_cert_reqs`` optional or
required) but does not hand it to the app. :class:`PeerCertH11Protocol` (pass ``http=`` to uvicorn)
puts the verified peer certificate into the ASGI scope as ``scope["extensions"]["tls"]["client_cert"]``
(the ``ssl.getpeercert()`` dict); :func:`client_identities` reads the identities from it: every SAN
(DNS, URI, email, IP) and the subject CN. Only a certificate the TLS layer verified ever appears there
(an unverified one gives ``getpeercert() == {}``), so nothing a client merely *claims* is trusted.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from uvicorn.protocols.http.h11_impl import H11Protocol


class PeerCertH11Protocol(H11Protocol):
    """uvicorn's h11 protocol plus the verified client certificate in the scope."""

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        cert = ssl_object.getpeercert() if ssl_object is not None else None
        if not cert:
            return
        inner = self.app

        async def app(scope: Any, receive: Any, send: Any) -> None:
            if scope.get("type") in ("http", "websocket"):
                extensions = dict(scope.get("extensions") or {})
                extensions["tls"] = {**extensions.get("tls", {}), "client_cert": cert}
                scope["extensions"] = extensions
            await inner(scope, receive, send)

        self.app = app


def peer_certificate(request: Request) -> dict[str, Any] | None:
    tls = (request.scope.get("extensions") or {}).get("tls") or {}
    cert = tls.get("client_cert")
    return cert if isinstance(cert, dict) and cert else None


def certificate_identities(cert: dict[str, Any]) -> list[str]:
    """SAN values (``DNS``, ``URI``, ``email``, ``IP Address``) then the subject CN."""
    out: list[str] = []
    for kind, value in cert.get("subjectAltName", ()):
        if kind in ("DNS", "URI", "email", "IP Address") and isinstance(value, str):
            out.append(value)
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName" and isinstance(value, str):
                out.append(value)
    return list(dict.fromkeys(out))


def client_identities(request: Request) -> list[str]:
    cert = peer_certificate(request)
    return certificate_identities(cert) if cert is not None else []
