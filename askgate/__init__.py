"""askgate: one broker for every way an AI agent stops to ask."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from askgate.errors import AskgateError, Fault

if TYPE_CHECKING:
    from askgate.client import AsyncClient, Client

__all__ = ["AskgateError", "AsyncClient", "Client", "Fault", "__version__"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``askgate.Client`` and ``askgate.AsyncClient`` load httpx on first use, not on every ``import askgate``
    (the server's start-up, which settles overdue deadlines, should not wait for the client)."""
    if name in ("Client", "AsyncClient"):
        from askgate import client

        return getattr(client, name)
    raise AttributeError(f"module 'askgate' has no attribute {name!r}")
