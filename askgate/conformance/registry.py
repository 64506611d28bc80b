"""The action registry of the conformance runner, and the normalised :class:`Case` every action receives.

A suite case names an *action* (``process_chunk``, ``validate``, ``validate_request`` ...). Any module can
add actions, so the runner knows nothing about A2UI or the dialects::

    from askgate.conformance.registry import Case, CaseFailure, action

    @action("validate")
    def _validate(case: Case) -> None:
        for step in case.steps:
            case.expect_outcome(my_validator, step.payload, expect_error=step.expect_error)

An action function takes the :class:`Case` and returns ``None`` when the case passes; it raises
:class:`CaseFailure` (with a human-readable detail) when the result does not match the expectation. Any
other exception escaping an action is also a failure of that case (reported with its type), never a crash
of the run. A case whose action nobody registered FAILS; it is never skipped.

The runner imports the modules in :data:`ACTION_MODULES` before running (see :func:`load_action_modules`),
so an action module only has to exist and use the decorator.

Expected errors (:class:`ExpectedError`) come in two forms in suite files: a regex string, matched with
``re.search``; or ``{category, message}`` where ``category`` names the exception class or any of its base
classes (``AskgateError``, ``ValueError``, ``ParseError`` ...) and ``message`` is a regex. The regex is
tried against ``str(exc)`` and, when the exception carries ``faults`` (:class:`askgate.errors.AskgateError`),
against every fault's message too, so a dialect suite can name any one of several faults. A string-form
expectation additionally requires the exception to be a ``ValueError`` or ``OSError`` (protocols.md §5.7),
so an accidental ``KeyError`` whose text happens to match is still a failure.
"""

from __future__ import annotations

import difflib
import importlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ACTION_MODULES",
    "ActionFn",
    "Case",
    "CaseFailure",
    "CatalogConfig",
    "ExpectedError",
    "Step",
    "action",
    "actions",
    "get_action",
    "load_action_modules",
]


