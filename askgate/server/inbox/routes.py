"""The web inbox: where a respondent sees the asks offered to them and answers them (docs/inbox.md).

Every ask is shown as its A2UI surface (:func:`askgate.a2ui.surface.ask_to_surface`, v0.9) rendered to
HTML by :mod:`askgate.a2ui.html`; pressing a button produces the A2UI action event (built by the page's
script, or from the posted form by :func:`askgate.a2ui.html.form_to_event`), which
:func:`askgate.a2ui.answer.action_to_payload` turns into a checked answer for the broker. Faults come
back as the same surface re-rendered with ``faults=`` and what was typed. The list stays live through
Server-Sent Events fed by :mod:`askgate.broker.feed`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from sse_starlette.sse import EventSourceResponse

from askgate.a2ui.answer import action_to_payload, typed_values
from askgate.a2ui.html import form_to_event, render_surface
from askgate.a2ui.surface import ask_to_surface
from askgate.broker import Broker, BrokerError
from askgate.broker.feed import RESYNC, feed_of
from askgate.broker.records import from_row
from askgate.core.audit import verify_chain
from askgate.core.lifecycle import AskRecord
from askgate.errors import AskgateError, Fault
from askgate.jsonload import loads_strict
from askgate.server.inbox import session as sess
from askgate.server.inbox import views
from askgate.store import AskQuery

HERE = Path(__file__).parent
VERSION: Literal["0.9"] = "0.9"
MAX_EVENT = 256 * 1024
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)

_env = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def _page(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    resp = HTMLResponse(_env.get_template(name).render(**ctx), status_code=status)
    _harden(resp)
    return resp


def _harden(resp: Response) -> None:
    resp.headers["Content-Security-Policy"] = CSP
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Referrer-Policy"] = "same-origin"
    resp.headers["X-Frame-Options"] = "DENY"
    resp.headers["Cache-Control"] = "no-store"


def _broker(request: Request) -> Broker:
    return request.app.state.broker


def _now(request: Request) -> datetime:
    return _broker(request).clock()


def _see_other(url: str) -> RedirectResponse:
    resp = RedirectResponse(url, status_code=303)
    _harden(resp)
    return resp


def _wants_json(request: Request) -> bool:
    return request.headers.get("content-type", "").startswith("application/json")


async def _form_items(request: Request) -> list[tuple[str, str]]:
    form = await request.form()
    return [(k, v) for k, v in form.multi_items() if isinstance(v, str)]


def _refuse_csrf(request: Request) -> Response:
    if _wants_json(request):
        resp: Response = JSONResponse(
            {"status": "forbidden", "message": "missing or wrong CSRF token; reload the page"},
            status_code=403,
        )
    else:
        resp = HTMLResponse(
            "<!doctype html><title>Refused</title><p>Refused: missing or wrong CSRF token. "
            '<a href="/">Reload the inbox</a>.</p>',
            status_code=403,
        )
    _harden(resp)
    return resp


async def _record_for(request: Request, ask_id: str, me: str) -> AskRecord | None:
    row = await _broker(request).store.get_ask(ask_id)
    if row is None or me not in row.offered_to:
        return None
    return from_row(row)


def _base_ctx(s: sess.Session | None, active: str) -> dict[str, Any]:
    return {"me": s.principal.id if s else None, "csrf": s.csrf if s else "", "active": active}


# --------------------------------------------------------------------------------------------------


def build_router() -> APIRouter:
    r = APIRouter(include_in_schema=False)

    @r.get("/")
    async def home(request: Request, q: str = "", dialect: str = "", kind: str = "") -> Response:
        s = await sess.current_session(request)
        if s is None:
            return _login_page(request, None)
        me, now = s.principal.id, _now(request)
        # Only "delivered" asks are offered to anyone ("pending" ones wait for a signal or a respondent).
        page = await _broker(request).list_for(s.principal, AskQuery(state="delivered", limit=500))
        records = [from_row(row) for row in page.items]
        items = [views.item(rec, me, now) for rec in records if views.is_open_for(rec, me)]
        shown = [
            i
            for i in items
            if (not dialect or i["dialect"] == dialect)
            and (not kind or i["kind"] == kind)
            and (not q or q.lower() in i["search"])
        ]
        return _page(
            "list.html",
            **_base_ctx(s, "inbox"),
            items=shown,
            total=len(items),
            q=q,
            dialect=dialect,
            kind=kind,
            dialects=views.DIALECTS,
            kinds=views.KINDS,
            done=request.query_params.get("done"),
        )

    @r.post("/inbox/login")
    async def login(request: Request) -> Response:
        form = dict(await _form_items(request))
        nonce = request.cookies.get(sess.LOGIN_COOKIE)
        if not sess.same_origin(request) or not nonce or not sess.csrf_ok(nonce, form.get(sess.CSRF_FIELD)):
            return _refuse_csrf(request)
        token = (form.get("token") or "").strip()
        who = await sess.principal_for(request, token) if token and len(token) < 512 else None
        if who is None or who.role != "respondent":
            msg = "That token is not a respondent token." if who is not None else "Unknown or revoked token."
            return _login_page(request, msg, 401)
        resp = _see_other("/")
        await sess.start_session(request, resp, token)
        return resp

    @r.post("/inbox/logout")
    async def logout(request: Request) -> Response:
        s = await sess.current_session(request)
        form = dict(await _form_items(request))
        if s is None or not sess.csrf_ok(s.csrf, form.get(sess.CSRF_FIELD)):
            return _refuse_csrf(request)
        resp = _see_other("/")
        sess.end_session(resp)
        return resp

    @r.get("/inbox/history")
    async def history(request: Request) -> Response:
        s = await sess.current_session(request)
        if s is None:
            return _see_other("/")
        now = _now(request)
        page = await _broker(request).list_for(s.principal, AskQuery(limit=500))
        done = [from_row(row) for row in page.items if row.terminal]
        done.sort(key=lambda rec: rec.settled_at or rec.created_at, reverse=True)
        return _page(
            "history.html", **_base_ctx(s, "history"), items=[views.history_item(x, now) for x in done]
        )

    @r.get("/inbox/asks/{ask_id}")
    async def ask_page(request: Request, ask_id: str) -> Response:
        s = await sess.current_session(request)
        if s is None:
            return _see_other("/")
        rec = await _record_for(request, ask_id, s.principal.id)
        if rec is None:
            return _page("missing.html", 404, **_base_ctx(s, "inbox"))
        return await _ask_response(request, s, rec)

    @r.post("/inbox/asks/{ask_id}/action")
    async def action(request: Request, ask_id: str) -> Response:
        s = await sess.current_session(request)
        if s is None:
            return _json_or_page(
                request, 401, {"status": "signed_out", "message": "Your session ended; sign in again."}
            )
        as_json = _wants_json(request)
        if as_json:
            given = request.headers.get(sess.CSRF_HEADER)
        else:
            items = await _form_items(request)
            given = dict(items).get(sess.CSRF_FIELD)
        if not sess.same_origin(request) or not sess.csrf_ok(s.csrf, given):
            return _refuse_csrf(request)
        rec = await _record_for(request, ask_id, s.principal.id)
        if rec is None:
            return _json_or_page(request, 404, {"status": "missing", "message": "No such ask in your inbox."})
        if as_json:
            body = await request.body()
            if len(body) > MAX_EVENT:
                return JSONResponse({"status": "invalid", "message": "event too large"}, status_code=413)
            try:
                event = loads_strict(body)
            except AskgateError:
                return JSONResponse(
                    {"status": "invalid", "message": "the event is not JSON"}, status_code=400
                )
        else:
            messages = ask_to_surface(rec.ask, VERSION)
            stamp = datetime.now(UTC).isoformat().replace("+00:00", "Z")
            event = form_to_event(
                messages, [(k, v) for k, v in items if k != sess.CSRF_FIELD], timestamp=stamp
            )
        return await _submit(request, s, rec, event, as_json)

    @r.post("/inbox/asks/{ask_id}/consent")
    async def consent(request: Request, ask_id: str) -> Response:
        s = await sess.current_session(request)
        if s is None:
            return _see_other("/")
        form = dict(await _form_items(request))
        if not sess.same_origin(request) or not sess.csrf_ok(s.csrf, form.get(sess.CSRF_FIELD)):
            return _refuse_csrf(request)
        rec = await _record_for(request, ask_id, s.principal.id)
        if rec is None:
            return _page("missing.html", 404, **_base_ctx(s, "inbox"))
        granted = form.get("granted") == "true"
        try:
            await _broker(request).consent(ask_id, granted, who=s.principal)
        except BrokerError as exc:
            rec = await _record_for(request, ask_id, s.principal.id) or rec
            return await _ask_response(request, s, rec, notice=exc.detail or exc.title, status=exc.status)
        return _see_other(f"/inbox/asks/{ask_id}" if granted else "/")

    @r.get("/inbox/asks/{ask_id}/audit")
    async def audit(request: Request, ask_id: str) -> Response:
        s = await sess.current_session(request)
        if s is None:
            return _see_other("/")
        rec = await _record_for(request, ask_id, s.principal.id)
        if rec is None:
            return _page("missing.html", 404, **_base_ctx(s, "inbox"))
        store = _broker(request).store
        chains = [("This ask", await store.audit_chain("ask", ask_id))]
        if rec.ask.session_id:
            chains.append(
                (f"Session {rec.ask.session_id}", await store.audit_chain("session", rec.ask.session_id))
            )
        shown = []
        for title, entries in chains:
            v = verify_chain(entries)
            shown.append(
                {
                    "title": title,
                    "ok": v.ok,
                    "first_bad": v.first_bad,
                    "reason": v.reason,
                    "head": v.head,
                    "entries": [_entry_row(e, own_ask=title == "This ask") for e in entries],
                }
            )
        return _page(
            "audit.html",
            **_base_ctx(s, "history"),
            ask=views.history_item(rec, _now(request))
            if rec.terminal
            else views.item(rec, s.principal.id, _now(request)),
            chains=shown,
            terminal=rec.terminal,
        )

    @r.get("/inbox/events")
    async def events(request: Request) -> Response:
        s = await sess.current_session(request)
        if s is None:
            return JSONResponse({"status": "signed_out"}, status_code=401)
        me = s.principal.id
        broker = _broker(request)
        feed = feed_of(broker)

        async def stream() -> Any:
            async with feed.subscribe() as queue:
                yield {"event": "hello", "data": json.dumps({"me": me})}
                while True:
                    ask_id = await queue.get()
                    if ask_id == RESYNC:
                        yield {"event": "resync", "data": "{}"}
                        continue
                    row = await broker.store.get_ask(ask_id)
                    if row is None or me not in row.offered_to:
                        continue
                    rec = from_row(row)
                    if views.is_open_for(rec, me):
                        item = views.item(rec, me, broker.clock())
                        html = _env.get_template("_item.html").render(i=item)
                        yield {
                            "event": "upsert",
                            "id": f"{rec.id}:{rec.version}",
                            "data": json.dumps(
                                {
                                    "id": rec.id,
                                    "version": rec.version,
                                    "html": html,
                                    "item": {k: item[k] for k in ("dialect", "kind", "search")},
                                }
                            ),
                        }
                    else:
                        yield {
                            "event": "remove",
                            "id": f"{rec.id}:{rec.version}",
                            "data": json.dumps(
                                {
                                    "id": rec.id,
                                    "state": rec.state.value,
                                    "terminal": rec.terminal,
                                    "message": views.settled_text(rec)
                                    if rec.terminal
                                    else "You have answered this ask.",
                                }
                            ),
                        }

        resp = EventSourceResponse(stream(), ping=10)
        resp.headers["Cache-Control"] = "no-store"
        return resp

    return r


def _login_page(request: Request, error: str | None, status: int = 200) -> HTMLResponse:
    nonce = sess.login_nonce(request)
    resp = _page("login.html", status, **{**_base_ctx(None, "login"), "csrf": nonce}, error=error)
    sess.set_login_nonce(request, resp, nonce)
    return resp


def _json_or_page(request: Request, status: int, body: dict[str, Any]) -> Response:
    if _wants_json(request):
        return JSONResponse(body, status_code=status)
    resp = HTMLResponse(
        f'<!doctype html><title>askgate</title><p>{body["message"]} <a href="/">Back to the inbox</a></p>',
        status_code=status,
    )
    _harden(resp)
    return resp


def _entry_row(e: dict[str, Any], *, own_ask: bool) -> dict[str, Any]:
    """One audit entry for display; in the ask's own chain its (repeated) ask id is left out."""
    hidden = {"entry_hash", "previous_hash", "entry_id", "step_id", "step_type", "timestamp"} | (
        {"ask_id"} if own_ask else set()
    )
    data = {k: v for k, v in e.items() if k not in hidden}
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return {
        "id": e.get("entry_id"),
        "step_type": e.get("step_type"),
        "timestamp": e.get("timestamp"),
        "hash": str(e.get("entry_hash", ""))[:16],
        "previous": str(e.get("previous_hash") or "")[:16],
        "data": text if len(text) <= 400 else text[:399] + "…",
    }


