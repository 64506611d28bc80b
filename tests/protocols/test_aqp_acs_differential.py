"""Differential strictness (issue #2 item 8): askgate vs jsonschema on the AQP and ACS seed schemas.

Per seed, ``examples(20000)`` documents: a few thousand drawn from the seed schema (``seed_strategies``)
plus deterministic mutations of valid documents. Each is judged by the codec's ``parse_request`` and by
``jsonschema.Draft202012Validator`` with its format checker and askgate's stand-ins registered. The
verdicts must agree, except where askgate is stricter for a documented reason:

- a named runtime rule (``aqp.RUNTIME_RULES``, ``acs.RUNTIME_RULES``), or the detail faults that
  accompany ``aqp.unsupported_json_schema`` (they point under ``/response/jsonSchema``);
- a ``format`` value that askgate's exact format rules (``askgate/core/formats.py``) refuse but
  jsonschema's checkers let through for a documented reason (see ``_LENIENT_FORMATS``).

Any other difference fails, and askgate may never accept what jsonschema rejects.
"""

from __future__ import annotations

import copy
import json
import random
import re
import uuid
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from jsonschema import Draft202012Validator

from askgate.core.formats import check_format
from askgate.errors import AskgateError, Fault
from askgate.protocols import acs, aqp, schemas
from tests.protocols.seed_strategies import SchemaStrategies
from tests.support.scale import examples

FC = Draft202012Validator.FORMAT_CHECKER

#: Rules by which askgate may reject what the seed accepts (everything else must agree).
STRICTER = {
    "aqp": set(aqp.RUNTIME_RULES),  # aqp.subject-too-large, aqp.unsupported_json_schema
    "acs": set(acs.RUNTIME_RULES),  # acs.question-empty, acs.timeout-seconds-range
}
SEEDS = {"aqp": "aqp-query-request.schema.json", "acs": "acs-ask-details.schema.json"}
FORMAT_AT = {
    "aqp": {"/queryId": "uuid", "/delivery/endpoint": "uri", "/expiresAt": "date-time"},
    "acs": {"/approver/endpoint": "uri"},
}


def _lenient_trailing_newline(value: str, fmt: str) -> bool:
    """rfc3339-validator and rfc3986-validator anchor with ``$``, which also matches before a final newline."""
    return value.endswith("\n") and check_format(fmt, value[:-1])


def _lenient_uuid(value: str, fmt: str) -> bool:
    """jsonschema's uuid is ``uuid.UUID(value)`` plus hyphen positions: it takes whatever ``int(x, 16)``
    takes (``_`` separators, non-ASCII digits) and strips ``{}``/``urn:uuid:`` wrappers."""
    return fmt == "uuid" and not re.fullmatch(r"[0-9a-fA-F-]{36}", value, re.ASCII)


_LENIENT_FORMATS: tuple[Callable[[str, str], bool], ...] = (_lenient_trailing_newline, _lenient_uuid)


