"""What the streaming parser does to one component before showing it (protocols.md §5.8 "Placeholders").

A component may arrive before its children, or cut. Before it is shown, references to children not seen
yet are pointed at placeholders (``loading_<id>``, an empty Row), v0.8 data paths get their leading
``/``, and a component that is still too incomplete to render (an empty object somewhere, or a missing
catalog-required property) is not used at all. The rules are the reference SDK's observable behaviour.

The functions here are pure: the caller says which ids are seen and whether an open children list is
still streaming, and gets back the rewritten copy plus what it depended on (so it can cache it).
"""

from __future__ import annotations

import re
from itertools import compress
from operator import not_
from typing import Any, Callable, Container, Mapping

from askgate.a2ui.integrity import catalog_components
from askgate.a2ui.stream_growth import (
    GROWTH_MIN,
    UNKNOWN_GROWTH,
    all_str,
    appended_strings,
    list_at,
    with_list,
)

__all__ = [
    "CHILD_FIELDS",
    "GROWTH_NAMES",
    "PlaceholderIds",
    "Processed",
    "acceptable_partial",
    "grow_component",
    "has_empty_dict",
    "placeholder_body",
    "process_component",
    "raw_allows_growth",
    "required_fields",
]

#: Fields whose ids are replaced by placeholders when the child is not seen yet (at any nesting level).
CHILD_FIELDS = ("children", "explicitList", "child", "contentChild", "entryPointChild", "componentId")
_LIST_FIELDS = ("children", "explicitList")
# An empty JSON object as written in JSON text (the whitespace json.loads accepts between its braces).
_EMPTY_OBJECT = re.compile(r"\{[ \t\n\r]*\}")


def placeholder_body(v09: bool) -> dict[str, Any]:
    """A fresh placeholder component body (without its id): an empty Row."""
    if v09:
        return {"component": "Row", "children": []}
    return {"component": {"Row": {"children": {"explicitList": []}}}}


def has_empty_dict(obj: Any) -> bool:
    """An empty object anywhere inside: a half-streamed property that would break a renderer."""
    if isinstance(obj, dict):
        if not obj:
            return True
        return any(has_empty_dict(v) for v in obj.values())
    if isinstance(obj, list):
        for v in obj:
            if (v.__class__ is dict or v.__class__ is list) and has_empty_dict(v):
                return True
    return False


def required_fields(version: str, s2c: Any, catalog: Any) -> dict[str, set[str]]:
    """Per component type, the properties its catalog schema requires (``component`` excluded)."""
    components = catalog_components(version, s2c, catalog)
    out: dict[str, set[str]] = {}
    if not isinstance(components, dict):
        return out
    for name, schema in components.items():
        found: set[str] = set()
        pending = [schema]
        while pending:
            node = pending.pop()
            if not isinstance(node, dict):
                continue
            req = node.get("required")
            if isinstance(req, list):
                found.update(r for r in req if isinstance(r, str) and r != "component")
            for key in ("allOf", "oneOf", "anyOf"):
                subs = node.get(key)
                if isinstance(subs, list):
                    pending.extend(subs)
        if found:
            out[name] = found
    return out


def acceptable_partial(comp: Mapping[str, Any], required: Mapping[str, set[str]], text: str | None = None) -> bool:
    """Whether a (possibly healed) component is complete enough to be used.

    ``text``: the JSON text ``comp`` was parsed from. An empty object is written ``{`` whitespace ``}``,
    so a text without that pattern cannot hold one and the walk over the component is skipped.
    """
    body = comp.get("component")
    if text is not None and _EMPTY_OBJECT.search(text) is None:
        pass
    elif isinstance(body, str):
        if has_empty_dict(comp):
            return False
    elif has_empty_dict(body):
        return False
    if isinstance(body, dict) and body:
        kind = next(iter(body))
        if kind:
            props = body.get(kind, {})
            if isinstance(props, dict):
                try:
                    needed = required.get(kind, ())
                except TypeError:
                    needed = ()
                for name in needed:
                    if name not in props:
                        return False
    return True


