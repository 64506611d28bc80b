"""The dialect actions' expectation semantics, against a fake codec (the real ones run in the repo suites)."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from askgate.conformance import dialect_actions
from askgate.conformance.dialect_actions import is_subset
from askgate.conformance.runner import run_suites
from askgate.core.model import Answer, Ask, Dialect, FormSpec, StringField
from askgate.errors import AskgateError, Fault

CALLS: list[tuple[str, dict[str, Any]]] = []


def _parse_request(doc: Any, *, version: str = "x", now: datetime | None = None) -> Ask:
    CALLS.append(("parse_request", {"version": version, "now": now}))
    if doc == "crash":
        raise KeyError("leak")
    if not isinstance(doc, dict) or "message" not in doc:
        raise AskgateError(
            "invalid request: /message: message is required",
            [Fault("", "message is required", "required"), Fault("/x", "x must be a ~/ string", "type")],
            code="invalid_request",
        )
    spec = FormSpec(fields=(StringField(name="a", required=True),))
    return Ask(dialect=Dialect.A2A_ELICITATION, prompt=doc["message"], spec=spec, original=doc)


def _check_answer(ask: Ask, payload: Any, *, strict: bool = False) -> Answer:
    CALLS.append(("check_answer", {"strict": strict}))
    if payload.get("action") != "accept":
        raise AskgateError(
            "invalid answer", [Fault("/action", "action must be accept", "enum")], code="invalid_answer"
        )
    return Answer(outcome="accept", value=payload.get("content"))


def _render_answer(ask: Ask, answer: Answer, *, issued_at: datetime | None = None) -> dict:
    CALLS.append(("render_answer", {"issued_at": issued_at}))
    out: dict[str, Any] = {"action": answer.outcome, "content": answer.value}
    if issued_at is not None:
        out["issuedAt"] = issued_at.isoformat()
    return out


FAKE = SimpleNamespace(
    DIALECT=Dialect.A2A_ELICITATION,
    parse_request=_parse_request,
    check_answer=_check_answer,
    render_answer=_render_answer,
)


@pytest.fixture(autouse=True)
def fake_codec(monkeypatch: pytest.MonkeyPatch) -> None:
    CALLS.clear()

    def codec_for(name: str) -> Any:
        if name != "fake":
            raise AskgateError(f"unknown dialect {name!r}", code="unknown_dialect")
        return FAKE

    monkeypatch.setattr(dialect_actions, "codec_for", codec_for)


def _run(tmp_path: Path, text: str) -> dict[str, tuple[bool, str]]:
    suite = tmp_path / "s.yaml"
    suite.write_text(textwrap.dedent(text), encoding="utf-8")
    report = run_suites([suite])
    assert report.cases > 0, report.results
    return {r.name: (r.passed, r.detail) for r in report.results}


def test_is_subset() -> None:
    assert is_subset({"a": 1}, {"a": 1, "b": 2}) is None
    assert is_subset({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 2, "d": 3}]}, "e": 0}) is None
    assert is_subset({"a": 1}, {"b": 1}) == "/a: missing (expected 1)"
    assert is_subset([1], [1, 2]) is not None
    assert is_subset(True, 1) is not None
    assert is_subset(1, 1.0) is None
    assert is_subset({"a": None}, {"a": None}) is None


def test_validate_request_expectations(tmp_path: Path) -> None:
    results = _run(
        tmp_path,
        r"""
        - name: valid with subset
          action: validate_request
          args: {dialect: fake}
          payload: {message: hi}
          expect: {prompt: hi, spec: {kind: form, fields: [{name: a, required: true}]}}
        - name: valid but subset differs
          action: validate_request
          args: {dialect: fake}
          payload: {message: hi}
          expect: {prompt: bye}
        - name: invalid matched by any fault message
          action: validate_request
          args: {dialect: fake}
          payload: {}
          expect_error: 'must be a ~/ string'
          expect_faults: [{pointer: /x, rule: type}, {rule: required, message: '^message is'}]
          expect_fault_count: 2
        - name: wrong fault count
          action: validate_request
          args: {dialect: fake}
          payload: {}
          expect_error: required
          expect_fault_count: 1
        - name: unmatched fault expectation
          action: validate_request
          args: {dialect: fake}
          payload: {}
          expect_error: required
          expect_faults: [{pointer: /message}]
        - name: regex matching only the summary does not count when faults exist
          action: validate_request
          args: {dialect: fake}
          payload: {}
          expect_error: 'invalid request: /message'
        - name: category form
          action: validate_request
          args: {dialect: fake}
          payload: {}
          expect_error: {category: ValueError, message: 'message is required'}
        - name: wrong category
          action: validate_request
          args: {dialect: fake}
          payload: {}
          expect_error: {category: TypeError, message: 'message is required'}
        - name: expected error but accepted
          action: validate_request
          args: {dialect: fake}
          payload: {message: hi}
          expect_error: anything
        - name: unexpected error
          action: validate_request
          args: {dialect: fake}
          payload: {}
        - name: non-AskgateError escaping is a failure even when an error is expected
          action: validate_request
          args: {dialect: fake}
          payload: crash
          expect_error: leak
        - name: expect_faults without expect_error is malformed
          action: validate_request
          args: {dialect: fake}
          payload: {}
          expect_faults: [{rule: required}]
        - name: unknown dialect
          action: validate_request
          args: {dialect: klingon}
          payload: {}
        - name: option nobody accepts
          action: validate_request
          args: {dialect: fake, options: {versoin: "1"}}
          payload: {message: hi}
        """,
    )
    assert {name: passed for name, (passed, _) in results.items()} == {
        "valid with subset": True,
        "valid but subset differs": False,
        "invalid matched by any fault message": True,
        "wrong fault count": False,
        "unmatched fault expectation": False,
        "regex matching only the summary does not count when faults exist": False,
        "category form": True,
        "wrong category": False,
        "expected error but accepted": False,
        "unexpected error": False,
        "non-AskgateError escaping is a failure even when an error is expected": False,
        "expect_faults without expect_error is malformed": False,
        "unknown dialect": False,
        "option nobody accepts": False,
    }
    assert "/prompt: expected 'bye', got 'hi'" in results["valid but subset differs"][1]
    assert (
        "only AskgateError may escape"
        in results["non-AskgateError escaping is a failure even when an error is expected"][1]
    )
    assert "versoin" in results["option nobody accepts"][1]


def test_options_are_distributed_and_times_coerced(tmp_path: Path) -> None:
    results = _run(
        tmp_path,
        """
        - name: render with issued_at and request version
          action: render_answer
          args: {dialect: fake, options: {issued_at: "2026-01-02T03:04:05Z", version: "v9"}}
          request: {message: hi}
          answer: {outcome: accept, value: {a: x}}
          expect: {action: accept, content: {a: x}, issuedAt: "2026-01-02T03:04:05+00:00"}
        - name: render mismatch
          action: render_answer
          args: {dialect: fake}
          request: {message: hi}
          answer: {outcome: accept, value: {a: x}}
          expect: {action: accept, content: {a: y}}
        - name: answer accepted with subset
          action: validate_answer
          args: {dialect: fake, options: {strict: true}, request_options: {now: "2026-01-01T00:00:00+02:00"}}
          request: {message: hi}
          payload: {action: accept, content: {a: x}}
          expect: {outcome: accept, value: {a: x}}
        - name: answer refused
          action: validate_answer
          args: {dialect: fake}
          request: {message: hi}
          payload: {action: decline}
          expect_error: 'action must be accept'
          expect_faults: [{pointer: /action, rule: enum}]
        - name: invalid request in an answer case
          action: validate_answer
          args: {dialect: fake}
          request: {}
          payload: {action: accept}
        """,
    )
    assert {n: p for n, (p, _) in results.items()} == {
        "render with issued_at and request version": True,
        "render mismatch": False,
        "answer accepted with subset": True,
        "answer refused": True,
        "invalid request in an answer case": False,
    }
    assert "the case's request is invalid" in results["invalid request in an answer case"][1]
    parse_calls = [kw for name, kw in CALLS if name == "parse_request"]
    assert {"version": "v9", "now": None} in parse_calls
    assert {"version": "x", "now": datetime(2025, 12, 31, 22, tzinfo=UTC)} in parse_calls  # same instant
    assert ("check_answer", {"strict": True}) in CALLS


def test_detect_action(tmp_path: Path) -> None:
    results = _run(
        tmp_path,
        """
        - {name: right, action: detect, payload: {approver: {type: human, id: u}, question: q, timeout_seconds: 1}, expect: acs}
        - {name: wrong, action: detect, payload: {approver: {type: human, id: u}, question: q, timeout_seconds: 1}, expect: aqp}
        - {name: refused, action: detect, payload: [], expect_error: 'not an array'}
        - {name: no expectation, action: detect, payload: {question: q}}
        """,
    )
    assert {n: p for n, (p, _) in results.items()} == {
        "right": True,
        "wrong": False,
        "refused": True,
        "no expectation": False,
    }
    assert "detected 'acs', expected 'aqp'" in results["wrong"][1]
