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
    "component_ref_fields",
    "component_references",
    "find_root_id",
    "check_components",
    "check_limits_and_paths",
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


def _catalog_components(version: str, s2c: Any, catalog: Any) -> Mapping[str, Any]:
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
        if not found and catalog:
            found = catalog.get("components", {})
    else:
        found = catalog.get("components", {}) if isinstance(catalog, dict) else {}
    return found if isinstance(found, dict) else {}


def component_ref_fields(version: str, s2c: Any, catalog: Any) -> RefFields:
    """Per component type: (single-reference properties, list-reference properties)."""
    out: RefFields = {}
    for name, schema in _catalog_components(version, s2c, catalog).items():
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

_NO_REFS: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())


def _iter_items(value: Any) -> Any:
    # The reference iterates whatever sits under explicitList; strings and dicts iterate too.
    return value if isinstance(value, (list, str, dict)) else ()


def _refs_in_props(comp_type: Any, props: Any, ref_fields: RefFields) -> Iterator[tuple[Any, str]]:
    if not comp_type or not isinstance(props, dict):
        return
    try:
        single, lists = ref_fields.get(comp_type, _NO_REFS)
    except TypeError:  # unhashable type name
        single, lists = _NO_REFS
    for key, value in props.items():
        if key in single or key in _HEURISTIC_SINGLE:
            if isinstance(value, str):
                yield value, key
            elif isinstance(value, dict) and "componentId" in value:
                yield value["componentId"], f"{key}.componentId"
        elif key in lists or key in _HEURISTIC_LIST:
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, str):
                        yield item, key
            elif isinstance(value, dict):
                if "explicitList" in value:
                    for item in _iter_items(value["explicitList"]):
                        if isinstance(item, str):
                            yield item, f"{key}.explicitList"
                elif "template" in value:
                    template = value["template"]
                    if isinstance(template, dict) and "componentId" in template:
                        yield template["componentId"], f"{key}.template.componentId"
                elif "componentId" in value:
                    yield value["componentId"], f"{key}.componentId"
        if isinstance(value, list) and key not in lists:
            # Lists of {title, child} entries (Tabs) reference their children too.
            for idx, item in enumerate(value):
                if isinstance(item, dict):
                    child = item.get("child")
                    if child and isinstance(child, str):
                        yield child, f"{key}[{idx}].child"


def component_references(component: Any, ref_fields: RefFields) -> Iterator[tuple[Any, str]]:
    """Every (referenced id, field name) in one component, v0.8 wrapper or v0.9 flat form."""
    if not isinstance(component, dict):
        return
    kind = component.get("component")
    if isinstance(kind, str):
        yield from _refs_in_props(kind, component, ref_fields)
    elif isinstance(kind, dict):
        for comp_type, props in kind.items():
            if isinstance(props, dict):
                yield from _refs_in_props(comp_type, props, ref_fields)


# --------------------------------------------------------------------------------------------------
# The graph checks.
# --------------------------------------------------------------------------------------------------