class PlaceholderIds(dict[str, str]):
    """String child id -> ``"loading_" + id``, kept across calls.

    A children list is rewritten again at every chunk while it streams; reusing the placeholder strings
    (their hashes cached) instead of building thousands of new ones makes the rewrite C-level look-ups.
    """

    def __missing__(self, child: str) -> str:
        pid = self[child] = "loading_" + child
        return pid


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    return value


def _is_seen(child: Any, seen: Container[Any]) -> bool:
    try:
        return child in seen
    except TypeError:  # an unhashable "id" can never be a seen component
        return False


class Processed:
    """A component as shown: the rewritten copy and what it depended on.

    To patch the shown form when a missing child arrives (copy on write, instead of a rebuild), it keeps
    where each placeholder went: ``fields`` (child -> [(path, key)]) for single references, and
    ``lists`` ([(path, original list)]) for child lists, indexed lazily by :meth:`where` on first use.
    """

    __slots__ = ("comp", "placeholders", "missing", "buffer_dependent", "shared", "_fields", "_lists", "_where")

    def __init__(
        self,
        comp: dict[str, Any],
        placeholders: list[str],
        missing: set[Any],
        buffer_dependent: bool,
        shared: set[str],
        fields: dict[Any, list[tuple[tuple[Any, ...], Any]]],
        lists: list[tuple[tuple[Any, ...], list[Any]]],
        where: dict[Any, list[tuple[tuple[Any, ...], Any]]] | None = None,
    ) -> None:
        self.comp = comp
        self.placeholders = placeholders
        self.missing = missing
        self.buffer_dependent = buffer_dependent
        self.shared = shared  # placeholder ids that stand for more than one missing child
        self._fields = fields
        self._lists = lists
        self._where = where

    def long_list(self, size: int) -> tuple[Any, ...] | None:
        """The path to the one child list this form was rewritten from, when it holds ``size`` ids or more
        (where a dump can splice the list in instead of encoding it id by id)."""
        lists = self._lists
        if len(lists) == 1 and len(lists[0][1]) >= size:
            return lists[0][0]
        return None

    def where(self) -> dict[Any, list[tuple[tuple[Any, ...], Any]]]:
        """Missing child -> the (path, key or index) slots holding its placeholder."""
        if self._where is None:
            found: dict[Any, list[tuple[tuple[Any, ...], Any]]] = {}
            for child, slots in self._fields.items():
                found.setdefault(child, []).extend(slots)
            missing = self.missing
            for path, items in self._lists:
                for i, child in enumerate(items):
                    try:
                        if child in missing:
                            found.setdefault(child, []).append((path, i))
                    except TypeError:
                        continue
            self._where = found
        return self._where


