"""One part of a parsed LLM response: conversational text and/or a list of A2UI messages.

Shared by whole-response parsing (:mod:`askgate.a2ui.payload`) and the streaming parser, so both return the
same type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ResponsePart"]


@dataclass
class ResponsePart:
    """``text`` may be ``""``; ``a2ui_json`` is a list of messages, or ``None`` for a text-only part."""

    text: str = ""
    a2ui_json: list[Any] | None = None
