"""`askgate demo`: the server with a handful of example asks in every dialect, ready to answer in the inbox.

A newcomer runs one command and sees the whole thing: an A2A elicitation with every field kind, an MCP
elicitation (titled choice and multi-select), AQP queries (one plain, one ``ask_once`` consent), an ACS
approval proposing a session-wide intent extension, and an ask with a short deadline that expires while
you watch. The database is SQLite in a fresh temporary folder (or ``--dir``), so nothing is left behind.
"""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from askgate.core.lifecycle import Routing
from askgate.core.model import Respondent

__all__ = ["demo", "demo_asks", "seed"]


def _at(now: datetime, seconds: float) -> str:
    return (now + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def demo_asks(now: datetime, *, short_deadline: float = 120.0) -> list[dict[str, Any]]:
    """The example asks: ``doc`` in its dialect, plus the ``binding`` an ACS ask comes with."""
    a2a_form = {
        "message": "New vendor onboarding: please fill in the contact details",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "company": {"type": "string", "title": "Company name", "minLength": 2, "maxLength": 80},
                "email": {
                    "type": "string",
                    "title": "Billing email",
                    "format": "email",
                    "description": "Invoices go here.",
                },
                "website": {"type": "string", "title": "Website", "format": "uri"},
                "start": {"type": "string", "title": "Contract start", "format": "date"},
                "kickoff": {"type": "string", "title": "Kick-off meeting", "format": "date-time"},
                "budget": {"type": "number", "title": "Annual budget (EUR)", "minimum": 0},
                "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 50, "default": 5},
                "priority": {"type": "integer", "title": "Priority rank", "description": "1 is the highest."},
                "nda": {"type": "boolean", "title": "NDA signed", "default": False},
                "tier": {
                    "type": "string",
                    "title": "Support tier",
                    "enum": ["basic", "plus", "premium"],
                    "enumNames": ["Basic", "Plus", "Premium (24/7)"],
                    "default": "plus",
                },
            },
            "required": ["company", "email", "start", "seats", "tier"],
        },
    }
    mcp = {
        "jsonrpc": "2.0",
        "id": 41,
        "method": "elicitation/create",
        "params": {
            "message": "Which environments should the hotfix go to?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "targets": {
                        "type": "array",
                        "title": "Environments",
                        "minItems": 1,
                        "items": {"type": "string", "enum": ["staging", "eu-prod", "us-prod"]},
                    },
                    "window": {
                        "type": "string",
                        "title": "Maintenance window",
                        "oneOf": [
                            {"const": "now", "title": "Right now"},
                            {"const": "tonight", "title": "Tonight 22:00–23:00"},
                        ],
                    },
                    "notes": {"type": "string", "title": "Notes for the on-call engineer", "maxLength": 500},
                },
                "required": ["targets", "window"],
            },
        },
    }
    aqp = {
        "protocolVersion": "2026-07-30",
        "queryId": str(uuid.uuid4()),
        "type": "feedback",
        "subject": {"release": "v2.4.0", "changes": 37},
        "prompt": "How confident are you in shipping release v2.4.0 today?",
        "instructions": "Pick one; the release agent waits for a majority signal.",
        "timing": "immediate",
        "consentMode": "not_required",
        "response": {"format": "choice", "choices": ["ship it", "wait a day", "block the release"]},
        "delivery": {
            "binding": "https",
            "endpoint": "https://release-agent.example.com/aqp/answers",
            "authorization": "Bearer demo-secret-never-shown",
        },
        "expiresAt": _at(now, 6 * 3600),
    }
    aqp_consent = {
        "protocolVersion": "2026-07-30",
        "queryId": str(uuid.uuid4()),
        "type": "survey",
        "subject": "quarterly developer-experience survey",
        "prompt": "In one or two sentences: what slowed you down most this quarter?",
        "timing": "immediate",
        "consentMode": "ask_once",
        "consentScope": "dx-survey-2026",
        "dataPolicy": "Answers are kept for 90 days, aggregated, and never attributed to you by name.",
        "response": {"format": "text", "maxLength": 600},
        "delivery": {"binding": "a2a", "endpoint": "https://survey.example.org/a2a"},
        "expiresAt": _at(now, 3 * 24 * 3600),
    }
    acs = {
        "approver": {"type": "human", "id": "alice"},
        "question": "Allow the deploy agent to run database migrations on prod-eu?",
        "context": "The agent wants to apply migration 0042_add_invoice_index before the hotfix.",
        "options": ["run now", "run in the maintenance window"],
        "timeout_seconds": 1800,
        "timeout_disposition": "deny",
        "intent_extension": {
            "capabilities": [
                {"tool": "psql", "operation": "migrate", "resource": "db://prod-eu/billing"},
                {"tool": "psql", "operation": "read", "resource": "db://prod-eu/billing"},
            ],
            "scope": "session",
            "provenance": {"provenance_id": "prov-deploy-12", "origin": "user_input", "source_id": "alice"},
        },
    }
    acs_binding = {
        "session_id": "sess-deploy-7f3a",
        "agent_id": "deploy-agent",
        "step_id": "step-12",
        "request_id": "req-12",
        "method": "steps/toolCallRequest",
        "reasoning": "Tool psql:migrate is outside the session intent.",
    }
    expiring = {
        "protocolVersion": "2026-07-30",
        "queryId": str(uuid.uuid4()),
        "type": "approval",
        "subject": {"incident": "INC-2291"},
        "prompt": "Page the database on-call now?",
        "timing": "immediate",
        "consentMode": "not_required",
        "response": {"format": "boolean"},
        "delivery": {"binding": "other"},
        "expiresAt": _at(now, short_deadline),
    }
    yes_no = {
        "message": "Is the staging environment free for load testing this afternoon?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "free": {"type": "boolean", "title": "Staging is free"},
                "until": {"type": "string", "title": "Free until", "format": "date-time"},
            },
            "required": ["free"],
        },
    }
    return [
        {"doc": expiring, "dialect": "aqp"},
        {"doc": yes_no, "dialect": "a2a-elicitation"},
        {"doc": aqp_consent, "dialect": "aqp"},
        {"doc": aqp, "dialect": "aqp"},
        {"doc": acs, "dialect": "acs", "binding": acs_binding},
        {"doc": mcp, "dialect": "mcp-elicitation"},
        {"doc": a2a_form, "dialect": "a2a-elicitation"},
    ]


