"""The start-up shortcut of askgate/store/migrate.py: a database at HEAD is recognised without Alembic, so
HEAD must be the newest revision shipped, and a database behind it must still be migrated."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from alembic.config import Config
from alembic.script import ScriptDirectory

from askgate.store import Store
from askgate.store.migrate import HEAD, MIGRATIONS


def _open_and_close(url: str) -> None:
    async def run() -> None:
        store = await Store.open(url)
        await store.close()

    asyncio.run(run())


def test_head_is_the_newest_shipped_revision() -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(cfg).get_heads() == [HEAD]


def test_new_database_is_migrated_and_reopened_at_head(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    _open_and_close(url)
    db = sqlite3.connect(tmp_path / "a.db")
    assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "asks" in tables
    db.close()
    _open_and_close(url)  # the shortcut path: already at HEAD


def test_database_behind_head_is_migrated(tmp_path: Path) -> None:
    """A schema that records no revision (as before the first migration) is brought to HEAD, not trusted."""
    url = f"sqlite:///{tmp_path / 'b.db'}"
    _open_and_close(url)
    db = sqlite3.connect(tmp_path / "b.db")
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        db.execute(f'DROP TABLE "{name}"')
    db.commit()
    db.close()
    _open_and_close(url)
    db = sqlite3.connect(tmp_path / "b.db")
    assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
    assert "asks" in {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
