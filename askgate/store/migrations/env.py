"""Alembic environment: always run on a connection handed in by askgate.store.migrate (sync side of async)."""

from __future__ import annotations

from alembic import context

from askgate.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reached if someone runs the alembic CLI directly
    raise RuntimeError("run migrations through askgate.store.migrate.upgrade(), not the alembic CLI")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