def process_component(
    comp: Mapping[str, Any],
    seen: Container[Any],
    v09: bool,
    children_open: Callable[[str], bool],
    copy: dict[str, Any] | None = None,
    pids: PlaceholderIds | None = None,
) -> Processed:
    """Rewrite a copy of ``comp`` for display (``copy``: a fresh deep copy to use instead; ``pids``: a
    placeholder-id cache shared between calls).

    ``children_open(field)`` tells whether the JSON still streaming has an open ``"<field>": [`` list:
    an empty children list then gets a ``loading_children_<id>`` placeholder instead of staying empty.
    """
    out = copy if copy is not None else _copy(comp)
    loading = (pids if pids is not None else PlaceholderIds()).__getitem__
    comp_id = out.get("id", "unknown")
    placeholders: dict[str, None] = {}
    missing: set[Any] = set()
    fields: dict[Any, list[tuple[tuple[Any, ...], Any]]] = {}
    lists: list[tuple[tuple[Any, ...], list[Any]]] = []
    owner: dict[str, Any] = {}
    shared: set[str] = set()
    string_pids: set[str] = set()  # string children whose placeholders came from the fast path
    flat: set[int] = set()  # ids of rewritten lists holding only strings (nothing inside to visit)
    state = [False]  # depends on the buffer

    def note(child: Any, pid: str) -> None:
        placeholders[pid] = None
        try:
            missing.add(child)
        except TypeError:
            shared.add(pid)
            return
        if owner.setdefault(pid, child) != child:
            shared.add(pid)

    def shown_list(value: list[Any], path: tuple[Any, ...]) -> list[Any]:
        # Children lists grow to thousands of ids: the common cases run as C-level map()s, not loops.
        try:
            flags = list(map(seen.__contains__, value))
        except TypeError:
            flags = [_is_seen(c, seen) for c in value]
        strings = all_str(value)
        if all(flags):
            kept = list(value)
            if strings:
                flat.add(id(kept))
            return kept
        lists.append((path, value))
        if strings:
            # Fast path (child ids are strings): "loading_" + id is one-to-one, so only ids coming from
            # non-string children elsewhere can collide; those are checked at the end.
            if any(flags):
                absent = list(compress(value, map(not_, flags)))
                out = [c if f else loading(c) for c, f in zip(value, flags)]
                placeholders.update(dict.fromkeys(map(loading, absent)))
            else:
                absent = value
                out = list(map(loading, value))
                placeholders.update(dict.fromkeys(out))
            missing.update(absent)
            string_pids.update(absent)
            flat.add(id(out))
            return out
        out = []
        for c, is_seen in zip(value, flags):
            if is_seen:
                out.append(c)
            else:
                pid = "loading_" + c if c.__class__ is str else f"loading_{c}"
                note(c, pid)
                out.append(pid)
        return out

    def visit(obj: Any, path: tuple[Any, ...]) -> None:
        if isinstance(obj, dict):
            if not v09 and "path" in obj:
                p = obj["path"]
                if isinstance(p, str) and p.startswith("/"):
                    if "componentId" not in obj:
                        obj.clear()
                    obj["path"] = "/" + p.lstrip("/")
                elif p is not None:
                    obj["path"] = "/" + str(p)
            for field in CHILD_FIELDS:
                if field not in obj:
                    continue
                value = obj[field]
                if isinstance(value, list):
                    kept = shown_list(value, path + (field,))
                    if not kept and field in _LIST_FIELDS:
                        state[0] = True
                        if children_open(field):
                            pid = f"loading_children_{comp_id}"
                            kept.append(pid)
                            placeholders[pid] = None
                    obj[field] = kept
                elif isinstance(value, str) and not _is_seen(value, seen):
                    pid = "loading_" + value
                    note(value, pid)
                    fields.setdefault(value, []).append((path, field))
                    obj[field] = pid
            for key, value in list(obj.items()):
                if isinstance(value, (dict, list)) and id(value) not in flat:
                    visit(value, path + (key,))
        else:
            for i, item in enumerate(obj):
                if isinstance(item, (dict, list)):
                    visit(item, path + (i,))

    body = out.get("component")
    if isinstance(body, dict):
        visit(body, ("component",))
    else:
        visit(out, ())
    if string_pids:
        for pid, child in owner.items():
            if child.__class__ is not str and pid[8:] in string_pids:
                shared.add(pid)
    if state[0]:
        shared.update(p for p in placeholders if p.startswith("loading_children_"))
    return Processed(out, list(placeholders), missing, state[0], shared, fields, lists)


