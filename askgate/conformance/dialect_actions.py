"""Conformance actions for askgate's own dialect suites (``conformance/*.yaml``).

Actions (see ``helper-notes/dialect-suites.md``):

- ``validate_request``: ``args.dialect``, ``args.options`` (keyword arguments); ``payload`` is the
  request. Passes when it parses and ``expect`` (if any) is a recursive subset of
  ``ask.model_dump(mode="json")``; or, with ``expect_error``, when an ``AskgateError`` is raised whose
  fault messages (or summary, when it has no faults) match, and every ``expect_faults`` entry
  (``pointer``/``rule`` exact, ``message`` a regex) matches some fault, and ``expect_fault_count``
  equals the number of faults.
- ``validate_answer``: ``request`` is parsed first (it must be valid), then ``payload`` is checked with
  ``check_answer``; expectations as above against ``answer.model_dump(mode="json")``.
- ``render_answer``: ``request`` parsed, ``answer`` (canonical JSON) validated as an ``Answer``, rendered
  with ``render_answer``; ``expect`` is the exact response document.
- ``detect``: ``payload``; ``expect`` the dialect name, or ``expect_error``.

Options: ``args.options`` go to every codec call of the action that accepts them (a function with
``**opts`` accepts all); ``args.request_options`` go to ``parse_request`` only. An option no called
function accepts fails the case, so a typo cannot silently change what is tested. Option values named
``now`` or ending in ``_at`` that are RFC 3339 strings are passed as aware ``datetime`` objects (YAML and
JSON have no time type; the codec interface takes times as arguments).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from askgate.conformance.registry import Case, CaseFailure, ExpectedError, action, json_diff
from askgate.core.formats import is_date_time
from askgate.core.model import Answer
from askgate.errors import AskgateError
from askgate.protocols.detect import detect_dialect
from askgate.protocols.registry import Codec, codec_for

__all__ = ["is_subset"]

_EXTRA_KEYS = ("expect_faults", "expect_fault_count")


# --------------------------------------------------------------------------------------------------
# Expectation helpers.
# --------------------------------------------------------------------------------------------------


def is_subset(expected: Any, actual: Any, pointer: str = "") -> str | None:
    """``None`` when ``expected`` is a recursive subset of ``actual``, else where it is not.

    Objects: every expected key present, values subsets. Arrays: same length, items subsets. Scalars:
    equal, with JSON types kept apart (``true`` is not ``1``).
    """
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{pointer or '/'}: expected an object, got {actual!r}"
        for key, value in expected.items():
            if key not in actual:
                return f"{pointer}/{key}: missing (expected {value!r})"
            problem = is_subset(value, actual[key], f"{pointer}/{key}")
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            return f"{pointer or '/'}: expected {expected!r}, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            problem = is_subset(e, a, f"{pointer}/{i}")
            if problem:
                return problem
        return None
    if expected != actual or (isinstance(expected, bool) != isinstance(actual, bool)):
        return f"{pointer or '/'}: expected {expected!r}, got {actual!r}"
    return None


def _fault_expectations(case: Case) -> tuple[list[Mapping[str, Any]], int | None]:
    faults = case.get("expect_faults")
    count = case.get("expect_fault_count")
    if (faults is not None or count is not None) and case.expect_error is None:
        raise CaseFailure("malformed case: expect_faults / expect_fault_count need expect_error")
    if faults is not None and not (isinstance(faults, list) and all(isinstance(f, Mapping) for f in faults)):
        raise CaseFailure("malformed case: expect_faults must be a list of {pointer?, rule?, message?}")
    for f in faults or ():
        unknown = set(f) - {"pointer", "rule", "message"}
        if unknown:
            raise CaseFailure(f"malformed case: expect_faults entry has unknown keys {sorted(unknown)}")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
        raise CaseFailure("malformed case: expect_fault_count must be an integer")
    return list(faults or ()), count


def _check_askgate_error(case: Case, expected: ExpectedError, exc: BaseException) -> None:
    """Match an ``AskgateError`` against ``expect_error``, ``expect_faults`` and ``expect_fault_count``."""
    if not isinstance(exc, AskgateError):
        raise CaseFailure(f"only AskgateError may escape a codec, got {type(exc).__name__}: {exc}")
    chain = [k.__name__ for k in type(exc).__mro__]
    if expected.category is not None and expected.category not in chain:
        raise CaseFailure(f"expected category {expected.category}, got {type(exc).__name__}")
    faults = exc.faults
    messages = [f.message for f in faults] if faults else [str(exc)]
    listing = "; ".join(f"{f.pointer or '/'} [{f.rule}] {f.message}" for f in faults) or str(exc)
    try:
        pattern = re.compile(expected.message)
    except re.error as err:
        raise CaseFailure(f"expect_error regex {expected.message!r} does not compile: {err}") from None
    if not any(pattern.search(m) for m in messages):
        raise CaseFailure(f"no fault message matches /{expected.message}/; faults: {listing}")
    wanted, count = _fault_expectations(case)
    for want in wanted:
        if not any(_fault_matches(want, f) for f in faults):
            raise CaseFailure(f"no fault matches {dict(want)}; faults: {listing}")
    if count is not None and count != len(faults):
        raise CaseFailure(f"expected {count} fault(s), got {len(faults)}: {listing}")


def _fault_matches(want: Mapping[str, Any], fault: Any) -> bool:
    return (
        ("pointer" not in want or want["pointer"] == fault.pointer)
        and ("rule" not in want or want["rule"] == fault.rule)
        and ("message" not in want or re.search(str(want["message"]), fault.message) is not None)
    )


# --------------------------------------------------------------------------------------------------
# Calling codecs.
# --------------------------------------------------------------------------------------------------


def _coerce_option(name: str, value: Any) -> Any:
    if (name == "now" or name.endswith("_at")) and isinstance(value, str) and is_date_time(value):
        return datetime.fromisoformat(value.upper())  # 3.11+ reads "Z"
    return value


def _options(case: Case, key: str) -> dict[str, Any]:
    raw = case.args.get(key) or {}
    if not isinstance(raw, Mapping):
        raise CaseFailure(f"malformed case: args.{key} must be a mapping")
    return {str(k): _coerce_option(str(k), v) for k, v in raw.items()}


def _accepted(fn: Callable[..., Any], options: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The options ``fn`` accepts, and the names it does not."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return dict(options), set()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(options), set()
    names = {n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return {k: v for k, v in options.items() if k in names}, {k for k in options if k not in names}


class _Calls:
    """Distributes ``args.options`` over the codec calls of one case and checks every option was used."""

    def __init__(self, case: Case) -> None:
        self.options = _options(case, "options")
        self.request_options = _options(case, "request_options")
        self.unused: set[str] | None = None

    def kwargs(self, fn: Callable[..., Any], *, request: bool = False) -> dict[str, Any]:
        given, rejected = _accepted(fn, self.options)
        self.unused = rejected if self.unused is None else self.unused & rejected
        if request:
            extra, bad = _accepted(fn, self.request_options)
            if bad:
                raise CaseFailure(f"parse_request does not accept request_options {sorted(bad)}")
            given.update(extra)
        return given

    def check_all_used(self) -> None:
        if self.unused:
            raise CaseFailure(f"no codec call accepts option(s) {sorted(self.unused)}")


def _codec(case: Case) -> Codec:
    dialect = case.args.get("dialect")
    if not isinstance(dialect, str):
        raise CaseFailure(
            "malformed case: args.dialect (a2a-elicitation|mcp-elicitation|aqp|acs) is required"
        )
    try:
        return codec_for(dialect)
    except AskgateError as exc:
        raise CaseFailure(f"args.dialect: {exc}") from None


def _parse_request(case: Case, codec: Codec, calls: _Calls, doc: Any) -> Any:
    try:
        return codec.parse_request(doc, **calls.kwargs(codec.parse_request, request=True))
    except AskgateError as exc:
        listing = "; ".join(f"{f.pointer or '/'} [{f.rule}] {f.message}" for f in exc.faults) or str(exc)
        raise CaseFailure(f"the case's request is invalid: {listing}") from None


def _outcome(case: Case, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` under the case's error expectations; return its result, or ``None`` after a matched error."""
    _fault_expectations(case)  # reject malformed fault expectations even when no error is expected
    try:
        result = fn(*args, **kwargs)
    except CaseFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - the exception is the thing under test
        if case.expect_error is None:
            detail = str(exc)
            if isinstance(exc, AskgateError) and exc.faults:
                detail = "; ".join(f"{f.pointer or '/'} [{f.rule}] {f.message}" for f in exc.faults)
            raise CaseFailure(f"unexpected {type(exc).__name__}: {detail}") from None
        _check_askgate_error(case, case.expect_error, exc)
        return None
    if case.expect_error is not None:
        raise CaseFailure(f"expected {case.expect_error.describe()}, but it was accepted")
    return result


