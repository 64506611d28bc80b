"""AQP consent: where a respondent stands before they may see an ask (protocols.md §3.4).

``ask_once`` looks up the stored decision for (respondent id, ``consentScope``), matching the scope
exactly: a stored grant opens the ask without asking, a stored refusal declines it without contacting
the respondent, nothing stored means ask (and then remember the reply). ``ask_always`` asks every time
and never stores. ``not_required`` skips the step. The lookup is a callable passed in, so this stays pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from .model import Consent

ConsentState = Literal["not_required", "pending", "granted_now", "stored_grant", "refused"]
ANSWERABLE: frozenset[str] = frozenset({"not_required", "granted_now", "stored_grant"})


def initial_status(
    consent: Consent, respondent_id: str, stored_consent: Callable[[str, str], bool | None]
) -> ConsentState:
    """The consent status of a respondent at the moment the ask is offered to them."""
    if consent.mode == "not_required":
        return "not_required"
    if consent.mode == "ask_always":
        return "pending"
    stored = stored_consent(respondent_id, consent.scope or "")
    if stored is True:
        return "stored_grant"
    if stored is False:
        return "refused"
    return "pending"


def remembers(consent: Consent) -> bool:
    """Whether a reply is stored for later asks (only ``ask_once``)."""
    return consent.mode == "ask_once"


def basis(status: ConsentState | None) -> Literal["not_required", "granted_now", "stored_grant"] | None:
    """The AQP ``consent.basis`` an answer from a respondent with this status carries."""
    if status in ("not_required", "granted_now", "stored_grant"):
        return status  # type: ignore[return-value]
    return None
