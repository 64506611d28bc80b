"""askgate's in-code suite schema must equal the seed it was written from (loaded from ../shared at test time)."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

from askgate.conformance.suite_schema import SUITE_SCHEMA, SUITE_VALIDATOR


def test_suite_schema_equals_the_seed(shared_dir: Path) -> None:
    seed = json.loads((shared_dir / "seeds" / "a2ui-conformance.schema.json").read_text(encoding="utf-8"))
    assert SUITE_SCHEMA == seed


def test_suite_schema_equals_the_vendored_conformance_schema(shared_dir: Path) -> None:
    vendored = json.loads(
        (shared_dir / "a2ui-conformance" / "conformance_schema.json").read_text(encoding="utf-8")
    )
    assert SUITE_SCHEMA == vendored


def test_validator_is_draft_2020_12_and_judges_like_the_seed(shared_dir: Path) -> None:
    seed = json.loads((shared_dir / "seeds" / "a2ui-conformance.schema.json").read_text(encoding="utf-8"))
    reference = Draft202012Validator(seed)
    samples = [
        [],
        [{"name": "a", "action": "x"}],
        [{"name": "a"}],
        [{"name": "a", "input": "t", "expect": []}],
        [{"name": "a", "input": "t", "expect": [], "expect_error": "e"}],
        [{"name": "a", "process_chunk": [{"input": "x", "expect": []}], "catalog": {"version": "0.8"}}],
        [
            {
                "name": "a",
                "validate": [{"payload": {}}],
                "catalog": {"version": "0.9", "s2c_schema": {}, "catalog_schema": "p"},
            }
        ],
        [{"name": "a", "action": "x", "catalog": {"version": 0.8}}],
        {"name": "a"},
    ]
    for sample in samples:
        assert SUITE_VALIDATOR.is_valid(sample) == reference.is_valid(sample), sample
