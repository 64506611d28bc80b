"""The askgate command line (Typer + Rich). Subcommands live beside the code they drive."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="askgate",
    help="One broker for every way an AI agent stops to ask.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """askgate: accept asks in any dialect, route them, render them as A2UI, deliver the answer."""


from askgate.conformance.cli import conformance_app  # noqa: E402

app.add_typer(conformance_app, name="conformance")

from askgate.cli_validate import validate  # noqa: E402

app.command("validate")(validate)

from askgate.audit_cli import audit_app  # noqa: E402

app.add_typer(audit_app, name="audit")

from askgate.a2ui.cli import a2ui_app  # noqa: E402

app.add_typer(a2ui_app, name="a2ui")

from askgate.server.cli import register as _register_server  # noqa: E402

_register_server(app)

from askgate.server.demo import demo as _demo  # noqa: E402

app.command("demo")(_demo)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
