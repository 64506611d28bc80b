"""Values computed from immutable objects, remembered per object.

An ask's record is rewritten at every step while the ask itself (a frozen model), its spec and its
routing stay the very same objects: their JSON and view parts need making once, not at every write and
every response. Entries are found by identity and keep their object alive, so an id cannot be reused
while it is listed; only the most recent ``size`` objects are kept. The values handed out are shared:
callers treat them as read-only, as they treat every record and view dict.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """``memo(obj)``: ``make(obj)``, computed once per object among the last ``size`` objects seen."""

    __slots__ = ("_entries", "_make", "_size")

    def __init__(self, make: Callable[[K], V] | None = None, size: int = 1024) -> None:
        self._make = make
        self._size = size
        # OrderedDict: dropping the oldest is O(1) (next(iter(dict)) after many deletions at its front
        # walks the dead slots, which made a plain dict's eviction grow costly)
        self._entries: OrderedDict[int, tuple[K, V]] = OrderedDict()

    def get(self, key: K) -> V | None:
        entry = self._entries.get(id(key))
        return entry[1] if entry is not None and entry[0] is key else None

    def put(self, key: K, value: V) -> None:
        entries = self._entries
        if len(entries) >= self._size:
            entries.popitem(last=False)  # the oldest: an ask's steps follow each other closely
        entries[id(key)] = (key, value)

    def __call__(self, key: K) -> V:
        entry = self._entries.get(id(key))
        if entry is not None and entry[0] is key:
            return entry[1]
        assert self._make is not None, "a memo without make() is filled with put()"
        value = self._make(key)
        self.put(key, value)
        return value

    def __len__(self) -> int:
        return len(self._entries)
