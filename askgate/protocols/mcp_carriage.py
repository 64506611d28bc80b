"""How any ask is put to an MCP client session through ``elicitation/create`` (protocols.md §2), pure.

askgate's MCP endpoint (askgate/server/mcp_endpoint.py) makes an MCP session a respondent: the asks
offered to its principal, whatever dialect they came in, are sent to the client as form-mode
``elicitation/create`` requests and the ``ElicitResult`` is checked here before the broker records it.

- :func:`elicitation_refusal` — why a session cannot be asked (no ``elicitation`` capability, no form
  mode, a revision without server-to-client elicitation), or None.
- :func:`request_for` — the ``elicitation/create`` params for the negotiated revision: the codec's own
  rendering (bare 2025-06-18 shape: no ``mode``, titled enums downgraded), an approval as the decision
  form askgate also uses for A2A approvers [ours].
- :func:`check_result` — the ``ElicitResult`` checked against what was asked; every fault raised.

No I/O and no clock.
"""

from __future__ import annotations

from typing import Any

from askgate.core.model import Answer, ApprovalDecision, ApprovalSpec, Ask
from askgate.errors import AskgateError, Fault
from askgate.protocols import a2a_carriage
from askgate.protocols import mcp_elicitation as codec

VERSIONS = codec.VERSIONS
#: Revisions where an elicitation rides the tool result (``InputRequiredResult``, the 2026-07-28
#: multi-round-trip flow) instead of a server-to-client request; its params are the 2025-11-25 form.
ROUND_TRIP_VERSIONS = ("2026-07-28",)


def form_version(version: str) -> str:
    """The codec revision whose form shape a session on ``version`` is sent (and answers in)."""
    return "2025-11-25" if version in ROUND_TRIP_VERSIONS else version


def elicitation_refusal(capabilities: Any, version: str | None) -> str | None:
    """Why askgate may not send form ``elicitation/create`` to this client (None: it may).

    ``capabilities`` is the client's declared ``capabilities`` as JSON (None when it declared none).
    2025-06-18: a declared ``elicitation`` (bare ``{}``) means form. 2025-11-25: a bare ``{}`` means form
    only; otherwise ``form`` must be listed (a url-only client is never sent a form) [protocols.md §2.1].
    """
    if version not in VERSIONS and version not in ROUND_TRIP_VERSIONS:
        return (f"MCP revision {version!r} has no elicitation that askgate speaks; "
                f"connect with {', '.join(VERSIONS + ROUND_TRIP_VERSIONS)}")
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(elicitation, dict):
        return ("this MCP client did not declare the elicitation capability in initialize, so askgate cannot "
                "put asks to it; declare capabilities.elicitation (form mode)")
    if version != "2025-06-18" and elicitation and "form" not in elicitation:
        return "this MCP client declared elicitation without form mode; askgate sends form mode only"
    return None


#: ``_meta`` key of the elicitation/create params: which ask, from which asker, until when (protocols.md
#: §2.5: a respondent's UI must show who is asking) [ours].
META_KEY = "askgate/ask"


def request_for(ask: Ask, version: str, *, deadline: str | None = None) -> dict[str, Any]:
    """``elicitation/create`` params for ``ask`` on ``version``; ``AskgateError(code="unsupported")`` when
    the revision cannot express the ask (multi-select or pattern on 2025-06-18, for example).

    ``_meta[META_KEY]`` names the ask id, its asker and (``deadline``, RFC 3339) when it ends."""
    params = codec.render_request(form_ask(ask) if isinstance(ask.spec, ApprovalSpec) else ask, form_version(version))
    meta = {k: v for k, v in (("id", ask.id), ("asker", ask.asker), ("deadline", deadline)) if v is not None}
    if meta:
        params["_meta"] = {META_KEY: meta}
    return params


def form_ask(ask: Ask) -> Ask:
    """An approval as the flat decision form its MCP respondent fills in (the A2A approver form)."""
    message = ask.prompt if not ask.details else f"{ask.prompt}\n\n{ask.details}"
    doc = {"message": message or "Approve this request?", "requestedSchema": a2a_carriage.approval_schema(ask.spec)}
    return codec.parse_request(doc, "2025-06-18")


def check_result(ask: Ask, result: Any, version: str) -> Answer:
    """The client's ``ElicitResult`` -> canonical Answer for ``ask``, or ``AskgateError`` with every fault.

    The result is checked with the MCP codec against the form that was sent (for 2025-06-18 peers list
    values are refused); an approval's decision form becomes an :class:`ApprovalDecision`.
    """
    asked = form_ask(ask) if isinstance(ask.spec, ApprovalSpec) else ask
    shaped = asked.model_copy(update={"dialect": codec.DIALECT, "dialect_version": form_version(version)})
    answer = codec.check_answer(shaped, result)
    if not isinstance(ask.spec, ApprovalSpec) or answer.outcome != "accept":
        return answer
    content = answer.value if isinstance(answer.value, dict) else {}
    decision = content.get(a2a_carriage.DECISION)
    if decision not in ("allow", "deny"):  # pragma: no cover - the decision field is a required enum
        raise AskgateError("invalid answer", [Fault("/content/decision", "decision must be allow or deny", "enum")],
                           code="invalid_answer")
    grant = ask.spec.intent_extension if content.get(a2a_carriage.GRANT) is True and decision == "allow" else None
    value = ApprovalDecision(decision=decision, reasoning=content.get(a2a_carriage.REASONING),
                             selected_option=content.get(a2a_carriage.OPTION), intent_extension=grant)
    return answer.model_copy(update={"value": value})


def canonical_answer(answer: Answer) -> dict[str, Any]:
    """The broker's canonical answer form, so the ask's own checks run again when it is recorded."""
    return a2a_carriage.canonical_answer(answer)


def with_faults(params: dict[str, Any], faults: list[Fault] | tuple[Fault, ...]) -> dict[str, Any]:
    """The same request again, its message prefixed with the faults of the refused answer."""
    return {**params, "message": f"{a2a_carriage.faults_text(faults)}\n\n{params['message']}"}


__all__ = ["META_KEY", "ROUND_TRIP_VERSIONS", "VERSIONS", "canonical_answer", "check_result", "elicitation_refusal", "form_ask", "form_version", "request_for", "with_faults"]
