"""Outcome callbacks: POST the final view of an ask to URLs its asker registered.

Kept deliberately small and safe (hardened outbound delivery is a later issue): http(s) only, no
userinfo in the URL, plain http only to loopback unless the operator allows it, no redirects followed,
a short timeout, a few attempts; a failure is recorded on the callback row, never raised.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

import httpx
import structlog

from askgate.errors import Fault

log = structlog.get_logger("askgate.callbacks")


def check_callback_url(url: Any, *, allow_http: bool = False) -> list[Fault]:
    if not isinstance(url, str) or not url:
        return [Fault("/url", "url must be a non-empty string", "type")]
    if len(url) > 2048:
        return [Fault("/url", "url is longer than 2048 characters", "maxLength")]
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return [Fault("/url", "url is not a valid URL", "format")]
    if parts.scheme not in ("https", "http") or not host:
        return [Fault("/url", "url must be an absolute http(s) URL", "callback.scheme")]
    if parts.username is not None or parts.password is not None:
        return [Fault("/url", "url must not carry userinfo", "callback.userinfo")]
    if parts.scheme == "http" and not allow_http and not _loopback(host):
        return [Fault("/url", "plain http is allowed only to loopback; use https", "callback.scheme")]
    return []


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def post_outcome(client: httpx.AsyncClient, url: str, body: dict[str, Any], *, idempotency_key: str) -> str | None:
    """POST once; returns None on any 2xx, else a short error description (no response body echoed)."""
    try:
        resp = await client.post(url, json=body, headers={"Idempotency-Key": idempotency_key},
                                 follow_redirects=False, timeout=10.0)
    except httpx.HTTPError as exc:
        return f"network error: {type(exc).__name__}"
    if 200 <= resp.status_code < 300:
        return None
    return f"HTTP {resp.status_code}"
