"""What the streaming parser does to one component before showing it (protocols.md §5.8 "Placeholders").

A component may arrive before its children, or cut. Before it is shown, references to children not seen
yet are pointed at placeholders (``loading_<id>``, an empty Row), v0.8 data paths get their leading
``/``, and a component that is still too incomplete to render (an empty object somewhere, or a missing
catalog-required property) is not used at all. The rules are the reference SDK's observable behaviour.

The functions here are pure: the caller says which ids are seen and whether an open children list is
still streaming, and gets back the rewritten copy plus what it depended on (so it can cache it).
"""

from __future__ import annotations

from typing import Any, Callable, Container, Mapping

__all__ = [
    "CHILD_FIELDS",
    "Processed",
    "acceptable_partial",
    "has_empty_dict",
    "placeholder_body",
    "process_component",
    "required_fields",
]

#: Fields whose ids are replaced by placeholders when the child is not seen yet (at any nesting level).
CHILD_FIELDS = ("children", "explicitList", "child", "contentChild", "entryPointChild", "componentId")
_LIST_FIELDS = ("children", "explicitList")


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
        return any(has_empty_dict(v) for v in obj)
    return False


def required_fields(version: str, s2c: Any, catalog: Any) -> dict[str, set[str]]:
    """Per component type, the properties its catalog schema requires (``component`` excluded)."""
    components: Any = {}
    if version == "0.8":
        try:
            su = (s2c or {}).get("properties", {}).get("surfaceUpdate")
            if isinstance(su, dict):
                comps = su.get("properties", {}).get("components")
                if isinstance(comps, dict):
                    items = comps.get("items", {})
                    if "properties" in items:
                        components = items["properties"].get("component", {}).get("properties", {})
        except (AttributeError, TypeError):
            components = {}
        if not components and catalog:
            components = catalog.get("components", {}) if isinstance(catalog, dict) else {}
    else:
        components = catalog.get("components", {}) if isinstance(catalog, dict) else {}
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


def acceptable_partial(comp: Mapping[str, Any], required: Mapping[str, set[str]]) -> bool:
    """Whether a (possibly healed) component is complete enough to be used."""
    body = comp.get("component")
    if isinstance(body, str):
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
    """A component as shown: the rewritten copy and what it depended on."""

    __slots__ = ("comp", "placeholders", "missing", "buffer_dependent")

    def __init__(self, comp: dict[str, Any], placeholders: list[str], missing: set[Any], buffer_dependent: bool):
        self.comp = comp
        self.placeholders = placeholders
        self.missing = missing
        self.buffer_dependent = buffer_dependent


def process_component(
    comp: Mapping[str, Any],
    seen: Container[Any],
    v09: bool,
    children_open: Callable[[str], bool],
) -> Processed:
    """Rewrite a copy of ``comp`` for display.

    ``children_open(field)`` tells whether the JSON still streaming has an open ``"<field>": [`` list:
    an empty children list then gets a ``loading_children_<id>`` placeholder instead of staying empty.
    """
    out = _copy(comp)
    comp_id = out.get("id", "unknown")
    placeholders: list[str] = []
    missing: set[Any] = set()
    state = [False]

    def placeholder_for(child: Any) -> str:
        pid = f"loading_{child}"
        if pid not in placeholders:
            placeholders.append(pid)
        try:
            missing.add(child)
        except TypeError:
            pass
        return pid

    def visit(obj: Any) -> None:
        if isinstance(obj, dict):
            if not v09 and "path" in obj:
                path = obj["path"]
                if isinstance(path, str) and path.startswith("/"):
                    if "componentId" not in obj:
                        obj.clear()
                    obj["path"] = "/" + path.lstrip("/")
                elif path is not None:
                    obj["path"] = "/" + str(path)
            for field in CHILD_FIELDS:
                if field not in obj:
                    continue
                value = obj[field]
                if isinstance(value, list):
                    kept = [c if _is_seen(c, seen) else placeholder_for(c) for c in value]
                    if not kept and field in _LIST_FIELDS:
                        state[0] = True
                        if children_open(field):
                            pid = f"loading_children_{comp_id}"
                            kept.append(pid)
                            if pid not in placeholders:
                                placeholders.append(pid)
                    obj[field] = kept
                elif isinstance(value, str) and not _is_seen(value, seen):
                    obj[field] = placeholder_for(value)
            for value in list(obj.values()):
                visit(value)
        elif isinstance(obj, list):
            for item in obj:
                visit(item)

    body = out.get("component")
    visit(body if isinstance(body, dict) else out)
    return Processed(out, placeholders, missing, state[0])
