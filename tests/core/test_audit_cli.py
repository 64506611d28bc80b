"""`askgate audit verify FILE`: exit 0 ok, 1 broken (first bad entry named), 2 unusable; no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from askgate.cli import app
from askgate.core.audit import chain_entry


def _chain() -> list[dict]:
    out: list[dict] = []
    head = None
    for i in range(3):
        e = chain_entry(entry_id=f"e-{i}", step_id="ask-1", step_type="answer" if i else "ask",
                        timestamp="2026-08-02T10:00:00Z", data={"i": i}, previous_hash=head)
        out.append(e)
        head = e["entry_hash"]
    return out


def run(*args: str):
    result = CliRunner().invoke(app, ["audit", "verify", *args])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


@pytest.mark.parametrize("wrap", [False, True])
def test_ok(tmp_path: Path, wrap: bool) -> None:
    chain = _chain()
    f = tmp_path / "chain.json"
    f.write_text(json.dumps({"entries": chain} if wrap else chain))
    r = run(str(f))
    assert r.exit_code == 0 and r.output.startswith("ok: 3 entries") and chain[-1]["entry_hash"] in r.output


def test_broken_names_the_first_bad_entry(tmp_path: Path) -> None:
    chain = _chain()
    chain[1]["i"] = 7
    chain[2]["i"] = 8
    f = tmp_path / "chain.json"
    f.write_text(json.dumps(chain))
    r = run(str(f))
    assert r.exit_code == 1 and "entry 1 (e-1)" in r.output and "entry_hash mismatch" in r.output
    rj = run("--json", str(f))
    doc = json.loads(rj.output)
    assert rj.exit_code == 1 and doc["status"] == "broken" and doc["first_bad"] == 1 and doc["entry_id"] == "e-1"


def test_anchor_for_a_segment(tmp_path: Path) -> None:
    chain = _chain()
    f = tmp_path / "seg.json"
    f.write_text(json.dumps(chain[1:]))
    assert run(str(f)).exit_code == 1
    assert run("--anchor", chain[0]["entry_hash"], str(f)).exit_code == 0
    assert run("--anchor", "nothex", str(f)).exit_code == 2


@pytest.mark.parametrize("content", [
    b"", b"not json", b"\xff\xfe\x00garbage", b'{"entries": 3}', b'{"other": []}', b"42", b'"x"',
    b'[{"a": 1, "a": 2}]', b"[NaN]", b"[1e400]",
])
def test_unusable_input_exits_2(tmp_path: Path, content: bytes) -> None:
    f = tmp_path / "x.json"
    f.write_bytes(content)
    r = run(str(f))
    assert r.exit_code == 2 and "unusable" in r.output


def test_missing_file_and_directory_exit_2(tmp_path: Path) -> None:
    assert run(str(tmp_path / "nope.json")).exit_code == 2
    assert run(str(tmp_path)).exit_code == 2


def test_entries_that_are_not_objects_are_broken_not_unusable(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text(json.dumps([1, 2]))
    r = run(str(f))
    assert r.exit_code == 1 and "entry 0" in r.output
