"""`askgate serve` and `askgate token create`: the server with no set-up, and more API tokens."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from askgate.store.tokens import ROLES


def serve(
    host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8765,
    db: Annotated[str | None, typer.Option(help="database URL: sqlite:///path.db or postgresql://...; "
                                           "default ./.askgate/askgate.db", envvar="ASKGATE_DB")] = None,
    allow_http_callbacks: Annotated[bool, typer.Option(help="allow plain-http callbacks to non-loopback hosts")] = False,
    log_level: Annotated[str, typer.Option(help="debug, info, warning, error")] = "info",
    tls_cert: Annotated[str | None, typer.Option(help="serve HTTPS with this certificate (PEM)")] = None,
    tls_key: Annotated[str | None, typer.Option(help="the private key of --tls-cert (PEM)")] = None,
    tls_client_ca: Annotated[str | None, typer.Option(help="CA bundle for client certificates (ACS mtls "
                                                      "approvers); requests a certificate, optional")] = None,
) -> None:
    """Serve the askgate HTTP API (migrates the database; prints a first admin token once)."""
    import uvicorn

    from askgate.server.app import create_app
    from askgate.server.settings import Settings

    settings = Settings.from_env(db_url=db, host=host, port=port, allow_http_callbacks=allow_http_callbacks,
                                 log_level=log_level)
    token = asyncio.run(_first_admin(settings.db_url, settings.secret_key))
    if token:
        typer.echo("askgate: created the first admin token (shown once, store it now):", err=True)
        typer.echo(token)
    tls: dict[str, object] = {}
    if tls_cert:
        import ssl

        from askgate.server.tls import PeerCertH11Protocol

        tls = {"ssl_certfile": tls_cert, "ssl_keyfile": tls_key}
        if tls_client_ca:
            tls.update(ssl_ca_certs=tls_client_ca, ssl_cert_reqs=ssl.CERT_OPTIONAL, http=PeerCertH11Protocol)
    scheme = "https" if tls_cert else "http"
    typer.echo(f"askgate: serving on {scheme}://{host}:{port}  (OpenAPI: /openapi.json)", err=True)
    uvicorn.run(create_app(settings), host=host, port=port, access_log=False, log_level="warning",
                timeout_graceful_shutdown=5, **tls)  # type: ignore[arg-type]


async def _first_admin(db_url: str | None, secret_key: str | None) -> str | None:
    from askgate.store import Store

    store = await Store.open(db_url, secret_key=secret_key)
    try:
        return await store.ensure_first_admin()
    finally:
        await store.close()


token_app = typer.Typer(help="API tokens (stored hashed; a token is shown once).", no_args_is_help=True)


@token_app.command("create")
def token_create(
    role: Annotated[str, typer.Option(help=f"one of {', '.join(ROLES)}")],
    principal: Annotated[str, typer.Option(help="the principal (respondent ids and ACS approver ids are principals)")],
    db: Annotated[str | None, typer.Option(help="database URL (as for serve)", envvar="ASKGATE_DB")] = None,
    label: Annotated[str | None, typer.Option(help="a note kept with the token")] = None,
) -> None:
    """Create a token for PRINCIPAL with ROLE and print it (once)."""
    if role not in ROLES:
        raise typer.BadParameter(f"role must be one of {', '.join(ROLES)}", param_hint="--role")

    async def run() -> str:
        from askgate.store import Store

        store = await Store.open(db)
        try:
            return await store.create_token(principal, role, label=label)
        finally:
            await store.close()

    try:
        typer.echo(asyncio.run(run()))
    except ValueError as exc:
        typer.echo(f"askgate: {exc}", err=True)
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.add_typer(token_app, name="token")
