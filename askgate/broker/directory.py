"""The operator's respondent directory: which respondent ids are agents or services, and where they live.

Askers on some edges can only name a respondent by id (an MCP ``ask_human(respondent=...)``, an A2A
``respondents`` list, ``/v1/asks?respondent=``), which makes a plain ``human`` respondent. The
directory (``Settings.respondent_directory``, env ``ASKGATE_RESPONDENTS``) lets the operator say that an
id is an ``agent`` (asked over A2A at its endpoint) or a ``service`` (sent a signed webhook). An entry
applies only to a respondent the asker named *without* an endpoint: an asker who gives a kind and an
endpoint keeps them (the outbound policy still vets that endpoint).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from askgate.core.model import Respondent
from askgate.core.routing import EscalationStep, Routing


def parse_directory(entries: Iterable[tuple[str, str, str]]) -> dict[str, Respondent]:
    """``(id, kind, endpoint)`` triples -> respondents by id (an empty endpoint means none)."""
    out: dict[str, Respondent] = {}
    for rid, kind, endpoint in entries:
        out[rid] = Respondent(kind=kind, id=rid, endpoint=endpoint or None)  # type: ignore[arg-type]
    return out


def _resolve(r: Respondent, directory: Mapping[str, Respondent]) -> Respondent:
    known = directory.get(r.id)
    if known is None or r.endpoint is not None:
        return r
    return r.model_copy(update={"kind": known.kind, "endpoint": known.endpoint,
                                "auth_method": r.auth_method or known.auth_method})


def resolve(routing: Routing, directory: Mapping[str, Respondent]) -> Routing:
    """``routing`` with every directory-known respondent (named without an endpoint) filled in."""
    if not directory:
        return routing
    steps = tuple(EscalationStep(s.after_seconds, tuple(_resolve(r, directory) for r in s.respondents))
                  for s in routing.escalation)
    return replace(routing, respondents=tuple(_resolve(r, directory) for r in routing.respondents),
                   escalation=steps)
