"""Persistence: SQLAlchemy 2 async on SQLite (default) or PostgreSQL, migrated by Alembic on open."""

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

__all__ = [
    "AskQuery", "AskRow", "Callback", "ConsentGrant", "IdempotentReplay", "Page", "Principal", "Store", "Tx",
    "VersionConflict",
]
