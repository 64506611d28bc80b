"""Durable bookkeeping for pushed answers (AQP ``https``/``a2a``/``mcp`` bindings).

One row per ask in the store's key-value table, so no schema migration is needed: ``push:<ask id>``
while the push is pending (written in the same transaction that records the answer, so an answer is
never committed without its pending push), replaced by ``pushed:<ask id>`` holding the final state
(``delivered``, ``delivery_failed`` or ``expired``). After a restart every ``push:`` row is re-driven.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from askgate.store import tables as t
from askgate.store.store import Store, Tx

PENDING, FINAL = "push:", "pushed:"
STATES = ("pending", "delivered", "delivery_failed", "expired")


@dataclass(frozen=True)
class PushState:
    ask_id: str
    binding: str
    state: str = "pending"
    attempts: int = 0
    last_error: str | None = None
    updated_at: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> PushState:
        data: dict[str, Any] = json.loads(text)
        return cls(ask_id=str(data["ask_id"]), binding=str(data["binding"]), state=str(data.get("state", "pending")),
                   attempts=int(data.get("attempts", 0)), last_error=data.get("last_error"),
                   updated_at=data.get("updated_at"))


async def add_pending(tx: Tx, ask_id: str, binding: str) -> None:
    """Record a pending push (idempotent: an existing row is kept)."""
    stmt = tx._insert(t.kv).values(key=PENDING + ask_id, value=PushState(ask_id, binding).to_json())
    await tx.conn.execute(stmt.on_conflict_do_nothing())


async def update(tx: Tx, state: PushState, now: datetime) -> None:
    """Save ``state``: still pending (attempt count, last error) or final (moves the row)."""
    from dataclasses import replace

    state = replace(state, updated_at=now.isoformat())
    if state.state == "pending":
        await tx.conn.execute(sa.update(t.kv).where(t.kv.c.key == PENDING + state.ask_id)
                              .values(value=state.to_json()))
        return
    await tx.conn.execute(sa.delete(t.kv).where(t.kv.c.key == PENDING + state.ask_id))
    stmt = tx._insert(t.kv).values(key=FINAL + state.ask_id, value=state.to_json())
    await tx.conn.execute(stmt.on_conflict_do_update(index_elements=["key"], set_={"value": state.to_json()}))


async def get(store: Store, ask_id: str) -> PushState | None:
    async with store.engines.read.connect() as conn:
        rows = (await conn.execute(sa.select(t.kv.c.key, t.kv.c.value)
                                   .where(t.kv.c.key.in_([PENDING + ask_id, FINAL + ask_id])))).all()
    final = [r for r in rows if r.key.startswith(FINAL)]
    chosen = final or rows
    return PushState.from_json(chosen[0].value) if chosen else None


async def pending(store: Store, limit: int = 500) -> list[PushState]:
    async with store.engines.read.connect() as conn:
        rows = (await conn.execute(sa.select(t.kv.c.value).where(t.kv.c.key.like(PENDING + "%"))
                                   .order_by(t.kv.c.key).limit(limit))).all()
    return [PushState.from_json(r.value) for r in rows]
