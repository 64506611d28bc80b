"""Whole-response parsing of LLM output: ``<a2ui-json>`` blocks inside text, and lenient JSON fixing.

LLMs wrap JSON in Markdown fences, use curly quotes and leave trailing commas; these functions accept
exactly those slips (protocols.md §5.8 "Parse and fix") and nothing else. Only
:class:`~askgate.a2ui.errors.ParseError` escapes, whatever the text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from askgate.a2ui.errors import ParseError
from askgate.a2ui.parts import ResponsePart

__all__ = ["OPEN_TAG", "CLOSE_TAG", "has_parts", "parse_full", "fix_payload", "remove_trailing_commas"]

OPEN_TAG = "<a2ui-json>"
CLOSE_TAG = "</a2ui-json>"
_BLOCK = re.compile(re.escape(OPEN_TAG) + r"(.*?)" + re.escape(CLOSE_TAG), re.DOTALL)
_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def has_parts(content: str) -> bool:
    """True iff both the opening and the closing tag occur (in any order)."""
    return OPEN_TAG in content and CLOSE_TAG in content


def _strip_fences(block: str) -> str:
    block = block.strip()
    if block.startswith("```json"):
        block = block[len("```json"):]
    elif block.startswith("```"):
        block = block[3:]
    if block.endswith("```"):
        block = block[:-3]
    return block.strip()


def parse_full(content: str) -> list[ResponsePart]:
    """Split a complete LLM response into parts: the text before each block plus the block's messages,
    then any trailing text as a text-only part. Raises :class:`ParseError` when there is no block, a block
    is empty, or its JSON cannot be fixed."""
    matches = list(_BLOCK.finditer(content))
    if not matches:
        raise ParseError(f"A2UI tags '{OPEN_TAG}' and '{CLOSE_TAG}' not found in response.")
    parts: list[ResponsePart] = []
    last = 0
    for match in matches:
        text = content[last:match.start()].strip()
        block = _strip_fences(match.group(1))
        if not block:
            raise ParseError("A2UI JSON part is empty.")
        parts.append(ResponsePart(text=text, a2ui_json=fix_payload(block)))
        last = match.end()
    trailing = content[last:].strip()
    if trailing:
        parts.append(ResponsePart(text=trailing, a2ui_json=None))
    return parts


def remove_trailing_commas(text: str) -> str:
    """Drop each comma that is followed (after whitespace) by ``]`` or ``}``, outside string literals."""
    if "," not in text:
        return text
    out: list[str] = []
    in_string = False
    escaped = False
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == ",":
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            if j < n and text[j] in "]}":
                i += 1
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise ValueError("nesting too deep") from exc


def fix_payload(payload: str) -> list[Any]:
    """Parse one JSON payload leniently into a list of messages (a single value is wrapped in a list).

    Curly quotes become straight ones; if the JSON still does not parse, trailing commas are removed and
    it is parsed again; if that fails: ``Failed to parse JSON: <cause>``.
    """
    text = payload.translate(_SMART_QUOTES)
    try:
        value = _load(text)
    except ValueError:
        try:
            value = _load(remove_trailing_commas(text))
        except ValueError as exc:
            raise ParseError(f"Failed to parse JSON: {exc}") from exc
    return value if isinstance(value, list) else [value]
