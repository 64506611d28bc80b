"""Collecting and running conformance suite files.

A run never stops at the first problem: an unreadable or schema-invalid suite file, a malformed case,
a case whose action nobody registered, and an action that crashes are each one failed row in the
report, and the remaining cases still run. A run that collects zero cases is a failure in itself.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from askgate.conformance.normalise import conformance_root, normalise_case
from askgate.conformance.registry import Case, CaseFailure, actions, get_action, load_action_modules
from askgate.conformance.suite_schema import SUITE_VALIDATOR
from askgate.conformance.yamlload import SuiteYamlError, load_yaml_file

__all__ = ["CaseResult", "RunReport", "collect_file", "expand_paths", "run_case", "run_suites"]

_MAX_SCHEMA_ERRORS = 8


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one case (``index`` is ``None`` for a row about the whole file)."""

    file: Path
    index: int | None
    name: str
    action: str | None
    passed: bool
    detail: str = ""

    @property
    def id(self) -> str:
        return f"{self.file.name}:{'-' if self.index is None else self.index}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "file": str(self.file),
            "index": self.index,
            "name": self.name,
            "action": self.action,
            "result": "pass" if self.passed else "fail",
            "detail": self.detail,
        }


@dataclass
class RunReport:
    results: list[CaseResult] = field(default_factory=list)
    cases: int = 0  # cases collected (rows about whole files are not cases)
    missing_modules: list[str] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(1 for r in self.results if r.passed)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not r.passed)

    @property
    def ok(self) -> bool:
        return self.cases > 0 and self.failed == 0

    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed"

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": self.failed,
            "cases": self.cases,
            "ok": self.ok,
            "results": [r.as_dict() for r in self.results],
        }


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Suite files from the given paths; a directory stands for every ``*.yaml``/``*.yml`` under it."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(sorted(q for q in path.rglob("*") if q.suffix in (".yaml", ".yml") and q.is_file()))
        else:
            out.append(path)
    return out


def _file_failure(file: Path, detail: str) -> CaseResult:
    return CaseResult(file=file, index=None, name="(suite file)", action=None, passed=False, detail=detail)


def _schema_errors(data: Any) -> list[str]:
    errors = sorted(SUITE_VALIDATOR.iter_errors(data), key=lambda e: [str(x) for x in e.absolute_path])
    lines = []
    for err in errors[:_MAX_SCHEMA_ERRORS]:
        where = "/" + "/".join(str(x) for x in err.absolute_path)
        lines.append(f"{where}: {err.message} ({err.validator})")
    if len(errors) > _MAX_SCHEMA_ERRORS:
        lines.append(f"... and {len(errors) - _MAX_SCHEMA_ERRORS} more")
    return lines


def collect_file(file: Path) -> tuple[list[Case | CaseResult], CaseResult | None]:
    """Load, schema-check and normalise one suite file.

    Returns the entries (a :class:`Case`, or a failed :class:`CaseResult` for a malformed entry) and a
    file-level failure (then no entries). A file with no cases is a file-level failure.
    """
    try:
        data = load_yaml_file(file)
    except SuiteYamlError as exc:
        return [], _file_failure(file, str(exc))
    problems = _schema_errors(data)
    if problems:
        return [], _file_failure(file, "not a valid conformance suite:\n" + "\n".join(problems))
    if not data:
        return [], _file_failure(file, "no cases in suite file")
    root = conformance_root(file)
    entries: list[Case | CaseResult] = []
    for index, raw in enumerate(data):
        try:
            entries.append(normalise_case(raw, file, index, root))
        except CaseFailure as exc:
            name = raw.get("name", "?") if isinstance(raw, dict) else "?"
            entries.append(
                CaseResult(file.resolve(), index, str(name), None, False, f"malformed case: {exc.detail}")
            )
    return entries, None


def _crash_detail(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return f"action crashed: {type(exc).__name__}: {exc}{where}"


def run_case(case: Case) -> CaseResult:
    """Run one case through its registered action."""

    def result(passed: bool, detail: str = "") -> CaseResult:
        return CaseResult(case.file, case.index, case.name, case.action, passed, detail)

    if case.action is None:
        return result(False, "no action: the case names none and the file name implies none")
    fn = get_action(case.action)
    if fn is None:
        known = ", ".join(sorted(actions())) or "none"
        return result(False, f"no implementation registered for action {case.action!r} (registered: {known})")
    try:
        fn(case)
    except CaseFailure as exc:
        return result(False, exc.detail)
    except Exception as exc:  # noqa: BLE001 - an action's crash is that case's failure, not the run's
        return result(False, _crash_detail(exc))
    return result(True)


def run_suites(paths: Iterable[str | Path]) -> RunReport:
    """Run every case of every suite file in ``paths`` (files or directories)."""
    report = RunReport(missing_modules=load_action_modules())
    for file in expand_paths(paths):
        entries, failure = collect_file(file)
        if failure is not None:
            report.results.append(failure)
            continue
        for entry in entries:
            report.cases += 1
            report.results.append(entry if isinstance(entry, CaseResult) else run_case(entry))
    return report
