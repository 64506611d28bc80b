"""Differential strictness (issue #2 item 8): askgate vs ``jsonschema`` on the elicitation/v1 seed.

Documents are generated from the seed schema (``schema_strategy``), repaired to satisfy the runtime
rules, and mutated deterministically; each one is judged by askgate (``parse_request`` for request-branch
documents, ``check_response_shape`` for response-branch ones) and by ``Draft202012Validator`` with its
format checker against the matching branch (protocols.md §1.3). Verdicts must agree, except where a rule
in :data:`STRICTER` (a documented runtime rule, protocols.md §1.4 / §1.6 / §2.5) makes askgate refuse a
document the seed accepts. Any other difference fails, in particular askgate accepting a document the
seed rejects, or rejecting a seed-invalid document only for runtime reasons (it must also name a schema
keyword).
"""

from __future__ import annotations

import copy
import json
import random
import zlib
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from askgate.errors import AskgateError
from askgate.protocols import a2a_elicitation as a2a
from tests.conftest import SHARED
from tests.protocols.schema_strategy import strategy
from tests.support.scale import examples

SEED = json.loads((SHARED / "seeds" / "a2a-elicitation-v1.schema.json").read_text(encoding="utf-8"))
REQUEST_BRANCH = {"$schema": SEED["$schema"], "$defs": SEED["$defs"], **SEED["oneOf"][0]}
RESPONSE_BRANCH = {"$schema": SEED["$schema"], **SEED["oneOf"][1]}
FORMATS = Draft202012Validator.FORMAT_CHECKER
REQUEST_V = Draft202012Validator(REQUEST_BRANCH, format_checker=FORMATS)
RESPONSE_V = Draft202012Validator(RESPONSE_BRANCH, format_checker=FORMATS)

#: Runtime rules by which askgate is documented to be stricter than the seed schema.
STRICTER = {
    "elicitation.safe-integer": "§1.4 rules 7 and 16, §1.6: lengths and integer keywords are safe integers (<= 2^53-1)",
    "elicitation.length-order": "§1.4 rule 8: minLength <= maxLength",
    "elicitation.enumNames-length": "§1.4 rule 13: enumNames as long as enum",
    "elicitation.default-in-enum": "§1.4 rule 15: a string default is one of the enum values",
    "elicitation.bounds-order": "§1.4 rule 17: minimum <= maximum",
    "elicitation.default-in-bounds": "§1.4 rule 18: a numeric default within its bounds",
    "elicitation.required-declared": "§1.4 rule 20: required names declared properties",
    "elicitation.secret": "§2.5: property names or titles that plainly target secrets",
    "elicitation.enum-unsatisfiable": "askgate: every enum value satisfies the string constraints beside it, so membership implies them",
}

