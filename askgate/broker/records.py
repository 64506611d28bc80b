"""Mapping between the lifecycle's AskRecord, the store's AskRow, and what callers are shown.

Views are built here (not in the server) so that every edge (HTTP, SSE, callbacks, the Python client)
shows the same thing, and so the rule "no credential, no consent decision, no raw original leaves" is
enforced in one place.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from askgate.core.lifecycle import AskRecord, final_answer, next_wake, past_expiry
from askgate.core.memo import IdentityMemo
from askgate.core.routing import routing_json
from askgate.core.timefmt import iso_z
from askgate.core.model import Answer, ApprovalDecision, Dialect
from askgate.errors import AskgateError
from askgate.store import AskRow

_ACS_NS = uuid.UUID("6a0b5c64-8f3e-4d7a-9c1e-2b5d4f6a8e10")


def iso(value: datetime | None) -> str | None:
    return iso_z(value) if value is not None else None


# The AskRecord each recently written record dict was made from, so the read that follows a write (an
# answer after its create) gets that record back instead of rebuilding it with pydantic. Found by the
# dict's identity: the store hands back the very dict it was given while the stored text is unchanged
# (askgate/store/record_memo.py). Only records that JSON gives back equal are listed
# (from_json(to_json(r)) == r is tested for every reachable record in tests/core/test_lifecycle_stateful.py);
# one holding a delivery credential is not, since its JSON leaves the credential out.
_made_from: IdentityMemo[dict[str, Any], AskRecord] = IdentityMemo()


def to_row(record: AskRecord) -> AskRow:
    ask = record.ask
    doc = record.to_json()
    if ask.delivery.authorization is None:
        _made_from.put(doc, record)
    return AskRow(
        id=record.id,
        version=record.version,
        state=record.state.value,
        terminal=record.terminal,
        dialect=ask.dialect.value,
        created_at=record.created_at,
        record=doc,
        asker=ask.asker,
        session_id=ask.session_id,
        external_id=ask.external_id,
        next_wake_at=next_wake(record),
        offered_to=record.offered_to,
    )


def from_row(row: AskRow) -> AskRecord:
    made = _made_from.get(row.record)
    return made if made is not None else AskRecord.from_json(row.record)


def answer_json(answer: Answer | None) -> dict[str, Any] | None:
    if answer is None:
        return None
    data = answer.model_dump(mode="json", exclude_none=True)
    if isinstance(answer.value, ApprovalDecision):
        data["value"] = answer.value.model_dump(mode="json", exclude_none=True)
    return data


def dialect_response(record: AskRecord, *, now: datetime, chain_hash: str | None = None) -> Any:
    """The terminal outcome as the asker's own dialect expresses it (None while open or not expressible)."""
    outcome = final_answer(record)
    if outcome is None:
        return None
    ask = record.ask
    try:
        if ask.dialect == Dialect.CANONICAL:
            return answer_json(outcome)
        from askgate.protocols.registry import codec_for

        codec = codec_for(ask.dialect)
        if ask.dialect == Dialect.AQP:
            basis = outcome.consent_basis
            return codec.render_answer(ask, outcome, issued_at=now, consent_basis=basis)
        if ask.dialect == Dialect.ACS:
            original = ask.original if isinstance(ask.original, dict) else {}
            rpc_id = original.get("id") if "jsonrpc" in original else record.id
            request_id = str(uuid.uuid5(_ACS_NS, record.id))
            return codec.render_answer(ask, outcome, request_id=request_id, jsonrpc_id=rpc_id,
                                       chain_hash=chain_hash)
        return codec.render_answer(ask, outcome)
    except AskgateError:
        return None  # e.g. an ACS ask withdrawn by its asker: ACS has no way to say "cancelled"


def view(record: AskRecord, *, now: datetime, chain_hash: str | None = None) -> dict[str, Any]:
    """What asker, respondent and admin see of an ask: never credentials, votes or consent decisions."""
    ask = record.ask
    outcome = final_answer(record)
    response = dialect_response(record, now=now, chain_hash=chain_hash) if outcome is not None else None
    if outcome is not None and withheld_after_expiry(record, now):
        # protocols.md §3.4: from expiresAt on, a recorded AQP answer is never released (not even by pull)
        outcome = Answer(outcome="expired", answered_at=record.deadline_at)
        response = {"protocolVersion": ask.dialect_version, "queryId": ask.external_id, "status": "expired",
                    "issuedAt": iso(now)}
    return {
        "id": record.id,
        "dialect": ask.dialect.value,
        "state": record.state.value,
        "hold": record.hold,
        "terminal": record.terminal,
        "version": record.version,
        "created_at": iso(record.created_at),
        "deadline_at": iso(record.deadline_at),
        "settled_at": iso(record.settled_at),
        "asker": ask.asker,
        "session_id": ask.session_id,
        "external_id": ask.external_id,
        "purpose": ask.purpose,
        "prompt": ask.prompt,
        "details": ask.details,
        "subject": ask.subject,
        "spec": _spec_view(ask.spec),
        "timing": ask.timing,
        "consent": {"mode": ask.consent.mode, "scope": ask.consent.scope, "data_policy": ask.consent.data_policy},
        "respondents": routing_json(record.routing)["respondents"],
        "rule": record.routing.rule,
        "offered_to": list(record.offered_to),
        "outcome": answer_json(outcome),
        "response": response,
    }


# made once per spec object (frozen, kept across an ask's steps); shared, read-only
_spec_view: IdentityMemo[Any, dict[str, Any]] = IdentityMemo(
    lambda spec: spec.model_dump(mode="json", exclude_none=True))


def withheld_after_expiry(record: AskRecord, now: datetime) -> bool:
    """An AQP answer (or decline, or cancellation) that is past ``expiresAt``: it is no longer shown
    (AQP's own endpoint still shows one that was delivered before the deadline)."""
    return (record.ask.dialect == Dialect.AQP and record.terminal and record.state.value != "expired"
            and past_expiry(record, now))
