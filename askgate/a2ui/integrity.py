"""Integrity rules of A2UI component graphs: ids, references, cycles, orphans, depth limits, path syntax.

JSON Schema cannot express these (they relate components to each other), so they run after schema
validation. The rules, their order and their messages are those of protocols.md §5.8 "Validator"
(the upstream reference's observable behaviour, which the conformance suite pins); the first broken rule
raises. Which properties hold component references is read from the catalog once
(:func:`component_ref_fields`), plus the fixed heuristic names the reference also honours.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping

from askgate.a2ui.errors import IntegrityError, RecursionError

__all__ = [
    "MAX_GLOBAL_DEPTH",
    "MAX_FUNC_CALL_DEPTH",
    "RefFields",
    "RefIndex",
    "component_ref_fields",
    "component_references",
    "find_root_id",
    "check_components",
    "check_limits_and_paths",
    "limits_ok",
    "is_valid_path",
]

MAX_GLOBAL_DEPTH = 50
MAX_FUNC_CALL_DEPTH = 5

# Property names treated as references whatever the catalog says (the reference's heuristics).
_HEURISTIC_SINGLE = frozenset({"child", "contentChild", "entryPointChild", "detail", "summary", "root"})
_HEURISTIC_LIST = frozenset({"children", "explicitList", "template"})
_NAMED_SINGLE = ("child", "contentChild", "entryPointChild")
_SCHEMA_COMBINATORS = ("oneOf", "anyOf", "allOf")

# A data path is an absolute or relative JSON Pointer: the only rule left once both forms are allowed is
# that "~" must be followed by "0" or "1" (RFC 6901 escapes).
_BAD_TILDE = re.compile(r"~(?![01])")

RefFields = dict[str, tuple[frozenset[str], frozenset[str]]]


def is_valid_path(path: str) -> bool:
    """True for an absolute (``/a/b``) or relative (``a/b``) JSON Pointer with only ``~0``/``~1`` escapes."""
    return "~" not in path or _BAD_TILDE.search(path) is None


# --------------------------------------------------------------------------------------------------
# Which catalog properties reference components.
# --------------------------------------------------------------------------------------------------


def _sub_schemas(schema: Mapping[str, Any]) -> Iterator[Any]:
    for key in _SCHEMA_COMBINATORS:
        subs = schema.get(key)
        if isinstance(subs, list):
            yield from subs


def _is_component_id(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    ref = schema.get("$ref", "")
    if isinstance(ref, str) and (ref.endswith("ComponentId") or ref.endswith("child") or "/child" in ref):
        return True
    if schema.get("type") == "string" and schema.get("title") == "ComponentId":
        return True
    return any(_is_component_id(sub) for sub in _sub_schemas(schema))


def _is_child_list(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    ref = schema.get("$ref", "")
    if isinstance(ref, str) and (ref.endswith("ChildList") or ref.endswith("children") or "/children" in ref):
        return True
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        if isinstance(props, dict) and ("explicitList" in props or "template" in props or "componentId" in props):
            return True
    if kind == "array" and _is_component_id(schema.get("items", {})):
        return True
    return any(_is_child_list(sub) for sub in _sub_schemas(schema))


def catalog_components(version: str, s2c: Any, catalog: Any) -> Mapping[str, Any]:
    """The component-name -> schema map the reference reads reference fields from."""
    found: Any = {}
    if version == "0.8":
        # v0.8 may carry the components inside the s2c schema (server_to_client_with_standard_catalog).
        try:
            su = (s2c or {}).get("properties", {}).get("surfaceUpdate")
            if isinstance(su, dict):
                comps = su.get("properties", {}).get("components")
                if isinstance(comps, dict):
                    items = comps.get("items", {})
                    if "properties" in items:
                        found = items["properties"].get("component", {}).get("properties", {})
        except (AttributeError, TypeError):
            found = {}
        if not found and isinstance(catalog, dict):
            found = catalog.get("components", {})
    else:
        found = catalog.get("components", {}) if isinstance(catalog, dict) else {}
    return found if isinstance(found, dict) else {}


def component_ref_fields(version: str, s2c: Any, catalog: Any) -> RefFields:
    """Per component type: (single-reference properties, list-reference properties)."""
    out: RefFields = {}
    for name, schema in catalog_components(version, s2c, catalog).items():
        single: set[str] = set()
        lists: set[str] = set()
        pending = [schema]
        while pending:
            node = pending.pop(0)
            if not isinstance(node, dict):
                continue
            props = node.get("properties", {})
            if isinstance(props, dict):
                for prop, prop_schema in props.items():
                    if _is_component_id(prop_schema) or prop in _NAMED_SINGLE:
                        single.add(prop)
                    elif _is_child_list(prop_schema) or prop == "children":
                        lists.add(prop)
            pending.extend(_sub_schemas(node))
        if single or lists:
            out[name] = (frozenset(single), frozenset(lists))
    return out


# --------------------------------------------------------------------------------------------------
# References inside one component.
# --------------------------------------------------------------------------------------------------

_Spec = tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]
_DEFAULT_SPEC: _Spec = (_HEURISTIC_SINGLE, _HEURISTIC_LIST, frozenset(), _HEURISTIC_SINGLE | _HEURISTIC_LIST)


class RefIndex:
    """Per component type, the property names that hold references (catalog-derived + heuristics).

    Built once per catalog; :meth:`refs` is the hot path of every integrity check, so a component whose
    keys hold no reference name and whose values hold no list is skipped with two C-level tests.
    """

    __slots__ = ("_specs",)

    def __init__(self, fields: RefFields) -> None:
        self._specs: dict[Any, _Spec] = {}
        for name, (single, lists) in fields.items():
            s, la = single | _HEURISTIC_SINGLE, lists | _HEURISTIC_LIST
            self._specs[name] = (s, la, lists, s | la)

    def refs(self, component: Any) -> list[tuple[Any, str]]:
        """Every (referenced id, field name) in one component, v0.8 wrapper or v0.9 flat form."""
        out: list[tuple[Any, str]] = []
        if not isinstance(component, dict):
            return out
        kind = component.get("component")
        if isinstance(kind, str):
            if kind:
                spec = self._specs.get(kind, _DEFAULT_SPEC)
                # JSON gives exact lists; "list in map(type, ...)" is the C-speed "any value is a list".
                if not component.keys().isdisjoint(spec[3]) or list in map(type, component.values()):
                    self._collect(out, spec, component)
        elif isinstance(kind, dict):
            for comp_type, props in kind.items():
                if comp_type and isinstance(props, dict):
                    spec = self._specs.get(comp_type, _DEFAULT_SPEC)
                    if not props.keys().isdisjoint(spec[3]) or list in map(type, props.values()):
                        self._collect(out, spec, props)
        return out

    @staticmethod
    def _collect(out: list[tuple[Any, str]], spec: _Spec, props: dict[str, Any]) -> None:
        single, lists_all, lists, _ = spec
        for key, value in props.items():
            if key in single:
                if isinstance(value, str):
                    out.append((value, key))
                elif isinstance(value, dict) and "componentId" in value:
                    out.append((value["componentId"], f"{key}.componentId"))
            elif key in lists_all:
                if isinstance(value, list):
                    for item in value:
                        if isinstance(item, str):
                            out.append((item, key))
                elif isinstance(value, dict):
                    if "explicitList" in value:
                        items = value["explicitList"]
                        if isinstance(items, (list, str, dict)):  # the reference iterates whatever is there
                            name = f"{key}.explicitList"
                            for item in items:
                                if isinstance(item, str):
                                    out.append((item, name))
                    elif "template" in value:
                        template = value["template"]
                        if isinstance(template, dict) and "componentId" in template:
                            out.append((template["componentId"], f"{key}.template.componentId"))
                    elif "componentId" in value:
                        out.append((value["componentId"], f"{key}.componentId"))
            if isinstance(value, list) and key not in lists:
                # Lists of {title, child} entries (Tabs) reference their children too.
                for idx, item in enumerate(value):
                    if isinstance(item, dict):
                        child = item.get("child")
                        if child and isinstance(child, str):
                            out.append((child, f"{key}[{idx}].child"))


def component_references(component: Any, ref_fields: "RefFields | RefIndex") -> list[tuple[Any, str]]:
    """Every (referenced id, field name) in one component, v0.8 wrapper or v0.9 flat form."""
    index = ref_fields if isinstance(ref_fields, RefIndex) else RefIndex(ref_fields)
    return index.refs(component)


# --------------------------------------------------------------------------------------------------
# The graph checks.
# --------------------------------------------------------------------------------------------------


class _Unhashable:
    """A hashable stand-in for an id that is not (ids are strings when the schema did its job)."""

    __slots__ = ("value", "_text")

    def __init__(self, value: Any) -> None:
        self.value = value
        self._text = repr(value)

    def __hash__(self) -> int:
        return hash(self._text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unhashable) and other._text == self._text

    def __str__(self) -> str:
        return str(self.value)


def _key(value: Any) -> Any:
    if value.__class__ is str:
        return value
    try:
        hash(value)
    except TypeError:
        return _Unhashable(value)
    return value


def find_root_id(messages: list[Any], surface_id: Any) -> str | None:
    """The root id announced for ``surface_id`` by a start message in the same payload, else ``None``."""
    for message in messages:
        if not isinstance(message, dict):
            continue
        if "beginRendering" in message:
            start = message["beginRendering"]
            if isinstance(start, dict):
                if surface_id and start.get("surfaceId") != surface_id:
                    continue
                return start.get("root", "root")
        if "createSurface" in message:
            start = message["createSurface"]
            if isinstance(start, dict):
                if surface_id and start.get("surfaceId") != surface_id:
                    continue
                return "root"
    return None


def check_components(
    root_id: Any, components: list[Any], ref_fields: "RefFields | RefIndex", *, strict: bool = True
) -> set[Any]:
    """Ids, root, references, self references, cycles, logical depth and orphans; return reachable ids.

    Order (first failure raises): duplicate ids, missing root, dangling references, self references,
    then a depth-first walk for cycles and depth (from the root, else from every id in sorted order),
    then orphans. With no root (an incremental update) a missing root, dangling references and orphans
    are allowed; ``strict=False`` relaxes the same three rules even with a root (lenient partial checks).
    """
    index = ref_fields if isinstance(ref_fields, RefIndex) else RefIndex(ref_fields)
    specs = index._specs  # noqa: SLF001 - the hot loop below inlines RefIndex.refs for plain JSON dicts
    collect = RefIndex._collect  # noqa: SLF001
    # 1. Duplicate ids; each component's references are gathered in the same pass (that cannot fail).
    ids: set[Any] = set()
    nodes: list[tuple[Any, Any, Any]] = []  # (key, id as written, refs)
    append = nodes.append
    for comp in components:
        if comp.__class__ is not dict and not isinstance(comp, dict):
            continue
        refs: Any = ()
        kind = comp.get("component")
        if kind.__class__ is dict:
            for comp_type, props in kind.items():
                if comp_type and props.__class__ is dict:
                    spec = specs.get(comp_type, _DEFAULT_SPEC)
                    # JSON gives exact lists; "list in map(type, ...)" is the C-speed "any value is a list".
                    if not props.keys().isdisjoint(spec[3]) or list in map(type, props.values()):
                        if not refs:
                            refs = []
                        collect(refs, spec, props)
                elif comp_type and isinstance(props, dict):
                    refs = index.refs(comp)
                    break
        elif kind.__class__ is str:
            if kind:
                spec = specs.get(kind, _DEFAULT_SPEC)
                if not comp.keys().isdisjoint(spec[3]) or list in map(type, comp.values()):
                    refs = []
                    collect(refs, spec, comp)
        elif kind is not None:
            refs = index.refs(comp)
        cid = comp.get("id")
        if cid is None:
            append((None, None, refs))
            continue
        k = cid if cid.__class__ is str else _key(cid)
        if k in ids:
            raise IntegrityError(f"Duplicate component ID: {cid}")
        ids.add(k)
        append((k, cid, refs))

    check_root = strict and root_id is not None
    # 2. Missing root.
    if check_root and _key(root_id) not in ids:
        raise IntegrityError(f"Missing root component: No component has id='{root_id}'")

    # 3. Dangling references (raised at once) and 4. self references (the first one is raised after every
    # reference was checked for 3), while building the adjacency list.
    adjacency: dict[Any, Any] = {}
    self_ref: tuple[Any, str] | None = None
    for k, cid, refs in nodes:
        if not refs:
            if k is not None:
                adjacency[k] = ()
            continue
        edges = []
        for ref, field in refs:
            rk = ref if ref.__class__ is str else _key(ref)
            if check_root and rk not in ids:
                raise IntegrityError(
                    f"Component '{cid}' references non-existent component '{ref}' in field '{field}'"
                )
            if rk == k and self_ref is None and k is not None:
                self_ref = (cid, field)
            edges.append(rk)
        if k is not None:
            adjacency[k] = edges
    if self_ref is not None:
        raise IntegrityError(
            f"Self-reference detected: Component '{self_ref[0]}' references itself in field '{self_ref[1]}'"
        )

    # 5. Depth-first walk: cycles and logical depth (recursion is bounded: depth > 50 raises first).
    visited: set[Any] = set()
    on_stack: set[Any] = set()
    get = adjacency.get

    def walk(node: Any, depth: int) -> None:
        visited.add(node)
        on_stack.add(node)
        for neighbor in get(node, ()):
            if neighbor not in visited:
                if depth >= MAX_GLOBAL_DEPTH:
                    raise RecursionError(f"Global recursion limit exceeded: logical depth > {MAX_GLOBAL_DEPTH}")
                walk(neighbor, depth + 1)
            elif neighbor in on_stack:
                raise IntegrityError(f"Circular reference detected involving component '{neighbor}'")
        on_stack.discard(node)

    if root_id is not None:
        rk = _key(root_id)
        if rk in adjacency:
            walk(rk, 0)
        # 6. Orphans (with a root every reference exists, so visited is a subset of the ids).
        if strict and len(visited) < len(adjacency):
            first = min((k for k in adjacency if k not in visited), key=_sort_key)
            raise IntegrityError(f"Component '{first}' is not reachable from '{root_id}'")
    else:
        for node in sorted(adjacency, key=_sort_key):
            if node not in visited:
                walk(node, 0)
    return visited


def _sort_key(key: Any) -> tuple[int, str]:
    return (0, key) if isinstance(key, str) else (1, repr(key))


def _limits_schema() -> dict[str, Any]:
    """A JSON Schema accepting exactly the message lists :func:`check_limits_and_paths` accepts.

    State (g, f) = JSON depth and function-call depth of a node; a node at depth 50 may hold nothing,
    ``args`` of an object that also has ``call`` moves to f + 1, and at f = 5 such an object is refused;
    any ``path`` string must be a JSON Pointer with ``~0``/``~1`` escapes only.
    """
    defs: dict[str, Any] = {}
    for g in range(MAX_GLOBAL_DEPTH + 1):
        for f in range(MAX_FUNC_CALL_DEPTH + 1):
            if g == MAX_GLOBAL_DEPTH:
                defs[f"L{g}_{f}"] = {"maxItems": 0, "maxProperties": 0}
                continue
            nxt = {"$ref": f"#/$defs/L{g + 1}_{f}"}
            call = ({"properties": {"args": {"$ref": f"#/$defs/L{g + 1}_{f + 1}"}}} if f < MAX_FUNC_CALL_DEPTH
                    else {"not": {"required": ["args"]}})
            defs[f"L{g}_{f}"] = {
                "items": nxt,
                "additionalProperties": nxt,
                "properties": {"path": {"pattern": "^(?:[^~]|~[01])*$", **nxt}, "args": nxt},
                "dependentSchemas": {"call": call},
            }
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array",
            "items": {"$ref": "#/$defs/L0_0"}, "$defs": defs}


_LIMITS: list[Any] = []


def limits_ok(messages: list[Any]) -> bool:
    """Fast verdict for :func:`check_limits_and_paths` over a whole message list (compiled Rust).

    ``True`` means no message breaks a limit or has a bad path, so the per-message walk can be skipped;
    ``False`` means the walk must run (it reports the exact first violation) - also when the fast check is
    unavailable or cannot represent a value.
    """
    if not _LIMITS:
        try:
            import jsonschema_rs

            _LIMITS.append(jsonschema_rs.validator_for(_limits_schema(), validate_formats=False))
        except Exception:  # noqa: BLE001 - no fast path; the walk decides
            _LIMITS.append(None)
    fast = _LIMITS[0]
    if fast is None:
        return False
    try:
        return bool(fast.is_valid(messages))
    except Exception:  # noqa: BLE001 - e.g. lone surrogates; the walk decides
        return False


def check_limits_and_paths(message: Any) -> None:
    """JSON nesting (<= 50), function-call nesting (<= 5) and data-path syntax, in document order.

    A pre-order walk in document order, so the first violation reported is the first one a reader meets.
    Scalars are only looked at when they sit deeper than the limit (the only rule they can break).
    """
    _walk(message, 0, 0)


def _walk(item: Any, depth: int, fdepth: int) -> None:
    if depth > MAX_GLOBAL_DEPTH:
        raise RecursionError(f"Global recursion limit exceeded: Depth > {MAX_GLOBAL_DEPTH}")
    d = depth + 1
    if isinstance(item, dict):
        path = item.get("path")
        if path is not None and isinstance(path, str) and "~" in path and _BAD_TILDE.search(path):
            raise IntegrityError(f"Invalid path syntax: '{path}'")
        if "call" in item and "args" in item:
            if fdepth >= MAX_FUNC_CALL_DEPTH:
                raise RecursionError(f"Recursion limit exceeded: functionCall depth > {MAX_FUNC_CALL_DEPTH}")
            for key, value in item.items():
                _walk(value, d, fdepth + 1 if key == "args" else fdepth)
            return
        values: Any = item.values()
    elif isinstance(item, list):
        values = item
    else:
        return
    if d > MAX_GLOBAL_DEPTH:
        for value in values:
            _walk(value, d, fdepth)
        return
    for value in values:
        if isinstance(value, (dict, list)):
            _walk(value, d, fdepth)
