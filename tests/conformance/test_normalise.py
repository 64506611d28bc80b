"""Normalisation of legacy and newer suite shapes into one Case (protocols.md §5.7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from askgate.conformance.normalise import conformance_root, normalise_case
from askgate.conformance.registry import CaseFailure, ExpectedError
from askgate.conformance.runner import collect_file


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    (tmp_path / "suites").mkdir()
    (tmp_path / "test_data").mkdir()
    (tmp_path / "test_data" / "s2c.json").write_text(json.dumps({"title": "s2c", "ü": "é"}), encoding="utf-8")
    (tmp_path / "test_data" / "cat.json").write_text(json.dumps({"catalogId": "from-file"}), encoding="utf-8")
    return tmp_path


def test_root_is_parent_of_suites_folder_else_own_folder(tmp_path: Path) -> None:
    (tmp_path / "suites").mkdir()
    assert conformance_root(tmp_path / "suites" / "x.yaml") == tmp_path.resolve()
    assert conformance_root(tmp_path / "other" / "x.yaml") == (tmp_path / "other").resolve()


def test_legacy_process_chunk_list(root: Path) -> None:
    raw = {
        "name": "t",
        "catalog": {"version": 0.8, "s2c_schema": "test_data/s2c.json", "catalog_schema": {"catalogId": "c"}},
        "process_chunk": [
            {"input": "a", "expect": [{"text": "a"}]},
            {"input": "b", "expect_error": "boom"},
        ],
    }
    case = normalise_case(raw, root / "suites" / "streaming_parser.yaml", 3)
    assert case.action == "process_chunk"
    assert case.index == 3 and case.id == "streaming_parser.yaml:3"
    assert [s.input for s in case.steps] == ["a", "b"]
    assert case.steps[0].has_expect and case.steps[0].expect == [{"text": "a"}]
    assert case.steps[0].expect_error is None
    assert case.steps[1].expect_error == ExpectedError("boom", raw="boom")
    assert case.catalog is not None
    assert case.catalog.version == "0.8"
    assert case.catalog.s2c_schema == {"title": "s2c", "ü": "é"}
    assert case.catalog.s2c_schema_path == root.resolve() / "test_data" / "s2c.json"
    assert case.catalog.catalog_schema == {"catalogId": "c"}
    assert case.catalog.common_types_schema == {}
    assert case.args == {}


def test_catalog_defaults_and_path_schemas(root: Path) -> None:
    raw = {
        "name": "t",
        "action": "load",
        "catalog": {"version": "0.9", "catalog_schema": "test_data/cat.json"},
    }
    case = normalise_case(raw, root / "suites" / "catalog.yaml", 0)
    assert case.catalog is not None
    assert case.catalog.s2c_schema is None
    assert case.catalog.catalog_schema == {"catalogId": "from-file"}
    assert case.catalog.common_types_schema == {}
    only_version = normalise_case(
        {"name": "t", "action": "prune", "catalog": {"version": "0.8"}}, root / "x.yaml", 0
    )
    assert only_version.catalog is not None
    assert (only_version.catalog.s2c_schema, only_version.catalog.catalog_schema) == (None, {})
    assert normalise_case({"name": "t", "action": "select_catalog"}, root / "x.yaml", 0).catalog is None


def test_missing_schema_file_is_a_case_failure(root: Path) -> None:
    raw = {"name": "t", "action": "prune", "catalog": {"version": "0.8", "s2c_schema": "test_data/nope.json"}}
    with pytest.raises(CaseFailure, match="cannot read schema file"):
        normalise_case(raw, root / "suites" / "catalog.yaml", 0)


def test_legacy_validate_list_and_case_level_error_inheritance(root: Path) -> None:
    raw = {
        "name": "v",
        "catalog": {"version": "0.9", "s2c_schema": {}, "catalog_schema": {}},
        "expect_error": "case-level",
        "validate": [{"payload": {"a": 1}}, {"payload": [{"b": 2}], "expect_error": "own"}],
    }
    case = normalise_case(raw, root / "suites" / "validator.yaml", 0)
    assert case.action == "validate"
    assert [s.payload for s in case.steps] == [{"a": 1}, [{"b": 2}]]
    assert [s.expect_error.message for s in case.steps if s.expect_error] == ["case-level", "own"]


def test_newer_shape_steps_key(root: Path) -> None:
    raw = {"name": "n", "action": "process_chunk", "steps": [{"input": "x", "expect": []}]}
    case = normalise_case(raw, root / "suites" / "anything.yaml", 0)
    assert case.action == "process_chunk"
    assert len(case.steps) == 1 and case.steps[0].input == "x"


def test_single_step_input_and_single_payload(root: Path) -> None:
    chunk = normalise_case(
        {"name": "c", "action": "process_chunk", "input": "hi", "expect": []}, root / "a.yaml", 0
    )
    assert len(chunk.steps) == 1 and chunk.steps[0].input == "hi" and chunk.steps[0].has_expect
    err = {"category": "ValidationError", "message": "bad"}
    one = normalise_case(
        {"name": "v", "action": "validate", "payload": {"m": 1}, "expect_error": err}, root / "a.yaml", 0
    )
    assert len(one.steps) == 1 and one.steps[0].payload == {"m": 1}
    assert one.steps[0].expect_error == ExpectedError("bad", "ValidationError", raw=err)
    assert one.payload == {"m": 1}


def test_parse_full_bare_input_from_parser_file(root: Path) -> None:
    case = normalise_case(
        {"name": "p", "input": "<a2ui-json>", "expect_error": "x"}, root / "suites" / "parser.yaml", 0
    )
    assert case.action == "parse_full"
    assert case.input == "<a2ui-json>"
    assert case.steps == ()
    assert case.expect_error is not None and case.expect_error.message == "x"
    explicit = normalise_case(
        {"name": "p", "action": "fix_payload", "input": "[]"}, root / "suites" / "parser.yaml", 1
    )
    assert explicit.action == "fix_payload"


def test_action_derived_from_legacy_keys_when_file_name_says_nothing(root: Path) -> None:
    assert normalise_case({"name": "a", "process_chunk": []}, root / "x.yaml", 0).action == "process_chunk"
    assert normalise_case({"name": "a", "validate": []}, root / "x.yaml", 0).action == "validate"
    assert normalise_case({"name": "a", "input": "t"}, root / "x.yaml", 0).action == "parse_full"
    assert normalise_case({"name": "a"}, root / "x.yaml", 0).action is None


def test_args_default_and_raw_access(root: Path) -> None:
    case = normalise_case(
        {"name": "a", "action": "x", "args": None, "expect_output": "o"}, root / "x.yaml", 0
    )
    assert case.args == {}
    assert case.get("expect_output") == "o"
    assert not case.has_expect
    assert case.resolve("test_data/s2c.json") == (root / "test_data" / "s2c.json").resolve()


def test_malformed_expect_error_is_a_case_failure(root: Path) -> None:
    with pytest.raises(CaseFailure, match="unknown keys"):
        normalise_case({"name": "a", "action": "x", "expect_error": {"kind": "x"}}, root / "x.yaml", 0)
    with pytest.raises(CaseFailure, match="regex string"):
        normalise_case({"name": "a", "action": "x", "expect_error": 3}, root / "x.yaml", 0)


def test_shared_suites_normalise_completely(shared_dir: Path) -> None:
    """All 175 vendored cases collect, with an action each, steps where the shape has them, schemas loaded."""
    suites = shared_dir / "a2ui-conformance" / "suites"
    counts = {}
    for file in sorted(suites.glob("*.yaml")):
        entries, failure = collect_file(file)
        assert failure is None, failure
        counts[file.name] = len(entries)
        for case in entries:
            assert not hasattr(case, "passed"), case  # no malformed entries
            assert case.action, case.id
            assert case.root == (shared_dir / "a2ui-conformance").resolve()
            if file.stem in ("streaming_parser", "validator"):
                legacy = case.raw["process_chunk" if file.stem == "streaming_parser" else "validate"]
                assert len(case.steps) == len(legacy) > 0
                assert case.catalog is not None and isinstance(case.catalog.s2c_schema, dict)
                assert case.catalog.s2c_schema  # loaded from test_data
            if file.stem == "parser" and "action" not in case.raw:
                assert case.action == "parse_full"
    assert counts == {
        "catalog.yaml": 19,
        "parser.yaml": 16,
        "schema_manager.yaml": 19,
        "streaming_parser.yaml": 80,
        "validator.yaml": 41,
    }
