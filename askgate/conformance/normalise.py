"""Turning one raw suite entry (legacy or newer shape) into a :class:`Case` (protocols.md §5.7).

The legacy upstream files put the operation in the file name and the steps under a key named after it
(``process_chunk:``, ``validate:``), or give a parse-full case as a bare ``input:``; the newer shape
names the ``action`` and holds steps under ``steps`` or a single ``payload``. Actions see one shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from askgate.conformance.registry import Case, CaseFailure, CatalogConfig, ExpectedError, Step

__all__ = ["FILE_ACTIONS", "conformance_root", "normalise_case"]

#: Action implied by a legacy suite file's name (its stem).
FILE_ACTIONS: dict[str, str] = {
    "streaming_parser": "process_chunk",
    "validator": "validate",
    "parser": "parse_full",
}

_MISSING = object()


def conformance_root(suite_file: Path) -> Path:
    """The directory suite-relative paths resolve against.

    Upstream keeps suites in ``<root>/suites/`` and data in ``<root>/test_data/``; a suite file outside a
    ``suites`` folder (askgate's own ``conformance/*.yaml``) resolves against its own folder.
    """
    parent = suite_file.resolve().parent
    return parent.parent if parent.name == "suites" else parent


def _derive_action(raw: Mapping[str, Any], file: Path) -> str | None:
    declared = raw.get("action")
    if declared is not None:
        if not isinstance(declared, str) or not declared:
            raise CaseFailure(f"action must be a non-empty string, not {declared!r}")
        return declared
    by_file = FILE_ACTIONS.get(file.stem)
    if by_file is not None:
        return by_file
    if "process_chunk" in raw:
        return "process_chunk"
    if "validate" in raw:
        return "validate"
    if "input" in raw:
        return "parse_full"
    return None


def _step(index: int, source: Any, case_error: ExpectedError | None) -> Step:
    if not isinstance(source, Mapping):
        raise CaseFailure(f"step {index} must be a mapping, not {type(source).__name__}")
    own = source.get("expect_error", _MISSING)
    return Step(
        index=index,
        input=source.get("input"),
        payload=source.get("payload"),
        expect=source.get("expect"),
        has_expect="expect" in source,
        expect_error=case_error if own is _MISSING else ExpectedError.parse(own),
        raw=source,
    )


def _steps(raw: Mapping[str, Any], action: str | None, case_error: ExpectedError | None) -> tuple[Step, ...]:
    listed: Any = _MISSING
    for key in ("steps", "process_chunk", "validate"):
        if key in raw:
            listed = raw[key]
            break
    if listed is _MISSING:
        if (action == "process_chunk" and "input" in raw) or (action == "validate" and "payload" in raw):
            return (_step(0, raw, case_error),)
        return ()
    if not isinstance(listed, list):
        raise CaseFailure(f"the step list must be a list, not {type(listed).__name__}")
    return tuple(_step(i, s, case_error) for i, s in enumerate(listed))


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CaseFailure(f"cannot read schema file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CaseFailure(f"schema file {path} is not JSON: {exc}") from None


def _schema(cfg: Mapping[str, Any], key: str, default: Any, root: Path) -> tuple[Any, Path | None]:
    value = cfg.get(key, _MISSING)
    if value is _MISSING or value is None:
        return default, None
    if isinstance(value, str):
        path = Path(value)
        path = path if path.is_absolute() else root / path
        return _load_json(path), path
    if isinstance(value, Mapping):
        return value, None
    raise CaseFailure(f"catalog.{key} must be a path or an object, not {type(value).__name__}")


def _catalog(raw: Mapping[str, Any], root: Path) -> CatalogConfig | None:
    cfg = raw.get("catalog", _MISSING)
    if cfg is _MISSING or cfg is None:
        return None
    if not isinstance(cfg, Mapping):
        raise CaseFailure(f"catalog must be a mapping, not {type(cfg).__name__}")
    s2c, s2c_path = _schema(cfg, "s2c_schema", None, root)
    catalog, catalog_path = _schema(cfg, "catalog_schema", {}, root)
    common, common_path = _schema(cfg, "common_types_schema", {}, root)
    return CatalogConfig(
        version=str(cfg.get("version")),
        s2c_schema=s2c,
        catalog_schema=catalog,
        common_types_schema=common,
        s2c_schema_path=s2c_path,
        catalog_schema_path=catalog_path,
        common_types_schema_path=common_path,
        raw=cfg,
    )


def normalise_case(raw: Any, file: Path, index: int, root: Path | None = None) -> Case:
    """Normalise suite entry ``index`` of ``file``. Raises :class:`CaseFailure` for a malformed entry."""
    file = file.resolve()
    root = conformance_root(file) if root is None else root
    if not isinstance(raw, Mapping):
        raise CaseFailure(f"a case must be a mapping, not {type(raw).__name__}")
    name = raw.get("name")
    if not isinstance(name, str):
        raise CaseFailure("a case needs a string name")
    action = _derive_action(raw, file)
    args = raw.get("args")
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise CaseFailure(f"args must be a mapping, not {type(args).__name__}")
    case_error = ExpectedError.parse(raw.get("expect_error"))
    description = raw.get("description")
    return Case(
        name=name,
        description=description if isinstance(description, str) else None,
        file=file,
        index=index,
        root=root,
        action=action,
        args=args,
        steps=_steps(raw, action, case_error),
        input=raw.get("input"),
        payload=raw.get("payload"),
        expect=raw.get("expect"),
        has_expect="expect" in raw,
        expect_error=case_error,
        catalog=_catalog(raw, root),
        raw=raw,
    )