def _surface_html(
    rec: AskRecord,
    s: sess.Session,
    *,
    values: dict[str, Any] | None = None,
    faults: list[Fault] | tuple[Fault, ...] = (),
) -> str:
    messages = ask_to_surface(rec.ask, VERSION, values=values, faults=faults)
    return render_surface(
        messages,
        action=f"/inbox/asks/{rec.id}/action",
        hidden={sess.CSRF_FIELD: s.csrf},
        heading_shift=-1,
        hints=views.field_hints(rec),
    )


async def _ask_response(
    request: Request,
    s: sess.Session,
    rec: AskRecord,
    *,
    values: dict[str, Any] | None = None,
    faults: list[Fault] | tuple[Fault, ...] = (),
    notice: str | None = None,
    status: int = 200,
) -> Response:
    me, now = s.principal.id, _now(request)
    consent_needed = rec.consent_of(me) == "pending" and not rec.terminal
    open_ = views.is_open_for(rec, me)
    intent = None
    if rec.ask.session_id and rec.ask.spec.kind == "approval":
        intent = await _broker(request).store.get_intent(rec.ask.session_id)
    surface = _surface_html(rec, s, values=values, faults=faults) if open_ and not consent_needed else None
    return _page(
        "ask.html",
        status,
        **_base_ctx(s, "inbox"),
        i=views.item(rec, me, now),
        rec=rec,
        surface=surface,
        consent_needed=consent_needed,
        open=open_,
        settled=views.settled_text(rec)
        if rec.terminal
        else ("You have answered this ask." if not open_ else None),
        approval=views.approval_panel(rec, intent),
        aqp=views.consent_panel(rec),
        subject=views.subject_text(rec.ask),
        details=rec.ask.details,
        notice=notice,
        has_faults=bool(faults),
    )