def _check_subset(case: Case, model: Any) -> None:
    if not case.has_expect:
        return
    dumped = model.model_dump(mode="json")
    problem = is_subset(case.expect, dumped)
    if problem:
        raise CaseFailure(f"expect is not a subset of the result: {problem}")


# --------------------------------------------------------------------------------------------------
# The actions.
# --------------------------------------------------------------------------------------------------


@action("validate_request")
def validate_request(case: Case) -> None:
    codec = _codec(case)
    calls = _Calls(case)
    kwargs = calls.kwargs(codec.parse_request, request=True)
    calls.check_all_used()
    ask = _outcome(case, codec.parse_request, case.payload, **kwargs)
    if ask is not None:
        _check_subset(case, ask)


@action("validate_answer")
def validate_answer(case: Case) -> None:
    codec = _codec(case)
    if "request" not in case.raw:
        raise CaseFailure("malformed case: validate_answer needs a request")
    calls = _Calls(case)
    ask = _parse_request(case, codec, calls, case.get("request"))
    kwargs = calls.kwargs(codec.check_answer)
    calls.check_all_used()
    answer = _outcome(case, codec.check_answer, ask, case.payload, **kwargs)
    if answer is not None:
        _check_subset(case, answer)


@action("render_answer")
def render_answer(case: Case) -> None:
    codec = _codec(case)
    if "request" not in case.raw or "answer" not in case.raw:
        raise CaseFailure("malformed case: render_answer needs request and answer")
    calls = _Calls(case)
    ask = _parse_request(case, codec, calls, case.get("request"))
    try:
        answer = Answer.model_validate(case.get("answer"))
    except ValueError as exc:
        raise CaseFailure(f"malformed case: answer is not a canonical Answer: {exc}") from None
    kwargs = calls.kwargs(codec.render_answer)
    calls.check_all_used()
    rendered = _outcome(case, codec.render_answer, ask, answer, **kwargs)
    if case.expect_error is None:
        if not case.has_expect:
            raise CaseFailure("malformed case: render_answer needs expect (the response document)")
        if rendered != case.expect or is_subset(case.expect, rendered) is not None:
            raise CaseFailure(f"rendered response differs:\n{json_diff(case.expect, rendered)}")


@action("detect")
def detect(case: Case) -> None:
    if "payload" not in case.raw:
        raise CaseFailure("malformed case: detect needs a payload")
    dialect = _outcome(case, detect_dialect, case.payload)
    if case.expect_error is None:
        if not isinstance(case.expect, str):
            raise CaseFailure("malformed case: detect needs expect (a dialect name) or expect_error")
        if dialect != case.expect:
            raise CaseFailure(f"detected {dialect.value!r}, expected {case.expect!r}")
