"""``askgate validate FILE... [--as DIALECT|auto] [--json]``: check request documents.

Each file is read as bytes, decoded with :func:`askgate.jsonload.loads_strict`, its dialect detected
(or taken from ``--as``) and parsed with the dialect's codec. Every fault is printed with its JSON
pointer and rule. Exit status: 0 when every file is valid; 1 when any is invalid; 2 when any input is
unusable (missing or unreadable file, not strict JSON, dialect unknown, or an internal error) — 2 wins
over 1 because an unusable input means the verdict is incomplete. Never a traceback: every exception is
caught at this edge and reported as a message. ``-`` reads standard input.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from askgate.core.model import Dialect
from askgate.errors import AskgateError, Fault
from askgate.jsonload import loads_strict
from askgate.protocols.detect import detect_dialect
from askgate.protocols.registry import codec_for, dialect_of

__all__ = ["DialectChoice", "FileVerdict", "validate", "validate_file"]

EXIT_VALID, EXIT_INVALID, EXIT_UNUSABLE = 0, 1, 2


class DialectChoice(str, Enum):
    auto = "auto"
    a2a_elicitation = "a2a-elicitation"
    mcp_elicitation = "mcp-elicitation"
    aqp = "aqp"
    acs = "acs"


@dataclass
class FileVerdict:
    """What ``askgate validate`` concluded about one file."""

    file: str
    status: str  # "valid" | "invalid" | "unusable"
    dialect: str | None = None
    detected: bool = False
    code: str | None = None
    message: str | None = None
    faults: list[Fault] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "status": self.status,
            "dialect": self.dialect,
            "detected": self.detected,
            "code": self.code,
            "message": self.message,
            "faults": [f.as_dict() for f in self.faults],
        }


def _read(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    return Path(name).read_bytes()


def validate_file(name: str, dialect: DialectChoice | str = DialectChoice.auto) -> FileVerdict:
    """Validate one file; never raises (an unexpected exception becomes an ``unusable`` verdict)."""
    choice = dialect.value if isinstance(dialect, DialectChoice) else dialect
    try:
        try:
            data = _read(name)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            return FileVerdict(name, "unusable", code="unreadable", message=f"cannot read {name}: {reason}")
        try:
            doc = loads_strict(data)
        except AskgateError as exc:
            return FileVerdict(name, "unusable", code=exc.code, message=str(exc), faults=exc.faults)
        detected = choice == "auto"
        try:
            resolved: Dialect = detect_dialect(doc) if detected else dialect_of(choice)
            codec = codec_for(resolved)
        except AskgateError as exc:
            return FileVerdict(name, "unusable", code=exc.code, message=str(exc), faults=exc.faults)
        try:
            codec.parse_request(doc)
        except AskgateError as exc:
            return FileVerdict(
                name, "invalid", resolved.value, detected, code=exc.code, message=str(exc), faults=exc.faults
            )
        return FileVerdict(name, "valid", resolved.value, detected)
    except Exception as exc:  # noqa: BLE001 - the CLI edge: report, never a traceback
        return FileVerdict(
            name, "unusable", code="internal_error", message=f"internal error: {type(exc).__name__}: {exc}"
        )


def _print(console: Console, v: FileVerdict) -> None:
    how = f" ({v.dialect}{', detected' if v.detected else ''})" if v.dialect else ""
    name = escape(v.file)
    if v.status == "valid":
        console.print(f"[green]valid[/green]    {name}{escape(how)}")
        return
    if v.status == "invalid":
        n = len(v.faults)
        console.print(f"[bold red]invalid[/bold red]  {name}{escape(how)}: {n} fault{'s' if n != 1 else ''}")
    else:
        console.print(f"[bold yellow]unusable[/bold yellow] {name}: {escape(v.message or v.code or '')}")
        if v.code == "not_json" or v.code == "unknown_dialect":
            return  # the message already says it; the single fault would repeat it
    for f in v.faults:
        console.print(f"  {escape(f.pointer or '/')}  [dim]\\[{escape(f.rule)}][/dim]  {escape(f.message)}")


def validate(
    files: Annotated[list[str], typer.Argument(help="Request documents (JSON); '-' reads standard input.")],
    dialect: Annotated[
        DialectChoice, typer.Option("--as", help="The dialect of the files, or auto to detect each one.")
    ] = DialectChoice.auto,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document instead of text.")] = False,
) -> None:
    """Validate ask request documents; exit 0 all valid, 1 any invalid, 2 unusable input."""
    try:
        verdicts = [validate_file(name, dialect) for name in files]
        counts = {s: sum(1 for v in verdicts if v.status == s) for s in ("valid", "invalid", "unusable")}
        if as_json:
            out = {**counts, "files": [v.as_dict() for v in verdicts]}
            typer.echo(json.dumps(out, indent=2, ensure_ascii=False))
        else:
            console = Console(highlight=False, soft_wrap=True)
            for v in verdicts:
                _print(console, v)
            if len(verdicts) > 1:
                console.print(
                    f"{counts['valid']} valid, {counts['invalid']} invalid, {counts['unusable']} unusable"
                )
        code = EXIT_UNUSABLE if counts["unusable"] else EXIT_INVALID if counts["invalid"] else EXIT_VALID
    except Exception as exc:  # noqa: BLE001 - never a traceback at the CLI edge
        typer.echo(f"askgate validate: internal error: {type(exc).__name__}: {exc}", err=True)
        code = EXIT_UNUSABLE
    raise typer.Exit(code)
