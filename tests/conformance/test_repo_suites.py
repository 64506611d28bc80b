"""Every askgate suite file in the repository passes: `askgate conformance run conformance/*.yaml`.

The glob runs at test time, so suites other engineers add are included automatically.
"""

from __future__ import annotations

import re

from typer.testing import CliRunner

from askgate.cli import app
from askgate.conformance.yamlload import load_yaml_file
from tests.conftest import REPO


def test_all_repo_suites_pass() -> None:
    suites = sorted((REPO / "conformance").glob("*.yaml"))
    assert suites, "no suite files under conformance/"
    expected_cases = sum(len(load_yaml_file(p)) for p in suites)
    result = CliRunner().invoke(app, ["conformance", "run", "--failures-only", *map(str, suites)])
    last = result.output.strip().splitlines()[-1]
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"\d+ passed, 0 failed", last), result.output
    assert last == f"{expected_cases} passed, 0 failed"


def test_detect_suite_is_large_enough() -> None:
    assert len(load_yaml_file(REPO / "conformance" / "detect.yaml")) >= 20
