"""Healing of a cut JSON fragment, as the streaming parser needs it (protocols.md §5.8 "Healing").

An LLM stream stops anywhere; to show a component before its closing brace arrives the parser closes
the open fragment: strings (only for keys whose values may be shown cut), a trailing comma, brackets.
The rules are the upstream reference's observable behaviour, which the conformance suite pins, so the
result is a *string* that the caller then hands to ``json.loads`` (a fragment that cannot be healed
yields ``""``, which never parses).
"""

from __future__ import annotations

import re

__all__ = ["CUTTABLE_KEYS", "HealScan", "heal_fragment"]

#: Keys whose string values may be shown cut (``"Em"`` before ``"Email"``). Structural and atomic keys
#: (``id``, ``surfaceId``, ``path`` ...) are never cut: a half id or half path would bind the wrong thing.
CUTTABLE_KEYS = frozenset({"literalString", "valueString", "label", "hint", "caption", "altText", "text"})

# Tokens that change the scanner state: an escape (backslash plus the next character, anywhere), a
# quote, a bracket.
_TOKENS = re.compile(r'\\.|["{}\[\]]', re.S)
_BRACKETS = re.compile(r"[{}\[\]]")
# Opening bracket -> its closer, for str.translate.
_CLOSERS = str.maketrans("{[", "}]")
# A data-model entry's key, looked for in the last 200 characters before the open string.
_DATA_KEY = re.compile(r'"key"\s*:\s*"([^"]+)"')
_URL_PREFIXES = ("http://", "https://", "data:", "/")
_URL_WORDS = ("url", "link", "src", "href", "image")


class HealScan:
    """Scanner state over a growing fragment, so healing it again only scans the new characters.

    Valid as long as the fragment only grows at its end (the caller drops it otherwise).
    """

    __slots__ = ("scanned", "openers", "in_string", "last_open", "skip")

    def __init__(self) -> None:
        self.scanned = 0
        self.openers: list[str] = []
        self.in_string = False
        self.last_open = -1
        self.skip = False  # the previous scan ended on a backslash: the next character is escaped

    def advance(self, text: str) -> None:
        """Scan what ``text`` (the fragment, grown at its end) holds beyond what was scanned before."""
        start = self.scanned
        if start >= len(text):
            return
        new = text[start:]
        if not self.skip and "\\" not in new:
            self._advance_plain(text, start, new)
        else:
            self._advance_tokens(text)

    def _advance_tokens(self, text: str) -> None:
        """The general scan, token by token (escapes anywhere, quotes, brackets)."""
        start = self.scanned
        if start >= len(text):
            return
        if self.skip:
            self.skip = False
            start += 1
        openers = self.openers
        in_string = self.in_string
        last_escape_end = -1
        for match in _TOKENS.finditer(text, start):
            tok = match.group()
            if len(tok) == 2:  # an escaped character: skipped wherever it is
                last_escape_end = match.end()
                continue
            if tok == '"':
                in_string = not in_string
                if in_string:
                    self.last_open = match.start()
            elif not in_string:
                if tok in "{[":
                    openers.append(tok)
                elif openers:
                    openers.pop()
        self.in_string = in_string
        # A backslash left unpaired at the end escapes the first character of the next scan.
        end = len(text)
        self.skip = text.endswith("\\") and end - 1 >= start and last_escape_end != end
        self.scanned = len(text)

    def _advance_plain(self, text: str, start: int, new: str | None = None) -> None:
        """:meth:`advance` over new text without a backslash: every quote toggles, so the text splits at
        quotes into pieces alternately outside and inside strings, and only the brackets of the outside
        pieces (in order) move the stack. Same result as the token loop, in a few C-level passes."""
        pieces = (text[start:] if new is None else new).split('"')
        quotes = len(pieces) - 1
        outside = pieces[1::2] if self.in_string else pieces[0::2]
        openers = self.openers
        for tok in _BRACKETS.findall("".join(outside)):
            if tok in "{[":
                openers.append(tok)
            elif openers:
                openers.pop()
        if quotes:
            last = text.rfind('"', start)
            self.in_string ^= quotes % 2 == 1
            if self.in_string:  # the last quote opened a string
                self.last_open = last
            elif quotes >= 2:  # the last quote closed the string the one before it opened
                self.last_open = text.rfind('"', start, last)
        self.scanned = len(text)


def heal_fragment(fragment: str, scan: HealScan | None = None) -> str:
    """Close a cut JSON fragment; ``""`` when it must not be shown yet.

    Trailing whitespace is dropped first (so a cut string loses its trailing blanks), then an open
    string is closed when its key is cuttable (a URL-like ``valueString`` never is), one trailing comma
    is removed, and every open bracket is closed in order. ``scan`` carries the scanner state of an
    earlier, shorter version of the same fragment.
    """
    fixed = fragment.rstrip()
    if not fixed:
        return ""
    if scan is None:
        scan = HealScan()
    scan.advance(fragment)
    openers = scan.openers
    in_string = scan.in_string
    last_open = scan.last_open

    if in_string:
        prefix = fixed[:last_open].rstrip()
        if prefix[-1:] == ":":
            key = _key_before_colon(prefix)
            if key is not None:
                if key not in CUTTABLE_KEYS:
                    return ""
                if key == "valueString" and _is_url_value(fixed[last_open + 1 :], prefix):
                    return ""
        fixed += '"'

    # ``fixed`` ends with a quote or, stripped above, with no whitespace.
    if fixed[-1] == ",":
        fixed = fixed[:-1].rstrip()
    if openers:
        fixed += "".join(reversed(openers)).translate(_CLOSERS)
    return fixed


def _key_before_colon(prefix: str) -> str | None:
    """The key right before the colon ``prefix`` ends with (``prefix`` has no trailing whitespace): the
    non-empty text between its last two quotes, when only whitespace separates the last one from the colon
    (what the regular expression ``"([^"]+)"\\s*:\\s*$`` finds, without a scan of the whole prefix)."""
    body = prefix[:-1].rstrip()
    end = len(body) - 1
    if end < 0 or body[end] != '"':
        return None
    start = body.rfind('"', 0, end)
    if start < 0 or end - start < 2:
        return None
    return body[start + 1 : end]


def _is_url_value(value: str, prefix: str) -> bool:
    """A partial URL breaks an image or a link, so a URL-like data value waits until it is complete."""
    if value.startswith(_URL_PREFIXES):
        return True
    keys = _DATA_KEY.findall(prefix[-200:])
    if keys:
        name = keys[-1].lower()
        return any(word in name for word in _URL_WORDS)
    return False
