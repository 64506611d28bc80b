"""Server settings: one frozen object handed to ``create_app`` (the CLI and tests build it)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    db_url: str | None = None  # None: SQLite at ./.askgate/askgate.db
    host: str = "127.0.0.1"
    port: int = 8765
    secret_key: str | None = None  # seals stored credentials; default: ASKGATE_SECRET_KEY or a generated key
    sqlite_synchronous: str = "FULL"  # FULL: an acknowledged write survives power loss, not just a crash
    allow_http_callbacks: bool = False  # plain-http callbacks only to loopback unless this is set
    max_wait_seconds: float = 300.0
    scheduler: bool = True
    auth_cache_seconds: float = 2.0  # a revoked token may keep working this long
    log_level: str = "info"
    # outbound calls (AQP push, webhooks, A2A/MCP peers): askgate/channels/outbound.py
    outbound_allow: tuple[str, ...] = ()  # hosts or CIDRs reachable although not globally routable
    outbound_allow_http_loopback: bool = False  # plain http to an allowed loopback address (development)
    outbound_ca_file: str | None = None  # trust store for outbound TLS (default: the system's)
    outbound_client_cert: str | None = None  # mTLS: the certificate (and key) askgate presents
    outbound_client_key: str | None = None
    webhook_secrets: tuple[tuple[str, str], ...] = ()  # (service respondent id or "*", HMAC secret)
    # ACS approver authentication (askgate/server/acs_endpoint.py): (identity, approver id) pairs, where
    # identity is "principal:<askgate principal>" (bearer) or "mtls:<certificate SAN or subject CN>"
    approver_identities: tuple[tuple[str, str], ...] = ()
    # MCP ask_human / request_approval without a respondent ask this id (askgate/server/mcp_endpoint.py)
    mcp_default_respondent: str | None = None
    # respondent directory (askgate/broker/directory.py): (id, kind, endpoint) of operator-known agents/services
    respondent_directory: tuple[tuple[str, str, str], ...] = ()

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        env = os.environ
        base = cls(db_url=env.get("ASKGATE_DB"), secret_key=env.get("ASKGATE_SECRET_KEY"),
                   sqlite_synchronous=env.get("ASKGATE_SQLITE_SYNCHRONOUS", "FULL"), **_wire_env(env))
        return cls(**{**base.__dict__, **{k: v for k, v in overrides.items() if v is not None}})  # type: ignore[arg-type]


def _pairs(text: str | None) -> tuple[tuple[str, str], ...]:
    """``"a=b,c=d"`` -> ``(("a", "b"), ("c", "d"))`` (the first ``=`` splits; blanks are skipped)."""
    out = []
    for item in (text or "").split(","):
        key, sep, value = item.strip().partition("=")
        if sep and key.strip():
            out.append((key.strip(), value.strip()))
    return tuple(out)


def _wire_env(env: os._Environ[str] | dict[str, str]) -> dict[str, object]:
    """The outbound and approver settings from the environment (docs/wire.md)."""
    out: dict[str, object] = {}
    allow = env.get("ASKGATE_OUTBOUND_ALLOW")
    if allow:
        out["outbound_allow"] = tuple(a.strip() for a in allow.split(",") if a.strip())
    if env.get("ASKGATE_OUTBOUND_ALLOW_HTTP_LOOPBACK", "") in ("1", "true", "yes"):
        out["outbound_allow_http_loopback"] = True
    for name in ("ca_file", "client_cert", "client_key"):
        value = env.get(f"ASKGATE_OUTBOUND_{name.upper()}")
        if value:
            out[f"outbound_{name}"] = value
    if env.get("ASKGATE_WEBHOOK_SECRETS"):
        out["webhook_secrets"] = _pairs(env.get("ASKGATE_WEBHOOK_SECRETS"))
    if env.get("ASKGATE_RESPONDENTS"):  # id=kind@endpoint,...
        out["respondent_directory"] = tuple((rid, *value.split("@", 1)) if "@" in value else (rid, value, "")
                                            for rid, value in _pairs(env.get("ASKGATE_RESPONDENTS")))
    if env.get("ASKGATE_MCP_DEFAULT_RESPONDENT"):
        out["mcp_default_respondent"] = env["ASKGATE_MCP_DEFAULT_RESPONDENT"].strip()
    if env.get("ASKGATE_APPROVER_IDENTITIES"):
        out["approver_identities"] = _pairs(env.get("ASKGATE_APPROVER_IDENTITIES"))
    return out