def _validator(shared_dir) -> dict[str, Draft202012Validator]:
    out = {}
    for dialect, name in SEEDS.items():
        seed = json.loads((shared_dir / "seeds" / name).read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(seed)
        out[dialect] = Draft202012Validator(seed, registry=schemas.registry(), format_checker=FC)
    return out


def _parse(dialect: str) -> Callable[[Any], Any]:
    if dialect == "aqp":
        return aqp.parse_request
    return lambda doc: acs.parse_request(doc, form="ask_details")


def _validate(dialect: str) -> Callable[[Any], list[Fault]]:
    if dialect == "aqp":
        return aqp.validate_request
    return lambda doc: acs.validate_request(doc, form="ask_details")


def _at(doc: Any, pointer: str) -> Any:
    node = doc
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def _unexplained(dialect: str, doc: Any, faults: list[Fault]) -> list[Fault]:
    """askgate's faults on a document jsonschema accepts that no documented rule explains."""
    unsupported = any(f.rule == "aqp.unsupported_json_schema" for f in faults)
    out = []
    for f in faults:
        if f.rule in STRICTER[dialect]:
            continue
        if unsupported and f.pointer.startswith("/response/jsonSchema"):
            continue
        if f.rule == "format" and f.pointer in FORMAT_AT[dialect]:
            fmt = FORMAT_AT[dialect][f.pointer]
            value = _at(doc, f.pointer)
            if (
                FC.conforms(value, fmt)
                and not check_format(fmt, value)
                and any(l(value, fmt) for l in _LENIENT_FORMATS)
            ):
                continue
        out.append(f)
    return out


# --------------------------------------------------------------------------------------------------
# Documents.
# --------------------------------------------------------------------------------------------------

QID = "9b2f7c1e-2a4d-4e8b-9f21-0c5d7a3e6b10"
AQP_BASES = [
    {
        "protocolVersion": "2026-07-30",
        "queryId": QID,
        "type": "feedback",
        "subject": {"release": "v2.4.0"},
        "prompt": "How did it go?",
        "timing": "immediate",
        "consentMode": "not_required",
        "response": {"format": "text"},
        "delivery": {"binding": "other"},
        "expiresAt": "2026-08-03T00:00:00Z",
    },
    {
        "protocolVersion": "2026-07-30",
        "queryId": QID,
        "type": "approval",
        "subject": "PR 42",
        "prompt": "Ship it?",
        "instructions": "One word.",
        "timing": "deferred",
        "consentMode": "ask_once",
        "consentScope": "repo:acme/app",
        "dataPolicy": "30 days",
        "response": {"format": "choice", "choices": ["Ship it", "Hold"], "maxLength": 10},
        "delivery": {
            "binding": "https",
            "endpoint": "https://agent.example/aqp",
            "authorization": "Token x",
            "operation": "op",
        },
        "expiresAt": "2026-08-03T10:00:00.5+02:00",
    },
    {
        "protocolVersion": "2026-07-30",
        "queryId": QID,
        "type": "survey",
        "subject": [1, {"a": None}],
        "prompt": "Rate",
        "timing": "after_task_complete",
        "consentMode": "ask_always",
        "response": {
            "format": "structured",
            "jsonSchema": {
                "type": "object",
                "properties": {"score": {"type": "integer", "minimum": 1}},
                "required": ["score"],
            },
        },
        "delivery": {"binding": "mcp", "endpoint": "https://mcp.example/mcp", "operation": "tools.answer"},
        "expiresAt": "2026-08-03T00:00:00z",
    },
    {
        "protocolVersion": "2026-07-30",
        "queryId": QID,
        "type": "status",
        "subject": None,
        "prompt": "Done?",
        "timing": "after_outcome_known",
        "consentMode": "not_required",
        "response": {"format": "boolean"},
        "delivery": {"binding": "a2a", "endpoint": "https://peer.example/"},
        "expiresAt": "2026-08-03T00:00:00Z",
    },
]
ACS_BASES = [
    {"approver": {"type": "human", "id": "user:lead"}, "question": "Run it?", "timeout_seconds": 300},
    {
        "approver": {
            "type": "agent",
            "id": "agent:r",
            "endpoint": "https://r.example/acs",
            "auth": {"method": "mtls"},
        },
        "question": "Allow exec?",
        "context": "outside intent",
        "options": ["once", "always"],
        "timeout_seconds": 30.0,
        "timeout_disposition": "allow",
        "intent_extension": {
            "capabilities": [{"tool": "shell", "operation": "exec", "resource": "posix:///srv"}, {}],
            "scope": "session",
            "provenance": {
                "provenance_id": "p1",
                "origin": "user_input",
                "source_id": "user:lead",
                "derived_from": ["p0"],
            },
        },
    },
]

INTERESTING: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    1.5,
    0.5,
    2**53,
    2**53 - 1,
    16000,
    16001,
    4096,
    "",
    "x",
    "short",
    "scope:ok12",
    "x" * 257,
    "x" * 1001,
    "x" * 4001,
    "not a uri",
    "https://ok.example/a",
    "https://h:port/",
    "http://[::1]:80/",
    "https://ok.example/\n",
    "2026-02-30T00:00:00Z",
    "2026-08-03T00:00:00",
    "2026-12-31T23:59:60Z",
    "2026-08-03T00:00:00Z\n",
    "2026-08-03t00:00:00z",
    QID,
    QID.upper(),
    QID.replace("-", ""),
    QID[:-1] + "_",
    "{" + QID[1:-1] + "}",
    [],
    [""],
    ["a", "a"],
    ["a"],
    [1],
    [{}],
    {},
    {"x": 1},
    {"type": "object"},
    {"type": "object", "properties": {"a": {"type": "object"}}},
    "2026-07-30",
    "text",
    "structured",
    "choice",
    "boolean",
    "number",
    "https",
    "mcp",
    "a2a",
    "other",
    "not_required",
    "ask_once",
    "ask_always",
    "immediate",
    "deferred",
    "feedback",
    "custom",
    "human",
    "agent",
    "service",
    "bearer",
    "mtls",
    "basic",
    "allow",
    "deny",
    "ask",
    "this_request",
    "session",
    "user_input",
    "external",
    "llm",
    {"blob": "y" * 16400},
    [f"c{i}" for i in range(64)],
    [f"c{i}" for i in range(65)],
]


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, path + (k,)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_paths(v, path + (i,)))
    return out


