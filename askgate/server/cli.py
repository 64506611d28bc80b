"""`askgate serve` and `askgate token create`: the server with no set-up, and more API tokens."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any

import typer

from askgate.store.tokens import ROLES

if TYPE_CHECKING:
    from askgate.broker import Broker
    from askgate.server.settings import Settings


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
    from askgate.server.settings import Settings

    settings = Settings.from_env(db_url=db, host=host, port=port, allow_http_callbacks=allow_http_callbacks,
                                 log_level=log_level)
    tls: dict[str, object] = {}
    if tls_cert:
        import ssl

        from askgate.server.tls import PeerCertH11Protocol

        tls = {"ssl_certfile": tls_cert, "ssl_keyfile": tls_key}
        if tls_client_ca:
            tls.update(ssl_ca_certs=tls_client_ca, ssl_cert_reqs=ssl.CERT_OPTIONAL, http=PeerCertH11Protocol)
    with asyncio.Runner(loop_factory=_event_loop_factory()) as runner:
        runner.run(_serve(settings, _with_http_protocol(tls)))


def _with_http_protocol(options: dict[str, object]) -> dict[str, object]:
    """uvicorn options plus the HTTP protocol: a response's head and body in one send
    (askgate/server/http_protocol.py), unless mTLS needs its own protocol for the peer's certificate."""
    if "http" in options:
        return options
    from askgate.server.http_protocol import CoalescingHttpToolsProtocol

    return {**options, "http": CoalescingHttpToolsProtocol}


def _event_loop_factory() -> Any:
    """uvloop where it is installed (uvicorn[standard] brings it), as ``uvicorn.run`` would choose: about
    a tenth less CPU per request than the standard loop."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] installs it on every platform askgate runs on
        return None
    return uvloop.new_event_loop


async def _serve(settings: Settings, tls: dict[str, object]) -> None:
    """Start in the order that keeps deadlines: store, broker (its start settles every ask that fell due
    while askgate was down, and its scheduler runs from then on), and only then the HTTP edges, whose
    imports (FastAPI, the A2A and MCP SDKs, the inbox) take seconds and are done in a worker thread so the
    scheduler keeps settling meanwhile."""
    from askgate.server import logs
    from askgate.server.wire import make_broker
    from askgate.store import Store

    # before the broker's first line (its start-up sweep logs), redaction included; final: one process, one
    # configuration (create_app's own call then changes nothing), so loggers are cached
    logs.configure(settings.log_level, final=True)
    store = await Store.open(settings.db_url, secret_key=settings.secret_key,
                             sqlite_synchronous=settings.sqlite_synchronous)
    try:
        token = await store.ensure_first_admin()
        if token:
            typer.echo("askgate: created the first admin token (shown once, store it now):", err=True)
            typer.echo(token)
        broker = make_broker(settings, store)
        await broker.start()
        try:
            import uvicorn

            app = await asyncio.to_thread(_build_app, settings, broker)
            scheme = "https" if tls else "http"
            typer.echo(f"askgate: serving on {scheme}://{settings.host}:{settings.port}  (OpenAPI: /openapi.json)",
                       err=True)
            _settle_the_heap()
            config = uvicorn.Config(app, host=settings.host, port=settings.port, access_log=False,
                                    log_level="warning", timeout_graceful_shutdown=5, **tls)  # type: ignore[arg-type]
            await uvicorn.Server(config).serve()
        finally:
            await broker.stop()
    finally:
        await store.close()


def _settle_the_heap() -> None:
    """Move the ~250,000 objects of start-up (FastAPI, pydantic schemas, the A2A and MCP SDKs) out of the
    cyclic collector's sight, and let it run on 10,000 new container objects rather than 700: it was
    re-walking them every few hundred requests, ~5% of the CPU of a busy broker. Requests free nearly all
    they allocate by reference counting; the collector is for the rare cycle."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


def _build_app(settings: Settings, broker: Broker) -> Any:
    from askgate.server.app import create_app

    return create_app(settings, broker=broker)


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
