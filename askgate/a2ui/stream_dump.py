"""Sorted JSON dumps of shown components, the streaming parser's identity of what it showed.

The parser dumps a component's shown form whenever it changes, to tell whether a surface must get it again
and to key its validation verdicts. A root with a long child list changes at almost every chunk while
that list streams, and the C encoder spends most of its time on the list's strings one by one. When every
id is plain printable ASCII (no quote, no backslash: nothing JSON escapes), the list's text is simply the
ids joined by ``", "``, so the rest of the component is dumped with a marker in the list's place and the
joined ids are put there: the same text, several times faster. Placeholders (one fixed body per id) are
dumped from a template the same way.
"""

from __future__ import annotations

import json
import re
from json.encoder import c_make_encoder, encode_basestring_ascii
from typing import Any, Callable

from askgate.a2ui.stream_growth import list_at, with_list

__all__ = ["MARKER", "dump", "dump_sorted", "dump_with_list", "dump_with_list_parts", "list_text", "template_dumper"]

#: A string no parsed component holds (compared by identity where it stands for a list).
MARKER = "\x00askgate list marker"

# Printable ASCII (what ``str.isprintable`` accepts of ASCII), deleted by ``bytes.translate`` in one
# C-level pass (three times faster than ``isprintable`` on a long id list).
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))
# Characters ``encode_basestring_ascii`` writes as they are: printable ASCII except the quote and backslash.
_PLAIN = re.compile(r"[ !#-\[\]-~]*")


def _encoder(sort_keys: bool) -> Callable[[Any], str]:
    """``json.dumps(obj, sort_keys=sort_keys)`` without building a ``JSONEncoder`` on every call.

    Same C encoder and settings as ``json.dumps``; only the circular-reference markers are left out
    (parsed JSON cannot be circular).
    """
    default = json.JSONEncoder().default
    if c_make_encoder is None:  # pragma: no cover - CPython always has the C encoder
        return json.JSONEncoder(sort_keys=sort_keys, check_circular=False).encode
    encode = c_make_encoder(None, default, encode_basestring_ascii, None, ": ", ", ", sort_keys, False, True)
    return lambda obj: "".join(encode(obj, 0))


dump = _encoder(False)  # json.dumps(obj)
dump_sorted = _encoder(True)  # json.dumps(obj, sort_keys=True)

_LIST_TOKEN = dump_sorted([MARKER])


def dump_with_list(comp: dict[str, Any], path: tuple[Any, ...]) -> str:
    """``dump_sorted(comp)`` where ``path`` (dict keys) leads to a list, spliced in when its items are
    plain string ids (else, or when the path does not lead to a list, the plain dump)."""
    return dump_with_list_parts(comp, path)[0]


def dump_with_list_parts(comp: dict[str, Any], path: tuple[Any, ...]) -> tuple[str, tuple[str, str] | None]:
    """``dump_with_list`` and, when the list was spliced in, the text before and after it: a later
    version that differs only in that list's plain ids is then ``before + list_text(ids) + after``."""
    items = list_at(comp, path)  # None where the path does not lead anywhere: the plain dump below
    if type(items) is not list or not items or {*map(type, items)} != {str} or not _PLAIN.fullmatch("".join(items)):
        return dump_sorted(comp), None
    small = dump_sorted(with_list(comp, path, [MARKER]))
    if small.count(_LIST_TOKEN) != 1:  # the marker list also stands somewhere else
        return dump_sorted(comp), None
    before, _, after = small.partition(_LIST_TOKEN)
    return before + '["' + '", "'.join(items) + '"]' + after, (before, after)


def list_text(items: list[str]) -> str | None:
    """The JSON text of a non-empty list of plain string ids (printable ASCII, no quote, no backslash:
    nothing JSON escapes), as the encoder writes it; None for any other list."""
    try:
        joined = '", "'.join(items)
    except TypeError:  # an item that is not a string
        return None
    if (
        not items
        or not joined.isascii()
        or joined.encode("ascii").translate(None, _PRINTABLE_ASCII)  # a control character is left
        or "\\" in joined
        or joined.count('"') != 2 * (len(items) - 1)
    ):
        return None
    return '["' + joined + '"]'


def template_dumper(body: dict[str, Any]) -> Callable[[str], str]:
    """``lambda pid: dump_sorted({"id": pid, **body})``, from one dump of the body with a marker id."""
    pre, _, post = dump_sorted({"id": MARKER, **body}).partition(encode_basestring_ascii(MARKER))
    if MARKER in post or encode_basestring_ascii(MARKER) in post:  # pragma: no cover - bodies are fixed
        return lambda pid: dump_sorted({"id": pid, **body})
    return lambda pid: pre + encode_basestring_ascii(pid) + post
