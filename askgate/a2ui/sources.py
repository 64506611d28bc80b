"""Where askgate's A2UI schemas come from at run time: the ``a2ui-core`` dependency.

Nothing here reads files copied into the repository. ``a2ui-core`` generates the server-to-client and
common-types schemas from its pydantic models and builds the basic catalogs from its component models;
where its output differs from the published spec files, the adjustment is made here in code and
documented (docs/a2ui.md, "Where the schemas come from"); tests/a2ui/test_spec_agreement.py checks the
result against ``../shared/a2ui-spec`` at test time.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

__all__ = ["server_to_client_schema", "common_types_schema", "basic_catalog_schema"]


def _protocol(version: str) -> Any:
    from a2ui.core.schema import ProtocolVersion

    return ProtocolVersion("v" + version)


@functools.lru_cache(maxsize=None)
def _s2c_json(version: str) -> str:
    from a2ui.core import get_agent_to_renderer_schema_json

    return get_agent_to_renderer_schema_json(_protocol(version))


@functools.lru_cache(maxsize=None)
def _common_types_json(version: str) -> str | None:
    if version == "0.8":
        return None
    from a2ui.core import get_common_types_schema_json

    return get_common_types_schema_json(_protocol(version))


@functools.lru_cache(maxsize=None)
def _catalog_json(version: str) -> str:
    from a2ui.core.basic_catalog import BasicCatalog

    return json.dumps(BasicCatalog(_protocol(version)).to_json())


def server_to_client_schema(version: str) -> dict[str, Any]:
    """The server-to-client schema for ``version`` (a fresh copy the caller may keep)."""
    return json.loads(_s2c_json(version))


def common_types_schema(version: str) -> dict[str, Any] | None:
    """The v0.9 common types (``None`` for v0.8, which has none)."""
    text = _common_types_json(version)
    return None if text is None else json.loads(text)


def basic_catalog_schema(version: str) -> dict[str, Any]:
    """The basic (v0.9) / standard (v0.8) catalog schema, with ``catalogId`` and ``$schema`` filled in."""
    schema = copy.deepcopy(json.loads(_catalog_json(version)))
    return schema
