"""Rendering catalogs and system prompts for LLMs that should answer with A2UI.

Formatting is pinned by the conformance suite (protocols.md §5.8 "Render" and "System prompt"): schemas
as two-space indented JSON in a ``---BEGIN A2UI JSON SCHEMA---`` block, prompt sections joined by blank
lines.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from askgate.a2ui.payload import CLOSE_TAG, OPEN_TAG

if TYPE_CHECKING:
    from askgate.a2ui.catalog import A2uiCatalog

__all__ = ["SCHEMA_BLOCK_START", "SCHEMA_BLOCK_END", "DEFAULT_WORKFLOW_RULES", "render_catalog", "system_prompt"]

SCHEMA_BLOCK_START = "---BEGIN A2UI JSON SCHEMA---"
SCHEMA_BLOCK_END = "---END A2UI JSON SCHEMA---"

DEFAULT_WORKFLOW_RULES = f"""
The generated response MUST follow these rules:
- Put every piece of UI in an A2UI JSON block wrapped in `{OPEN_TAG}` and `{CLOSE_TAG}` tags; a response may
  hold one or more such blocks.
- Conversational text may appear before, between and after the blocks, never inside them.
- A block holds exactly one raw JSON value: a list of A2UI messages that validates against the A2UI JSON
  SCHEMA given below. No Markdown fences, no comments.
- Order components top-down inside each `components` list: the root component comes FIRST, and every parent
  comes before its children, so the UI can be rendered progressively while it streams in.
"""


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2)


def render_catalog(catalog: "A2uiCatalog") -> str:
    """The catalog's schemas as one instruction block (common types only when they define something)."""
    blocks = [SCHEMA_BLOCK_START, f"### Server To Client Schema:\n{_dump(catalog.s2c_schema) if catalog.s2c_schema else '{}'}"]
    common = catalog.common_types_schema
    if common and isinstance(common, dict) and common.get("$defs"):
        blocks.append(f"### Common Types Schema:\n{_dump(common)}")
    blocks.append(f"### Catalog Schema:\n{_dump(catalog.catalog_schema)}")
    blocks.append(SCHEMA_BLOCK_END)
    return "\n\n".join(blocks)


def system_prompt(
    role_description: str,
    catalog: "A2uiCatalog",
    *,
    workflow_description: str = "",
    ui_description: str = "",
    include_schema: bool = False,
    examples: str = "",
) -> str:
    """Role, workflow rules (+ custom rules), UI description, schema block and examples, in that order."""
    workflow = DEFAULT_WORKFLOW_RULES + (f"\n{workflow_description}" if workflow_description else "")
    parts = [role_description, f"## Workflow Description:\n{workflow}"]
    if ui_description:
        parts.append(f"## UI Description:\n{ui_description}")
    if include_schema:
        parts.append(render_catalog(catalog))
    if examples:
        parts.append(f"### Examples:\n{examples}")
    return "\n\n".join(parts)
