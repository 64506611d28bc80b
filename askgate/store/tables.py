"""The relational schema (SQLAlchemy Core). Alembic migrations create it; this module names it for queries.

Asks are stored as the core's JSON record plus the columns we filter and schedule on, so the lifecycle can
evolve its record without a migration while listing, paging and the deadline scan stay indexed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect as SADialect


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """Timezone-aware UTC in, timezone-aware UTC out, on every backend (SQLite has no time zones)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: SADialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; pass an aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: SADialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = sa.MetaData()

asks = sa.Table(
    "asks",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("state", sa.String(32), nullable=False),
    sa.Column("terminal", sa.Boolean, nullable=False),
    sa.Column("dialect", sa.String(32), nullable=False),
    sa.Column("asker", sa.String(256), nullable=True),
    sa.Column("session_id", sa.String(256), nullable=True),
    sa.Column("external_id", sa.String(256), nullable=True),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("next_wake_at", UTCDateTime, nullable=True),
    sa.Column("record", sa.Text, nullable=False),
)

ask_offers = sa.Table(
    "ask_offers",
    metadata,
    sa.Column("ask_id", sa.String(64), sa.ForeignKey("asks.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("respondent_id", sa.String(256), primary_key=True),
)

chain_heads = sa.Table(
    "chain_heads",
    metadata,
    sa.Column("chain_kind", sa.String(16), primary_key=True),
    sa.Column("chain_id", sa.String(256), primary_key=True),
    sa.Column("length", sa.Integer, nullable=False),
    sa.Column("head_hash", sa.String(64), nullable=True),
)

audit_entries = sa.Table(
    "audit_entries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("chain_kind", sa.String(16), nullable=False),
    sa.Column("chain_id", sa.String(256), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("entry_hash", sa.String(64), nullable=False),
    sa.Column("entry", sa.Text, nullable=False),
    sa.UniqueConstraint("chain_kind", "chain_id", "seq", name="uq_audit_chain_seq"),
)

consent_grants = sa.Table(
    "consent_grants",
    metadata,
    sa.Column("respondent_id", sa.String(256), primary_key=True),
    sa.Column("scope", sa.String(256), primary_key=True),
    sa.Column("granted", sa.Boolean, nullable=False),
    sa.Column("decided_at", UTCDateTime, nullable=False),
    sa.Column("ask_id", sa.String(64), nullable=True),
)

session_intents = sa.Table(
    "session_intents",
    metadata,
    sa.Column("session_id", sa.String(256), primary_key=True),
    sa.Column("capabilities", sa.Text, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)

principals = sa.Table(
    "principals",
    metadata,
    sa.Column("id", sa.String(256), primary_key=True),
    sa.Column("role", sa.String(32), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
)

api_tokens = sa.Table(
    "api_tokens",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("principal_id", sa.String(256), sa.ForeignKey("principals.id"), nullable=False),
    sa.Column("label", sa.String(256), nullable=True),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("revoked", sa.Boolean, nullable=False, server_default=sa.false()),
)

idempotency = sa.Table(
    "idempotency",
    metadata,
    sa.Column("principal_id", sa.String(256), primary_key=True),
    sa.Column("operation", sa.String(64), primary_key=True),
    sa.Column("key", sa.String(256), primary_key=True),
    sa.Column("request_hash", sa.String(64), nullable=False),
    sa.Column("ask_id", sa.String(64), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
)

callbacks = sa.Table(
    "callbacks",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("ask_id", sa.String(64), sa.ForeignKey("asks.id", ondelete="CASCADE"), nullable=False),
    sa.Column("url", sa.String(2048), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("delivered_at", UTCDateTime, nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_error", sa.String(512), nullable=True),
)

ask_secrets = sa.Table(
    "ask_secrets",
    metadata,
    sa.Column("ask_id", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(64), primary_key=True),
    sa.Column("sealed", sa.Text, nullable=False),
)

kv = sa.Table(
    "askgate_kv",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)
