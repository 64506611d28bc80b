"""`askgate token create` (in-process through Typer's runner; `askgate serve` runs for real in test_serve.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from typer.testing import CliRunner

from askgate.cli import app
from askgate.store import Store


def test_token_create_prints_a_working_token_once(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    runner = CliRunner()
    made = runner.invoke(app, ["token", "create", "--role", "respondent", "--principal", "alice", "--db", db])
    assert made.exit_code == 0, made.output
    token = made.output.strip()
    assert token.startswith("agk_")

    async def who() -> tuple[str, str] | None:
        store = await Store.open(db)
        try:
            p = await store.principal_for_token(token)
            return (p.id, p.role) if p else None
        finally:
            await store.close()

    assert asyncio.run(who()) == ("alice", "respondent")
    assert token.encode() not in (tmp_path / "cli.db").read_bytes()
    clash = runner.invoke(app, ["token", "create", "--role", "admin", "--principal", "alice", "--db", db])
    assert clash.exit_code == 2
    bad = runner.invoke(app, ["token", "create", "--role", "king", "--principal", "bob", "--db", db])
    assert bad.exit_code != 0


def test_serve_runs_on_uvloop() -> None:
    """`askgate serve` runs its own event loop (to settle overdue deadlines before building the app); it
    must be uvloop, as uvicorn.run would have chosen, or every request costs about a tenth more CPU."""
    import uvloop

    from askgate.server.cli import _event_loop_factory

    assert _event_loop_factory() is uvloop.new_event_loop
