"""The hot statements on SQLite, run straight on the DB-API connection.

Building, cache-keying and executing a SQLAlchemy Core statement costs ~100 µs of Python; the SQLite
statement itself costs a few µs. The broker's per-request statements (read an ask, insert or
compare-and-set it, its offers, chain heads and audit entries, token and consent look-ups) are therefore
written here once as SQL text over the same connection and transaction SQLAlchemy opened. They store
exactly what the Core path stores (naive-UTC ``YYYY-MM-DD HH:MM:SS.ffffff`` datetimes, 0/1 booleans), so
both paths read each other's rows; PostgreSQL keeps the Core path.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from askgate.core.timefmt import sql_utc

ASK_COLUMNS = ("id, version, state, terminal, dialect, asker, session_id, external_id, created_at, updated_at, "
               "next_wake_at, record")


def dbapi(conn: Any) -> sqlite3.Connection:
    """The sqlite3 connection under an InlineConnection (inside whatever transaction it holds)."""
    return conn.sync_connection.connection.dbapi_connection  # type: ignore[no-any-return]


def dt_out(value: datetime | None) -> str | None:
    """A datetime as SQLAlchemy's SQLite DATETIME stores it (aware in, naive UTC text out)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetime given to the store; pass an aware UTC datetime")
    # isoformat with fixed microseconds, less its "+00:00": SQLAlchemy's text (years zero-padded to four
    # digits, which strftime's %Y did not do), kept per instant (askgate/core/timefmt.py)
    return sql_utc(value)


