"""What the A2A ``elicitation/v1`` and MCP elicitation codecs share: the ``{action, content}`` answer.

Both dialects answer with accept / decline / cancel and a flat ``content`` object; they differ in
strictness (A2A's seed makes ``content`` required on accept and forbidden otherwise, MCP leaves it
optional and adds ``_meta`` and multi-select lists), which the callers choose with keyword flags.
"""

from __future__ import annotations

from datetime import datetime
from collections.abc import Callable
from typing import Any

from askgate.core.answers import check_value, normalise_value
from askgate.core.construct import construct, make, template
from askgate.core.model import Answer, AnswerSpec, Ask, Deadline, FormSpec, Respondent
from askgate.errors import AskgateError, Fault, pointer_join, raise_if_faults
from askgate.protocols.flat_schema import WRAPPED_FIELD, as_form, parse_requested_schema

ACTIONS = ("accept", "decline", "cancel")
CANCEL_ON_TIMEOUT = Deadline(on_timeout="cancel")
def _is_scalar(v: Any) -> bool:
    t = type(v)
    return t is str or t is bool or t is int or t is float or isinstance(v, (str, int, float))


def check_content_shape(content: Any, ptr: str, *, allow_lists: bool) -> list[Fault]:
    """``content`` is an object whose values are strings, numbers or booleans (MCP 2025-11-25: or string lists)."""
    if type(content) is not dict:
        return [Fault(ptr, "content must be an object", "type")]
    faults = []
    for key, v in content.items():
        if _is_scalar(v):
            continue
        if allow_lists and type(v) is list and all(type(x) is str for x in v):
            continue
        allowed = "a string, number, boolean or list of strings" if allow_lists else "a string, number or boolean"
        faults.append(Fault(pointer_join(ptr, key), f'content property "{key}" must be {allowed}', "type"))
    return faults


def check_message_and_schema(obj: dict, base: str, profile: str, faults: list[Fault]) -> FormSpec | None:
    """The request members both dialects share: ``message`` (a non-empty string) and ``requestedSchema``
    (a flat form of ``profile``), both required. Appends the faults; returns the form if it is valid."""
    if "message" not in obj:
        faults.append(Fault(base, "message is required", "required"))
    elif type(obj["message"]) is not str:
        faults.append(Fault(f"{base}/message", "message must be a string", "type"))
    elif not obj["message"]:
        faults.append(Fault(f"{base}/message", "message must not be empty", "minLength"))
    if "requestedSchema" not in obj:
        faults.append(Fault(base, "requestedSchema is required", "required"))
        return None
    spec, schema_faults = parse_requested_schema(obj["requestedSchema"], profile=profile, pointer=f"{base}/requestedSchema")
    faults.extend(schema_faults)
    return spec


def check_action(payload: dict, base: str) -> tuple[str | None, list[Fault]]:
    if "action" not in payload:
        return None, [Fault(base, "action is required", "required")]
    action = payload["action"]
    if type(action) is not str or action not in ACTIONS:
        return None, [Fault(f"{base}/action", "action must be accept, decline or cancel", "enum")]
    return action, []


def ask_form(ask: Ask) -> tuple[FormSpec, bool]:
    """The form an elicitation respondent sees for ``ask`` (non-form specs wrapped, see ``as_form``)."""
    return as_form(ask.spec)


def finish_answer(
    ask: Ask,
    action: str,
    content: Any,
    faults: list[Fault],
    content_ptr: str,
    *,
    respondent: Respondent | None,
    answered_at: datetime | None,
) -> Answer:
    """Check accepted ``content`` against the ask, raise every fault, or build the canonical Answer."""
    form, wrapped = ask_form(ask)
    if action == "accept" and type(content) is dict:
        taken = {f.pointer for f in faults}
        faults.extend(f for f in check_value(form, content, content_ptr) if f.pointer not in taken)
    raise_if_faults(faults, "invalid answer", code="invalid_answer")
    value: Any = None
    if action == "accept":
        value = normalise_value(form, content)
        if wrapped:
            value = value.get(WRAPPED_FIELD)
    return construct(Answer, outcome=action, value=value, respondent=respondent, answered_at=answered_at)


def wire_action(answer: Answer) -> str:
    """Canonical outcome -> elicitation action: a timeout or expiry is reported as ``cancel``."""
    return answer.outcome if answer.outcome in ("accept", "decline") else "cancel"


def wire_content(spec: AnswerSpec, answer: Answer) -> dict[str, Any]:
    """The ``content`` object for an accepted answer (lists for multi-selects, wrapped for non-forms)."""
    _form, wrapped = as_form(spec)
    value = answer.value
    if wrapped:
        return {WRAPPED_FIELD: value}
    if not isinstance(value, dict):
        return {}
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in value.items()}


_ASK = template(Ask, purpose="elicitation", deadline=CANCEL_ON_TIMEOUT)


def build_ask(**fields: Any) -> Ask:
    """Construct the Ask from already validated parts (no second validation pass)."""
    data = _ASK.copy()  # every field, defaults filled: see construct.template
    data["binding"] = {}
    data.update(fields)
    return make(Ask, data)


_ASK_OPTS = ("id", "external_id", "session_id", "asker", "respondent")


def ask_options(opts: dict[str, Any]) -> dict[str, Any]:
    """The keyword options of ``parse_request`` that land on the Ask; the rest (e.g. ``now``) are ignored."""
    if not opts:
        return {}
    out = {k: opts[k] for k in _ASK_OPTS if opts.get(k) is not None}
    if isinstance(out.get("respondent"), dict):
        out["respondent"] = Respondent.model_validate(out["respondent"])
    return out


def faults_of(parse: Callable[..., Ask], doc: Any, **opts: Any) -> list[Fault]:
    """The verdict of ``parse`` alone: every fault it would raise, ``[]`` for a valid request. The
    elicitation codecs' ``parse_request`` is fast enough that their ``validate_request`` is just this."""
    try:
        parse(doc, **opts)
    except AskgateError as exc:
        return list(exc.faults)
    return []
