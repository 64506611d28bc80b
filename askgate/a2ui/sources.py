"""Where askgate's A2UI schemas come from at run time: the ``a2ui-core`` dependency.

Nothing here reads files copied into the repository. ``a2ui-core`` generates the server-to-client and
common-types schemas from its pydantic models and builds the basic catalogs from its component models.
Its output already validates exactly what the published spec files validate except for a few list orders
and one missing ``type``, which change *which* error ``jsonschema`` reports first and how it words it.
Those are corrected here, in code, each with its reason (:data:`SPEC_ALIGNMENT`). What is left different
is documented in docs/a2ui.md ("Where the schemas come from") and pinned by
tests/a2ui/test_spec_agreement.py, which compares against ``../shared/a2ui-spec`` at test time:

* the v0.9 basic catalog keeps a2ui-core's id, ``…/v0_9/catalogs/basic/catalog.json`` (the id of newer
  upstream and of the reference SDK), where the vendored spec file says ``…/v0_9/basic_catalog.json``;
  its ``$ref``s to the common types are absolute URIs (the spec writes them relative); both resolve to the
  same schema;
* a handful of ``description`` strings are worded differently (prompt text only, no effect on validation).

:func:`bundled_catalog_schema` additionally applies the reference's bundling rule (§5.8 "Ids"): a catalog
without ``catalogId`` gets the one a2ui-core derives (v0.8:
``https://a2ui.org/specification/v0_8/standard_catalog_definition.json``), and ``$schema`` is added.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Callable

__all__ = [
    "SPEC_ALIGNMENT",
    "server_to_client_schema",
    "common_types_schema",
    "basic_catalog_schema",
    "bundled_catalog_schema",
    "basic_catalog_id",
]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

_V09_LAYOUT = "/components/{name}/allOf/2/properties/{prop}"


def _reordered(*keys: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Move ``keys`` to the front of a schema object, in that order."""

    def apply(node: dict[str, Any]) -> dict[str, Any]:
        return {**{k: node[k] for k in keys if k in node}, **{k: v for k, v in node.items() if k not in keys}}

    return apply



# (version, document, JSON pointer, value or old -> new function, why). The order of an ``enum`` appears verbatim in jsonschema's
# "is not one of [...]" message, the order of ``required`` decides which "'x' is a required property"
# comes first, and a ``type`` decides whether a wrong value is reported as a type error or an enum miss.
SPEC_ALIGNMENT: tuple[tuple[str, str, str, Any, str], ...] = (
    ("0.8", "catalog", "/components/Column/properties/distribution/enum",
     ["start", "center", "end", "spaceBetween", "spaceAround", "spaceEvenly"], "enum order (error text)"),
    ("0.8", "catalog", "/components/Column/properties/alignment/enum",
     ["center", "end", "start", "stretch"], "enum order (error text)"),
    ("0.8", "catalog", "/components/Divider/properties/axis/enum", ["horizontal", "vertical"],
     "enum order (error text)"),
    ("0.9", "catalog", _V09_LAYOUT.format(name="Column", prop="justify") + "/enum",
     ["start", "center", "end", "spaceBetween", "spaceAround", "spaceEvenly", "stretch"], "enum order (error text)"),
    ("0.9", "catalog", _V09_LAYOUT.format(name="Column", prop="align") + "/enum",
     ["center", "end", "start", "stretch"], "enum order (error text)"),
    ("0.9", "catalog", _V09_LAYOUT.format(name="Divider", prop="axis") + "/enum", ["horizontal", "vertical"],
     "enum order (error text)"),
    ("0.9", "catalog", "/components/Slider/allOf/3/required", ["component", "value", "max"],
     "required order (which missing property is reported first)"),
    ("0.9", "catalog", "/functions/formatCurrency/properties/args/required", ["currency", "value"],
     "required order (which missing property is reported first)"),
    ("0.9", "catalog", "/functions/formatDate/properties/args/required", ["format", "value"],
     "required order (which missing property is reported first)"),
    ("0.9", "catalog", _V09_LAYOUT.format(name="Icon", prop="name") + "/oneOf/0/type", "string",
     "a non-string icon name is a type error, not an enum miss"),
    ("0.9", "catalog", _V09_LAYOUT.format(name="Icon", prop="name") + "/oneOf",
     lambda branches: [branches[0], {"type": "object", "properties": {"path": {"type": "string"}},
                                     "required": ["path"], "additionalProperties": False}],
     "v0.9 names an icon or binds the name by path; {svgPath} icons and the generic DataBinding branch are "
     "newer upstream"),
    ("0.8", "catalog", "/components/MultipleChoice", _reordered("type", "additionalProperties", "required"),
     "keyword order (which error is reported first): the one v0.8 node the general rule misses"),
    ("0.9", "catalog", _V09_LAYOUT.format(name="Tabs", prop="tabs"), _reordered("type", "minItems", "items"),
     "keyword order (which error is reported first): the one node the general keyword-order rule misses"),
)


def _protocol(version: str) -> Any:
    from a2ui.core.schema import ProtocolVersion

    return ProtocolVersion("v" + version)


