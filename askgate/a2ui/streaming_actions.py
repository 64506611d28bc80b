"""The ``process_chunk`` conformance action (protocols.md §5.7): the streaming parser against the suite.

One fresh :class:`~askgate.a2ui.streaming.StreamParser` per case; the steps are fed in order and the
parser keeps its state across steps, even after a step that was expected to fail. A step passes when the
returned parts equal ``expect`` exactly: same length, each ``text`` equal (default ``""``, no
stripping), each ``a2ui_json`` equal to ``a2ui`` (absent means ``None``, which is not ``[]``).
"""

from __future__ import annotations

from typing import Any

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.streaming import ResponsePart, StreamParser
from askgate.conformance.registry import Case, CaseFailure, action

__all__ = ["parts_as_json", "expected_parts"]


def parts_as_json(parts: list[ResponsePart]) -> list[dict[str, Any]]:
    """Returned parts in a comparable form: ``{"text": ..., "a2ui": ...}`` for every part."""
    return [{"text": p.text, "a2ui": p.a2ui_json} for p in parts]


def expected_parts(expect: Any) -> list[dict[str, Any]]:
    """A step's ``expect`` list with the suite's defaults filled in (text ``""``, a2ui ``None``)."""
    if not isinstance(expect, list):
        raise CaseFailure(f"process_chunk step expect must be a list, not {type(expect).__name__}")
    out = []
    for item in expect:
        if not isinstance(item, dict):
            raise CaseFailure(f"process_chunk expected part must be a mapping, not {item!r}")
        out.append({"text": item.get("text", ""), "a2ui": item.get("a2ui")})
    return out


@action("process_chunk")
def _process_chunk(case: Case) -> None:
    cfg = case.catalog
    if cfg is None:
        raise CaseFailure("process_chunk case has no catalog")
    catalog = A2uiCatalog.from_config(cfg.version, cfg.s2c_schema, cfg.catalog_schema, cfg.common_types_schema)
    if not case.steps:
        raise CaseFailure("process_chunk case has no steps")
    parser = StreamParser(catalog)
    for step in case.steps:
        if not isinstance(step.input, str):
            raise CaseFailure(f"step {step.index}: input must be a string")
        result = case.expect_outcome(parser.process_chunk, step.input, expect_error=step.expect_error)
        if step.expect_error is not None:
            continue
        if not step.has_expect:
            raise CaseFailure(f"step {step.index}: neither expect nor expect_error")
        case.check_equal(parts_as_json(result), expected_parts(step.expect), f"step {step.index} parts")