async def seed(
    db_url: str,
    *,
    respondents: tuple[str, ...] = ("alice", "bob"),
    short_deadline: float = 120.0,
    asker: str = "demo-agent",
) -> dict[str, str]:
    """Create the tokens and the example asks; returns ``{principal: token}``."""
    from askgate.broker import Broker
    from askgate.store import Principal, Store

    store = await Store.open(db_url)
    broker = Broker(store, scheduler=False)
    await broker.start()
    try:
        tokens = {r: await store.create_token(r, "respondent", label="demo") for r in respondents}
        tokens[asker] = await store.create_token(asker, "asker", label="demo")
        who = Principal(asker, "asker")
        routing = Routing(respondents=tuple(Respondent(kind="human", id=r) for r in respondents))
        for spec in demo_asks(datetime.now(UTC), short_deadline=short_deadline):
            route = None if spec["dialect"] == "acs" else routing  # an ACS ask names its own approver
            await broker.create(
                spec["doc"], asker=who, dialect=spec["dialect"], binding=spec.get("binding"), routing=route
            )
            await asyncio.sleep(0.01)  # distinct creation times: the list is newest first
        return tokens
    finally:
        await broker.stop()
        await store.close()


def demo(
    host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8766,
    dir: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="keep the demo database here (e.g. ./.askgate-demo); default: a new temporary folder",
        ),
    ] = None,
    short_deadline: Annotated[
        float, typer.Option(help="seconds until the short-deadline ask expires")
    ] = 120.0,
) -> None:
    """Serve askgate with example asks in every dialect; prints the inbox address and respondent tokens."""
    import uvicorn

    from askgate.server.app import create_app
    from askgate.server.settings import Settings

    folder = dir or Path(tempfile.mkdtemp(prefix="askgate-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    db_url = f"sqlite:///{(folder / 'askgate.db').resolve()}"
    tokens = asyncio.run(seed(db_url, short_deadline=short_deadline))
    shown = "127.0.0.1" if host == "0.0.0.0" else host
    typer.echo(f"askgate demo: inbox at http://{shown}:{port}/")
    for principal, token in tokens.items():
        role = "asker" if principal == "demo-agent" else "respondent"
        typer.echo(f"  {role} token for {principal}: {token}")
    typer.echo(f"  database: {folder / 'askgate.db'}")
    typer.echo("Sign in with a respondent token. Ctrl-C stops the demo.", err=True)
    settings = Settings.from_env(db_url=db_url, host=host, port=port, log_level="warning")
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=2,
    )