def _set(doc: Any, pointer: str, value: Any) -> None:
    """Set the value at ``pointer``; a callable ``value`` maps the current value to the new one."""
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    node = doc
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node[token]
    last = tokens[-1]
    if callable(value):
        value = value(node[int(last)] if isinstance(node, list) else node[last])
    if isinstance(node, list):
        node[int(last)] = value
    elif last == "type" and isinstance(node, dict):
        # Insert "type" first, where the spec writes it (key order shows in rendered prompts).
        rest = {k: v for k, v in node.items() if k != "type"}
        node.clear()
        node.update({"type": value, **rest})
    else:
        node[last] = value


_NAME_MAPS = frozenset({"properties", "$defs", "components", "functions", "patternProperties", "dependentSchemas"})
_DATA_KEYS = frozenset({"const", "enum", "default", "examples"})
_OBJECT_KEYWORDS = ("properties", "required", "anyOf", "additionalProperties", "unevaluatedProperties")


def _keyword_order(node: Any, version: str, in_name_map: bool = False) -> Any:
    """Reorder schema keywords the way the spec writes them (jsonschema reports errors in keyword order).

    a2ui-core emits keywords alphabetically (v0.8) or grouped differently (v0.9). The spec puts ``type``
    first, and in v0.9 writes ``properties``, ``required``, ``anyOf``, ``additionalProperties``,
    ``unevaluatedProperties`` in that order. Name maps (``properties``, ``$defs`` ...) keep their order,
    and data (``const``, ``enum`` ...) is not touched.
    """
    if isinstance(node, list):
        return [_keyword_order(item, version) for item in node]
    if not isinstance(node, dict):
        return node
    if in_name_map:
        return {k: _keyword_order(v, version) for k, v in node.items()}
    keys = list(node)
    if "type" in keys:
        keys.remove("type")
        keys.insert(0, "type")
    if version == "0.9":
        slots = [i for i, k in enumerate(keys) if k in _OBJECT_KEYWORDS]
        for i, k in zip(slots, sorted((keys[i] for i in slots), key=_OBJECT_KEYWORDS.index)):
            keys[i] = k
    return {k: node[k] if k in _DATA_KEYS else _keyword_order(node[k], version, k in _NAME_MAPS) for k in keys}


def _aligned(version: str, document: str, schema: Any) -> Any:
    if document == "catalog":
        schema = _keyword_order(schema, version)
    for v, doc, pointer, value, _why in SPEC_ALIGNMENT:
        if v == version and doc == document:
            _set(schema, pointer, value if callable(value) else json.loads(json.dumps(value)))
    return schema


@functools.lru_cache(maxsize=None)
def _s2c_json(version: str) -> str:
    from a2ui.core import get_agent_to_renderer_schema_json

    return json.dumps(_aligned(version, "s2c", json.loads(get_agent_to_renderer_schema_json(_protocol(version)))))


@functools.lru_cache(maxsize=None)
def _common_types_json(version: str) -> str | None:
    if version == "0.8":
        return None  # v0.8 has no common-types document
    from a2ui.core import get_common_types_schema_json

    raw = json.loads(get_common_types_schema_json(_protocol(version)))
    return json.dumps(_aligned(version, "common_types", raw))


@functools.lru_cache(maxsize=None)
def _catalog(version: str) -> tuple[str, str]:
    from a2ui.core.basic_catalog import BasicCatalog

    catalog = BasicCatalog(_protocol(version))
    return json.dumps(_aligned(version, "catalog", catalog.to_json())), catalog.id


def _check(version: str) -> str:
    version = str(version)
    if version not in ("0.8", "0.9"):
        from askgate.a2ui.errors import CatalogError

        raise CatalogError(f"Unknown A2UI specification version: {version}. Supported: ['0.8', '0.9']")
    return version


def server_to_client_schema(version: str) -> dict[str, Any]:
    """The server-to-client schema for ``version`` (a fresh copy the caller may keep)."""
    return json.loads(_s2c_json(_check(version)))


def common_types_schema(version: str) -> dict[str, Any] | None:
    """The v0.9 common types (``None`` for v0.8, which has none)."""
    text = _common_types_json(_check(version))
    return None if text is None else json.loads(text)


def basic_catalog_schema(version: str) -> dict[str, Any]:
    """The basic (v0.9) / standard (v0.8) catalog document as a2ui-core publishes it (aligned, see above)."""
    return json.loads(_catalog(_check(version))[0])


def basic_catalog_id(version: str) -> str:
    """The basic catalog's id according to a2ui-core (v0.8's is derived: its document has none)."""
    return _catalog(_check(version))[1]


def bundled_catalog_schema(version: str) -> dict[str, Any]:
    """The basic catalog as an agent bundles it: ``catalogId`` filled in when absent, ``$schema`` added."""
    schema = basic_catalog_schema(version)
    if "catalogId" not in schema:
        schema["catalogId"] = basic_catalog_id(version)
    schema.setdefault("$schema", DRAFT_2020_12)
    return schema
