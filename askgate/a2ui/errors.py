"""The A2UI toolkit's exception hierarchy.

Every error derives from :class:`A2uiError`, itself an :class:`askgate.errors.AskgateError` (hence a
``ValueError``), so callers can catch one type, and the conformance suite can assert either a message regex
or a category (``ParseError``, ``ValidationError``, ``CatalogError``, ``IntegrityError``,
``RecursionError``, ``CompileError``) matched against class names in the exception's MRO.

``str(exc)`` is exactly the message (the suite's ``expect_error`` regexes run against it); each error also
carries one :class:`~askgate.errors.Fault` so the rest of askgate can report it like any other fault.
"""

from __future__ import annotations

from typing import Iterable

from askgate.errors import AskgateError, Fault


class A2uiError(AskgateError):
    """Base of every A2UI toolkit error. ``str(exc)`` is the message, verbatim."""

    code = "a2ui"
    rule = "a2ui"

    def __init__(self, message: str, faults: Iterable[Fault] = (), *, pointer: str = "") -> None:
        faults = list(faults) or [Fault(pointer, message, self.rule)]
        super().__init__(message, faults, code=type(self).code)


class ParseError(A2uiError):
    """LLM output or a JSON payload could not be parsed (missing tags, empty block, bad JSON)."""

    code = "a2ui_parse"
    rule = "a2ui.parse"


class ValidationError(A2uiError):
    """A payload does not match the A2UI server-to-client schema or the catalog."""

    code = "a2ui_invalid"
    rule = "a2ui.schema"


class CatalogError(A2uiError):
    """A catalog is unusable or cannot be selected (missing catalogId, no match, inline not accepted)."""

    code = "a2ui_catalog"
    rule = "a2ui.catalog"


class IntegrityError(ValidationError):
    """The component graph is broken: duplicate ids, missing root, dangling refs, cycles, orphans, bad paths."""

    code = "a2ui_integrity"
    rule = "a2ui.integrity"


class A2uiRecursionError(ValidationError):
    """A nesting limit was exceeded (JSON depth, logical component depth, function-call depth)."""

    code = "a2ui_recursion"
    rule = "a2ui.recursion"


# The suite's category name is "RecursionError"; an alias class keeps the builtin name unshadowed while an
# MRO walk over class names still finds "RecursionError".
class RecursionError(A2uiRecursionError):  # noqa: A001 - the name is the suite's category
    """Concrete class raised for recursion limits (named after the suite's category)."""


class CompileError(A2uiError):
    """A schema could not be compiled into a validator."""

    code = "a2ui_compile"
    rule = "a2ui.compile"


CATEGORIES: dict[str, type[A2uiError]] = {
    "ParseError": ParseError,
    "ValidationError": ValidationError,
    "CatalogError": CatalogError,
    "IntegrityError": IntegrityError,
    "RecursionError": RecursionError,
    "CompileError": CompileError,
}

__all__ = [
    "A2uiError",
    "ParseError",
    "ValidationError",
    "CatalogError",
    "IntegrityError",
    "A2uiRecursionError",
    "RecursionError",
    "CompileError",
    "CATEGORIES",
]