def dt_in(value: str | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def offers(db: sqlite3.Connection, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    if not ids:
        return {}
    out: dict[str, list[str]] = {}
    marks = ",".join("?" * len(ids))
    for ask_id, resp in db.execute(f"SELECT ask_id, respondent_id FROM ask_offers WHERE ask_id IN ({marks})",
                                   tuple(ids)):
        out.setdefault(ask_id, []).append(resp)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def get_ask_row(db: sqlite3.Connection, ask_id: str) -> tuple[Any, ...] | None:
    """The ask's columns and, last, its offers as a JSON array: one statement, so one snapshot."""
    return db.execute(f"SELECT {ASK_COLUMNS}, (SELECT json_group_array(respondent_id) FROM ask_offers "  # type: ignore[no-any-return]
                      "WHERE ask_id = asks.id) FROM asks WHERE id = ?", (ask_id,)).fetchone()


def insert_ask(db: sqlite3.Connection, v: dict[str, Any]) -> None:
    db.execute(f"INSERT INTO asks ({ASK_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
               (v["id"], v["version"], v["state"], int(v["terminal"]), v["dialect"], v["asker"], v["session_id"],
                v["external_id"], dt_out(v["created_at"]), dt_out(v["updated_at"]), dt_out(v["next_wake_at"]),
                v["record"]))


def cas_ask(db: sqlite3.Connection, v: dict[str, Any], expected_version: int) -> int:
    cur = db.execute(
        "UPDATE asks SET version=?, state=?, terminal=?, dialect=?, asker=?, session_id=?, external_id=?, "
        "updated_at=?, next_wake_at=?, record=? WHERE id = ? AND version = ?",
        (v["version"], v["state"], int(v["terminal"]), v["dialect"], v["asker"], v["session_id"], v["external_id"],
         dt_out(v["updated_at"]), dt_out(v["next_wake_at"]), v["record"], v["id"], expected_version))
    return cur.rowcount


def cas_many(db: sqlite3.Connection, rows: Sequence[tuple[dict[str, Any], int]]) -> int:
    """Several compare-and-sets in one executemany; returns how many rows matched in total."""
    cur = db.executemany(
        "UPDATE asks SET version=?, state=?, terminal=?, dialect=?, asker=?, session_id=?, external_id=?, "
        "updated_at=?, next_wake_at=?, record=? WHERE id = ? AND version = ?",
        [(v["version"], v["state"], int(v["terminal"]), v["dialect"], v["asker"], v["session_id"], v["external_id"],
          dt_out(v["updated_at"]), dt_out(v["next_wake_at"]), v["record"], v["id"], expected)
         for v, expected in rows])
    return cur.rowcount


def set_offers(db: sqlite3.Connection, ask_id: str, offered: Iterable[str], *, replace: bool) -> None:
    if replace:
        db.execute("DELETE FROM ask_offers WHERE ask_id = ?", (ask_id,))
    rows = [(ask_id, r) for r in dict.fromkeys(offered)]
    _each_row(db, "INSERT INTO ask_offers (ask_id, respondent_id) VALUES (?, ?)", rows)


def chain_head(db: sqlite3.Connection, kind: str, chain_id: str) -> tuple[int, str | None] | None:
    return db.execute("SELECT length, head_hash FROM chain_heads WHERE chain_kind = ? AND chain_id = ?",  # type: ignore[no-any-return]
                      (kind, chain_id)).fetchone()


def write_chain(db: sqlite3.Connection, entries: list[dict[str, Any]], new: list[tuple[Any, ...]],
                old: list[tuple[Any, ...]]) -> None:
    _each_row(db, "INSERT INTO audit_entries (chain_kind, chain_id, seq, entry_hash, entry) VALUES (?,?,?,?,?)",
                 [(e["chain_kind"], e["chain_id"], e["seq"], e["entry_hash"], e["entry"]) for e in entries])
    _each_row(db, "INSERT INTO chain_heads (chain_kind, chain_id, length, head_hash) VALUES (?,?,?,?)", new)
    _each_row(db, "UPDATE chain_heads SET length = ?, head_hash = ? WHERE chain_kind = ? AND chain_id = ?", old)


def _each_row(db: sqlite3.Connection, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """``executemany``, or ``execute`` for the usual single row (which skips executemany's iteration set-up)."""
    if len(rows) == 1:
        db.execute(sql, rows[0])
    elif rows:
        db.executemany(sql, rows)


def delete_secrets(db: sqlite3.Connection, ask_id: str) -> None:
    db.execute("DELETE FROM ask_secrets WHERE ask_id = ?", (ask_id,))


def principal_for_token_hash(db: sqlite3.Connection, digest: str) -> tuple[str, str] | None:
    return db.execute(  # type: ignore[no-any-return]
        "SELECT principals.id, principals.role FROM principals JOIN api_tokens "
        "ON api_tokens.principal_id = principals.id WHERE api_tokens.token_hash = ? AND api_tokens.revoked = 0",
        (digest,)).fetchone()


def consent_map(db: sqlite3.Connection, ids: Sequence[str]) -> dict[tuple[str, str], bool]:
    marks = ",".join("?" * len(ids))
    return {(r, s): bool(g) for r, s, g in db.execute(
        f"SELECT respondent_id, scope, granted FROM consent_grants WHERE respondent_id IN ({marks})", tuple(ids))}


def next_wake(db: sqlite3.Connection) -> datetime | None:
    r = db.execute("SELECT next_wake_at FROM asks WHERE terminal = 0 AND next_wake_at IS NOT NULL "
                   "ORDER BY next_wake_at LIMIT 1").fetchone()
    return dt_in(r[0]) if r else None


def due_rows(db: sqlite3.Connection, now: datetime, limit: int) -> list[tuple[Any, ...]]:
    """Live asks whose wake time has come, earliest first, each with its offers as a JSON array (last)."""
    return db.execute(f"SELECT {ASK_COLUMNS}, (SELECT json_group_array(respondent_id) FROM ask_offers "  # type: ignore[no-any-return]
                      "WHERE ask_id = asks.id) FROM asks WHERE terminal = 0 AND next_wake_at <= ? "
                      "ORDER BY next_wake_at LIMIT ?", (dt_out(now), limit)).fetchall()


def pending_callbacks_for(db: sqlite3.Connection, ids: Sequence[str]) -> list[tuple[Any, ...]]:
    """(id, ask_id, url, delivered_at, attempts) of the undelivered callbacks of these asks, by id."""
    marks = ",".join("?" * len(ids))
    return db.execute(f"SELECT id, ask_id, url, delivered_at, attempts FROM callbacks WHERE ask_id IN ({marks}) "  # type: ignore[no-any-return]
                      "AND delivered_at IS NULL ORDER BY id", tuple(ids)).fetchall()
