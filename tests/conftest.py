"""Suite-wide rules: where ../shared is, and no test may be skipped in CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ASKGATE_SHARED", REPO.parent / "shared")).resolve()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The read-only ../shared folder (seeds, A2UI suite and spec files). Never copied into the repo."""
    if not SHARED.is_dir():
        pytest.fail(f"shared folder not found at {SHARED} (set ASKGATE_SHARED)")
    return SHARED


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI a skipped test is a missing component, and a missing component is a failure."""
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped:
        names = ", ".join(getattr(r, "nodeid", "?") for r in skipped[:10])
        print(f"\nCI: {len(skipped)} test(s) skipped, which CI treats as failure: {names}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_REPORT_KEY = pytest.StashKey[list[str]]()


@pytest.fixture(scope="session")
def ci_report(request: pytest.FixtureRequest) -> list[str]:
    """Lines a test wants shown at the end of the run (e.g. conformance counts), printed in the summary."""
    return request.config.stash.setdefault(_REPORT_KEY, [])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    lines = config.stash.get(_REPORT_KEY, [])
    if lines:
        terminalreporter.section("askgate conformance")
        for line in lines:
            terminalreporter.write_line(line)
