"""Fuzzing (issue #2 item 9): every elicitation entry point under arbitrary input raises only AskgateError.

Per dialect, ``examples(10000)`` hypothesis examples each feed ``parse_request`` (decoded JSON, biased
towards the dialect's shape so deep paths are reached), ``parse_request_bytes`` (the JSON text of the
same value and arbitrary bytes) and ``check_answer`` against several asks.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askgate.core.model import Ask, ChoiceSpec, Dialect, NumberSpec, TextSpec, YesNoSpec
from askgate.errors import AskgateError
from askgate.protocols import a2a_elicitation as a2a
from askgate.protocols import mcp_elicitation as mcp
from tests.support.scale import examples

KEYWORDS = [
    "type", "properties", "required", "title", "description", "default", "minLength", "maxLength", "format", "enum",
    "enumNames", "minimum", "maximum", "oneOf", "anyOf", "const", "items", "minItems", "maxItems", "pattern",
    "$schema", "message", "requestedSchema", "mode", "task", "_meta", "action", "content", "jsonrpc", "id", "method",
    "params", "result", "elicitation/v1", "__proto__", "other",
]
WORDS = ["object", "string", "number", "integer", "boolean", "array", "email", "uri", "date", "date-time", "url",
         "form", "accept", "decline", "cancel", "2.0", "elicitation/create", "^[a-z]+$", "(?<=a)", "2024-02-29", "other"]
SPECIAL = [2**53 - 1, 2**53, 2**64, -(2**63), 1.0, 0.5, -0.0, 1e308, float("nan"), float("inf"), float("-inf"), "", "😀"]
keys = st.one_of(st.sampled_from(KEYWORDS), st.text(max_size=4))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.sampled_from(SPECIAL), st.sampled_from(WORDS),
                    st.text(max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)),
                      max_leaves=5)
small = st.one_of(scalars, st.lists(scalars, max_size=3), st.lists(st.dictionaries(keys, scalars, max_size=2), max_size=2))
prop = st.one_of(
    st.dictionaries(keys, small, max_size=3),
    st.builds(lambda t, extra: {"type": t, **extra}, st.sampled_from(["string", "number", "integer", "boolean", "array"]),
              st.dictionaries(st.sampled_from(KEYWORDS[3:20]), small, max_size=3)),
)
schema = st.fixed_dictionaries(
    {"type": st.sampled_from(["object", "array"]) | small, "properties": st.dictionaries(keys, prop, max_size=3) | small},
    optional={"required": st.lists(keys, max_size=3) | small, "$schema": small},
)
request = st.fixed_dictionaries({"message": st.sampled_from(["m", ""]) | small, "requestedSchema": schema},
                                optional={"mode": st.sampled_from(["form", "url", "x"]) | small, "task": small, "_meta": small})
envelope = st.fixed_dictionaries({"jsonrpc": st.just("2.0") | small, "id": small, "method": st.just("elicitation/create") | small,
                                  "params": request | small})
answer = st.fixed_dictionaries({"action": st.sampled_from(["accept", "decline", "cancel"]) | small},
                               optional={"content": st.dictionaries(keys, small, max_size=4) | small, "_meta": small})
documents = st.one_of(values, request, envelope, answer, st.fixed_dictionaries({"elicitation/v1": request | answer | small}),
                      st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": small, "result": answer | small}))

RICH = {"message": "m", "requestedSchema": {"type": "object", "properties": {
    "s": {"type": "string", "format": "date-time", "maxLength": 30}, "e": {"type": "string", "enum": ["a", "other"]},
    "other": {"type": "string"}, "n": {"type": "number", "minimum": 0}, "i": {"type": "integer", "maximum": 5},
    "b": {"type": "boolean"}, "__proto__": {"type": "string", "format": "email"}}, "required": ["s"]}}
WIDE = {"message": "m", "requestedSchema": {"type": "object", "properties": {
    "c": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]}, "p": {"type": "string", "pattern": "^[a-z]+$"},
    "m": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}, "maxItems": 1}, "d": {"type": "string", "format": "uri"}}}}
OTHER_ASKS = [Ask(dialect=Dialect.AQP, prompt="p", spec=spec) for spec in (TextSpec(max_length=4), ChoiceSpec(choices=("a",)),
                                                                           YesNoSpec(), NumberSpec(minimum=0))]


def _only_askgate_errors(fn, *args, **kwargs) -> None:
    try:
        fn(*args, **kwargs)
    except AskgateError as exc:
        assert exc.faults or exc.summary, "an AskgateError must say what is wrong"
        for fault in exc.faults:
            assert isinstance(fault.pointer, str) and isinstance(fault.message, str) and isinstance(fault.rule, str)
            assert fault.pointer == "" or fault.pointer.startswith("/")


def _settings(n: int):
    return settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _json_bytes(doc) -> bytes:
    return json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")


CONFIRM = a2a.parse_request({"message": "ok?", "requestedSchema": {"type": "object", "properties": {}}})
A2A_ASKS = [a2a.parse_request(RICH), *OTHER_ASKS]
MCP_ASKS = [mcp.parse_request(WIDE), mcp.parse_request(RICH, version="2025-06-18"), *OTHER_ASKS]


@_settings(examples(10000))
@given(documents, st.binary(max_size=48), st.integers(0, 4), st.sampled_from(["2025-06-18", "2025-11-25"]))
def test_entry_points_raise_only_askgate_errors(doc, raw, pick, version) -> None:
    """Both dialects see every example: generation is the cost, so it is shared."""
    text = _json_bytes(doc)
    _only_askgate_errors(a2a.parse_request, doc)
    _only_askgate_errors(a2a.parse_request_bytes, text)
    _only_askgate_errors(a2a.parse_request_bytes, raw)
    _only_askgate_errors(a2a.check_answer, A2A_ASKS[pick % len(A2A_ASKS)], doc)
    _only_askgate_errors(mcp.parse_request, doc, version=version)
    _only_askgate_errors(mcp.parse_request_bytes, text, version=version)
    _only_askgate_errors(mcp.parse_request_bytes, raw)
    _only_askgate_errors(mcp.check_answer, MCP_ASKS[pick % len(MCP_ASKS)], doc)


def test_the_fuzz_strategies_reach_valid_documents() -> None:
    """Guard against a fuzzer that only ever produces garbage: shaped draws must sometimes parse."""
    seen = {"a2a": 0, "mcp": 0, "answer": 0}

    @_settings(300)
    @given(request, answer)
    def run(req, ans) -> None:
        for key, fn in (("a2a", a2a.parse_request), ("mcp", mcp.parse_request)):
            try:
                fn(req)
                seen[key] += 1
            except AskgateError:
                pass
        try:
            a2a.check_answer(CONFIRM, ans)
            seen["answer"] += 1
        except AskgateError:
            pass

    run()
    assert seen["a2a"] > 0 and seen["mcp"] > 0 and seen["answer"] > 0, seen
