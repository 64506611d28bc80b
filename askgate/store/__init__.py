"""Persistence: SQLAlchemy 2 async on SQLite (default) or PostgreSQL, migrated by Alembic on open.

The names below are loaded on first use (PEP 562), so that importing a light submodule such as
``askgate.store.tokens`` — as the command line does for every command — does not pay for SQLAlchemy and
Alembic.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = [
    "AskQuery", "AskRow", "Callback", "ConsentGrant", "IdempotentReplay", "Page", "Principal", "Store", "Tx",
    "VersionConflict",
]

if TYPE_CHECKING:
    from askgate.store.store import (
        AskQuery,
        AskRow,
        Callback,
        ConsentGrant,
        IdempotentReplay,
        Page,
        Principal,
        Store,
        Tx,
        VersionConflict,
    )


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(import_module("askgate.store.store"), name)
    raise AttributeError(f"module 'askgate.store' has no attribute {name!r}")
