"""What the audit chain records about an ask and its events: enough to audit it, never a credential.

The lifecycle's audit events pass through :func:`ijson` so every value is I-JSON (RFC 8785 can hash it)
and through :func:`ask_summary` for the ``ask`` entry, which reduces the delivery endpoint to its host
and records only whether an ``authorization`` was present.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, SecretStr

from .model import Ask
from .record import iso
from .routing import Routing

__all__ = ["ask_summary", "ijson"]


def ask_summary(ask: Ask, routing: Routing, deadline: datetime | None) -> dict[str, Any]:
    """What the audit chain records about an ask: enough to audit it, never a credential.

    The delivery endpoint is reduced to its host (a URL may carry userinfo or a token in its query);
    ``authorization`` is recorded only as present or not; ``original`` (which may hold it) is left out.
    """
    delivery = ask.delivery
    return {
        "dialect": ask.dialect.value,
        "dialect_version": ask.dialect_version,
        "external_id": ask.external_id,
        "purpose": ask.purpose,
        "prompt": ask.prompt,
        "spec": ask.spec.kind,
        "asker": ask.asker,
        "session_id": ask.session_id,
        "binding": {k: v for k, v in ask.binding.items() if isinstance(v, str)} or None,
        "routing": {
            "respondents": [x.id for x in routing.respondents],
            "rule": routing.rule,
            "quorum": routing.quorum,
            "escalation": [{"after_seconds": s.after_seconds, "respondents": [x.id for x in s.respondents]}
                           for s in routing.escalation] or None,
        },
        "deadline_at": deadline,
        "on_timeout": ask.deadline.on_timeout,
        "timing": ask.timing,
        "consent": {"mode": ask.consent.mode, "scope": ask.consent.scope},
        "delivery": {
            "binding": delivery.binding,
            "endpoint_host": _host(delivery.endpoint),
            "operation": delivery.operation,
            "authorization_present": delivery.authorization is not None,
        },
        "notes": list(ask.notes) or None,
    }


def _host(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


_MAX_SAFE = 2**53 - 1


def ijson(value: Any) -> Any:
    """Audit data as I-JSON: models dumped without nulls, datetimes as RFC 3339, None members dropped,
    integers beyond ±(2^53-1) and non-finite floats as strings (JCS cannot hash them otherwise)."""
    # Exact built-in types first, by identity of their type (the bulk of every entry, three entries per
    # ask); they are never models, credentials or datetimes, so this is the general rule below, faster.
    t = type(value)
    if t is str or t is bool or value is None:
        return value
    if t is dict:
        return {k if type(k) is str else str(k): v if type(v) is str else ijson(v)
                for k, v in value.items() if v is not None}
    if t is list or t is tuple:
        return [v if type(v) is str else ijson(v) for v in value]
    if t is int:
        return value if -_MAX_SAFE <= value <= _MAX_SAFE else str(value)
    return _ijson_general(value)


def _ijson_general(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return ijson(value.model_dump(mode="json", exclude_none=True))
    if isinstance(value, SecretStr):
        raise ValueError("a credential must never enter the audit chain")
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -_MAX_SAFE <= value <= _MAX_SAFE else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): ijson(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [ijson(v) for v in value]
    return str(value)
