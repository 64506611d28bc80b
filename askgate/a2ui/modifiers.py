"""Schema modifiers: transformations a schema manager applies to every schema it loads."""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["remove_strict_validation", "MODIFIERS", "SchemaModifier"]

SchemaModifier = Callable[[Any], Any]


def remove_strict_validation(schema: Any) -> Any:
    """A copy of ``schema`` without any ``additionalProperties: false`` (``true`` and schemas are kept).

    Lets an agent accept payloads carrying properties newer than its catalog, at the price of checking less.
    """
    if isinstance(schema, dict):
        out = {k: remove_strict_validation(v) for k, v in schema.items()}
        if out.get("additionalProperties", None) is False:
            del out["additionalProperties"]
        return out
    if isinstance(schema, list):
        return [remove_strict_validation(item) for item in schema]
    return schema


MODIFIERS: dict[str, SchemaModifier] = {"remove_strict_validation": remove_strict_validation}