def mutate(doc: Any, rng: random.Random) -> Any:
    """One deterministic structural mutation of ``doc``: replace, delete, add or duplicate somewhere."""
    d = copy.deepcopy(doc)
    path = rng.choice(_paths(d))
    parent = d
    for token in path[:-1]:
        parent = parent[token]
    target = parent[path[-1]] if path else d
    kind = rng.random()
    if path and kind < 0.55:
        parent[path[-1]] = copy.deepcopy(rng.choice(INTERESTING))
    elif path and kind < 0.7:
        del parent[path[-1]]
    elif isinstance(target, dict) and kind < 0.85:
        target[rng.choice(["extra", "priority", "format", "binding", "scope", "zz"])] = copy.deepcopy(
            rng.choice(INTERESTING)
        )
    elif isinstance(target, list) and target:
        target.append(copy.deepcopy(target[0]))
    elif path:
        parent[path[-1]] = copy.deepcopy(rng.choice(INTERESTING))
    return d


def generated(dialect: str, shared_dir, count: int) -> list[Any]:
    seed = json.loads((shared_dir / "seeds" / SEEDS[dialect]).read_text(encoding="utf-8"))
    standin = {
        "query-subject.schema.json": schemas.load(schemas.SUBJECT),
        "provenance.json": schemas.load(schemas.PROVENANCE),
    }
    strategies = SchemaStrategies(seed, lambda ref: standin[ref])
    docs: list[Any] = []

    @settings(
        max_examples=count,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    @given(strategies.of(seed))
    def collect(doc: Any) -> None:
        docs.append(doc)

    collect()
    return docs


def corpus(dialect: str, shared_dir, validator: Draft202012Validator) -> list[Any]:
    total = examples(20000)
    docs = generated(dialect, shared_dir, examples(3000))
    valid = [d for d in docs if validator.is_valid(d)] + (AQP_BASES if dialect == "aqp" else ACS_BASES)
    rng = random.Random(f"differential-{dialect}")
    while len(docs) < total:
        base = rng.choice(valid)
        doc = mutate(base, rng)
        if rng.random() < 0.3:
            doc = mutate(doc, rng)
        docs.append(doc)
    return docs


# --------------------------------------------------------------------------------------------------
# Tests.
# --------------------------------------------------------------------------------------------------


def test_format_checkers_are_really_active(shared_dir):
    """uuid, uri and date-time are checked, not skipped (rfc3986-validator and rfc3339-validator are installed)."""
    for fmt in ("uuid", "uri", "date-time"):
        assert fmt in FC.checkers
    assert not FC.conforms("not a uri", "uri") and FC.conforms("https://x.example/", "uri")
    assert not FC.conforms("2026-08-03T00:00:00", "date-time") and FC.conforms(
        "2026-08-03T00:00:00Z", "date-time"
    )
    assert not FC.conforms(QID.replace("-", ""), "uuid") and FC.conforms(QID, "uuid")
    v = _validator(shared_dir)
    assert not v["aqp"].is_valid({**AQP_BASES[0], "queryId": "nope"})
    assert not v["acs"].is_valid(
        {**ACS_BASES[0], "approver": {"type": "agent", "id": "a", "endpoint": "no uri"}}
    )


def test_stand_ins_resolve_under_the_seed_uris(shared_dir):
    v = _validator(shared_dir)
    assert v["aqp"].is_valid(AQP_BASES[0]) and v["acs"].is_valid(ACS_BASES[1])
    bad_prov = copy.deepcopy(ACS_BASES[1])
    bad_prov["intent_extension"]["provenance"] = {"origin": "llm"}
    assert not v["acs"].is_valid(bad_prov)


def test_hypothesis_jsonschema_is_broken_on_the_pinned_hypothesis():
    """Why ``seed_strategies`` exists; when this starts failing, switch to hypothesis-jsonschema."""
    from hypothesis_jsonschema import from_schema

    strat = from_schema({"type": "object", "properties": {"a": {"type": "string"}}})
    with warnings.catch_warnings(), pytest.raises(AttributeError, match="more"):
        warnings.simplefilter("ignore")  # .example() warns that it is meant for interactive use
        strat.example()


def test_mutation_is_deterministic():
    a = [mutate(AQP_BASES[1], random.Random(7)) for _ in range(3)]
    b = [mutate(AQP_BASES[1], random.Random(7)) for _ in range(3)]
    assert a == b


@pytest.mark.parametrize("dialect", ["aqp", "acs"])
def test_verdicts_agree_except_documented_strictness(dialect, shared_dir):
    validator = _validator(shared_dir)[dialect]
    parse, validate = _parse(dialect), _validate(dialect)
    docs = corpus(dialect, shared_dir, validator)
    assert len(docs) >= examples(20000)
    stats = {"both_valid": 0, "both_invalid": 0, "askgate_stricter": 0}
    stricter_rules: dict[str, int] = {}
    problems: list[str] = []
    for doc in docs:
        expected = validator.is_valid(doc)
        try:
            parse(doc)
            faults: list[Fault] = []
        except AskgateError as exc:
            faults = exc.faults
            assert faults, "an AskgateError without faults"
        assert validate(doc) == faults, "validate_request must report exactly what parse_request raises"
        if not faults and expected:
            stats["both_valid"] += 1
        elif faults and not expected:
            stats["both_invalid"] += 1
        elif not faults:
            problems.append(f"askgate accepted what jsonschema rejects: {json.dumps(doc)[:400]}")
        else:
            left = _unexplained(dialect, doc, faults)
            if left:
                problems.append(
                    f"undocumented strictness {[f.as_dict() for f in left]}: {json.dumps(doc)[:400]}"
                )
            stats["askgate_stricter"] += 1
            for f in faults:
                stricter_rules[f.rule] = stricter_rules.get(f.rule, 0) + 1
    assert not problems, f"{len(problems)} disagreements, first: " + "\n".join(problems[:5])
    # Not vacuous: plenty of both verdicts.
    assert stats["both_valid"] >= len(docs) // 20, stats
    assert stats["both_invalid"] >= len(docs) // 5, stats
    print(dialect, stats, stricter_rules)


def test_subject_size_rule_is_the_only_difference_on_a_huge_subject(shared_dir):
    validator = _validator(shared_dir)["aqp"]
    doc = {**AQP_BASES[0], "subject": {"blob": "é" * 9000}}  # 18 KB as UTF-8
    assert validator.is_valid(doc)
    with pytest.raises(AskgateError) as err:
        aqp.parse_request(doc)
    assert [f.rule for f in err.value.faults] == ["aqp.subject-too-large"]
    assert uuid.UUID(QID)  # the fixture id is a real uuid
