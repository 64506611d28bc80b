"""``askgate a2ui validate`` and ``askgate a2ui parse``: the A2UI toolkit from the shell.

``validate FILE... [--version 0.8|0.9] [--catalog PATH]``: each file holds one server-to-client message
or a list of them. Without ``--version`` each file's version is detected (v0.9 messages carry
``"version": "v0.9"``). ``--catalog`` replaces the basic catalog's component schema with the one in
PATH (the server-to-client and common-types schemas stay the basic ones). Besides the validator, two
checks the schemas cannot express are made (protocols.md §5.6 trap 9): ``createSurface.catalogId``
(or v0.8 ``beginRendering.catalogId``) must name the catalog in use, and a v0.8 component wrapper must
hold exactly one type key. Exit 0 when every file is valid, 1 when any is invalid (every fault is
printed), 2 when any input is unusable (unreadable, not strict JSON, bad catalog) — 2 wins.

``parse FILE [--version ...] [--chunk N]``: feeds an LLM response to the streaming parser ``N``
characters at a time and prints every returned part as one JSON line ``{"text", "a2ui_json"}``.
Exit 1 when the parser rejects the response, 2 when the input is unusable.

Never a traceback: every exception is caught at this edge and reported as a message. ``-`` reads
standard input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from askgate.errors import AskgateError, Fault, pointer_join
from askgate.jsonload import loads_strict

__all__ = ["a2ui_app", "contract_faults", "detect_version", "standard_v08_id"]

EXIT_VALID, EXIT_INVALID, EXIT_UNUSABLE = 0, 1, 2

a2ui_app = typer.Typer(
    name="a2ui",
    help="Validate A2UI messages and parse LLM responses that carry them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class VersionChoice(str, Enum):
    v08 = "0.8"
    v09 = "0.9"


class Unusable(Exception):
    """An input the command cannot judge (reported, exit 2)."""


def _read_bytes(name: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise Unusable(f"cannot read {name}: {exc.strerror or type(exc).__name__}") from None


def _load_json(name: str) -> Any:
    try:
        return loads_strict(_read_bytes(name))
    except AskgateError as exc:
        raise Unusable(f"{name}: {exc}") from None


def detect_version(payload: Any) -> str:
    """``"0.9"`` when any message carries a ``version`` key, else ``"0.8"``."""
    messages = payload if isinstance(payload, list) else [payload]
    return "0.9" if any(isinstance(m, dict) and "version" in m for m in messages) else "0.8"


def standard_v08_id() -> str:
    """The v0.8 standard catalog's derived id (its schema has no ``catalogId``; protocols.md §5.1)."""
    from a2ui.core.basic_catalog import BasicCatalog
    from a2ui.core.schema import ProtocolVersion

    return str(BasicCatalog(ProtocolVersion("v0.8")).catalog_id)


def contract_faults(payload: Any, catalog_ids: Collection[str], version: str) -> list[Fault]:
    """What the schemas cannot say (trap 9): the catalog id in use, one type key per v0.8 component.

    ``catalog_ids`` are the ids that name the catalog in use; when it has none, the id is not checked.
    """
    faults: list[Fault] = []
    messages = payload if isinstance(payload, list) else [payload]
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        base = pointer_join("", i) if isinstance(payload, list) else ""
        key = "createSurface" if version == "0.9" else "beginRendering"
        start = m.get(key)
        named = start.get("catalogId") if isinstance(start, dict) and catalog_ids else None
        if named is not None and named not in catalog_ids:
            faults.append(
                Fault(
                    pointer_join(base, key, "catalogId"),
                    f"catalogId {named!r} is not the catalog in use: {', '.join(catalog_ids)}",
                    "a2ui.catalog-id",
                )
            )
        update = m.get("surfaceUpdate") if version == "0.8" else None
        if isinstance(update, dict) and isinstance(update.get("components"), list):
            for j, c in enumerate(update["components"]):
                wrapper = c.get("component") if isinstance(c, dict) else None
                if isinstance(wrapper, dict) and len(wrapper) != 1:
                    faults.append(
                        Fault(
                            pointer_join(base, "surfaceUpdate", "components", j, "component"),
                            f"a component wrapper must hold exactly one type key, not {len(wrapper)}",
                            "a2ui.one-type-key",
                        )
                    )
    return faults


def _catalog(version: str, catalog_path: str | None, cache: dict[tuple[str, str | None], Any]) -> Any:
    key = (version, catalog_path)
    if key not in cache:
        from askgate.a2ui.catalog import A2uiCatalog

        basic = A2uiCatalog.basic(version)
        if catalog_path is None:
            cache[key] = basic
        else:
            schema = _load_json(catalog_path)
            if not isinstance(schema, dict) or not isinstance(schema.get("components"), dict):
                raise Unusable(f"{catalog_path}: a catalog is an object with a 'components' object")
            cache[key] = A2uiCatalog.from_config(
                version, basic.s2c_schema, schema, basic.common_types_schema, name=Path(catalog_path).stem
            )
    return cache[key]


