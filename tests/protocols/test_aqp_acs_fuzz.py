"""Fuzzing (issue #2 item 9): every AQP and ACS entry point under hypothesis; only AskgateError escapes.

Per dialect, ``examples(10000)`` examples, each thrown at ``parse_request`` (decoded JSON, also as
an ACS result body and as ACS binding context), ``parse_request_bytes`` (its JSON text, or raw bytes)
and ``check_answer`` (against asks covering every answer spec, bare and enveloped). Inputs are
arbitrary JSON (decoded from drawn bytes: cheap, and it still shrinks), valid requests and answers with
one subtree replaced or removed (so the deep checks run too), and raw bytes.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askgate.errors import AskgateError
from askgate.protocols import acs, aqp
from tests.protocols.seed_strategies import json_values
from tests.protocols.test_aqp_acs_differential import ACS_BASES, AQP_BASES, _paths
from tests.support.scale import examples

NOW = datetime(2026, 8, 1, tzinfo=UTC)
AQP_ASKS = [aqp.parse_request(doc) for doc in AQP_BASES] + [
    aqp.parse_request({**AQP_BASES[0], "response": {"format": "number"}})
]
ACS_ASKS = [acs.parse_request(doc) for doc in ACS_BASES] + [
    acs.parse_request(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "type": "final",
                "acs_version": "0.1.0",
                "request_id": "3f6c2a9e-8d1b-4c7e-a5f0-6e2b9d4c1a77",
                "decision": "ask",
                "reasoning": "r",
                "ask_details": ACS_BASES[1],
            },
        }
    )
]
ANSWERS_AQP = [
    {"format": "text", "value": "ok"},
    {"status": "answered", "answer": {"format": "choice", "value": "Hold"}},
    {"format": "structured", "value": {"score": 2}},
    {"status": "declined"},
]
ANSWERS_ACS = [
    {"decision": "allow", "selected_option": "once"},
    {"decision": "deny", "reasoning": "no"},
    {
        "decision": "allow",
        "selected_option": "once",
        "intent_extension": {
            "capabilities": [{"tool": "shell", "operation": "exec", "resource": "posix:///srv"}],
            "scope": "this_request",
        },
    },
]


def _paths_keys(doc: Any) -> set[str]:
    return {p[-1] for p in _paths(doc) if p and isinstance(p[-1], str)}


KEYS = tuple(
    sorted(
        {k for doc in (*AQP_BASES, *ACS_BASES, *ANSWERS_AQP, *ANSWERS_ACS) for k in _paths_keys(doc)}
        | set(acs.BINDING_MEMBERS)
        | {"jsonrpc", "id", "result", "error", "type", "ask_details", "decision"}
    )
)
ARBITRARY = json_values(KEYS)


@st.composite
def _spliced(draw: st.DrawFn, bases: list[Any]) -> Any:
    """A valid document with one subtree (or member) replaced by arbitrary JSON."""
    doc = copy.deepcopy(draw(st.sampled_from(bases)))
    paths = [p for p in _paths(doc) if p]
    path = draw(st.sampled_from(paths))
    parent = doc
    for token in path[:-1]:
        parent = parent[token]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(ARBITRARY)
    return doc


def _inputs(bases: list[Any], answers: list[Any]) -> st.SearchStrategy[Any]:
    """One draw per example (cheap), used for every entry point: JSON values or raw bytes."""
    return st.one_of(ARBITRARY, _spliced(bases), _spliced(bases), _spliced(answers), st.binary(max_size=48))


def _only_askgate_errors(fn: Any, *args: Any, **kwargs: Any) -> None:
    try:
        fn(*args, **kwargs)
    except AskgateError as exc:
        assert exc.faults, "an AskgateError must carry its faults"
        for f in exc.faults:
            assert isinstance(f.pointer, str) and (f.pointer == "" or f.pointer.startswith("/")), f
            assert f.message and f.rule, f


SETTINGS = settings(
    max_examples=examples(10000),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _text(x: Any) -> bytes | str:
    return x if isinstance(x, bytes) else json.dumps(x)


@SETTINGS
@given(x=_inputs(AQP_BASES, ANSWERS_AQP))
def test_aqp_entry_points_raise_only_askgate_errors(x: Any) -> None:
    if isinstance(x, bytes):
        _only_askgate_errors(aqp.parse_request_bytes, x)
        _only_askgate_errors(aqp.parse_request_bytes, x.decode("latin-1"))
        return
    _only_askgate_errors(aqp.parse_request, x)
    _only_askgate_errors(aqp.parse_request, x, now=NOW)
    _only_askgate_errors(aqp.parse_request_bytes, _text(x))
    for ask in AQP_ASKS:
        _only_askgate_errors(aqp.check_answer, ask, x)


@SETTINGS
@given(x=_inputs(ACS_BASES, ANSWERS_ACS))
def test_acs_entry_points_raise_only_askgate_errors(x: Any) -> None:
    if isinstance(x, bytes):
        _only_askgate_errors(acs.parse_request_bytes, x)
        _only_askgate_errors(acs.parse_request_bytes, x.decode("latin-1"))
        return
    _only_askgate_errors(acs.parse_request, x)
    _only_askgate_errors(acs.parse_request, {"jsonrpc": "2.0", "id": 1, "result": x})
    _only_askgate_errors(acs.parse_request, ACS_BASES[0], binding=x)
    _only_askgate_errors(acs.parse_request_bytes, _text(x))
    for ask in ACS_ASKS:
        _only_askgate_errors(acs.check_answer, ask, x)
        _only_askgate_errors(acs.check_answer, ask, {"jsonrpc": "2.0", "id": 1, "result": x})


def test_deep_nesting_is_refused_not_crashed() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    _only_askgate_errors(aqp.parse_request, {**AQP_BASES[0], "subject": deep})
    _only_askgate_errors(aqp.parse_request_bytes, "[" * 100000 + "]" * 100000)
    _only_askgate_errors(acs.parse_request_bytes, '{"a":' * 50000 + "1" + "}" * 50000)
