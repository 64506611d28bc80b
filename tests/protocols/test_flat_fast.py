"""The optimistic fast path accepts a subset of what the full rule pass accepts, and builds the same form."""

from __future__ import annotations

import json
import random
import zlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askgate.protocols.flat_fast import fast_form
from askgate.protocols.flat_schema import full_pass, secret_target
from tests.protocols.test_a2a_differential import REQUESTS, mutate, repair
from tests.support.scale import examples

PROFILES = {"a2a": False, "mcp-2025-06-18": False, "mcp-2025-11-25": True, "aqp": True}


def _agree(schema, seen) -> None:
    for profile, wide in PROFILES.items():
        fast = fast_form(schema, wide, secret_target)
        full, faults = full_pass(schema, profile=profile, pointer="/requestedSchema")
        if fast is not None:
            seen["fast"] += 1
            assert faults == [], (profile, schema, faults)
            assert fast == full and fast.model_dump() == full.model_dump(), (profile, schema)
        elif not faults:
            seen["full-only"] += 1


def test_fast_path_is_a_subset_of_the_full_pass() -> None:
    seen = {"fast": 0, "full-only": 0}

    @settings(max_examples=examples(1000), deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(REQUESTS)
    def run(doc) -> None:
        fixed = repair(doc)
        rng = random.Random(zlib.crc32(json.dumps(doc, sort_keys=True).encode()))
        for candidate in (doc, fixed, *(mutate(fixed, rng) for _ in range(4))):
            if isinstance(candidate, dict) and "requestedSchema" in candidate:
                _agree(candidate["requestedSchema"], seen)

    run()
    assert seen["fast"] >= 100, seen  # the fast path was really exercised


def test_fast_path_takes_the_common_case_and_defers_the_rest() -> None:
    common = {"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "enumNames": ["X"], "default": "x"},
                                                "n": {"type": "integer", "minimum": 0}, "b": {"type": "boolean"}},
              "required": ["a"]}
    assert fast_form(common, False, secret_target) is not None
    unusual = [
        {**common, "properties": {"n": {"type": "integer", "minimum": 1.0}}},  # whole float
        {**common, "properties": {"s": {"type": "string", "enum": ["x"], "minLength": 1}}},  # enum with constraints
        {**common, "properties": {"password": {"type": "string"}}},  # secret
        {**common, "required": ["zz"]},  # fault
        {**common, "properties": {"c": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]}}},  # 2025-11-25
    ]
    for schema in unusual:
        assert fast_form(schema, True, secret_target) is None
