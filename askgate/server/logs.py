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


def configure(level: str = "info") -> None:
    global _debug
    lvl = getattr(logging, level.upper(), logging.INFO)
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
        cache_logger_on_first_use=False,
    )
