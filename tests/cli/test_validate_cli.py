"""`askgate validate`: exit codes 0/1/2, --as, --json, and never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from askgate import cli_validate
from askgate.cli import app
from tests.conftest import REPO

VALID_A2A = {
    "message": "Which region should I deploy to?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "enum": ["eu", "us"], "enumNames": ["Europe", "United States"]}
        },
        "required": ["region"],
    },
}
INVALID_A2A = {
    "message": "Pick",
    "requestedSchema": {
        "type": "object",
        "properties": {"r": {"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}},
    },
}
VALID_ACS = {
    "approver": {"type": "human", "id": "user:lead"},
    "question": "Deploy now?",
    "timeout_seconds": 300,
}


def _write(tmp_path: Path, name: str, content: Any) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return str(path)


def _invoke(*args: str) -> Any:
    result = CliRunner().invoke(app, ["validate", *args])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), (
        result.exception
    )
    assert "Traceback" not in result.output
    return result


def test_valid_file_exits_0(tmp_path: Path) -> None:
    result = _invoke(_write(tmp_path, "ok.json", VALID_A2A))
    assert result.exit_code == 0, result.output
    assert "valid" in result.output and "a2a-elicitation, detected" in result.output


def test_invalid_file_exits_1_with_pointer_and_rule(tmp_path: Path) -> None:
    result = _invoke(_write(tmp_path, "bad.json", INVALID_A2A))
    assert result.exit_code == 1, result.output
    assert "/requestedSchema/properties/r/enumNames" in result.output
    assert "[elicitation.enumNames-length]" in result.output
    assert 'requestedSchema property "r" enumNames must match enum' in result.output


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b'{"message": "x", "message": "y"}', "duplicate key"),
        (b"{not json", "not JSON"),
        (b'{"n": NaN}', "NaN"),
        (b"\xff\xfe", "not UTF-8"),
        (json.dumps({"hello": "world"}).encode(), "cannot tell the dialect"),
        (b"[]", "not an array"),
    ],
)
def test_unusable_input_exits_2(tmp_path: Path, content: bytes, needle: str) -> None:
    result = _invoke(_write(tmp_path, "in.json", content))
    assert result.exit_code == 2, result.output
    assert needle in result.output


def test_missing_file_and_directory_exit_2(tmp_path: Path) -> None:
    result = _invoke(str(tmp_path / "absent.json"))
    assert result.exit_code == 2 and "cannot read" in result.output
    result = _invoke(str(tmp_path))
    assert result.exit_code == 2 and "cannot read" in result.output


def test_exit_code_precedence(tmp_path: Path) -> None:
    ok = _write(tmp_path, "ok.json", VALID_A2A)
    bad = _write(tmp_path, "bad.json", INVALID_A2A)
    assert _invoke(ok, bad).exit_code == 1
    assert _invoke(ok, bad, str(tmp_path / "absent.json")).exit_code == 2
    both = _invoke(ok, _write(tmp_path, "acs.json", VALID_ACS))
    assert both.exit_code == 0 and "2 valid, 0 invalid, 0 unusable" in both.output


def test_as_overrides_detection(tmp_path: Path) -> None:
    ok = _write(tmp_path, "ok.json", VALID_A2A)
    result = _invoke("--as", "acs", ok)
    assert result.exit_code == 1  # an elicitation document is not an ACS ask
    assert "(acs)" in result.output
    assert _invoke("--as", "a2a-elicitation", ok).exit_code == 0
    usage = CliRunner().invoke(app, ["validate", "--as", "klingon", ok])
    assert usage.exit_code == 2


def test_json_output(tmp_path: Path) -> None:
    ok = _write(tmp_path, "ok.json", VALID_A2A)
    bad = _write(tmp_path, "bad.json", INVALID_A2A)
    result = _invoke("--json", ok, bad, str(tmp_path / "absent.json"))
    assert result.exit_code == 2
    doc = json.loads(result.output)
    assert (doc["valid"], doc["invalid"], doc["unusable"]) == (1, 1, 1)
    files = {Path(f["file"]).name: f for f in doc["files"]}
    assert files["ok.json"]["status"] == "valid" and files["ok.json"]["dialect"] == "a2a-elicitation"
    assert files["bad.json"]["code"] == "invalid_request"
    assert {
        "pointer": "/requestedSchema/properties/r/enumNames",
        "rule": "elicitation.enumNames-length",
    }.items() <= (files["bad.json"]["faults"][0].items())
    assert files["absent.json"]["code"] == "unreadable"


def test_stdin(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["validate", "-"], input=json.dumps(VALID_ACS))
    assert result.exit_code == 0, result.output
    assert "(acs, detected)" in result.output


def test_internal_error_is_a_message_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(dialect: Any) -> Any:
        raise RuntimeError("codec exploded")

    monkeypatch.setattr(cli_validate, "codec_for", broken)
    result = _invoke(_write(tmp_path, "ok.json", VALID_A2A))
    assert result.exit_code == 2
    assert "internal error: RuntimeError: codec exploded" in result.output


def test_real_process_prints_no_traceback(tmp_path: Path) -> None:
    bad = _write(tmp_path, "bad.json", b"{")
    proc = subprocess.run(
        [sys.executable, "-m", "askgate.cli", "validate", bad, str(tmp_path / "absent.json")],
        capture_output=True,
        check=False,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "not JSON" in proc.stdout and "cannot read" in proc.stdout
