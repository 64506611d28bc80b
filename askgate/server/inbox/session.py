"""Inbox sign-in: a respondent token becomes a sealed, HttpOnly session cookie; every POST needs a CSRF token.

The cookie holds the API token itself, sealed (Fernet) with the store's secret key, plus the time it was
issued and a random CSRF nonce. Keeping the token (not a copy of the principal) means a revoked token
ends its browser sessions too (within the server's auth-cache seconds), with no session table. The
CSRF nonce is the synchronizer token: pages carry it (a hidden ``csrf`` field, a ``<meta>`` for the
script's ``X-CSRF-Token`` header) and a POST without the matching value is refused, whatever
``SameSite`` a browser implements. Signing in has its own double-submit nonce (cookie + hidden field),
so a hostile page cannot sign a victim into the attacker's account either.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
from dataclasses import dataclass

from fastapi import Request, Response

from askgate.store import Principal

SESSION_COOKIE = "askgate_session"
LOGIN_COOKIE = "askgate_login"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
MAX_AGE = 12 * 3600


@dataclass(frozen=True)
class Session:
    principal: Principal
    csrf: str
    issued_at: float


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _set(response: Response, request: Request, name: str, value: str, max_age: int | None) -> None:
    response.set_cookie(
        name, value, max_age=max_age, httponly=True, samesite="lax", secure=_secure(request), path="/"
    )


async def start_session(request: Request, response: Response, token: str) -> str:
    """Seal ``token`` into the session cookie; returns the new CSRF nonce."""
    box = await request.app.state.store.secret_box()
    csrf = secrets.token_urlsafe(24)
    sealed = box.seal(json.dumps({"t": token, "iat": time.time(), "c": csrf}))
    _set(response, request, SESSION_COOKIE, sealed, MAX_AGE)
    response.delete_cookie(LOGIN_COOKIE, path="/")
    return csrf


def end_session(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/")


async def principal_for(request: Request, token: str) -> Principal | None:
    """The principal of an API token, through the server's short auth cache."""
    cache = request.app.state.auth_cache
    who = cache.get(token)
    if who is None:
        who = await request.app.state.store.principal_for_token(token)
        if who is not None and cache.ttl > 0:
            cache.put(token, who)
    return who


async def current_session(request: Request) -> Session | None:
    """The signed-in respondent, or None (no cookie, tampered, expired, token revoked, not a respondent)."""
    raw = request.cookies.get(SESSION_COOKIE)
    if not raw or len(raw) > 4096:
        return None
    box = await request.app.state.store.secret_box()
    opened = box.open(raw)
    if opened is None:
        return None
    try:
        data = json.loads(opened)
        token, issued, csrf = str(data["t"]), float(data["iat"]), str(data["c"])
    except (ValueError, KeyError, TypeError):
        return None
    if time.time() - issued > MAX_AGE:
        return None
    who = await principal_for(request, token)
    if who is None or who.role != "respondent":
        return None
    return Session(who, csrf, issued)


def csrf_ok(expected: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(expected.encode(), str(given).encode())


def login_nonce(request: Request) -> str:
    """The double-submit nonce of the sign-in form (reused while its cookie lives)."""
    nonce = request.cookies.get(LOGIN_COOKIE)
    if not nonce or len(nonce) > 100:
        nonce = secrets.token_urlsafe(24)
    return nonce


def set_login_nonce(request: Request, response: Response, nonce: str) -> None:
    _set(response, request, LOGIN_COOKIE, nonce, 3600)


def same_origin(request: Request) -> bool:
    """A POST whose Origin header (when the browser sends one) names this very server (or the host a
    reverse proxy says it forwarded, ``X-Forwarded-Host``; a forged one still needs the CSRF token)."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    hosts = {
        request.headers.get("host", ""),
        request.headers.get("x-forwarded-host", "").split(",")[0].strip(),
    }
    return origin.split("://", 1)[-1] in hosts - {""}