class CaseFailure(Exception):
    """Raised by an action when a case does not meet its expectation. ``detail`` is shown in the report."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


# --------------------------------------------------------------------------------------------------
# Normalised case data.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExpectedError:
    """An expected exception: a regex (``re.search``) and optionally a class name.

    ``category`` is ``None`` for the plain regex form. ``raw`` is the value as written in the suite.
    """

    message: str
    category: str | None = None
    raw: Any = None

    @classmethod
    def parse(cls, value: Any) -> ExpectedError | None:
        """Read an ``expect_error`` value (``None``, a regex string, or ``{category, message}``)."""
        if value is None:
            return None
        if isinstance(value, str):
            return cls(message=value, raw=value)
        if isinstance(value, Mapping):
            unknown = set(value) - {"category", "message"}
            if unknown:
                raise CaseFailure(f"expect_error has unknown keys {sorted(unknown)}")
            category = value.get("category")
            message = value.get("message", "")
            if category is not None and not isinstance(category, str):
                raise CaseFailure("expect_error.category must be a string")
            if not isinstance(message, str):
                raise CaseFailure("expect_error.message must be a string (a regex)")
            return cls(message=message, category=category, raw=dict(value))
        raise CaseFailure(
            f"expect_error must be a regex string or {{category, message}}, not {type(value).__name__}"
        )

    def describe(self) -> str:
        if self.category is None:
            return f"error matching /{self.message}/"
        return f"{self.category} matching /{self.message}/"

    def mismatch(self, exc: BaseException) -> str | None:
        """Why ``exc`` does not satisfy this expectation, or ``None`` when it does."""
        names = [klass.__name__ for klass in type(exc).__mro__]
        if self.category is not None:
            if self.category not in names:
                return (
                    f"expected {self.describe()}, got {_describe_exc(exc)} (class chain: {', '.join(names)})"
                )
        elif not isinstance(exc, (ValueError, OSError)):
            return f"expected a ValueError {self.describe()}, got {_describe_exc(exc)}"
        try:
            pattern = re.compile(self.message)
        except re.error as err:
            return f"expect_error regex {self.message!r} does not compile: {err}"
        candidates = [str(exc)]
        for fault in getattr(exc, "faults", None) or ():
            message = getattr(fault, "message", None)
            if isinstance(message, str):
                candidates.append(message)
        if any(pattern.search(text) for text in candidates):
            return None
        shown = "; ".join(repr(text) for text in candidates[:6])
        more = f" (+{len(candidates) - 6} more)" if len(candidates) > 6 else ""
        return f"expected {self.describe()}, got {type(exc).__name__} with messages {shown}{more}"


def _describe_exc(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class Step:
    """One step of a multi-step case (a streaming chunk or one validator payload).

    ``input`` is the chunk text (``process_chunk``), ``payload`` the document (``validate``), ``expect``
    the expected output (``None`` when absent; ``has_expect`` tells absent from null). ``expect_error`` is
    the step's own expectation, else the case's. ``raw`` is the step mapping as written.
    """

    index: int
    input: Any = None
    payload: Any = None
    expect: Any = None
    has_expect: bool = False
    expect_error: ExpectedError | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CatalogConfig:
    """A case's ``catalog`` block, normalised (protocols.md §5.7).

    ``version`` is always a string (YAML ``0.8`` parses as a float). String schema values were paths
    relative to the conformance root and are already loaded here; ``*_path`` keep the resolved path (or
    ``None`` when the schema was inline or absent). A missing ``s2c_schema`` is ``None``; a missing
    ``catalog_schema`` or ``common_types_schema`` is ``{}``.
    """

    version: str
    s2c_schema: Any
    catalog_schema: Any
    common_types_schema: Any
    s2c_schema_path: Path | None = None
    catalog_schema_path: Path | None = None
    common_types_schema_path: Path | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """One normalised conformance case.

    Identity is ``file`` + ``index`` (0-based position in the suite list); ``name`` is only a label and
    may repeat. Fields:

    - ``name``, ``description``: labels (``description`` may be ``None``).
    - ``file``: the suite file (absolute path); ``index``: position in it; ``root``: the conformance root
      (the directory containing ``suites/`` when the file sits in a ``suites`` folder, else the file's
      folder) against which relative paths in the case resolve.
    - ``action``: the case's ``action``, else derived from the file name (``streaming_parser`` ->
      ``process_chunk``, ``validator`` -> ``validate``, ``parser`` -> ``parse_full``), else from a legacy
      step list key; ``None`` if nothing tells (the case then fails).
    - ``args``: the ``args`` mapping, ``{}`` when absent.
    - ``steps``: the step list: ``steps``; else the legacy ``process_chunk`` / ``validate`` list; else,
      for ``process_chunk`` cases with ``input`` or ``validate`` cases with ``payload``, the case itself
      as one step. ``()`` for single-shot actions.
    - ``input``, ``payload``: the case-level single input / document (``None`` when absent).
    - ``expect``: the expected output (``None`` when absent; ``has_expect`` tells absent from null).
    - ``expect_error``: the case-level :class:`ExpectedError` or ``None``.
    - ``catalog``: the normalised :class:`CatalogConfig` or ``None`` when the case has no ``catalog``.
    - ``raw``: the case mapping exactly as loaded; use :meth:`get` for action-specific keys
      (``expect_output``, ``expect_contains``, ``catalog_configs``, ``request``, ``expect_faults`` ...).
    """

    name: str
    file: Path
    index: int
    root: Path
    action: str | None
    args: Mapping[str, Any]
    steps: tuple[Step, ...]
    input: Any
    payload: Any
    expect: Any
    has_expect: bool
    expect_error: ExpectedError | None
    catalog: CatalogConfig | None
    raw: Mapping[str, Any]
    description: str | None = None

    @property
    def id(self) -> str:
        """``<file name>:<index>``, the case's identity in reports."""
        return f"{self.file.name}:{self.index}"

    def get(self, key: str, default: Any = None) -> Any:
        """A raw key of the case mapping."""
        return self.raw.get(key, default)

    def resolve(self, path: str | Path) -> Path:
        """A suite-relative path resolved against the conformance root (absolute paths stay absolute)."""
        p = Path(path)
        return p if p.is_absolute() else self.root / p

    # ---- helpers for actions -----------------------------------------------------------------------

    def check_error(self, expected: ExpectedError, exc: BaseException) -> None:
        """Raise :class:`CaseFailure` unless ``exc`` satisfies ``expected``."""
        problem = expected.mismatch(exc)
        if problem is not None:
            raise CaseFailure(problem)

    def expect_outcome(
        self, fn: Callable[..., Any], *args: Any, expect_error: ExpectedError | None, **kwargs: Any
    ) -> Any:
        """Call ``fn(*args, **kwargs)`` under an error expectation.

        With ``expect_error=None`` the call must not raise (any exception becomes a :class:`CaseFailure`)
        and its result is returned. With an expectation the call must raise a matching exception, which
        is returned. A :class:`CaseFailure` raised inside ``fn`` passes through unchanged.
        """
        try:
            result = fn(*args, **kwargs)
        except CaseFailure:
            raise
        except Exception as exc:
            if expect_error is None:
                raise CaseFailure(f"unexpected {_describe_exc(exc)}") from exc
            self.check_error(expect_error, exc)
            return exc
        if expect_error is not None:
            raise CaseFailure(f"expected {expect_error.describe()}, but no error was raised")
        return result

    def check_equal(self, actual: Any, expected: Any, what: str = "result") -> None:
        """Raise :class:`CaseFailure` with a compact JSON diff unless ``actual == expected``."""
        if actual == expected and _same_json_types(actual, expected):
            return
        raise CaseFailure(f"{what} differs:\n{json_diff(expected, actual)}")


