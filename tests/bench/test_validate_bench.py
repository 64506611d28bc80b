"""bench/validate.py runs, and askgate's verdicts agree with jsonschema's on its corpora (small sizes)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO, SHARED


def test_bench_runs_and_verdicts_agree() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "validate.py"), "--n", "150", "--repeat", "1", "--json"],
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
        env={"ASKGATE_SHARED": str(SHARED), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    rows = {(r["dialect"], r["kind"]): r for r in report["rows"]}
    for dialect in ("a2a-elicitation", "aqp", "acs"):
        valid, invalid = rows[(dialect, "valid")], rows[(dialect, "invalid")]
        assert valid["askgate_per_s"] and valid["jsonschema_per_s"], valid["note"]
        assert valid["disagreements"] == [] and invalid["disagreements"] == [], (valid, invalid)
        assert valid["jsonschema_accepted"] == valid["n"] == 150  # the valid corpus is valid
        assert invalid["jsonschema_accepted"] == 0  # every mutation breaks the seed
    assert rows[("mcp-elicitation", "valid")]["askgate_accepted"] == 150
    assert proc.returncode == 0
