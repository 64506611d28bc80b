"""A2UI payload validator: JSON Schema (via ``jsonschema``, messages verbatim) plus integrity checks.

Behaviour follows protocols.md §5.8 "Validator" (the reference SDK's observable behaviour); the
implementation is askgate's own and compiles everything once per catalog.
"""

from __future__ import annotations

from typing import Any

from askgate.a2ui.catalog import A2uiCatalog

__all__ = ["A2uiValidator"]


class A2uiValidator:
    """Validates A2UI server-to-client messages for one catalog.

    ``validate(payload)`` returns ``None`` or raises :class:`~askgate.a2ui.errors.ValidationError`,
    :class:`~askgate.a2ui.errors.IntegrityError` or :class:`~askgate.a2ui.errors.RecursionError` with the
    messages the conformance suite expects.
    """

    def __init__(self, catalog: A2uiCatalog) -> None:
        self.catalog = catalog
        self.version = catalog.version

    def validate(self, payload: dict[str, Any] | list[Any], root_id: str | None = None,
                 strict_integrity: bool = True) -> None:
        """Validate one message or a list of messages; raise on the first failing rule (§5.8)."""
        raise NotImplementedError("being implemented")

    def is_valid_partial(self, payload: dict[str, Any] | list[Any]) -> bool:
        """Lenient check for synthesized partial updates: schema + integrity without root/orphan rules."""
        try:
            self.validate(payload, strict_integrity=False)
        except ValueError:
            return False
        return True
