"""The elicitation suites: size, and the fault ORDER some cases pin (`expect_fault_order`).

`tests/conformance/test_repo_suites.py` runs every suite through `askgate conformance run`; the runner
checks that expected faults exist, not their order, so the order (which decides what the reference runtime
would report first, protocols.md §1.4) is checked here against the codecs directly.
"""

from __future__ import annotations

import pytest

from askgate.conformance.yamlload import load_yaml_file
from askgate.errors import AskgateError
from askgate.protocols.registry import codec_for
from tests.conftest import REPO

SUITES = {"a2a-elicitation": REPO / "conformance" / "a2a-elicitation.yaml",
          "mcp-elicitation": REPO / "conformance" / "mcp-elicitation.yaml"}


@pytest.mark.parametrize("dialect", sorted(SUITES))
def test_suite_has_at_least_40_cases_of_its_dialect(dialect):
    cases = load_yaml_file(SUITES[dialect])
    assert len(cases) >= 40
    assert all(c["args"].get("target", c["args"]["dialect"]) == dialect for c in cases)  # rendering FOR it counts
    assert sum(c["args"]["dialect"] == dialect for c in cases) >= 40
    actions = {c["action"] for c in cases}
    assert actions == {"validate_request", "validate_answer", "render_answer", "render_request"}


def _ordered_cases():
    for dialect, path in sorted(SUITES.items()):
        for index, case in enumerate(load_yaml_file(path)):
            if "expect_fault_order" in case:
                yield pytest.param(dialect, case, id=f"{path.name}:{index}")


@pytest.mark.parametrize(("dialect", "case"), list(_ordered_cases()))
def test_fault_order(dialect, case):
    assert case["action"] == "validate_request"
    codec = codec_for(dialect)
    with pytest.raises(AskgateError) as err:
        codec.parse_request(case["payload"], **(case["args"].get("options") or {}))
    order = case["expect_fault_order"]
    assert [f.rule for f in err.value.faults][: len(order)] == order


def test_some_cases_pin_the_order():
    assert len(list(_ordered_cases())) >= 3