def _same_json_types(a: Any, b: Any) -> bool:
    """``True == 1`` in Python; JSON tells them apart, and so do we."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return all(_same_json_types(a[k], b[k]) for k in a if k in b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return all(_same_json_types(x, y) for x, y in zip(a, b))
    return True


def json_diff(expected: Any, actual: Any, limit: int = 40) -> str:
    """A unified diff of two JSON values (expected first), truncated to ``limit`` lines."""

    def dump(value: Any) -> list[str]:
        try:
            return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, default=repr).splitlines()
        except (TypeError, ValueError):
            return repr(value).splitlines()

    lines = list(difflib.unified_diff(dump(expected), dump(actual), "expected", "actual", lineterm="", n=1))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines) if lines else f"expected {expected!r}, got {actual!r}"


# --------------------------------------------------------------------------------------------------
# The registry.
# --------------------------------------------------------------------------------------------------

ActionFn = Callable[[Case], None]

_ACTIONS: dict[str, ActionFn] = {}

#: Modules that register actions; imported by :func:`load_action_modules`. Only these names may be
#: missing (while their owners land them); an import error INSIDE an existing module propagates.
ACTION_MODULES: tuple[str, ...] = (
    "askgate.conformance.dialect_actions",
    "askgate.conformance.elicitation_actions",
    "askgate.a2ui.conformance_actions",
    "askgate.a2ui.streaming_actions",
)


def action(name: str) -> Callable[[ActionFn], ActionFn]:
    """Register ``fn(case) -> None`` as the implementation of action ``name``.

    Registering the same name twice from different functions is an error (two modules disagreeing on
    what an action means must not be settled by import order). Re-registering the same function (a
    module re-import) is allowed.
    """

    def register(fn: ActionFn) -> ActionFn:
        existing = _ACTIONS.get(name)
        if existing is not None and _qualname(existing) != _qualname(fn):
            raise RuntimeError(f"conformance action {name!r} already registered by {_qualname(existing)}")
        _ACTIONS[name] = fn
        return fn

    return register


def _qualname(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def get_action(name: str) -> ActionFn | None:
    """The registered implementation of ``name``, or ``None``."""
    return _ACTIONS.get(name)


def actions() -> dict[str, ActionFn]:
    """A copy of the registry (name -> function)."""
    return dict(_ACTIONS)


def load_action_modules(modules: tuple[str, ...] = ACTION_MODULES) -> list[str]:
    """Import every action module that exists; return the names that are not there (yet).

    Only a module that is itself missing is tolerated; an ``ImportError`` raised from inside an existing
    module (a broken dependency) propagates, so breakage is never mistaken for absence.
    """
    missing: list[str] = []
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
                missing.append(module)
            else:
                raise
    return missing
