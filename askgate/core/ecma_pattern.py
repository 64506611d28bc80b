"""A conservative ECMA-262 / Python regular-expression subset for MCP ``pattern`` (protocols.md §2.2).

An asker writes ``pattern`` for a JavaScript engine; askgate enforces it in Python. The two dialects
disagree on ``.``, ``$``, ``\\d``, ``\\w``, ``\\s``, lookbehind, named groups, flags and much else, so
askgate accepts only a small common core and translates it into a Python pattern with the ECMA
meaning: ``.`` excludes line terminators, ``$`` is the very end, the character classes are ASCII /
ECMA sets. Anything outside the core is refused rather than guessed.
"""

from __future__ import annotations

import re
from functools import lru_cache

# ECMA-262 WhiteSpace + LineTerminator, spelled out so Python's wider Unicode \s does not leak in.
_ECMA_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_CLASS_ESCAPES = {"d": "0-9", "w": "A-Za-z0-9_", "s": _ECMA_SPACE}
_SIMPLE_ESCAPES = set("\\/.^$*+?()[]{}|-")
_CONTROL_ESCAPES = {"n": "\\n", "r": "\\r", "t": "\\t", "f": "\\f", "v": "\\x0b"}
_HEX = re.compile(r"[0-9A-Fa-f]+\Z")
_MAX_PATTERN = 1000


class PatternError(ValueError):
    """The pattern is outside the supported subset (or does not compile)."""


def _escape(src: str, i: int, in_class: bool) -> tuple[str, int]:
    """Translate the escape starting at ``src[i] == '\\\\'``; return (python text, next index)."""
    if i + 1 >= len(src):
        raise PatternError("trailing backslash")
    c = src[i + 1]
    if c in _CLASS_ESCAPES:
        body = _CLASS_ESCAPES[c]
        return (body if in_class else f"[{body}]"), i + 2
    if c in "DWS":
        if in_class:
            raise PatternError(f"\\{c} inside a character class")
        return f"[^{_CLASS_ESCAPES[c.lower()]}]", i + 2
    if c in _CONTROL_ESCAPES:
        return _CONTROL_ESCAPES[c], i + 2
    if c == "b" and not in_class:
        raise PatternError("\\b word boundaries differ between ECMA and Python")
    if c == "x":
        hexpart = src[i + 2 : i + 4]
        if len(hexpart) != 2 or not _HEX.match(hexpart):
            raise PatternError("bad \\x escape")
        return f"\\x{hexpart}", i + 4
    if c == "u":
        hexpart = src[i + 2 : i + 6]
        if len(hexpart) != 4 or not _HEX.match(hexpart):
            raise PatternError("bad \\u escape")
        return f"\\u{hexpart}", i + 6
    if c in _SIMPLE_ESCAPES:
        return "\\" + c, i + 2
    raise PatternError(f"unsupported escape \\{c}")


def _char_class(src: str, i: int) -> tuple[str, int]:
    """Translate ``[...]`` starting at ``src[i] == '['``."""
    out = ["["]
    i += 1
    if i < len(src) and src[i] == "^":
        out.append("^")
        i += 1
    first = True
    while i < len(src):
        c = src[i]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), i + 1
        if c == "]":  # ECMA "[]" matches nothing, Python reads "]" as a literal: refuse the difference
            raise PatternError("empty character class")
        if c == "\\":
            text, i = _escape(src, i, True)
            out.append(text)
        elif c == "[":
            out.append("\\[")  # Python warns on nested-set syntax; ECMA reads a literal "["
            i += 1
        elif c in "&~|" and i + 1 < len(src) and src[i + 1] == c:
            raise PatternError("set operations are not portable")
        else:
            out.append(c)
            i += 1
        first = False
    raise PatternError("unterminated character class")


def _quantifier_braces(src: str, i: int) -> tuple[str, int] | None:
    m = re.compile(r"\{(\d+)(,(\d*))?\}").match(src, i)
    if not m:
        return None
    lo = int(m.group(1))
    hi = m.group(3)
    if hi and int(hi) < lo:
        raise PatternError("quantifier range out of order")
    return m.group(0), m.end()


@lru_cache(maxsize=512)
def translate(src: str) -> str:
    """Check ``src`` is inside the common subset and return the equivalent Python pattern text."""
    if len(src) > _MAX_PATTERN:
        raise PatternError("pattern too long")
    if any(ord(ch) > 0xFFFF or 0xD800 <= ord(ch) <= 0xDFFF for ch in src):
        raise PatternError("characters outside the BMP match differently in ECMA regexes")
    out: list[str] = []
    depth = 0
    can_quantify = False
    i = 0
    while i < len(src):
        c = src[i]
        if c == "\\":
            text, i = _escape(src, i, False)
            out.append(text)
            can_quantify = True
        elif c == "[":
            text, i = _char_class(src, i)
            out.append(text)
            can_quantify = True
        elif c == "(":
            if src.startswith("(?:", i) or src.startswith("(?=", i) or src.startswith("(?!", i):
                out.append(src[i : i + 3])
                i += 3
            elif src.startswith("(?", i):
                raise PatternError("only (?:...), (?=...) and (?!...) groups are portable")
            else:
                out.append("(")
                i += 1
            depth += 1
            can_quantify = False
        elif c == ")":
            if depth == 0:
                raise PatternError("unbalanced parenthesis")
            depth -= 1
            out.append(")")
            i += 1
            can_quantify = True
        elif c in "*+?":
            if not can_quantify:
                raise PatternError("nothing to repeat")
            out.append(c)
            i += 1
            if i < len(src) and src[i] == "?":
                out.append("?")
                i += 1
            if i < len(src) and src[i] in "*+":
                raise PatternError("possessive or stacked quantifiers are not portable")
            can_quantify = False
        elif c == "{":
            braces = _quantifier_braces(src, i)
            if braces is None:
                raise PatternError("a literal '{' must be escaped")
            if not can_quantify:
                raise PatternError("nothing to repeat")
            out.append(braces[0])
            i = braces[1]
            if i < len(src) and src[i] == "?":
                out.append("?")
                i += 1
            can_quantify = False
        elif c == "}":
            raise PatternError("a literal '}' must be escaped")
        elif c == "]":
            raise PatternError("a literal ']' must be escaped")
        elif c == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
            i += 1
            can_quantify = True
        elif c == "$":
            out.append("\\Z")
            i += 1
            can_quantify = False
        elif c in "^|":
            out.append(c)
            i += 1
            can_quantify = False
        else:
            out.append(re.escape(c))
            i += 1
            can_quantify = True
    if depth:
        raise PatternError("unbalanced parenthesis")
    text = "".join(out)
    try:
        re.compile(text)
    except (re.error, OverflowError, RecursionError) as exc:
        raise PatternError(str(exc)) from None
    return text


@lru_cache(maxsize=512)
def compile_pattern(src: str) -> re.Pattern[str]:
    """The compiled Python equivalent of an accepted ECMA pattern; raises :class:`PatternError`."""
    return re.compile(translate(src))


def pattern_matches(src: str, value: str) -> bool:
    """JSON Schema ``pattern`` semantics: unanchored search."""
    return compile_pattern(src).search(value) is not None
