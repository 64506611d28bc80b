"""The upstream A2UI reference SDK (a2ui-agent-sdk 0.2.2), used only as an oracle and a baseline.

It ships a top-level ``a2ui`` package that would shadow ``a2ui-core`` (which askgate depends on), so it
is installed with ``--no-deps`` into its own folder (``.oracle/``, git-ignored) and only ever run in a
separate Python process with that folder first on ``sys.path``. askgate never imports it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
REFERENCE_VERSION = "0.2.2"
REFERENCE_DIR = REPO / ".oracle" / f"a2ui-agent-sdk-{REFERENCE_VERSION}"


def reference_path() -> Path:
    """Install the reference SDK into ``.oracle/`` if needed and return the folder to put on sys.path."""
    marker = REFERENCE_DIR / "a2ui" / "parser" / "streaming.py"
    if not marker.exists():
        REFERENCE_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["uv", "pip", "install", "--quiet", "--no-deps", "--target", str(REFERENCE_DIR),
             f"a2ui-agent-sdk=={REFERENCE_VERSION}"],
            check=True,
        )
    return REFERENCE_DIR


def reference_env() -> dict[str, str]:
    """Environment for a subprocess that imports the reference SDK instead of a2ui-core."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(reference_path())
    return env


def run_reference(script: str, payload: Any, timeout: float = 600) -> Any:
    """Run ``script`` (Python source) in a reference-SDK process; it reads JSON from stdin, writes JSON to stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=reference_env(),
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"reference SDK process failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)
