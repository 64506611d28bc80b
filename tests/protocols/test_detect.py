"""detect_dialect: only AskgateError escapes, and realistic requests of each dialect detect as that dialect.

The behaviour case by case is pinned by conformance/detect.yaml (run in tests/conformance).
"""

from __future__ import annotations

import importlib.util
import random
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.core.model import Dialect
from askgate.errors import AskgateError
from askgate.protocols.detect import detect_dialect, detection_evidence
from tests.conftest import REPO
from tests.support.scale import examples


def _corpus():  # bench/corpus.py builds realistic requests of every dialect
    if "bench_corpus" not in sys.modules:
        spec = importlib.util.spec_from_file_location("bench_corpus", REPO / "bench" / "corpus.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_corpus"] = module
        spec.loader.exec_module(module)
    return sys.modules["bench_corpus"]


_keys = st.sampled_from(
    ["message", "requestedSchema", "method", "params", "protocolVersion", "queryId", "prompt", "type", "approver",
     "question", "timeout_seconds", "decision", "ask_details", "result", "elicitation/v1", "mode", "parts", "x", "$schema",
     "properties", "data", "consentMode"]
)  # fmt: skip
_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["elicitation/create", "2026-07-30", "ask", "object", "string", "array"])
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(_keys | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=examples(1000), deadline=None)
@given(_json)
def test_only_askgate_error_escapes(doc: object) -> None:
    try:
        result = detect_dialect(doc)
    except AskgateError as exc:
        assert exc.code == "unknown_dialect"
        assert exc.faults and exc.faults[0].rule.startswith("detect.")
        return
    assert result in (Dialect.A2A_ELICITATION, Dialect.MCP_ELICITATION, Dialect.AQP, Dialect.ACS)
    markers, signatures = detection_evidence(doc)
    assert result in (markers or signatures)


def test_realistic_requests_detect_as_their_dialect() -> None:
    corpus = _corpus()
    rng_seed = 11
    for dialect, expected in (
        ("a2a-elicitation", Dialect.A2A_ELICITATION),  # all within the elicitation/v1 keyword sets
        ("aqp", Dialect.AQP),
        ("acs", Dialect.ACS),
    ):
        for doc in corpus.valid_corpus(dialect, examples(200), rng_seed):
            assert detect_dialect(doc) == expected, doc


def test_wrapped_and_enveloped_forms() -> None:
    corpus = _corpus()
    rng = random.Random(3)
    for _ in range(50):
        elicitation = corpus.elicitation_request(rng)
        assert detect_dialect({"elicitation/v1": elicitation}) == Dialect.A2A_ELICITATION
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": elicitation}
        assert detect_dialect(rpc) == Dialect.MCP_ELICITATION
        assert detect_dialect({**elicitation, "mode": "form"}) == Dialect.MCP_ELICITATION
        details = corpus.acs_request(rng)
        result = {
            "type": "final",
            "acs_version": "0.1.0",
            "request_id": "r",
            "decision": "ask",
            "ask_details": details,
        }
        assert detect_dialect(result) == Dialect.ACS
        assert detect_dialect({"jsonrpc": "2.0", "id": "x", "result": result}) == Dialect.ACS
