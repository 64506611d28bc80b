"""Hypothesis strategies generated from a JSON Schema (the keyword subset the seed schemas use).

hypothesis-jsonschema 0.23 no longer runs on the pinned hypothesis (it calls the removed
``many.more()``), so the differential tests derive their generators from the seed schema with this
small interpreter instead. It covers: ``$ref`` (local), ``const``, ``enum``, ``oneOf``/``anyOf``
(one branch each), ``type`` (single or list), ``properties``/``required``/``additionalProperties``,
``dependentRequired``, ``items``/``minItems``/``maxItems``/``uniqueItems``, ``minLength``/``maxLength``,
``minimum``/``maximum``. Conditionals (``allOf`` of ``if``/``then``/``else``) are honoured by filtering
with ``jsonschema`` itself. Integers are sometimes drawn as whole floats (``2.0``), which JSON Schema
counts as integers.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _resolve(schema: dict, root: dict) -> dict:
    while "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        node: Any = root
        for token in ref[2:].split("/"):
            node = node[token.replace("~1", "/").replace("~0", "~")]
        schema = node
    return schema


def _integers(schema: dict) -> st.SearchStrategy[Any]:
    ints = st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum"))
    return st.one_of(ints, ints.filter(lambda i: abs(i) < 2**53).map(float))


def _numbers(schema: dict) -> st.SearchStrategy[Any]:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    return st.one_of(
        st.integers(min_value=lo, max_value=hi),
        st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False),
    )


def _typed(kind: str, schema: dict, root: dict) -> st.SearchStrategy[Any]:
    if kind == "string":
        return st.text(
            alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
            min_size=schema.get("minLength", 0),
            max_size=max(schema.get("minLength", 0), schema.get("maxLength", 12)),
        )
    if kind == "integer":
        return _integers(schema)
    if kind == "number":
        return _numbers(schema)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = strategy(schema.get("items", {}), root)
        return st.lists(
            items,
            min_size=schema.get("minItems", 0),
            max_size=schema.get("maxItems", max(4, schema.get("minItems", 0))),
            unique_by=_key if schema.get("uniqueItems") else None,
        )
    if kind == "object":
        return _object(schema, root)
    raise AssertionError(f"unsupported type {kind}")


def _object(schema: dict, root: dict) -> st.SearchStrategy[dict]:
    props: dict = schema.get("properties", {})
    required = set(schema.get("required", []))
    extra = schema.get("additionalProperties", True)
    dependent: dict = schema.get("dependentRequired", {})

    subs = {name: strategy(sub, root) for name, sub in props.items()}
    value_strategy = strategy(extra if isinstance(extra, dict) else {}, root) if extra is not False else None
    extra_names = st.lists(_TEXT.filter(lambda n: n not in props), max_size=4, unique=True)

    @st.composite
    def build(draw: st.DrawFn) -> dict:
        out: dict[str, Any] = {}
        for name, sub in subs.items():
            if name in required or draw(st.booleans()):
                out[name] = draw(sub)
        if value_strategy is not None:
            names = draw(extra_names)
            for name in names:
                out[name] = draw(value_strategy)
        for name, needs in dependent.items():
            if name in out and any(n not in out for n in needs):
                del out[name]
        return out

    return build()


def _any_json() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), _TEXT)
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
                        max_leaves=6)


_CACHE: dict[tuple[int, int], tuple[Any, st.SearchStrategy[Any]]] = {}


def strategy(schema: Any, root: dict) -> st.SearchStrategy[Any]:
    """Documents valid against ``schema`` (resolved within ``root``); built once per schema node."""
    key = (id(schema), id(root))
    found = _CACHE.get(key)
    if found is None:  # the schema object is kept alive with its strategy, so its id is never reused
        found = _CACHE[key] = (schema, _strategy(schema, root))
    return found[1]


def _strategy(schema: Any, root: dict) -> st.SearchStrategy[Any]:
    if schema is True or schema == {}:
        return _any_json()
    schema = _resolve(schema, root)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            branches = [strategy({**{k: v for k, v in schema.items() if k != key}, **_resolve(b, root)}, root)
                        for b in schema[key]]
            return st.one_of(branches)
    kind = schema.get("type")
    if isinstance(kind, list):
        base = st.one_of([_typed(k, schema, root) for k in kind])
    elif kind is None:
        base = _object(schema, root) if "properties" in schema else _any_json()
    else:
        base = _typed(kind, schema, root)
    if "allOf" in schema:
        check = Draft202012Validator({"allOf": schema["allOf"]})
        base = base.filter(check.is_valid)
    return base
