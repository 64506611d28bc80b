"""The schema manager: the catalogs an agent supports, choosing one per client, and its system prompt.

A client states what it can render (``a2uiClientCapabilities``: ``supportedCatalogIds`` and, if the agent
accepts them, ``inlineCatalogs``); the manager picks the catalog the agent should generate for, following
protocols.md §5.8 "Catalog selection", prunes it, and renders prompts from it.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from askgate.a2ui import sources
from askgate.a2ui.catalog import SUPPORTED_VERSIONS, A2uiCatalog
from askgate.a2ui.errors import CatalogError
from askgate.a2ui.examples import load_examples
from askgate.a2ui.modifiers import SchemaModifier
from askgate.a2ui.prompts import system_prompt

__all__ = ["CatalogConfig", "A2uiSchemaManager", "basic_catalog_config", "INLINE_CATALOG_NAME"]

INLINE_CATALOG_NAME = "inline"
SUPPORTED_IDS_KEY = "supportedCatalogIds"
INLINE_KEY = "inlineCatalogs"


@dataclass(frozen=True)
class CatalogConfig:
    """Where one catalog schema comes from: a loader (file, bundled, in memory) and optional examples."""

    name: str
    load: Callable[[], dict[str, Any]]
    examples_path: str | None = None

    @classmethod
    def from_path(cls, name: str, path: str | os.PathLike[str], examples_path: str | None = None) -> "CatalogConfig":
        """A catalog read from a JSON file (``file://`` URIs accepted); unreadable files raise ``OSError``."""
        text = os.fspath(path)
        if text.startswith("file://"):
            text = text[len("file://"):]
        elif "://" in text:
            raise CatalogError(f"Unsupported catalog URL scheme: {text}")

        def load() -> dict[str, Any]:
            try:
                with open(text, encoding="utf-8") as handle:
                    return json.load(handle)
            except (OSError, ValueError) as exc:
                raise OSError(f"Could not load schema from {text}: {exc}") from exc

        return cls(name=name, load=load, examples_path=examples_path)

    @classmethod
    def from_schema(cls, name: str, schema: Mapping[str, Any], examples_path: str | None = None) -> "CatalogConfig":
        """An in-memory catalog (a deep copy is taken on every load)."""
        frozen = copy.deepcopy(dict(schema))
        return cls(name=name, load=lambda: copy.deepcopy(frozen), examples_path=examples_path)


def basic_catalog_config(version: str, examples_path: str | None = None) -> CatalogConfig:
    """The bundled basic catalog (from ``a2ui-core``), with ``$schema`` added when absent (§5.8 "Ids")."""

    return CatalogConfig(name="basic", load=lambda: sources.bundled_catalog_schema(str(version)),
                         examples_path=examples_path)


class A2uiSchemaManager:
    """The catalogs of one protocol version, plus selection and prompt generation.

    The s2c and common-types schemas are the bundled ones for ``version`` (from ``a2ui-core``); every loaded
    schema (s2c, common types, catalogs, inline catalogs) goes through ``schema_modifiers`` in order.
    """

    def __init__(
        self,
        version: str | float,
        catalogs: Sequence[CatalogConfig] = (),
        *,
        accepts_inline_catalogs: bool = False,
        schema_modifiers: Sequence[SchemaModifier] = (),
    ) -> None:
        self.version = str(version)
        if self.version not in SUPPORTED_VERSIONS:
            raise CatalogError(
                f"Unknown A2UI specification version: {self.version}. Supported: {list(SUPPORTED_VERSIONS)}"
            )
        self.accepts_inline_catalogs = accepts_inline_catalogs
        self._modifiers = list(schema_modifiers)
        self._s2c = self._modify(sources.server_to_client_schema(self.version))
        self._common = self._modify(sources.common_types_schema(self.version))
        self._catalogs: list[A2uiCatalog] = []
        self._examples: dict[str, str | None] = {}
        for config in catalogs:
            catalog = A2uiCatalog(
                version=self.version,
                s2c_schema=self._s2c,
                catalog_schema=self._modify(config.load()),
                common_types_schema=self._common or {},
                name=config.name,
            )
            self._catalogs.append(catalog)
            self._examples[catalog.require_catalog_id()] = config.examples_path

    def _modify(self, schema: Any) -> Any:
        for modifier in self._modifiers:
            schema = modifier(schema)
        return schema

    @property
    def catalogs(self) -> list[A2uiCatalog]:
        """The agent's catalogs, in configuration order."""
        return list(self._catalogs)

    @property
    def supported_catalog_ids(self) -> list[str]:
        """The ``catalogId`` of each catalog, as written in its schema, in configuration order."""
        return [c.require_catalog_id() for c in self._catalogs]

    def select_catalog(self, client_capabilities: Any = None) -> A2uiCatalog:
        """The catalog to generate for, given the client's capabilities (unpruned)."""
        if not self._catalogs:
            raise CatalogError("No supported catalogs found.")
        caps = client_capabilities
        if not caps or not isinstance(caps, Mapping):
            return self._catalogs[0]
        inline = caps.get(INLINE_KEY) or []
        client_ids = caps.get(SUPPORTED_IDS_KEY) or []
        if inline and not self.accepts_inline_catalogs:
            raise CatalogError(
                f"Inline catalog '{INLINE_KEY}' is provided in client UI capabilities. However, the agent does "
                "not accept inline catalogs."
            )
        by_id = {c.require_catalog_id(): c for c in self._catalogs}
        if inline:
            base = next((by_id[i] for i in client_ids if _hashable(i) and i in by_id), self._catalogs[0])
            merged = copy.deepcopy(base.catalog_schema)
            components = merged.setdefault("components", {})
            for entry in inline:
                if not isinstance(entry, Mapping):
                    raise CatalogError("Each inline catalog must be a JSON object")
                extra = self._modify(copy.deepcopy(dict(entry))).get("components", {})
                if isinstance(extra, Mapping):
                    components.update(extra)
            return A2uiCatalog(
                version=self.version,
                s2c_schema=self._s2c,
                catalog_schema=merged,
                common_types_schema=self._common or {},
                name=INLINE_CATALOG_NAME,
            )
        if not client_ids:
            return self._catalogs[0]
        for cid in client_ids:
            if _hashable(cid) and cid in by_id:
                return by_id[cid]
        raise CatalogError(
            f"No client-supported catalog found on the agent side. Agent-supported catalogs are: {list(by_id)}"
        )

    def get_selected_catalog(
        self,
        client_capabilities: Any = None,
        allowed_components: Sequence[str] | None = None,
        allowed_messages: Sequence[str] | None = None,
    ) -> A2uiCatalog:
        """The selected catalog, pruned to the allowed components and messages."""
        return self.select_catalog(client_capabilities).with_pruning(
            list(allowed_components or []), list(allowed_messages or [])
        )

    def load_examples(self, catalog: A2uiCatalog, validate: bool = False) -> str:
        """The examples configured for ``catalog``'s id (``""`` when none)."""
        path = self._examples.get(catalog.catalog_id or "")
        return load_examples(catalog, path, validate=validate) if path else ""

    def generate_system_prompt(
        self,
        role_description: str,
        workflow_description: str = "",
        ui_description: str = "",
        client_ui_capabilities: Any = None,
        allowed_components: Sequence[str] | None = None,
        allowed_messages: Sequence[str] | None = None,
        include_schema: bool = False,
        include_examples: bool = False,
        validate_examples: bool = False,
    ) -> str:
        """The system prompt for an agent generating A2UI for a client with these capabilities."""
        catalog = self.get_selected_catalog(client_ui_capabilities, allowed_components, allowed_messages)
        examples = self.load_examples(catalog, validate=validate_examples) if include_examples else ""
        return system_prompt(
            role_description,
            catalog,
            workflow_description=workflow_description,
            ui_description=ui_description,
            include_schema=include_schema,
            examples=examples,
        )


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None
