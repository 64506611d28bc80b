"""Loading example payloads for a prompt: files found by directory or glob, framed by name, optionally
validated (protocols.md §5.8 "Load")."""

from __future__ import annotations

import glob
import json
import os
from typing import TYPE_CHECKING

from askgate.a2ui.errors import A2uiError, ValidationError

if TYPE_CHECKING:
    from askgate.a2ui.catalog import A2uiCatalog

__all__ = ["load_examples"]


def load_examples(catalog: "A2uiCatalog", path: str | os.PathLike[str] | None, validate: bool = False) -> str:
    """The example files under ``path``, each framed as ``---BEGIN <name>---`` ... ``---END <name>---``.

    ``path`` is a directory (its ``*.json``) or a recursive glob; nothing found gives ``""``. With
    ``validate`` every file must parse and pass the catalog's validator, else
    ``Failed to validate example <path>: <cause>`` is raised.
    """
    if not path:
        return ""
    path = os.fspath(path)
    pattern = os.path.join(path, "*.json") if os.path.isdir(path) else path
    frames = []
    for full in sorted(glob.glob(pattern, recursive=True)):
        if not os.path.isfile(full):
            continue
        name = os.path.splitext(os.path.basename(full))[0]
        with open(full, encoding="utf-8") as handle:
            content = handle.read()
        if validate:
            _validate_example(catalog, full, content)
        frames.append(f"---BEGIN {name}---\n{content}\n---END {name}---")
    return "\n\n".join(frames)


def _validate_example(catalog: "A2uiCatalog", full: str, content: str) -> None:
    try:
        try:
            data = json.loads(content)
        except RecursionError as exc:
            raise ValueError("nesting too deep") from exc
        catalog.validator().validate(data)
    except (ValueError, A2uiError) as exc:
        raise ValidationError(f"Failed to validate example {full}: {exc}") from exc