def patch_component(shown: Processed, child: Any) -> Processed | None:
    """``shown`` after ``child`` has arrived (its placeholders swapped back), or None to rebuild it.

    Copy on write: only the containers on the way to a patched slot are copied, so earlier results that
    share the rest stay unchanged.
    """
    if shown.buffer_dependent:
        return None
    where = shown.where()
    places = where.get(child)
    if not places:
        return None
    pid = f"loading_{child}"
    if pid in shown.shared:
        return None
    comp: Any = dict(shown.comp)
    for path, key in places:
        node = comp
        for step in path:
            inner = node[step]
            inner = dict(inner) if isinstance(inner, dict) else list(inner)
            node[step] = inner
            node = inner
        if node[key] != pid:
            return None
        node[key] = child
    placeholders = list(shown.placeholders)
    placeholders.remove(pid)
    # Only the newest version is ever patched again, so the bookkeeping moves on instead of being copied.
    del where[child]
    missing = shown.missing
    missing.discard(child)
    shown._where = None
    shown.missing = set()
    return Processed(comp, placeholders, missing, False, shown.shared, {}, [], where)


#: Item texts that could change what ``raw_allows_growth`` counts, were they added to a list.
GROWTH_NAMES = frozenset(CHILD_FIELDS) | {"path"}


def raw_allows_growth(raw: str, path: tuple[Any, ...], v09: bool) -> bool:
    """The text conditions of ``grow_component``: no escape, for v0.8 no data path, and each child field
    name only as often as ``path`` holds it (so the list at ``path`` is the only child field).

    Adding plain string items (no escape) that are none of ``GROWTH_NAMES`` to a list keeps the verdict.
    """
    if "\\u" in raw or (not v09 and '"path"' in raw):
        return False
    for name in CHILD_FIELDS:
        if raw.count(f'"{name}"') != path.count(name):
            return False
    return True


def grow_component(
    shown: Processed,
    src: Any,
    comp: Any,
    raw: str,
    seen: Container[Any],
    v09: bool,
    pids: PlaceholderIds,
    growth: Any = UNKNOWN_GROWTH,
    raw_checked: bool = False,
) -> tuple[Processed, list[Any]] | None:
    """``process_component(comp)`` derived from ``shown`` (= ``process_component(src)``, still current:
    no child of it arrived since), with the children that became missing; None when that is not safe.

    Safe when ``comp`` is ``src`` with string ids appended to one long children list and the text holds
    no other child field (so that list is the only source of placeholders, in order), no escape, and for
    v0.8 no data path (those are rewritten elsewhere in the component). ``growth``:
    ``appended_strings(src, comp)`` when the caller already has it (it is O(list length)).
    ``raw_checked``: ``raw_allows_growth(raw, path, v09)`` is known to hold for the growth's path.
    """
    if shown.buffer_dependent or shown.shared:
        return None
    if growth is UNKNOWN_GROWTH:
        growth = appended_strings(src, comp)
    if growth is None:
        return None
    path, keep = growth
    if keep < GROWTH_MIN or path[-1] not in _LIST_FIELDS:
        return None
    if not raw_checked and not raw_allows_growth(raw, path, v09):
        return None
    before, written = list_at(shown.comp, path), list_at(src, path)
    if type(before) is not list or len(before) != len(written):
        return None
    value = list_at(comp, path)
    tail = value[keep:]
    missing = shown.missing
    placeholders = shown.placeholders
    gone = None  # the replaced last id (a cut one), when its placeholder goes away with it
    if keep < len(written):
        last = written[-1]
        if last in missing and last not in value[:keep]:
            # Its placeholder came first at the old end, so it is the last one: drop it (the tail adds
            # it back in order if the id is still there).
            if not placeholders or placeholders[-1] != pids[last]:
                return None
            placeholders = placeholders[:-1]
            gone = last
    fresh = [c for c in dict.fromkeys(tail) if c not in seen and (c not in missing or c == gone)]
    out = with_list(shown.comp, path, before[:keep] + [c if c in seen else pids[c] for c in tail])
    # The old state is only ever replaced by this one, so its missing set moves on instead of being copied.
    if gone is not None:
        missing.discard(gone)
    missing.update(fresh)
    shown.missing = set()
    shown._where = None
    placeholders = placeholders + [pids[c] for c in fresh]
    return Processed(out, placeholders, missing, False, set(), {}, [(path, value)] if missing else []), fresh
