"""Recognising a component that only grew a list of child ids since its last version.

While a component with many children streams (a root Column), each chunk adds an id or two to its child
list and nothing else; redoing every per-component step over the whole list at every chunk is what
makes that phase quadratic. These helpers tell when the new version is the old one plus ids appended to
exactly one list of strings, so the streaming parser can extend what it derived before instead.
"""

from __future__ import annotations

from typing import Any

__all__ = ["GROWTH_MIN", "UNKNOWN_GROWTH", "Growth", "all_str", "appended_strings", "list_at", "with_list"]

#: Lists shorter than this are simply processed again (the check would cost about as much).
GROWTH_MIN = 16

#: (path of keys to the list, how many of its old items are kept)
Growth = tuple[tuple[str, ...], int]
#: Passed where an ``appended_strings`` result is not known yet (None is a result: "no growth").
UNKNOWN_GROWTH: Any = object()

_STR_ONLY = frozenset({str})


def all_str(items: list[Any]) -> bool:
    """Every item is exactly a ``str`` (one C-level pass over the item types)."""
    return {*map(type, items)} <= _STR_ONLY


def appended_strings(old: Any, new: Any) -> Growth | None:
    """Where ``new`` is ``old`` with strings appended to one list of strings (else None): the path to
    that list and how many of its old items are kept (all, or all but the last: a cut id completed).

    Equality is JSON equality (same types, so ``1`` is not ``1.0`` or ``true``), keys in the same order,
    and the list must hold only strings before and after.
    """
    found: list[Growth] = []
    if not _same_but_grown(old, new, (), found) or len(found) != 1:
        return None
    return found[0]


def _same_but_grown(a: Any, b: Any, path: tuple[str, ...], found: list[Growth]) -> bool:
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        if len(a) != len(b):
            return False
        for (ka, va), (kb, vb) in zip(a.items(), b.items()):
            if ka != kb or not _same_but_grown(va, vb, path + (ka,), found):
                return False
        return True
    if kind is list:
        size = len(a)
        if len(b) == size and a == b and all_str(a):
            return True
        if len(b) >= size and all_str(b):
            # Equal to a prefix of a list of strings: the old items are those same strings.
            if b[:size] == a:
                keep = size
            elif size and type(a[-1]) is str and b[: size - 1] == a[:-1]:
                keep = size - 1
            else:
                return False
            if found:
                return False
            found.append((path, keep))
            return True
        if len(b) != size:
            return False
        before = len(found)  # a list grown inside a list item has no key path: not recognised
        return all(_same_but_grown(x, y, path, found) for x, y in zip(a, b)) and len(found) == before
    return bool(a == b)


def list_at(obj: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` (None when a step is missing). Keys are strings, which only a dict takes
    (JSON values are dicts, lists, strings, numbers, booleans and None): any other value raises."""
    try:
        for key in path:
            obj = obj[key]
    except (KeyError, TypeError):
        return None
    return obj


def with_list(obj: dict[str, Any], path: tuple[str, ...], value: list[Any]) -> dict[str, Any]:
    """A copy of ``obj`` with ``value`` at ``path`` (only the dicts on the way are copied; the path must
    exist). Copy on write: objects shared with earlier results are never changed."""
    top = node = dict(obj)
    for key in path[:-1]:
        node[key] = node = dict(node[key])  # the old node gets the copy, then the copy is the node
    node[path[-1]] = value
    return top
