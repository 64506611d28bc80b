"""Which codec module speaks which dialect.

Callers that hold a dialect name (the CLI's ``--as``, a suite's ``args.dialect``, a stored ask) get the
codec here instead of importing modules by hand, so adding a dialect is one line in :data:`CODEC_MODULES`.
Every codec offers the interface in ``helper-notes/codec-interface.md``: ``DIALECT``, ``parse_request``,
``parse_request_bytes``, ``check_answer``, ``render_answer``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Protocol

from askgate.core.model import Answer, Ask, Dialect
from askgate.errors import AskgateError, Fault

__all__ = ["CODEC_MODULES", "DIALECT_NAMES", "Codec", "codec_for", "dialect_of"]

#: Dialect -> module implementing its codec.
CODEC_MODULES: dict[Dialect, str] = {
    Dialect.A2A_ELICITATION: "askgate.protocols.a2a_elicitation",
    Dialect.MCP_ELICITATION: "askgate.protocols.mcp_elicitation",
    Dialect.AQP: "askgate.protocols.aqp",
    Dialect.ACS: "askgate.protocols.acs",
}

#: The wire-dialect names a user may name (``canonical`` is internal, not a dialect on the wire).
DIALECT_NAMES: tuple[str, ...] = tuple(d.value for d in CODEC_MODULES)


class Codec(Protocol):
    """The shape of a codec module (for type checkers)."""

    DIALECT: Dialect

    def parse_request(self, doc: Any, **opts: Any) -> Ask: ...

    def parse_request_bytes(self, data: bytes | str, **opts: Any) -> Ask: ...

    def validate_request(self, doc: Any, **opts: Any) -> list[Fault]: ...

    def check_answer(self, ask: Ask, payload: Any, **opts: Any) -> Answer: ...

    def render_answer(self, ask: Ask, answer: Answer, **opts: Any) -> dict[str, Any]: ...


def dialect_of(name: str | Dialect) -> Dialect:
    """The :class:`Dialect` for a wire-dialect name; ``AskgateError(code="unknown_dialect")`` otherwise."""
    if isinstance(name, Dialect) and name in CODEC_MODULES:
        return name
    if isinstance(name, str):
        for dialect in CODEC_MODULES:
            if dialect.value == name:
                return dialect
    raise AskgateError(
        f"unknown dialect {name!r}",
        [
            Fault(
                "", f"unknown dialect {name!r}; expected one of {', '.join(DIALECT_NAMES)}", "dialect.unknown"
            )
        ],
        code="unknown_dialect",
    )


def codec_for(dialect: str | Dialect) -> Codec:
    """The codec module for ``dialect`` (a :class:`Dialect` or its name).

    Raises ``AskgateError(code="unknown_dialect")`` for a name that is not a wire dialect and
    ``AskgateError(code="unsupported")`` if the codec module is not installed.
    """
    resolved = dialect_of(dialect)
    module_name = CODEC_MODULES[resolved]
    try:
        module: ModuleType = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            raise AskgateError(
                f"no codec for {resolved.value}",
                [
                    Fault(
                        "", f"the {resolved.value} codec ({module_name}) is not available", "dialect.no-codec"
                    )
                ],
                code="unsupported",
            ) from None
        raise
    return module  # type: ignore[return-value]
