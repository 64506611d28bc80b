"""Conformance action ``render_request``: canonical Ask -> a request for a respondent of some dialect.

Used by the elicitation suites to pin the downgrade rules (protocols.md §2.2: titled single-select becomes
``enum`` + ``enumNames`` for ``elicitation/v1`` and MCP 2025-06-18 respondents; multi-select cannot be
routed there and is refused with ``AskgateError(code="unsupported")``).

Case shape: ``args: {dialect, target?, options?, target_options?}``; ``request`` is parsed by the
``dialect`` codec (with ``options``), then rendered by the ``target`` codec's ``render_request`` (default:
the same codec, with ``target_options``, e.g. ``{version: "2025-06-18"}``). ``expect`` is the exact
rendered document, or ``expect_error`` the refusal.
"""

from __future__ import annotations

from typing import Any, Mapping

from askgate.conformance.registry import Case, CaseFailure, action
from askgate.errors import AskgateError
from askgate.protocols.registry import codec_for


def _mapping(case: Case, key: str) -> dict[str, Any]:
    raw = case.args.get(key) or {}
    if not isinstance(raw, Mapping):
        raise CaseFailure(f"malformed case: args.{key} must be a mapping")
    return dict(raw)


def _codec(name: Any) -> Any:
    if not isinstance(name, str):
        raise CaseFailure("malformed case: args.dialect (and args.target) must name a dialect")
    try:
        return codec_for(name)
    except AskgateError as exc:
        raise CaseFailure(f"unknown dialect: {exc}") from None


@action("render_request")
def render_request(case: Case) -> None:
    source = _codec(case.args.get("dialect"))
    target = _codec(case.args.get("target", case.args.get("dialect")))
    render = getattr(target, "render_request", None)
    if render is None:
        raise CaseFailure(f"the {target.DIALECT.value} codec has no render_request")
    if "request" not in case.raw:
        raise CaseFailure("malformed case: render_request needs a request")
    try:
        ask = source.parse_request(case.get("request"), **_mapping(case, "options"))
    except AskgateError as exc:
        listing = "; ".join(f"{f.pointer or '/'} [{f.rule}] {f.message}" for f in exc.faults) or str(exc)
        raise CaseFailure(f"the case's request is invalid: {listing}") from None
    result = case.expect_outcome(render, ask, expect_error=case.expect_error, **_mapping(case, "target_options"))
    if case.expect_error is None:
        if not case.has_expect:
            raise CaseFailure("malformed case: render_request needs expect (the rendered request)")
        case.check_equal(result, case.expect, "rendered request")
