"""Differential test: askgate's validator against the upstream reference SDK (a2ui-agent-sdk 0.2.2).

Same catalogs, same payloads, one reference subprocess for the whole corpus. Where the reference returns a
verdict (passes, or raises a ValueError) askgate must give the same verdict and exactly the same message.
Where the reference crashes with another exception type (it does on some malformed shapes, e.g. a
non-object component in v0.9), askgate must still answer with a verdict of its own toolkit error types;
those cases are counted and shown, never silently dropped.

Corpus: every payload of ../shared/a2ui-conformance/suites/validator.yaml with its own catalog, the
bench's invalid payloads, and seeded mutations of generated surfaces on both basic catalogs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.errors import A2uiError
from askgate.a2ui.validator import A2uiValidator
from askgate.conformance.runner import collect_file
from tests.a2ui.validator_corpus import load_bench, mutated, mutated_zoo
from tests.support.a2ui_reference import run_reference
from tests.support.scale import examples

invalid_payloads = load_bench().invalid_payloads

REFERENCE_SCRIPT = r"""
import json, sys
from a2ui.schema.catalog import A2uiCatalog
from a2ui.schema.validator import A2uiValidator
job = json.load(sys.stdin)
catalogs = [A2uiCatalog(version=c["version"], name="oracle", s2c_schema=c["s2c"],
                        common_types_schema=c["common"], catalog_schema=c["catalog"]) for c in job["catalogs"]]
validators = {}
out = []
for item in job["items"]:
    try:
        i = item["catalog"]
        if i not in validators:
            validators[i] = A2uiValidator(catalogs[i])
        validators[i].validate(item["payload"])
        out.append({"kind": "ok"})
    except ValueError as exc:
        out.append({"kind": "error", "message": str(exc)})
    except Exception as exc:
        out.append({"kind": "crash", "message": type(exc).__name__ + ": " + str(exc)})
print(json.dumps(out))
"""


def _catalog_dict(c: A2uiCatalog) -> dict[str, Any]:
    return {"version": c.version, "s2c": c.s2c_schema, "common": c.common_types_schema, "catalog": c.catalog_schema}


def _corpus(shared: Path) -> tuple[list[A2uiCatalog], list[dict[str, Any]]]:
    catalogs: list[A2uiCatalog] = []
    items: list[dict[str, Any]] = []
    entries, failure = collect_file(shared / "a2ui-conformance" / "suites" / "validator.yaml")
    assert failure is None
    for case in entries:
        cfg = case.catalog
        catalogs.append(A2uiCatalog.from_config(cfg.version, cfg.s2c_schema, cfg.catalog_schema,
                                                cfg.common_types_schema, name=case.name))
        for step in case.steps:
            items.append({"catalog": len(catalogs) - 1, "payload": step.payload, "origin": f"{case.name}"})
    for version in ("0.8", "0.9"):
        basic = A2uiCatalog.basic(version)
        catalogs.append(basic)
        idx = len(catalogs) - 1
        cid = basic.catalog_id or ""
        for n, payload in enumerate(invalid_payloads(version, cid)):
            items.append({"catalog": idx, "payload": payload, "origin": f"bench invalid {version} #{n}"})
        for seed in range(examples(150)):
            items.append({"catalog": idx, "payload": mutated(version, cid, seed),
                          "origin": f"mutated {version} seed={seed}"})
            items.append({"catalog": idx, "payload": mutated_zoo(version, cid, seed),
                          "origin": f"mutated zoo {version} seed={seed}"})
    return catalogs, items


def _askgate(validators: dict[int, Any], catalogs: list[A2uiCatalog], item: dict[str, Any]) -> dict[str, Any]:
    try:
        i = item["catalog"]
        if i not in validators:
            validators[i] = A2uiValidator(catalogs[i])
        validators[i].validate(item["payload"])
        return {"kind": "ok"}
    except A2uiError as exc:
        return {"kind": "error", "message": str(exc)}


@pytest.fixture(scope="module")
def verdicts(shared_dir: Path) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    catalogs, items = _corpus(shared_dir)
    job = {"catalogs": [_catalog_dict(c) for c in catalogs],
           "items": [{"catalog": it["catalog"], "payload": it["payload"]} for it in items]}
    theirs = run_reference(REFERENCE_SCRIPT, job)
    validators: dict[int, Any] = {}
    ours = [_askgate(validators, catalogs, json.loads(json.dumps(it))) for it in items]
    return list(zip(items, ours, theirs))


def test_same_verdict_and_message_as_the_reference(verdicts: list[Any]) -> None:
    compared = [(it, a, r) for it, a, r in verdicts if r["kind"] != "crash"]
    mismatches = [(it["origin"], a, r) for it, a, r in compared if a != r]
    rejected = sum(1 for _, a, _ in compared if a["kind"] == "error")
    print(f"validator oracle: {len(compared)} payloads compared ({rejected} rejected), "
          f"{len(verdicts) - len(compared)} reference crashes")
    assert not mismatches, f"{len(mismatches)} mismatches; first: {mismatches[:3]}"
    assert rejected > len(compared) // 4, "the corpus must hold plenty of invalid payloads"
    assert len(compared) - rejected >= len(compared) // 10, "and plenty of valid ones"


def test_where_the_reference_crashes_askgate_still_answers(verdicts: list[Any]) -> None:
    crashes = [(it["origin"], a, r) for it, a, r in verdicts if r["kind"] == "crash"]
    # _askgate() only catches A2uiError, so any other exception would already have failed the fixture.
    assert all(a["kind"] in ("ok", "error") for _, a, _ in crashes)
    assert len(crashes) < len(verdicts) // 5, f"too many reference crashes to be a useful oracle: {crashes[:3]}"