async def _submit(request: Request, s: sess.Session, rec: AskRecord, event: Any, as_json: bool) -> Response:
    """An action event -> a checked answer through the broker; faults re-render the surface."""
    try:
        outcome, value = action_to_payload(rec.ask, event, VERSION)
    except AskgateError as exc:
        values = typed_values(event, VERSION)
        return await _faulted(request, s, rec, values, list(exc.faults), as_json)
    payload: dict[str, Any] = {"outcome": outcome}
    if outcome == "accept":
        payload["value"] = value
    try:
        done = await _broker(request).answer(rec.id, payload, who=s.principal)
    except BrokerError as exc:
        if exc.status == 409:
            current = await _record_for(request, rec.id, s.principal.id) or rec
            msg = (
                "Already taken. " + views.settled_text(current)
                if current.terminal
                else (exc.detail or exc.title)
            )
            if as_json:
                return JSONResponse({"status": "taken", "message": msg}, status_code=409)
            return await _ask_response(request, s, current, notice=msg, status=409)
        if exc.status == 422 and exc.faults:
            faults = [
                f
                if f.pointer.startswith("/form")
                else Fault("/form" + f.pointer.removeprefix("/value"), f.message, f.rule)
                for f in exc.faults
            ]
            return await _faulted(request, s, rec, typed_values(event, VERSION), faults, as_json)
        msg = exc.detail or exc.title
        if as_json:
            return JSONResponse({"status": "refused", "message": msg}, status_code=exc.status)
        return await _ask_response(request, s, rec, notice=msg, status=exc.status)
    text = views.settled_text(done) if done.terminal else "Your answer is recorded."
    if as_json:
        return JSONResponse(
            {
                "status": "answered",
                "message": text,
                "state": done.state.value,
                "audit": f"/inbox/asks/{done.id}/audit",
            }
        )
    return _see_other(f"/?done={done.id}")


async def _faulted(
    request: Request,
    s: sess.Session,
    rec: AskRecord,
    values: dict[str, Any],
    faults: list[Fault],
    as_json: bool,
) -> Response:
    if as_json:
        html = _surface_html(rec, s, values=values, faults=faults)
        return JSONResponse(
            {
                "status": "invalid",
                "html": html,
                "faults": [{"pointer": f.pointer, "message": f.message, "rule": f.rule} for f in faults],
            },
            status_code=422,
        )
    return await _ask_response(request, s, rec, values=values, faults=faults, status=422)


def mount_inbox(app: FastAPI) -> None:
    """Add the inbox's pages, live feed and static files to an askgate app."""
    app.include_router(build_router())
    app.mount("/inbox/static", StaticFiles(directory=HERE / "static"), name="inbox-static")
