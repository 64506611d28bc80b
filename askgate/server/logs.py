"""structlog set-up: JSON lines on stderr, with a last-chance redaction of credential-looking members."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_SENSITIVE = ("authorization", "token", "secret", "password", "credential", "cookie")


def _redact(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    for key in list(event):
        if any(s in key.lower() for s in _SENSITIVE):
            event[key] = "<redacted>"
    return event


_debug = False


def debug_enabled() -> bool:
    """Whether debug lines are written: per-request lines are then built (not for nothing at other levels)."""
    return _debug


_final: int | None = None  # the level fixed for the life of the process by configure(..., final=True)


def configure(level: str = "info", *, final: bool = False) -> None:
    """JSON lines on stderr at ``level``.

    ``final`` (``askgate serve``, one configuration for the whole process): loggers are cached on first
    use, which saves building a bound logger at every log call (about 1% of a busy broker's CPU), and later
    calls change nothing. Without it (tests build many apps in one process, at different levels) every
    call takes effect at once."""
    global _debug, _final
    lvl = getattr(logging, level.upper(), logging.INFO)
    if _final is not None:
        return
    if final:
        _final = lvl
    _debug = lvl <= logging.DEBUG
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=final,
    )
