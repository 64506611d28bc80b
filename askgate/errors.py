"""The one error type askgate raises for bad input.

Every validator collects *all* faults before raising, so a caller can fix a document in one pass.
A fault names where (a JSON pointer into the offending document), what (a sentence a person can act
on) and which rule failed (a JSON Schema keyword such as ``required`` or a named runtime rule such as
``elicitation.enumNames-length``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True, slots=True)
class Fault:
    """One thing wrong with a document."""

    pointer: str
    message: str
    rule: str

    def as_dict(self) -> dict[str, str]:
        return {"pointer": self.pointer, "message": self.message, "rule": self.rule}


class AskgateError(ValueError):
    """Invalid input: carries every fault found, never just the first.

    ``code`` is a short machine-readable category (``invalid_request``, ``invalid_answer``,
    ``unsupported``, ``not_json`` ...); ``str(error)`` is the first fault's message (or the summary
    when there are no faults) so that regex-matching callers see the real cause.
    """

    def __init__(self, message: str, faults: Iterable[Fault] = (), *, code: str = "invalid") -> None:
        self.faults: list[Fault] = list(faults)
        self.code = code
        self.summary = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.summary

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.summary, "faults": [f.as_dict() for f in self.faults]}


def pointer_join(base: str, *parts: str | int) -> str:
    """Append reference tokens to a JSON pointer, escaping ``~`` and ``/`` (RFC 6901)."""
    out = base
    for part in parts:
        out += "/" + str(part).replace("~", "~0").replace("/", "~1")
    return out


def raise_if_faults(faults: list[Fault], what: str, *, code: str = "invalid") -> None:
    """Raise an :class:`AskgateError` summarising ``faults`` if there are any."""
    if faults:
        n = len(faults)
        first = faults[0]
        more = f" (and {n - 1} more)" if n > 1 else ""
        raise AskgateError(f"{what}: {first.pointer or '/'}: {first.message}{more}", faults, code=code)
