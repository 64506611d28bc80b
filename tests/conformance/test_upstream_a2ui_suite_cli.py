"""The upstream A2UI suite, unchanged, through the real command line: ``askgate conformance run``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_askgate_conformance_run_passes_all_175_upstream_cases(shared_dir: Path, ci_report: list[str]) -> None:
    suites = sorted(str(p) for p in (shared_dir / "a2ui-conformance" / "suites").glob("*.yaml"))
    assert len(suites) == 5
    proc = subprocess.run(
        [sys.executable, "-m", "askgate.cli", "conformance", "run", *suites],
        capture_output=True, text=True, timeout=600, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    last = proc.stdout.strip().splitlines()[-1]
    ci_report.append(f"askgate conformance run ../shared/a2ui-conformance/suites/*.yaml -> {last}")
    assert last == "175 passed, 0 failed", proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0


def test_askgate_conformance_run_passes_every_askgate_suite(ci_report: list[str]) -> None:
    repo = Path(__file__).resolve().parents[2]
    suites = sorted(str(p) for p in (repo / "conformance").glob("*.yaml"))
    proc = subprocess.run(
        [sys.executable, "-m", "askgate.cli", "conformance", "run", *suites],
        capture_output=True, text=True, timeout=600, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    last = proc.stdout.strip().splitlines()[-1]
    ci_report.append(f"askgate conformance run conformance/*.yaml -> {last}")
    passed, failed = (int(part.split()[0]) for part in last.split(", "))
    assert failed == 0 and passed >= 40 * 4, proc.stdout[-3000:]
    assert proc.returncode == 0
