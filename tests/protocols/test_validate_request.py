"""Every codec's ``validate_request`` gives exactly the faults ``parse_request`` raises (verdict-only path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from askgate.conformance.yamlload import load_yaml_file
from askgate.errors import AskgateError
from askgate.protocols.registry import codec_for

SUITES = Path(__file__).resolve().parents[2] / "conformance"


def _request_cases() -> list[tuple[str, Any, dict[str, Any]]]:
    cases = []
    for path in sorted(SUITES.glob("*.yaml")):
        for i, case in enumerate(load_yaml_file(path)):
            if case.get("action") == "validate_request" and "payload" in case:
                args = case.get("args") or {}
                opts = dict(args.get("options") or {}, **(args.get("request_options") or {}))
                opts.pop("json_text", None)
                cases.append((f"{path.name}:{i}", case["payload"], {"dialect": args["dialect"], "opts": opts}))
    return cases


CASES = _request_cases()


def test_the_suites_hold_request_cases_of_every_dialect() -> None:
    assert {c[2]["dialect"] for c in CASES} == {"a2a-elicitation", "mcp-elicitation", "aqp", "acs"}
    assert len(CASES) > 100


@pytest.mark.parametrize(("case_id", "payload", "how"), CASES, ids=[c[0] for c in CASES])
def test_validate_request_equals_parse_request_faults(case_id: str, payload: Any, how: dict[str, Any]) -> None:
    codec = codec_for(how["dialect"])
    try:
        codec.parse_request(payload, **how["opts"])
        expected: list[Any] = []
    except AskgateError as exc:
        expected = list(exc.faults)
    assert codec.validate_request(payload, **how["opts"]) == expected
