"""The AQP and ACS conformance suites: size, schema, and that they exercise every rule the codecs have.

`tests/conformance/test_repo_suites.py` runs them through `askgate conformance run`; this file checks
their coverage: each rule name the codecs (and askgate.core.approval) can emit appears in some
expected fault, and each action is used.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from askgate.conformance.yamlload import load_yaml_file
from tests.conftest import REPO

SUITES = {"aqp": REPO / "conformance" / "aqp.yaml", "acs": REPO / "conformance" / "acs.yaml"}
SOURCES = {
    "aqp": [REPO / "askgate" / "protocols" / "aqp.py"],
    "acs": [REPO / "askgate" / "protocols" / "acs.py", REPO / "askgate" / "core" / "approval.py"],
}
# Rules that cannot come from a document (bad caller options, or a render of an incomplete answer) are
# covered by the unit tests instead.
NOT_FROM_DOCUMENTS = {
    "options.form",
    "acs.error-name",
    "acs.not-approval",
    "aqp.render",
    "acs.render",
    "options.now",
}


def _emitted_rules(paths: list[Path]) -> set[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in paths)
    named = set(re.findall(r'"((?:aqp|acs|options)\.[A-Za-z_-]+)"', text))
    return {r for r in named if not r.endswith(".py")} - NOT_FROM_DOCUMENTS


@pytest.mark.parametrize("dialect", sorted(SUITES))
def test_suite_size_dialect_and_actions(dialect):
    cases = load_yaml_file(SUITES[dialect])
    assert len(cases) >= 40
    assert all(c["args"]["dialect"] == dialect for c in cases)
    assert {c["action"] for c in cases} == {"validate_request", "validate_answer", "render_answer"}
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "case names repeat"


@pytest.mark.parametrize("dialect", sorted(SUITES))
def test_suite_validates_against_the_conformance_schema(dialect, shared_dir):
    schema = json.loads((shared_dir / "seeds" / "a2ui-conformance.schema.json").read_text(encoding="utf-8"))
    errors = list(Draft202012Validator(schema).iter_errors(load_yaml_file(SUITES[dialect])))
    assert not errors, [e.message for e in errors[:3]]


@pytest.mark.parametrize("dialect", sorted(SUITES))
def test_every_named_rule_is_exercised(dialect):
    cases = load_yaml_file(SUITES[dialect])
    expected = {f.get("rule") for c in cases for f in c.get("expect_faults", [])}
    missing = _emitted_rules(SOURCES[dialect]) - expected
    assert not missing, f"rules never expected by {SUITES[dialect].name}: {sorted(missing)}"


@pytest.mark.parametrize("dialect", sorted(SUITES))
def test_every_schema_keyword_is_exercised(dialect):
    cases = load_yaml_file(SUITES[dialect])
    expected = {f.get("rule") for c in cases for f in c.get("expect_faults", [])}
    keywords = {
        "aqp": {
            "type",
            "required",
            "additionalProperties",
            "const",
            "enum",
            "format",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "uniqueItems",
            "minimum",
            "maximum",
        },
        "acs": {
            "type",
            "required",
            "enum",
            "format",
            "minimum",
            "minItems",
            "const",
            "pattern",
            "additionalProperties",
        },
    }[dialect]
    assert keywords <= expected, sorted(keywords - expected)