def _key(value: Any) -> Any:
    """A hashable stand-in for an id (ids are strings when the schema did its job)."""
    try:
        hash(value)
    except TypeError:
        return ("unhashable", repr(value))
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
    root_id: Any, components: list[Any], ref_fields: RefFields, *, strict: bool = True
) -> set[Any]:
    """Ids, root, references, self references, cycles, logical depth and orphans; return reachable ids.

    With no root (an incremental update) a missing root, dangling references and orphans are allowed.
    ``strict=False`` relaxes the same three rules even with a root (lenient partial-update checks).
    """
    # 1. Duplicate ids.
    ids: set[Any] = set()
    for comp in components:
        cid = comp.get("id") if isinstance(comp, dict) else None
        if cid is None:
            continue
        k = _key(cid)
        if k in ids:
            raise IntegrityError(f"Duplicate component ID: {cid}")
        ids.add(k)

    check_root = strict and root_id is not None
    # 2. Missing root.
    if check_root and _key(root_id) not in ids:
        raise IntegrityError(f"Missing root component: No component has id='{root_id}'")

    # Per-component references, computed once for steps 3 and 4.
    refs: list[tuple[Any, list[tuple[Any, str]]]] = []
    for comp in components:
        if not isinstance(comp, dict):
            continue
        refs.append((comp.get("id"), list(component_references(comp, ref_fields))))

    # 3. Dangling references.
    if check_root:
        for cid, comp_refs in refs:
            for ref, field in comp_refs:
                if _key(ref) not in ids:
                    raise IntegrityError(
                        f"Component '{cid}' references non-existent component '{ref}' in field '{field}'"
                    )

    # 4. Self references, while building the adjacency list.
    adjacency: dict[Any, list[Any]] = {}
    for cid, comp_refs in refs:
        if cid is None:
            continue
        k = _key(cid)
        edges = adjacency.setdefault(k, [])
        for ref, field in comp_refs:
            rk = _key(ref)
            if rk == k:
                raise IntegrityError(
                    f"Self-reference detected: Component '{cid}' references itself in field '{field}'"
                )
            edges.append(rk)

    # 5. Depth-first walk: cycles and logical depth.
    visited: set[Any] = set()

    def walk(start: Any) -> None:
        if MAX_GLOBAL_DEPTH < 0:  # pragma: no cover - constant guard
            return
        on_stack: set[Any] = {start}
        visited.add(start)
        stack: list[tuple[Any, Iterator[Any]]] = [(start, iter(adjacency.get(start, ())))]
        while stack:
            node, it = stack[-1]
            for neighbor in it:
                if neighbor not in visited:
                    depth = len(stack)
                    if depth > MAX_GLOBAL_DEPTH:
                        raise RecursionError(
                            f"Global recursion limit exceeded: logical depth > {MAX_GLOBAL_DEPTH}"
                        )
                    visited.add(neighbor)
                    on_stack.add(neighbor)
                    stack.append((neighbor, iter(adjacency.get(neighbor, ()))))
                    break
                if neighbor in on_stack:
                    raise IntegrityError(f"Circular reference detected involving component '{_show(neighbor)}'")
            else:
                stack.pop()
                on_stack.discard(node)

    if root_id is not None:
        rk = _key(root_id)
        if rk in adjacency:
            walk(rk)
        if strict:
            orphans = [cid for cid in adjacency if cid not in visited]
            if orphans:
                first = sorted(orphans, key=_sort_key)[0]
                raise IntegrityError(f"Component '{_show(first)}' is not reachable from '{root_id}'")
    else:
        for node in sorted(adjacency, key=_sort_key):
            if node not in visited:
                walk(node)
    return visited


def _show(key: Any) -> Any:
    if isinstance(key, tuple) and len(key) == 2 and key[0] == "unhashable":
        return key[1]
    return key


def _sort_key(key: Any) -> tuple[int, str]:
    return (0, key) if isinstance(key, str) else (1, repr(key))


def check_limits_and_paths(message: Any) -> None:
    """JSON nesting (<= 50), function-call nesting (<= 5) and data-path syntax, in document order."""
    # Explicit stack, pre-order, children in document order: the first violation found is the one a
    # recursive walk would find first.
    stack: list[tuple[Any, int, int]] = [(message, 0, 0)]
    pop = stack.pop
    push = stack.append
    while stack:
        item, depth, fdepth = pop()
        if depth > MAX_GLOBAL_DEPTH:
            raise RecursionError(f"Global recursion limit exceeded: Depth > {MAX_GLOBAL_DEPTH}")
        if isinstance(item, dict):
            path = item.get("path")
            if isinstance(path, str) and "~" in path and _BAD_TILDE.search(path):
                raise IntegrityError(f"Invalid path syntax: '{path}'")
            if "call" in item and "args" in item:
                if fdepth >= MAX_FUNC_CALL_DEPTH:
                    raise RecursionError(
                        f"Recursion limit exceeded: functionCall depth > {MAX_FUNC_CALL_DEPTH}"
                    )
                children = [(v, depth + 1, fdepth + 1 if k == "args" else fdepth) for k, v in item.items()]
                children.reverse()
                stack.extend(children)
            else:
                d = depth + 1
                for v in reversed(list(item.values())):
                    if isinstance(v, (dict, list)) or d > MAX_GLOBAL_DEPTH:
                        push((v, d, fdepth))
        elif isinstance(item, list):
            d = depth + 1
            for v in reversed(item):
                if isinstance(v, (dict, list)) or d > MAX_GLOBAL_DEPTH:
                    push((v, d, fdepth))
