"""Catalog pruning: keep only the components and messages an agent may use, and what they reference.

Smaller schemas make smaller prompts. The rules are protocols.md §5.8 "Prune": components are filtered by
name (and the v0.9 ``anyComponent`` union with them); messages by name, keeping the definitions they reach;
common types are always cut down to the definitions the catalog and s2c schemas still reach.
"""

from __future__ import annotations

import copy
from collections import deque
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from askgate.a2ui.catalog import A2uiCatalog

__all__ = ["prune_catalog", "collect_refs", "reachable_defs", "COMMON_TYPES_REF"]

COMMON_TYPES_REF = "common_types.json#/$defs/"


def collect_refs(node: Any) -> set[str]:
    """Every string ``$ref`` value anywhere in ``node``."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key == "$ref" and isinstance(value, str):
                    found.add(value)
                else:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return found


def reachable_defs(defs: dict[str, Any], roots: Iterable[str], prefix: str = "#/$defs/") -> dict[str, Any]:
    """The entries of ``defs`` reachable from ``roots`` through ``$ref``s starting with ``prefix``
    (original order kept)."""
    seen: set[str] = set()
    queue = deque(roots)
    while queue:
        name = queue.popleft()
        if name in defs and name not in seen:
            seen.add(name)
            for ref in collect_refs(defs[name]):
                if ref.startswith(prefix):
                    queue.append(ref.split(prefix)[-1])
    return {k: v for k, v in defs.items() if k in seen}


def _prune_components(schema: dict[str, Any], allowed: list[str]) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    comps = out.get("components")
    if isinstance(comps, dict):
        out["components"] = {k: v for k, v in comps.items() if k in allowed}
    defs = out.get("$defs")
    if isinstance(defs, dict) and isinstance(defs.get("anyComponent"), dict):
        union = defs["anyComponent"]
        if isinstance(union.get("oneOf"), list):
            kept = []
            for item in union["oneOf"]:
                ref = item.get("$ref") if isinstance(item, dict) else None
                # Only local component refs can be matched by name; anything else is dropped.
                if isinstance(ref, str) and ref.startswith("#/components/") and ref.split("/")[-1] in allowed:
                    kept.append(item)
            union["oneOf"] = kept
    return out


def _prune_messages(version: str, s2c: dict[str, Any], allowed: list[str]) -> dict[str, Any]:
    out = copy.deepcopy(s2c)
    if version == "0.8":
        if isinstance(out.get("properties"), dict):
            out["properties"] = reachable_defs(out["properties"], allowed, "#/properties/")
        return out
    if isinstance(out.get("oneOf"), list):
        out["oneOf"] = [
            item for item in out["oneOf"]
            if isinstance(item, dict) and isinstance(item.get("$ref"), str)
            and item["$ref"].startswith("#/$defs/") and item["$ref"].split("/")[-1] in allowed
        ]
    if isinstance(out.get("$defs"), dict):
        out["$defs"] = reachable_defs(out["$defs"], allowed, "#/$defs/")
    return out


def _prune_common_types(catalog: "A2uiCatalog") -> "A2uiCatalog":
    common = catalog.common_types_schema
    if not common or "$defs" not in common:
        return catalog
    refs = collect_refs(catalog.catalog_schema) | collect_refs(catalog.s2c_schema)
    # "contains", not "starts with": newer catalogs write absolute refs to common_types.json.
    roots = sorted(ref.split("#/$defs/")[-1] for ref in refs if COMMON_TYPES_REF in ref)
    pruned = copy.deepcopy(common)
    pruned["$defs"] = reachable_defs(pruned["$defs"], roots) if isinstance(pruned["$defs"], dict) else {}
    return catalog.replace(common_types_schema=pruned)


def prune_catalog(
    catalog: "A2uiCatalog",
    allowed_components: list[str] | None = None,
    allowed_messages: list[str] | None = None,
) -> "A2uiCatalog":
    """A copy of ``catalog`` keeping the allowed components and messages (empty or ``None`` = keep all)."""
    result = catalog
    if allowed_components and isinstance(catalog.catalog_schema, dict):
        result = result.replace(catalog_schema=_prune_components(result.catalog_schema, list(allowed_components)))
    if allowed_messages and isinstance(result.s2c_schema, dict):
        result = result.replace(s2c_schema=_prune_messages(result.version, result.s2c_schema, list(allowed_messages)))
    return _prune_common_types(result)
