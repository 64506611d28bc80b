"""Initial schema: asks, offers, audit chains, consent, intents, principals, tokens, idempotency,
callbacks, sealed secrets.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from askgate.store.tables import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "asks",
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
    op.create_index("ix_asks_created", "asks", ["created_at", "id"])
    op.create_index("ix_asks_state", "asks", ["state"])
    op.create_index("ix_asks_asker", "asks", ["asker"])
    op.create_index("ix_asks_session", "asks", ["session_id"])
    op.create_index("ix_asks_wake", "asks", ["terminal", "next_wake_at"])
    op.create_table(
        "ask_offers",
        sa.Column("ask_id", sa.String(64), sa.ForeignKey("asks.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("respondent_id", sa.String(256), primary_key=True),
    )
    op.create_index("ix_offers_respondent", "ask_offers", ["respondent_id"])
    op.create_table(
        "chain_heads",
        sa.Column("chain_kind", sa.String(16), primary_key=True),
        sa.Column("chain_id", sa.String(256), primary_key=True),
        sa.Column("length", sa.Integer, nullable=False),
        sa.Column("head_hash", sa.String(64), nullable=True),
    )
    op.create_table(
        "audit_entries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("chain_kind", sa.String(16), nullable=False),
        sa.Column("chain_id", sa.String(256), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("entry_hash", sa.String(64), nullable=False),
        sa.Column("entry", sa.Text, nullable=False),
        sa.UniqueConstraint("chain_kind", "chain_id", "seq", name="uq_audit_chain_seq"),
    )
    op.create_table(
        "consent_grants",
        sa.Column("respondent_id", sa.String(256), primary_key=True),
        sa.Column("scope", sa.String(256), primary_key=True),
        sa.Column("granted", sa.Boolean, nullable=False),
        sa.Column("decided_at", UTCDateTime, nullable=False),
        sa.Column("ask_id", sa.String(64), nullable=True),
    )
    op.create_table(
        "session_intents",
        sa.Column("session_id", sa.String(256), primary_key=True),
        sa.Column("capabilities", sa.Text, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "principals",
        sa.Column("id", sa.String(256), primary_key=True),
        sa.Column("role", sa.String(32), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "api_tokens",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("principal_id", sa.String(256), sa.ForeignKey("principals.id"), nullable=False),
        sa.Column("label", sa.String(256), nullable=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("revoked", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_table(
        "idempotency",
        sa.Column("principal_id", sa.String(256), primary_key=True),
        sa.Column("operation", sa.String(64), primary_key=True),
        sa.Column("key", sa.String(256), primary_key=True),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("ask_id", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "callbacks",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ask_id", sa.String(64), sa.ForeignKey("asks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("delivered_at", UTCDateTime, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.String(512), nullable=True),
    )
    op.create_index("ix_callbacks_ask", "callbacks", ["ask_id"])
    op.create_table(
        "ask_secrets",
        sa.Column("ask_id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(64), primary_key=True),
        sa.Column("sealed", sa.Text, nullable=False),
    )
    op.create_table(
        "askgate_kv",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for name in ("askgate_kv", "ask_secrets", "callbacks", "idempotency", "api_tokens", "principals",
                 "session_intents", "consent_grants", "audit_entries", "chain_heads", "ask_offers", "asks"):
        op.drop_table(name)