TOTAL = examples(20000)
PER_BASE = 24  # base + repaired + mutations per generated document; a margin over 20 for the count
BASES = max(1, TOTAL // 20)
MAX_SAFE = 2**53 - 1

INTERESTING: list[Any] = [
    0, 1, -1, 1.0, 2.0, 1.5, -0.5, True, False, None, "", "a", "string", "number", "integer", "boolean", "object",
    "array", "email", "uri", "date", "date-time", "uuid", MAX_SAFE, MAX_SAFE + 1, 2**63, -(2**53), 1e300, [], ["a"],
    ["a", "a"], ["a", "b"], [1], [None], {}, {"type": "string"}, {"type": "integer", "minimum": 3, "maximum": 1},
    "accept", "decline", "cancel", "password", "other",
]
KEY_POOL = [
    "type", "title", "description", "default", "minLength", "maxLength", "format", "enum", "enumNames", "minimum",
    "maximum", "properties", "required", "message", "requestedSchema", "action", "content", "pattern", "oneOf",
    "items", "$schema", "const", "x", "password", "API key", "__proto__",
]
PRIMITIVES = ["string", "number", "integer", "boolean"]


# ---- repair and mutation --------------------------------------------------------------------------


def repair(doc: dict) -> dict:
    """A copy of a seed-valid request that also satisfies every runtime rule of §1.4."""
    doc = copy.deepcopy(doc)
    schema = doc["requestedSchema"]
    props = schema["properties"]
    for prop in props.values():
        kind = prop["type"]
        if kind == "string":
            for key in ("minLength", "maxLength"):
                if key in prop:
                    prop[key] = min(prop[key], MAX_SAFE)
            if "minLength" in prop and "maxLength" in prop and prop["minLength"] > prop["maxLength"]:
                prop["minLength"], prop["maxLength"] = prop["maxLength"], prop["minLength"]
            if "enum" in prop:
                for key in ("minLength", "maxLength", "format"):  # enum-unsatisfiable: keep the enum alone
                    prop.pop(key, None)
                if "enumNames" in prop:
                    names = (prop["enumNames"] + ["L"] * len(prop["enum"]))[: len(prop["enum"])]
                    prop["enumNames"] = names
                if "default" in prop and prop["default"] not in prop["enum"]:
                    prop["default"] = prop["enum"][0]
        elif kind in ("number", "integer"):
            if kind == "integer":
                for key in ("minimum", "maximum", "default"):
                    if key in prop:
                        prop[key] = max(-MAX_SAFE, min(prop[key], MAX_SAFE))
            lo, hi = prop.get("minimum"), prop.get("maximum")
            if lo is not None and hi is not None and lo > hi:
                prop["minimum"], prop["maximum"] = hi, lo
                lo, hi = hi, lo
            if "default" in prop:
                if lo is not None and prop["default"] < lo:
                    prop["default"] = lo
                if hi is not None and prop["default"] > hi:
                    prop["default"] = hi
    if "required" in schema:
        schema["required"] = [n for n in schema["required"] if n in props]
    return doc


def _slots(node: Any, out: list[tuple[Any, Any]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            out.append((node, key))
            _slots(value, out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out.append((node, i))
            _slots(value, out)


def _containers(node: Any, kind: type, out: list[Any]) -> None:
    if isinstance(node, kind):
        out.append(node)
    if isinstance(node, dict):
        for value in node.values():
            _containers(value, kind, out)
    elif isinstance(node, list):
        for value in node:
            _containers(value, kind, out)


def mutate(doc: Any, rng: random.Random) -> Any:
    """One or two deterministic structural edits of a copy of ``doc``."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice((1, 1, 2))):
        op = rng.randrange(7)
        slots: list[tuple[Any, Any]] = []
        _slots(doc, slots)
        if op == 0 and slots:  # delete
            parent, key = rng.choice(slots)
            del parent[key]
        elif op == 1 and slots:  # replace with an interesting value
            parent, key = rng.choice(slots)
            parent[key] = copy.deepcopy(rng.choice(INTERESTING))
        elif op == 2:  # add a key, mostly to a property schema
            dicts: list[Any] = []
            _containers(doc, dict, dicts)
            typed = [d for d in dicts if "type" in d]
            target = rng.choice(typed) if typed and rng.random() < 0.7 else rng.choice(dicts)
            target[rng.choice(KEY_POOL)] = copy.deepcopy(rng.choice(INTERESTING))
        elif op == 3:  # duplicate a list item
            lists: list[Any] = []
            _containers(doc, list, lists)
            lists = [lst for lst in lists if lst]
            if lists:
                lst = rng.choice(lists)
                lst.append(copy.deepcopy(rng.choice(lst)))
        elif op == 4:  # swap bounds
            dicts = []
            _containers(doc, dict, dicts)
            pairs = [(d, a, b) for d in dicts for a, b in (("minimum", "maximum"), ("minLength", "maxLength")) if a in d and b in d]
            if pairs:
                d, a, b = rng.choice(pairs)
                d[a], d[b] = d[b], d[a]
        elif op == 5:  # retype a property
            dicts = []
            _containers(doc, dict, dicts)
            typed = [d for d in dicts if d.get("type") in PRIMITIVES]
            if typed:
                rng.choice(typed)["type"] = rng.choice(PRIMITIVES + ["object", "array"])
        else:  # nudge a number
            nums = [(p, k) for p, k in slots if isinstance(p[k], (int, float)) and not isinstance(p[k], bool)]
            if nums:
                parent, key = rng.choice(nums)
                v = parent[key]
                parent[key] = rng.choice([v + 1, -v - 1, float(v) if abs(v) < 2**53 else v, v + 0.5, MAX_SAFE + 1, 0])
    return doc


# ---- judging --------------------------------------------------------------------------------------


class Tally:
    def __init__(self) -> None:
        self.count = 0
        self.verdicts: Counter[str] = Counter()
        self.stricter: Counter[str] = Counter()
        self.disagreements: list[str] = []

    def judge(self, branch: str, doc: Any) -> None:
        self.count += 1
        if branch == "request":
            try:
                a2a.parse_request(doc)
                faults = []
            except AskgateError as exc:
                faults = exc.faults
            seed_ok = REQUEST_V.is_valid(doc)
        else:
            _action, faults = a2a.check_response_shape(doc)
            seed_ok = RESPONSE_V.is_valid(doc)
        rules = {f.rule for f in faults}
        ours_ok = not faults
        self.verdicts[f"{branch} seed={'ok' if seed_ok else 'bad'} askgate={'ok' if ours_ok else 'bad'}"] += 1
        problem = None
        if seed_ok and not ours_ok:
            undocumented = rules - set(STRICTER)
            if undocumented:
                problem = f"askgate rejects for undocumented rules {sorted(undocumented)}"
            else:
                self.stricter.update(rules)
        elif not seed_ok and ours_ok:
            problem = "askgate accepts a document the seed rejects"
        elif not seed_ok and not (rules - set(STRICTER)):
            problem = "the seed rejects but askgate names only runtime rules"
        if problem and len(self.disagreements) < 10:
            detail = [(f.pointer, f.rule, f.message) for f in faults]
            errors = [e.message for e in (REQUEST_V if branch == "request" else RESPONSE_V).iter_errors(doc)][:3]
            self.disagreements.append(f"{problem}: {json.dumps(doc)[:400]}\n  askgate: {detail}\n  jsonschema: {errors}")
        elif problem:
            self.disagreements.append(problem)


REQUESTS = strategy(REQUEST_BRANCH, REQUEST_BRANCH)
RESPONSES = strategy(RESPONSE_BRANCH, RESPONSE_BRANCH)


def test_askgate_is_exactly_as_strict_as_the_seed_plus_documented_rules() -> None:
    tally = Tally()

    @settings(max_examples=BASES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def run(data: st.DataObject) -> None:
        branch = "response" if data.draw(st.integers(0, 3)) == 0 else "request"
        base = data.draw(REQUESTS if branch == "request" else RESPONSES)
        rng = random.Random(zlib.crc32(json.dumps(base, sort_keys=True).encode()))
        tally.judge(branch, base)
        seedling = base
        if branch == "request":
            seedling = repair(base)
            tally.judge(branch, seedling)
        while tally.count % PER_BASE:
            tally.judge(branch, mutate(seedling, rng))

    run()
    summary = f"{tally.count} documents; verdicts {dict(tally.verdicts)}; stricter rules {dict(tally.stricter)}"
    print(summary)
    assert not tally.disagreements, summary + "\n" + "\n".join(tally.disagreements[:10])
    assert tally.count >= TOTAL, summary
    # the run is only meaningful if it exercised every verdict class and several stricter rules
    for key in ("request seed=ok askgate=ok", "request seed=bad askgate=bad", "request seed=ok askgate=bad",
                "response seed=ok askgate=ok", "response seed=bad askgate=bad"):
        assert tally.verdicts[key] >= max(1, tally.count // 200), summary
    assert len(tally.stricter) >= 5, summary


def test_repair_and_mutation_are_deterministic() -> None:
    doc = {"message": "m", "requestedSchema": {"type": "object", "properties": {
        "a": {"type": "string", "enum": ["x", "y"], "enumNames": ["X"], "default": "z", "minLength": 5, "maxLength": 2},
        "n": {"type": "integer", "minimum": 9, "maximum": 1, "default": 20}}, "required": ["a", "q"]}}
    fixed = repair(doc)
    assert REQUEST_V.is_valid(fixed)
    a2a.parse_request(fixed)  # raises if any runtime rule still fails
    assert [mutate(fixed, random.Random(7)) for _ in range(1)] == [mutate(fixed, random.Random(7))]


def test_stricter_rules_are_real_rule_names() -> None:
    from askgate.protocols.flat_schema import RUNTIME_RULES

    assert set(STRICTER) <= set(RUNTIME_RULES)


def test_mcp_profiles_agree_with_a2a_on_seed_documents() -> None:
    """No MCP seed exists; instead: 2025-06-18 has the elicitation/v1 keyword sets (same verdicts, same
    forms), and 2025-11-25 only widens them (everything A2A accepts it accepts, with the same form)."""
    from askgate.protocols import mcp_elicitation as mcp

    counts = Counter()

    @settings(max_examples=examples(2000) // 10, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(REQUESTS)
    def run(base: dict) -> None:
        rng = random.Random(zlib.crc32(json.dumps(base, sort_keys=True).encode()))
        fixed = repair(base)
        for doc in (base, fixed, *(mutate(fixed, rng) for _ in range(8))):
            verdicts = []
            for fn in (lambda d: a2a.parse_request(d), lambda d: mcp.parse_request(d, version="2025-06-18"),
                       lambda d: mcp.parse_request(d, version="2025-11-25")):
                try:
                    verdicts.append(fn(doc).spec)
                except AskgateError as exc:
                    verdicts.append(exc.code)
            old_ok = not isinstance(verdicts[0], str)
            counts["a2a ok" if old_ok else "a2a bad"] += 1
            if isinstance(doc, dict) and set(doc) <= {"message", "requestedSchema"}:
                assert verdicts[1] == verdicts[0], doc  # same keyword sets, same verdict and form
            if old_ok:
                assert verdicts[2] == verdicts[0], doc  # 2025-11-25 only widens

    run()
    assert counts["a2a ok"] > 0 and counts["a2a bad"] > 0, counts
