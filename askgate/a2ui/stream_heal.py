"""Healing of a cut JSON fragment, as the streaming parser needs it (protocols.md §5.8 "Healing").

An LLM stream stops anywhere; to show a component before its closing brace arrives the parser closes
the open fragment: strings (only for keys whose values may be shown cut), a trailing comma, brackets.
The rules are the upstream reference's observable behaviour, which the conformance suite pins, so the
result is a *string* that the caller then hands to ``json.loads`` (a fragment that cannot be healed
yields ``""``, which never parses).
"""

from __future__ import annotations

import re

__all__ = ["CUTTABLE_KEYS", "heal_fragment"]

#: Keys whose string values may be shown cut (``"Em"`` before ``"Email"``). Structural and atomic keys
#: (``id``, ``surfaceId``, ``path`` ...) are never cut: a half id or half path would bind the wrong thing.
CUTTABLE_KEYS = frozenset({"literalString", "valueString", "label", "hint", "caption", "altText", "text"})

# Tokens that change the scanner state: an escape (backslash plus the next character, anywhere), a
# quote, a bracket.
_TOKENS = re.compile(r'\\.|["{}\[\]]', re.S)
# The key right before the colon that precedes the open string.
_KEY_BEFORE_COLON = re.compile(r'"([^"]+)"\s*:\s*$')
# A data-model entry's key, looked for in the last 200 characters before the open string.
_DATA_KEY = re.compile(r'"key"\s*:\s*"([^"]+)"')
_URL_PREFIXES = ("http://", "https://", "data:", "/")
_URL_WORDS = ("url", "link", "src", "href", "image")


def heal_fragment(fragment: str) -> str:
    """Close a cut JSON fragment; ``""`` when it must not be shown yet.

    Trailing whitespace is dropped first (so a cut string loses its trailing blanks), then an open
    string is closed when its key is cuttable (a URL-like ``valueString`` never is), one trailing comma
    is removed, and every open bracket is closed in order.
    """
    fixed = fragment.rstrip()
    if not fixed:
        return ""
    openers: list[str] = []
    in_string = False
    last_open = -1
    for match in _TOKENS.finditer(fixed):
        tok = match.group()
        if len(tok) == 2:  # an escaped character: skipped wherever it is
            continue
        if tok == '"':
            in_string = not in_string
            if in_string:
                last_open = match.start()
        elif not in_string:
            if tok in "{[":
                openers.append(tok)
            elif openers:
                openers.pop()

    if in_string:
        prefix = fixed[:last_open].rstrip()
        if prefix.endswith(":"):
            keys = _KEY_BEFORE_COLON.findall(prefix)
            if keys:
                key = keys[0]
                if key not in CUTTABLE_KEYS:
                    return ""
                if key == "valueString" and _is_url_value(fixed[last_open + 1 :], prefix):
                    return ""
        fixed += '"'

    fixed = fixed.rstrip()
    if fixed.endswith(","):
        fixed = fixed[:-1].rstrip()
    if openers:
        fixed += "".join("}" if o == "{" else "]" for o in reversed(openers))
    return fixed


def _is_url_value(value: str, prefix: str) -> bool:
    """A partial URL breaks an image or a link, so a URL-like data value waits until it is complete."""
    if value.startswith(_URL_PREFIXES):
        return True
    keys = _DATA_KEY.findall(prefix[-200:])
    if keys:
        name = keys[-1].lower()
        return any(word in name for word in _URL_WORDS)
    return False
