"""MCP client sessions as respondents: the ``answer_asks`` tool of askgate/server/mcp_endpoint.py.

The asks offered to the calling principal are put to its client as form-mode ``elicitation/create`` on
the negotiated revision (on the tool call's own stream; on 2026-07-28 inside an ``InputRequiredResult``),
each ``ElicitResult`` is checked by the codec (askgate/protocols/mcp_carriage.py) and a refused one is
asked again with its faults, and the answer is recorded through the broker. See docs/wire.md "MCP".
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import anyio
import mcp_types as types
import structlog
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult

from askgate.broker import Broker, BrokerError
from askgate.broker.records import iso
from askgate.core.lifecycle import AskRecord
from askgate.core.model import Respondent
from askgate.errors import AskgateError, Fault
from askgate.protocols import mcp_carriage
from askgate.protocols import mcp_elicitation as codec
from askgate.server.mcp_results import AnswerAsksOutcome, AnswerReport, tool_error, tool_result
from askgate.store import AskQuery, Principal

log = structlog.get_logger("askgate.mcp")

#: Rounds per ask: a refused ElicitResult is asked again with its faults, then given up.
MAX_ROUNDS = 3
POLL_SECONDS = 0.2


async def answer_offered_asks(broker: Broker, who: Principal, ctx: Context, max_asks: int,
                              wait_seconds: float) -> CallToolResult | InputRequiredResult:
    """The ``answer_asks`` tool: put the asks offered to ``who`` to this client and record the answers."""
    session = ctx.session
    caps = session.client_capabilities
    caps_json = caps.model_dump(mode="json", by_alias=True, exclude_none=True) if caps is not None else None
    version = ctx.protocol_version
    why = mcp_carriage.elicitation_refusal(caps_json, version)
    if why is None and version in mcp_carriage.ROUND_TRIP_VERSIONS:
        return await _answer_in_rounds(broker, who, ctx, version, max_asks, wait_seconds)
    if why is None and not session.can_send_request:
        why = "this connection cannot carry server-to-client requests (stateless or JSON-response mode)"
    if why is not None:
        return tool_error("elicitation_unavailable", why)
    assert version is not None
    reports: list[dict[str, Any]] = []
    seen: set[str] = set()
    end = time.monotonic() + wait_seconds
    while len(reports) < max_asks:
        record = await _next_offer(broker, who, seen)
        if record is None:
            if time.monotonic() >= end:
                break
            await anyio.sleep(POLL_SECONDS)
            continue
        seen.add(record.id)
        reports.append(await _put_to_client(broker, who, ctx, record, version))
    outcome = AnswerAsksOutcome(protocol_version=version, asks=[AnswerReport(**r) for r in reports])
    return tool_result(outcome.model_dump(mode="json", exclude_none=True))



async def _next_offer(broker: Broker, who: Principal, seen: set[str]) -> AskRecord | None:
    """The oldest ask offered to ``who`` that is open, not waiting for consent, and not yet tried here."""
    from askgate.broker import records

    page = await broker.list_for(who, AskQuery(state="delivered", respondent=who.id, limit=100))
    for row in reversed(page.items):
        if row.id in seen or who.id not in row.offered_to:
            continue
        record = records.from_row(row)
        if record.hold is None and not record.terminal:
            return record
    return None


async def _send_elicitation(ctx: Context, params: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """Send ``elicitation/create`` exactly as the codec rendered it, on this call's own stream, and return
    the raw result (the codec checks it, not the SDK's models). ``ServerSession.send_request`` would
    re-serialise the params through the SDK's models; the request-scoped channel sends them as they are."""
    channel = ctx.session._request_outbound
    opts: dict[str, Any] = {"timeout": timeout} if timeout is not None else {}
    return await channel.send_raw_request(codec.METHOD, params, opts or None)  # type: ignore[arg-type]


async def _elicit_unless_settled(broker: Broker, who: Principal, ctx: Context, ask_id: str, params: dict[str, Any],
                                 timeout: float | None) -> dict[str, Any] | None:
    """Send the elicitation while watching the ask: if it is settled elsewhere first (another respondent,
    its deadline, the asker withdrawing), the pending request is cancelled and None returned."""
    outcome: dict[str, Any] = {}

    async def send(scope: anyio.CancelScope) -> None:
        try:
            outcome["result"] = await _send_elicitation(ctx, params, timeout)
        except (MCPError, TimeoutError) as exc:
            outcome["error"] = exc
        scope.cancel()

    async def watch(scope: anyio.CancelScope) -> None:
        with contextlib.suppress(BrokerError):
            while not (await broker.wait(ask_id, who, 30.0)).terminal:
                pass
        scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(send, tg.cancel_scope)
        tg.start_soon(watch, tg.cancel_scope)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("result")


async def _put_to_client(broker: Broker, who: Principal, ctx: Context, record: AskRecord,
                         version: str) -> dict[str, Any]:
    ask = record.ask
    try:
        params = mcp_carriage.request_for(ask, version, deadline=iso(record.deadline_at))
    except AskgateError as exc:
        return {"ask_id": record.id, "status": "unsupported", "detail": exc.summary,
                "faults": [f.as_dict() for f in exc.faults]}
    sent = params
    faults: list[Fault] = []
    for _round in range(MAX_ROUNDS):
        remaining = None
        if record.deadline_at is not None:
            remaining = max(0.5, (record.deadline_at - broker.clock()).total_seconds())
        try:
            result = await _elicit_unless_settled(broker, who, ctx, record.id, sent, remaining)
        except MCPError as exc:
            return {"ask_id": record.id, "status": "failed", "detail": f"the client answered with error {exc.error.code}: "
                    f"{exc.error.message}"[:300]}
        except TimeoutError:
            return {"ask_id": record.id, "status": "failed", "detail": "the client did not answer before the deadline"}
        if result is None:
            current = await broker.get(record.id)
            return {"ask_id": record.id, "status": "lost", "state": current.state.value if current else None,
                    "detail": "the ask was settled elsewhere; the elicitation was cancelled"}
        checked = await _check_and_record(broker, who, record, result, version)
        if isinstance(checked, dict):
            return checked
        faults = checked
        sent = mcp_carriage.with_faults(params, faults)
    return _given_up(record.id, faults)


def _given_up(ask_id: str, faults: list[Fault]) -> dict[str, Any]:
    return {"ask_id": ask_id, "status": "refused", "detail": f"no acceptable answer in {MAX_ROUNDS} rounds",
            "faults": [f.as_dict() for f in faults]}


async def _check_and_record(broker: Broker, who: Principal, record: AskRecord, result: Any,
                            version: str) -> dict[str, Any] | list[Fault]:
    """Check an ElicitResult with the codec and record it: the report, or the faults to ask again with."""
    try:
        answer = mcp_carriage.check_result(record.ask, result, version)
    except AskgateError as exc:
        log.info("mcp_answer_refused", ask_id=record.id, faults=len(exc.faults))
        return list(exc.faults)
    respondent = record.routing.find(who.id) or Respondent(kind="human", id=who.id)
    answer = answer.model_copy(update={"respondent": respondent})
    try:
        final = await broker.answer(record.id, mcp_carriage.canonical_answer(answer), who=who)
    except BrokerError as exc:
        status = "lost" if exc.status == 409 else "refused"
        return {"ask_id": record.id, "status": status, "detail": exc.detail or exc.title,
                "faults": [f.as_dict() for f in exc.faults]}
    return {"ask_id": record.id, "status": "recorded", "outcome": answer.outcome, "state": final.state.value}


async def _answer_in_rounds(broker: Broker, who: Principal, ctx: Context, version: str, max_asks: int,
                            wait_seconds: float) -> CallToolResult | InputRequiredResult:
    """``answer_asks`` on the 2026-07-28 multi-round-trip flow: each elicitation is returned as an
    ``InputRequiredResult`` and its ``ElicitResult`` comes back on the client's retry, with the progress
    kept in ``requestState`` (sealed by the SDK, so the client cannot alter it)."""
    state: dict[str, Any] = json.loads(ctx.request_state) if ctx.request_state else {
        "reports": [], "seen": [], "end": time.time() + wait_seconds, "pending": None}
    reports: list[dict[str, Any]] = state["reports"]
    pending = state["pending"]
    state["pending"] = None
    if pending is not None:
        record = await broker.get(pending["ask"])
        raw = (ctx.input_responses or {}).get(pending["ask"])
        if record is None or record.terminal:
            reports.append({"ask_id": pending["ask"], "status": "lost", "state": record.state.value if record else None,
                            "detail": "the ask was settled elsewhere"})
        elif not isinstance(raw, types.ElicitResult):
            reports.append({"ask_id": record.id, "status": "failed", "detail": "the client sent no ElicitResult"})
        else:
            result = raw.model_dump(mode="json", by_alias=True, exclude_none=True)
            checked = await _check_and_record(broker, who, record, result, version)
            if isinstance(checked, dict):
                reports.append(checked)
            elif pending["round"] >= MAX_ROUNDS:
                reports.append(_given_up(record.id, checked))
            else:
                return _input_required(state, record, pending["round"] + 1, checked)
    while len(reports) < max_asks:
        record = await _next_offer(broker, who, set(state["seen"]))
        if record is None:
            if time.time() >= state["end"]:
                break
            await anyio.sleep(POLL_SECONDS)
            continue
        state["seen"].append(record.id)
        try:
            return _input_required(state, record, 1, [])
        except AskgateError as exc:
            reports.append({"ask_id": record.id, "status": "unsupported", "detail": exc.summary,
                            "faults": [f.as_dict() for f in exc.faults]})
    outcome = AnswerAsksOutcome(protocol_version=version, asks=[AnswerReport(**r) for r in reports])
    return tool_result(outcome.model_dump(mode="json", exclude_none=True))


def _input_required(state: dict[str, Any], record: AskRecord, round_no: int, faults: list[Fault]) -> InputRequiredResult:
    params = mcp_carriage.request_for(record.ask, mcp_carriage.ROUND_TRIP_VERSIONS[0], deadline=iso(record.deadline_at))
    if faults:
        params = mcp_carriage.with_faults(params, faults)
    request = types.ElicitRequest.model_validate({"method": codec.METHOD, "params": params})
    state = {**state, "pending": {"ask": record.id, "round": round_no}}
    return InputRequiredResult(input_requests={record.id: request}, request_state=json.dumps(state))



__all__ = ["MAX_ROUNDS", "answer_offered_asks"]
