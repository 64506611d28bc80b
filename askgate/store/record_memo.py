"""Stored ask records decoded once per distinct text.

An answer reads back the ask its create wrote moments before, and a waiter re-reads an ask that has not
changed: both used to pay ``json.loads`` of the whole record (a few kB) every time. This is a small memo
from a record's JSON text to the dict it decodes to, filled when the store writes a record (with the dict
it was dumped from) and when it reads one. Keyed by the full text, so a hit is exactly what decoding
would return; bounded, so it costs a few MB at most. The dicts are shared: nothing in askgate mutates an
``AskRow.record`` (records are rebuilt, never edited in place).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

MAX_ENTRIES = 1024

_memo: OrderedDict[str, dict[str, Any]] = OrderedDict()  # O(1) oldest-first eviction (see core/memo.py)


def remember(text: str, doc: dict[str, Any]) -> None:
    """``doc`` is what ``text`` decodes to (the store just dumped it)."""
    if len(_memo) >= MAX_ENTRIES:
        _memo.popitem(last=False)  # oldest first: the answer to a create comes soon after it
    _memo[text] = doc


def decode(text: str) -> dict[str, Any]:
    """``json.loads(text)``, from the memo when this text was written or read recently."""
    doc = _memo.get(text)
    if doc is None:
        doc = json.loads(text)
        remember(text, doc)
    return doc