def _validator(catalog: Any, cache: dict[int, Any]) -> Any:
    from askgate.a2ui.validator import A2uiValidator

    if id(catalog) not in cache:
        try:
            cache[id(catalog)] = A2uiValidator(catalog)
        except AskgateError as exc:
            raise Unusable(f"the catalog cannot be used: {exc}") from None
    return cache[id(catalog)]


def _echo_faults(faults: list[Fault]) -> None:
    for f in faults:
        lines = f.message.splitlines() or [""]
        typer.echo(f"  {f.pointer or '/'}  [{f.rule}]  {lines[0]}")
        for line in lines[1:]:
            typer.echo(f"      {line}")


@a2ui_app.command("validate")
def validate(
    files: Annotated[
        list[str], typer.Argument(help="Files of A2UI messages (one message or a list); '-' is stdin.")
    ],
    version: Annotated[
        VersionChoice | None, typer.Option("--version", help="Protocol version (default: detect).")
    ] = None,
    catalog: Annotated[
        str | None, typer.Option("--catalog", help="A catalog schema to use instead of the basic one.")
    ] = None,
) -> None:
    """Validate A2UI server-to-client messages; exit 0 all valid, 1 any invalid, 2 unusable input."""
    catalogs: dict[tuple[str, str | None], Any] = {}
    validators: dict[int, Any] = {}
    counts = {"valid": 0, "invalid": 0, "unusable": 0}
    for name in files:
        try:
            payload = _load_json(name)
            v = version.value if version is not None else detect_version(payload)
            cat = _catalog(v, catalog, catalogs)
            faults: list[Fault] = []
            try:
                _validator(cat, validators).validate(payload)
            except AskgateError as exc:
                faults.extend(exc.faults or [Fault("", str(exc), exc.code)])
            ids = [cat.catalog_id] if cat.catalog_id else []
            if not ids and v == "0.8" and catalog is None:
                ids = [standard_v08_id()]
            faults.extend(contract_faults(payload, ids, v))
        except Unusable as exc:
            counts["unusable"] += 1
            typer.echo(f"unusable {name}: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - the CLI edge: report, never a traceback
            counts["unusable"] += 1
            typer.echo(f"unusable {name}: internal error: {type(exc).__name__}: {exc}")
            continue
        if faults:
            counts["invalid"] += 1
            typer.echo(f"invalid  {name} (v{v}): {len(faults)} fault{'s' if len(faults) != 1 else ''}")
            _echo_faults(faults)
        else:
            counts["valid"] += 1
            typer.echo(f"valid    {name} (v{v})")
    if len(files) > 1:
        typer.echo(f"{counts['valid']} valid, {counts['invalid']} invalid, {counts['unusable']} unusable")
    raise typer.Exit(
        EXIT_UNUSABLE if counts["unusable"] else EXIT_INVALID if counts["invalid"] else EXIT_VALID
    )


def _part_json(part: Any) -> str:
    return json.dumps(
        {"text": getattr(part, "text", ""), "a2ui_json": getattr(part, "a2ui_json", None)}, ensure_ascii=False
    )


@a2ui_app.command("parse")
def parse(
    file: Annotated[str, typer.Argument(help="An LLM response (UTF-8 text); '-' is stdin.")],
    version: Annotated[
        VersionChoice, typer.Option("--version", help="Protocol version.")
    ] = VersionChoice.v09,
    chunk: Annotated[
        int, typer.Option("--chunk", min=1, help="Characters fed to the parser at a time.")
    ] = 40,
) -> None:
    """Stream an LLM response through the A2UI parser; print each returned part as a JSON line."""
    try:
        try:
            text = _read_bytes(file).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unusable(f"{file} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
        from askgate.a2ui.catalog import A2uiCatalog
        from askgate.a2ui.streaming import StreamParser

        parser = StreamParser(A2uiCatalog.basic(version.value))
        for start in range(0, len(text), chunk):
            for part in parser.process_chunk(text[start : start + chunk]):
                typer.echo(_part_json(part))
    except Unusable as exc:
        typer.echo(f"askgate a2ui parse: {exc}", err=True)
        raise typer.Exit(EXIT_UNUSABLE) from None
    except AskgateError as exc:
        typer.echo(f"askgate a2ui parse: {file}: {exc}", err=True)
        for f in exc.faults:
            if f.message != str(exc):
                typer.echo(f"  {f.pointer or '/'}  [{f.rule}]  {f.message}", err=True)
        raise typer.Exit(EXIT_INVALID) from None
    except Exception as exc:  # noqa: BLE001 - the CLI edge: report, never a traceback
        typer.echo(f"askgate a2ui parse: internal error: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(EXIT_UNUSABLE) from None
