"""The runner: collection, schema check, identity, failures never skipped, expect_error forms, registry."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from askgate.conformance import registry
from askgate.conformance.registry import Case, CaseFailure, ExpectedError, action, load_action_modules
from askgate.conformance.runner import run_suites
from askgate.errors import AskgateError, Fault


class ParseError(ValueError):
    pass


class ChunkError(ParseError):
    pass


@pytest.fixture()
def seen(monkeypatch: pytest.MonkeyPatch) -> list[Case]:
    """Test-only actions: t_record passes and records; t_expect_equal compares args.value with expect."""
    log: list[Case] = []

    def record(case: Case) -> None:
        log.append(case)

    def expect_equal(case: Case) -> None:
        case.check_equal(case.args.get("value"), case.expect)

    def crash(case: Case) -> None:
        raise KeyError("oops")

    def raising(case: Case) -> None:
        for step in case.steps:
            exc_type = {"chunk": ChunkError, "key": KeyError}.get(step.raw.get("kind"))

            def go(message: str = str(step.input), exc_type: type[Exception] | None = exc_type) -> str:
                if exc_type is not None:
                    raise exc_type(message)
                return message

            case.expect_outcome(go, expect_error=step.expect_error)

    load_action_modules()
    for name, fn in {
        "t_record": record,
        "t_expect_equal": expect_equal,
        "t_crash": crash,
        "t_raise": raising,
    }.items():
        monkeypatch.setitem(registry._ACTIONS, name, fn)
    return log


def _suite(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_cases_identified_by_file_and_index_names_repeat(tmp_path: Path, seen: list[Case]) -> None:
    suite = _suite(
        tmp_path / "dup.yaml",
        """
        - {name: same, action: t_record, args: {n: 1}}
        - {name: same, action: t_record, args: {n: 2}}
        - {name: other, action: t_record}
        """,
    )
    report = run_suites([suite])
    assert report.ok and report.summary() == "3 passed, 0 failed"
    assert [r.id for r in report.results] == ["dup.yaml:0", "dup.yaml:1", "dup.yaml:2"]
    assert [(c.name, c.args) for c in seen] == [("same", {"n": 1}), ("same", {"n": 2}), ("other", {})]


def test_mismatch_is_reported_with_detail(tmp_path: Path, seen: list[Case]) -> None:
    suite = _suite(
        tmp_path / "eq.yaml",
        """
        - {name: ok, action: t_expect_equal, args: {value: [1, {a: b}]}, expect: [1, {a: b}]}
        - {name: bad, action: t_expect_equal, args: {value: 1}, expect: 2}
        - {name: bool is not int, action: t_expect_equal, args: {value: true}, expect: 1}
        """,
    )
    report = run_suites([suite])
    assert [r.passed for r in report.results] == [True, False, False]
    assert "differs" in report.results[1].detail
    assert report.summary() == "1 passed, 2 failed" and not report.ok


def test_missing_action_is_a_failure_never_a_skip(tmp_path: Path, seen: list[Case]) -> None:
    suite = _suite(tmp_path / "x.yaml", "- {name: n, action: no_such_action_anywhere}\n")
    report = run_suites([suite])
    assert report.failed == 1 and report.passed == 0
    assert "no implementation registered for action 'no_such_action_anywhere'" in report.results[0].detail


def test_action_crash_is_that_case_failure_only(tmp_path: Path, seen: list[Case]) -> None:
    suite = _suite(tmp_path / "x.yaml", "- {name: a, action: t_crash}\n- {name: b, action: t_record}\n")
    report = run_suites([suite])
    assert [r.passed for r in report.results] == [False, True]
    assert report.results[0].detail.startswith("action crashed: KeyError")


def test_zero_cases_fails(tmp_path: Path, seen: list[Case]) -> None:
    report = run_suites([_suite(tmp_path / "empty.yaml", "[]\n")])
    assert report.cases == 0 and not report.ok
    assert report.results[0].detail == "no cases in suite file"
    assert not run_suites([]).ok


def test_schema_invalid_suite_is_reported_and_not_run(tmp_path: Path, seen: list[Case]) -> None:
    suite = _suite(
        tmp_path / "bad.yaml",
        """
        - {action: t_record}
        - {name: fine, action: t_record}
        """,
    )
    report = run_suites([suite])
    assert seen == []
    assert report.failed == 1 and report.cases == 0
    assert report.results[0].id == "bad.yaml:-"
    assert "not a valid conformance suite" in report.results[0].detail
    assert "'name' is a required property" in report.results[0].detail


def test_legacy_step_with_non_string_expect_error_is_schema_invalid(tmp_path: Path, seen: list[Case]) -> None:
    suite = _suite(
        tmp_path / "s.yaml",
        """
        - name: a
          catalog: {version: "0.8", s2c_schema: {}, catalog_schema: {}}
          process_chunk: [{input: x, expect_error: {category: ParseError, message: y}}]
        """,
    )
    report = run_suites([suite])
    assert not report.ok and "not a valid conformance suite" in report.results[0].detail


def test_unreadable_and_non_utf8_and_duplicate_key_files(tmp_path: Path, seen: list[Case]) -> None:
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("- {name: caf\u00e9, action: t_record}\n".encode("latin-1"))
    dup = _suite(tmp_path / "dup.yaml", "- {name: a, name: b, action: t_record}\n")
    report = run_suites([tmp_path / "missing.yaml", latin, dup])
    details = [r.detail for r in report.results]
    assert report.failed == 3 and report.cases == 0
    assert "cannot read" in details[0]
    assert "not UTF-8" in details[1]
    assert "duplicate key" in details[2]


def test_yaml_is_read_as_utf8_json_data(tmp_path: Path, seen: list[Case]) -> None:
    suite = _suite(
        tmp_path / "u.yaml",
        """
        - name: “smart” ünïcode
          action: t_record
          args: {when: 2026-01-01T00:00:00Z, flags: [yes, no, on, true]}
        """,
    )
    assert run_suites([suite]).ok
    assert seen[0].name == "“smart” ünïcode"
    assert seen[0].args == {"when": "2026-01-01T00:00:00Z", "flags": ["yes", "no", "on", True]}


def test_directories_expand_to_yaml_files(tmp_path: Path, seen: list[Case]) -> None:
    _suite(tmp_path / "d" / "a.yaml", "- {name: a, action: t_record}\n")
    _suite(tmp_path / "d" / "sub" / "b.yml", "- {name: b, action: t_record}\n")
    (tmp_path / "d" / "notes.txt").write_text("not a suite", encoding="utf-8")
    report = run_suites([tmp_path / "d"])
    assert [r.name for r in report.results] == ["a", "b"] and report.ok


def test_step_expect_error_forms(tmp_path: Path, seen: list[Case]) -> None:
    suite = _suite(
        tmp_path / "errs.yaml",
        r"""
        - name: regex matches
          action: t_raise
          steps: [{input: "bad chunk 42", kind: chunk, expect_error: 'chunk \d+'}]
        - name: category by base class
          action: t_raise
          steps: [{input: "x", kind: chunk, expect_error: {category: ParseError, message: "^x$"}}]
        - name: category by builtin base
          action: t_raise
          steps: [{input: "x", kind: chunk, expect_error: {category: ValueError, message: x}}]
        - name: wrong category
          action: t_raise
          steps: [{input: "x", kind: chunk, expect_error: {category: CatalogError, message: x}}]
        - name: regex does not match
          action: t_raise
          steps: [{input: "abc", kind: chunk, expect_error: "xyz"}]
        - name: expected error but none raised
          action: t_raise
          steps: [{input: "fine", expect_error: "anything"}]
        - name: error raised but none expected
          action: t_raise
          steps: [{input: "bad", kind: chunk}]
        - name: string form needs a ValueError
          action: t_raise
          steps: [{input: "oops", kind: key, expect_error: "oops"}]
        - name: no error, none expected, several steps
          action: t_raise
          steps: [{input: "a"}, {input: "b"}]
        - name: case-level expect_error applies to its steps
          action: t_raise
          expect_error: "boom"
          steps: [{input: "boom", kind: chunk}]
        """,
    )
    report = run_suites([suite])
    outcome = {r.name: r.passed for r in report.results}
    assert outcome == {
        "regex matches": True,
        "category by base class": True,
        "category by builtin base": True,
        "wrong category": False,
        "regex does not match": False,
        "expected error but none raised": False,
        "error raised but none expected": False,
        "string form needs a ValueError": False,
        "no error, none expected, several steps": True,
        "case-level expect_error applies to its steps": True,
    }
    details = {r.name: r.detail for r in report.results}
    assert "no error was raised" in details["expected error but none raised"]
    assert "unexpected ChunkError: bad" in details["error raised but none expected"]


def test_expected_error_matches_fault_messages() -> None:
    exc = AskgateError("summary", [Fault("/a", "first fault", "r1"), Fault("/b", "second fault", "r2")])
    assert ExpectedError("second fault").mismatch(exc) is None
    assert ExpectedError("summary", "AskgateError").mismatch(exc) is None
    assert ExpectedError("third").mismatch(exc) is not None
    assert ExpectedError("(", None).mismatch(exc) is not None  # bad regex is a failure, not a crash


def test_registry_rejects_conflicting_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    def one(case: Case) -> None: ...

    def two(case: Case) -> None: ...

    monkeypatch.setitem(registry._ACTIONS, "t_conflict", one)
    assert action("t_conflict")(one) is one  # same function again is fine (re-import)
    with pytest.raises(RuntimeError, match="already registered"):
        action("t_conflict")(two)


def test_load_action_modules_tolerates_only_absent_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "tpkg_actions"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "good.py").write_text(
        "from askgate.conformance.registry import action\n@action('t_from_module')\ndef f(case):\n    pass\n",
        encoding="utf-8",
    )
    (pkg / "broken.py").write_text("import tpkg_actions_dependency_that_is_missing\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_ACTIONS", dict(registry._ACTIONS))
    try:
        assert load_action_modules(("tpkg_actions.good", "tpkg_actions.absent")) == ["tpkg_actions.absent"]
        assert registry.get_action("t_from_module") is not None
        with pytest.raises(ModuleNotFoundError):
            load_action_modules(("tpkg_actions.broken",))
    finally:
        for name in [m for m in sys.modules if m.startswith("tpkg_actions")]:
            del sys.modules[name]


def test_case_failure_from_action_passes_through_expect_outcome(tmp_path: Path) -> None:
    from askgate.conformance.normalise import normalise_case

    case = normalise_case({"name": "a", "action": "x"}, tmp_path / "x.yaml", 0)

    def inner() -> None:
        raise CaseFailure("inner detail")

    with pytest.raises(CaseFailure, match="inner detail"):
        case.expect_outcome(inner, expect_error=ExpectedError("inner"))
