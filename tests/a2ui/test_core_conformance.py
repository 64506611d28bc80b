"""The upstream A2UI suites of the core toolkit pass unchanged, through the conformance runner.

validator.yaml (41 cases), parser.yaml (16), catalog.yaml (19) and schema_manager.yaml (19) are read from
../shared at test time. Each case is one pytest item, so a failure names the case; a separate test pins
the counts, so a case silently not collected also fails. ``askgate conformance run`` runs the same
function (``run_suites``); tests/cli covers the command itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from askgate.conformance.registry import load_action_modules
from askgate.conformance.runner import collect_file, run_case, run_suites
from tests.conftest import SHARED

SUITES = {"validator.yaml": 41, "parser.yaml": 16, "catalog.yaml": 19, "schema_manager.yaml": 19}
SUITE_DIR = SHARED / "a2ui-conformance" / "suites"


def _cases() -> list[tuple[str, int]]:
    out = []
    for name, count in SUITES.items():
        out += [(name, i) for i in range(count)]
    return out


@pytest.fixture(scope="module")
def collected(shared_dir: Path) -> dict[str, list]:
    load_action_modules()
    out = {}
    for name in SUITES:
        entries, failure = collect_file(shared_dir / "a2ui-conformance" / "suites" / name)
        assert failure is None, failure
        out[name] = entries
    return out


def test_suite_sizes(collected: dict[str, list]) -> None:
    assert {name: len(entries) for name, entries in collected.items()} == SUITES


@pytest.mark.parametrize(("suite", "index"), _cases(), ids=[f"{s}:{i}" for s, i in _cases()])
def test_case_passes(collected: dict[str, list], suite: str, index: int) -> None:
    case = collected[suite][index]
    result = run_case(case)
    assert result.passed, f"{result.id} {result.name}: {result.detail}"


def test_runner_reports_all_passed(shared_dir: Path) -> None:
    report = run_suites([shared_dir / "a2ui-conformance" / "suites" / name for name in SUITES])
    print(f"A2UI core suites: {report.summary()}")
    assert report.cases == sum(SUITES.values())
    assert report.failed == 0 and report.passed == sum(SUITES.values()), report.summary()
    assert report.ok


def test_a_wrong_expectation_fails(shared_dir: Path, tmp_path: Path) -> None:
    """The actions really compare: a validator case whose payload became valid must fail."""
    suite = (shared_dir / "a2ui-conformance" / "suites" / "validator.yaml").read_text()
    # Same suite, relocated next to a copy-free link to test_data; flip one expectation.
    broken = suite.replace("expect_error: Circular reference detected\n- name: test_validator_0_9",
                           "expect_error: Duplicate component ID\n- name: test_validator_0_9", 1)
    assert broken != suite
    root = tmp_path / "conf"
    (root / "suites").mkdir(parents=True)
    (root / "test_data").symlink_to(shared_dir / "a2ui-conformance" / "test_data")
    (root / "suites" / "validator.yaml").write_text(broken)
    report = run_suites([root / "suites" / "validator.yaml"])
    failed = [r for r in report.results if not r.passed]
    assert [r.name for r in failed] == ["test_validator_circular_reference_v08"]
    assert "Circular reference detected" in failed[0].detail
