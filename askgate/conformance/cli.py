"""``askgate conformance run SUITE...``: run suite files and report every case.

Prints a Rich table (case id = file:index, name, action, result, detail on failure) and then exactly
``N passed, N failed``. Exit 0 only when at least one case ran and none failed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from askgate.conformance.runner import RunReport

conformance_app = typer.Typer(
    name="conformance",
    help="Run conformance suite files (A2UI conformance format).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _table(report: RunReport, failures_only: bool) -> Table:
    table = Table(title="conformance", show_lines=False)
    table.add_column("case", no_wrap=True)
    table.add_column("name", overflow="fold")
    table.add_column("action", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for r in report.results:
        if failures_only and r.passed:
            continue
        result = "[green]pass[/green]" if r.passed else "[bold red]FAIL[/bold red]"
        table.add_row(escape(r.id), escape(r.name), escape(r.action or "-"), result, escape(r.detail))
    return table


@conformance_app.command("run")
def run(
    suites: Annotated[list[Path], typer.Argument(help="Suite files (or directories of *.yaml).")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON document instead of a table.")
    ] = False,
    failures_only: Annotated[bool, typer.Option("--failures-only", help="List failed cases only.")] = False,
) -> None:
    """Run every case in SUITE files; exit 1 on any failure or when no case was collected."""
    try:
        from askgate.conformance.runner import run_suites  # on use: every other command starts faster

        report = run_suites(suites)
    except Exception as exc:  # noqa: BLE001 - never a traceback at the CLI edge
        typer.echo(f"askgate conformance: internal error: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
    else:
        console = Console(highlight=False, soft_wrap=False)
        if not console.is_terminal:  # a pipe or a file: do not squeeze details into 80 columns
            console = Console(highlight=False, soft_wrap=False, width=200)
        console.print(_table(report, failures_only))
        if report.missing_modules:
            console.print(
                f"[dim]action modules not present: {escape(', '.join(report.missing_modules))}[/dim]"
            )
        if report.cases == 0:
            console.print("[bold red]no cases collected[/bold red]")
        typer.echo(report.summary())
    raise typer.Exit(0 if report.ok else 1)
