"""`askgate conformance run`: the table, the exact final line, exit codes and --json."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from askgate.cli import app
from askgate.conformance import registry
from askgate.conformance.registry import Case, CaseFailure, load_action_modules


@pytest.fixture(autouse=True)
def actions(monkeypatch: pytest.MonkeyPatch) -> None:
    def ok(case: Case) -> None:
        if case.args.get("fail"):
            raise CaseFailure("told to fail [not markup]")

    load_action_modules()
    monkeypatch.setitem(registry._ACTIONS, "t_cli", ok)


def _suite(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def test_all_pass_exit_0_and_final_line(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "- {name: a, action: t_cli}\n- {name: a, action: t_cli}\n")
    result = CliRunner().invoke(app, ["conformance", "run", suite])
    assert result.exit_code == 0, result.output
    assert result.output.rstrip("\n").splitlines()[-1] == "2 passed, 0 failed"
    assert "s.yaml:0" in result.output and "s.yaml:1" in result.output


def test_failure_exit_1_with_detail(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "- {name: a, action: t_cli}\n- {name: b, action: t_cli, args: {fail: true}}\n")
    result = CliRunner().invoke(app, ["conformance", "run", suite])
    assert result.exit_code == 1
    assert "told to fail [not markup]" in result.output
    assert result.output.rstrip("\n").splitlines()[-1] == "1 passed, 1 failed"


def test_zero_cases_exit_1(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["conformance", "run", _suite(tmp_path, "[]\n")])
    assert result.exit_code == 1
    assert result.output.rstrip("\n").splitlines()[-1] == "0 passed, 1 failed"


def test_missing_suite_file_exit_1_without_traceback(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["conformance", "run", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "cannot read" in result.output


def test_json_output(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "- {name: a, action: t_cli}\n- {name: b, action: t_missing_action}\n")
    result = CliRunner().invoke(app, ["conformance", "run", "--json", suite])
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert (doc["passed"], doc["failed"], doc["cases"], doc["ok"]) == (1, 1, 2, False)
    assert [r["id"] for r in doc["results"]] == ["s.yaml:0", "s.yaml:1"]
    assert doc["results"][1]["result"] == "fail" and "t_missing_action" in doc["results"][1]["detail"]
