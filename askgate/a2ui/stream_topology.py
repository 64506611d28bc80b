"""Which streamed components are reachable from the root, kept up to date incrementally.

The streaming parser must, after every chunk, know the components reachable from the surface root and
fail on self references, cycles and a logical depth over 50, exactly as a full depth-first walk over
all seen components would (protocols.md §5.8, the reference's ``analyze_topology``). Re-walking every
component on every chunk is what makes the reference quadratic, so this module keeps the answer between
chunks:

* while the reachable components form a tree (each one referenced once, from a reachable component),
  adding a component or appending references only explores the new subtree;
* anything else (a reference removed from a reachable component, a shared child, a possible cycle or a
  depth near the limit, a new root) marks the state dirty, and the next query runs the exact full walk
  (whose errors and messages are the reference's), then resumes incremental work if the result is a tree.
"""

from __future__ import annotations

from bisect import insort_left
from collections import Counter
from typing import Any, Mapping

from askgate.a2ui.errors import IntegrityError, RecursionError
from askgate.a2ui.integrity import RefFields, RefIndex

__all__ = ["Topology", "MAX_DEPTH"]

MAX_DEPTH = 50


class Topology:
    """Reference graph of the seen components plus the incrementally maintained reachable set."""

    def __init__(self, ref_fields: RefFields) -> None:
        self._index = RefIndex(ref_fields)
        self.refs: dict[Any, list[Any]] = {}  # seen id -> referenced ids, in reference order
        self._self_ref: dict[Any, str] = {}  # seen id -> first field referencing itself
        # Incremental state, valid for ``_root`` while ``_tree`` is True.
        self._root: Any = None
        self._tree = False
        self._seen: Mapping[Any, Any] = {}
        self.reach: set[Any] = set()
        self.sorted_reach: list[Any] = []
        self._depth: dict[Any, int] = {}
        self._inref: Counter[Any] = Counter()
        self._pdepth: dict[Any, int] = {}
        self.version = 0  # bumps whenever ``reach`` is rebuilt
        self.added: list[Any] = []  # ids added to ``sorted_reach`` since the last rebuild
        # Every id added to ``reach`` in place, in order (a rebuild makes a new set and a new list).
        self.grown: list[Any] = []

    # ---- updates --------------------------------------------------------------------------------

    def update(
        self, cid: Any, comp: Mapping[str, Any], seen: Mapping[Any, Any], only_list: tuple[str, list[Any]] | None = None
    ) -> None:
        """``seen[cid]`` now holds ``comp`` (new or changed); refresh its references.

        ``only_list``: (field, ids) when the caller knows every reference of ``comp`` is one of these
        string ids, all from that field (see :meth:`sole_list_field`): no walk over the component.
        """
        self._seen = seen
        old = self.refs.get(cid)
        self._self_ref.pop(cid, None)
        if only_list is not None:
            field, new = only_list[0], list(only_list[1])
            if cid in new:
                self._self_ref[cid] = field
        else:
            pairs = self._index.refs(comp)
            new = [ref for ref, _ in pairs]
            if cid in new:  # ids are JSON scalars: "in" finds the same first match as ==
                self._self_ref[cid] = pairs[new.index(cid)][1]
        self.refs[cid] = new
        if not self._tree or old == new and cid in self.reach:
            return
        if cid in self.reach:
            self._changed_refs(cid, old or [], new)
        elif cid == self._root:
            self._explore(cid, 0)
        elif self._inref.get(cid, 0) > 0:
            if self._inref[cid] > 1:
                self._tree = False
            else:
                self._explore(cid, self._pdepth[cid])

    def sole_list_field(self, probe: Mapping[str, Any], marker: str) -> str | None:
        """The field name when ``marker`` is the only reference found in ``probe`` (a component whose
        list of string ids was replaced by ``[marker]``): then that list holds all its references."""
        pairs = self._index.refs(probe)
        if len(pairs) == 1 and pairs[0][0] is marker:
            return pairs[0][1]
        return None

    def _changed_refs(self, cid: Any, old: list[Any], new: list[Any]) -> None:
        keep = len(old)
        came: dict[Any, int]
        if new[:keep] == old:  # references appended (the common streaming case)
            gone: dict[Any, int] = {}
            came = _counts(new[keep:])
        elif keep and len(new) >= keep and new[: keep - 1] == old[:-1]:  # last one changed (a cut id), maybe more
            last = old[-1]
            gone = {last: 1}
            came = _counts(new[keep - 1 :])
            if last in came:  # the old last reference is still there: neither gone nor new
                gone = {}
                came[last] -= 1
                if not came[last]:
                    del came[last]
        else:
            before, after = Counter(old), Counter(new)
            gone, came = dict(before - after), dict(after - before)
        self._apply_diff(cid, gone, came)

    def _apply_diff(self, cid: Any, gone: dict[Any, int], came: dict[Any, int]) -> None:
        for ref, count in gone.items():
            if ref in self.reach:
                self._tree = False
                return
            self._inref[ref] -= count
            if self._inref[ref] <= 0:
                del self._inref[ref]
                self._pdepth.pop(ref, None)
        depth = self._depth[cid] + 1
        for ref, count in came.items():
            if depth > MAX_DEPTH or ref in self.reach or ref == self._root:
                self._tree = False
                return
            self._inref[ref] += count
            self._pdepth[ref] = depth
            if ref in self._seen:
                if self._inref[ref] > 1:
                    self._tree = False
                    return
                self._explore(ref, depth)
                if not self._tree:
                    return

    def _explore(self, start: Any, depth: int) -> None:
        """Add ``start`` and its subtree; give up (dirty) on anything that is not a plain tree."""
        pending = [(start, depth)]
        added: list[Any] = []
        while pending:
            node, d = pending.pop()
            if d > MAX_DEPTH or node in self.reach:
                self._tree = False
                return
            self.reach.add(node)
            self.grown.append(node)
            added.append(node)
            self._depth[node] = d
            for ref in self.refs.get(node, ()):
                if d + 1 > MAX_DEPTH or ref in self.reach or ref == self._root:
                    self._tree = False
                    return
                self._inref[ref] += 1
                self._pdepth[ref] = d + 1
                if ref in self._seen:
                    if self._inref[ref] > 1:
                        self._tree = False
                        return
                    pending.append((ref, d + 1))
        for node in added:
            insort_left(self.sorted_reach, node)  # the C binary search: the same ``<`` comparisons
            self.added.append(node)

    # ---- queries --------------------------------------------------------------------------------

    @property
    def is_tree(self) -> bool:
        """True while the reachable components form a plain tree (each referenced exactly once)."""
        return self._tree

    def analyze(self, root: Any, seen: Mapping[Any, Any]) -> set[Any]:
        """The seen components reachable from ``root``; raise on self references, cycles, depth > 50."""
        self._seen = seen
        if self._self_ref:
            for cid in seen:
                field = self._self_ref.get(cid)
                if field is not None:
                    raise IntegrityError(
                        f"Self-reference detected: Component '{cid}' references itself in field '{field}'"
                    )
        if self._tree and root == self._root:
            return self.reach
        self._full(root, seen)
        return self.reach

    def _full(self, root: Any, seen: Mapping[Any, Any]) -> None:
        """The exact walk of the reference (from the root, in reference order), then rebuild the state."""
        visited: set[Any] = set()
        depth_of: dict[Any, int] = {}
        if root in seen:
            on_path: set[Any] = {root}
            visited.add(root)
            depth_of[root] = 0
            stack: list[tuple[Any, int, Any]] = [(root, 0, iter(self.refs.get(root, ())))]
            while stack:
                node, d, it = stack[-1]
                for ref in it:
                    if ref not in visited:
                        if d + 1 > MAX_DEPTH:
                            raise RecursionError(
                                f"Global recursion limit exceeded: logical depth > {MAX_DEPTH}"
                            )
                        visited.add(ref)
                        depth_of[ref] = d + 1
                        on_path.add(ref)
                        stack.append((ref, d + 1, iter(self.refs.get(ref, ()) if ref in seen else ())))
                        break
                    if ref in on_path:
                        raise IntegrityError(f"Circular reference detected involving component '{ref}'")
                else:
                    stack.pop()
                    on_path.discard(node)
        reach = {cid for cid in visited if cid in seen}
        inref: Counter[Any] = Counter()
        pdepth: dict[Any, int] = {}
        for cid in reach:
            for ref in self.refs.get(cid, ()):
                inref[ref] += 1
                pdepth[ref] = depth_of[cid] + 1
        tree = all(inref[cid] == 1 for cid in reach if cid != root) and inref.get(root, 0) == 0
        if tree:
            tree = all(d < MAX_DEPTH for cid, d in depth_of.items() if cid in reach and self.refs.get(cid))
        changed = reach != self.reach
        self._root = root
        self.reach = reach
        self.grown = []
        self._depth = {cid: depth_of[cid] for cid in reach}
        self._inref = inref
        self._pdepth = pdepth
        self._tree = tree
        if changed or len(self.sorted_reach) != len(reach):
            self.sorted_reach = sorted(reach)
            self.version += 1
            self.added = []


def _counts(items: list[Any]) -> dict[Any, int]:
    """How many times each item occurs, in first-occurrence order (``Counter`` without its set-up cost)."""
    out: dict[Any, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out

