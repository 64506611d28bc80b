"""An A2UI catalog: the protocol version plus the three schemas a validator and a prompt need.

A catalog bundles the server-to-client (s2c) schema, the component catalog and (v0.9) the common types,
because validation, pruning and prompt rendering all need the three together and must agree on them.
The basic catalogs come from askgate's ``a2ui-core`` dependency (see :mod:`askgate.a2ui.sources`), never
from files copied into the repository.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from askgate.a2ui.errors import CatalogError

__all__ = ["A2uiCatalog", "CATALOG_ID_KEY", "COMPONENTS_KEY"]

CATALOG_ID_KEY = "catalogId"
COMPONENTS_KEY = "components"
SUPPORTED_VERSIONS = ("0.8", "0.9")


@dataclass(frozen=True, eq=False)
class A2uiCatalog:
    """One catalog for one protocol version (``"0.8"`` or ``"0.9"``).

    Treat the schema dicts as immutable: transformations (:meth:`with_pruning`) return new catalogs, and
    compiled validators are cached on the instance (``_cache``), so mutating a schema in place after a
    validator was built would leave that validator stale.
    """

    version: str
    s2c_schema: dict[str, Any] | None
    catalog_schema: dict[str, Any]
    common_types_schema: dict[str, Any]
    name: str | None = None
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # YAML reads an unquoted 0.8 as a float; the suite rules say coerce with str().
        if not isinstance(self.version, str):
            object.__setattr__(self, "version", str(self.version))
        if self.catalog_schema is None:
            object.__setattr__(self, "catalog_schema", {})
        if self.common_types_schema is None:
            object.__setattr__(self, "common_types_schema", {})

    # ---- identity ---------------------------------------------------------------------------------

    @property
    def catalog_id(self) -> str | None:
        """The catalog's ``catalogId`` as written in its schema (``None`` when it has none)."""
        value = self.catalog_schema.get(CATALOG_ID_KEY) if isinstance(self.catalog_schema, dict) else None
        return value if isinstance(value, str) else None

    def require_catalog_id(self) -> str:
        """The ``catalogId``; raise :class:`CatalogError` when the id is needed but missing (§5.8 "Ids")."""
        cid = self.catalog_id
        if cid is None:
            raise CatalogError(f"Catalog '{self.name}' missing catalogId")
        return cid

    # ---- construction -----------------------------------------------------------------------------

    @classmethod
    def basic(cls, version: str | float) -> "A2uiCatalog":
        """The bundled basic (v0.9) / standard (v0.8) catalog, built from the ``a2ui-core`` dependency."""
        from askgate.a2ui import sources

        version = str(version)
        if version not in SUPPORTED_VERSIONS:
            raise CatalogError(f"Unknown A2UI specification version: {version}. Supported: {list(SUPPORTED_VERSIONS)}")
        return cls(
            version=version,
            s2c_schema=sources.server_to_client_schema(version),
            catalog_schema=sources.bundled_catalog_schema(version),
            common_types_schema=sources.common_types_schema(version) or {},
            name="basic",
        )

    @classmethod
    def from_config(
        cls,
        version: str | float,
        s2c: dict[str, Any] | None,
        catalog: dict[str, Any] | None,
        common_types: dict[str, Any] | None,
        name: str | None = None,
    ) -> "A2uiCatalog":
        """A catalog from explicit schemas (a missing catalog or common-types schema becomes ``{}``)."""
        return cls(
            version=str(version),
            s2c_schema=s2c,
            catalog_schema=catalog if catalog is not None else {},
            common_types_schema=common_types if common_types is not None else {},
            name=name,
        )

    # ---- transformations (delegated to small modules) -----------------------------------------------

    def with_pruning(
        self, allowed_components: list[str] | None = None, allowed_messages: list[str] | None = None
    ) -> "A2uiCatalog":
        """A copy keeping only the allowed components and messages, and the common types they reach."""
        from askgate.a2ui.prune import prune_catalog

        return prune_catalog(self, allowed_components, allowed_messages)

    def render_as_llm_instructions(self) -> str:
        """The schemas as the ``---BEGIN A2UI JSON SCHEMA---`` block an LLM prompt embeds."""
        from askgate.a2ui.prompts import render_catalog

        return render_catalog(self)

    def load_examples(self, path: str | None, validate: bool = False) -> str:
        """Example files framed for a prompt (optionally validated against this catalog)."""
        from askgate.a2ui.examples import load_examples

        return load_examples(self, path, validate=validate)

    def replace(self, **changes: Any) -> "A2uiCatalog":
        """A copy with some fields replaced (the validator cache is not carried over)."""
        return replace(self, **changes)

    def validator(self) -> Any:
        """The compiled :class:`~askgate.a2ui.validator.A2uiValidator` for this catalog (cached)."""
        from askgate.a2ui.validator import A2uiValidator

        v = self._cache.get("validator")
        if v is None:
            v = A2uiValidator(self)
            self._cache["validator"] = v
        return v
