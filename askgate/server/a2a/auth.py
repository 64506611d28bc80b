"""Bearer-token authentication for the A2A routes, and the A2A call context built from it.

The A2A SDK builds its ``ServerCallContext`` synchronously, so the (asynchronous) token lookup runs
first, in Starlette's ``AuthenticationMiddleware``; the context builder then carries the askgate
:class:`Principal` as the A2A user. Its id is the task owner, so the SDK's task store scopes every
task to the principal that created it (protocols.md §1.7: only the owner may continue a task).
"""

from __future__ import annotations

from typing import Any

from a2a.auth.user import User
from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.server.context import ServerCallContext
from a2a.server.routes.common import DefaultServerCallContextBuilder
from starlette.authentication import AuthCredentials, AuthenticationBackend, AuthenticationError, BaseUser
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from askgate.store import Principal

LEGACY_EXTENSION_HEADER = "X-A2A-Extensions"


class PrincipalUser(BaseUser):
    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.principal.id


class A2APrincipal(User):
    """The A2A SDK's user: ``user_name`` is the askgate principal id (the task owner)."""

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self.principal.id


class BearerBackend(AuthenticationBackend):
    """Authorization: Bearer <askgate token>, looked up in the store of the app that mounts A2A."""

    def __init__(self, main_app: Any) -> None:
        self.main_app = main_app

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser]:
        scheme, _, token = conn.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthenticationError("a bearer token is required")
        token = token.strip()
        state = self.main_app.state
        cache = getattr(state, "auth_cache", None)
        who = cache.get(token) if cache is not None else None
        if who is None:
            who = await state.store.principal_for_token(token)
            if who is None:
                raise AuthenticationError("unknown or revoked token")
            if cache is not None and cache.ttl > 0:
                cache.put(token, who)
        return AuthCredentials(["authenticated", who.role]), PrincipalUser(who)


def auth_error(_conn: HTTPConnection, exc: Exception) -> Response:
    return JSONResponse({"error": {"code": 401, "status": "UNAUTHENTICATED", "message": str(exc)}}, status_code=401,
                        headers={"WWW-Authenticate": 'Bearer realm="askgate"'})


class ContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's default context plus the principal, and the older ``X-A2A-Extensions`` header."""

    def build(self, request: Request) -> ServerCallContext:
        ctx = super().build(request)
        legacy = request.headers.getlist(LEGACY_EXTENSION_HEADER)
        if legacy:
            ctx.requested_extensions |= get_requested_extensions(legacy)
        return ctx

    def build_user(self, request: Request) -> User:
        user = request.scope.get("user")
        if isinstance(user, PrincipalUser):
            return A2APrincipal(user.principal)
        return super().build_user(request)


def principal_of(ctx: ServerCallContext) -> Principal:
    user = ctx.user
    if isinstance(user, A2APrincipal):
        return user.principal
    raise PermissionError("unauthenticated")


__all__ = [
    "HTTP_EXTENSION_HEADER",
    "A2APrincipal",
    "BearerBackend",
    "ContextBuilder",
    "PrincipalUser",
    "auth_error",
    "principal_of",
]
