"""Sign-in, session cookie flags and CSRF refusals, against a real `askgate demo` process (no browser)."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from askgate.store import Store
from tests.inbox.conftest import Server, start_demo, stop


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    folder = tmp_path_factory.mktemp("inbox-sec")
    s = start_demo(folder)
    try:
        yield s, folder
    finally:
        stop(s.proc)


def _client(server: Server) -> httpx.Client:
    return httpx.Client(base_url=server.url, follow_redirects=False, timeout=10, trust_env=False)


def _login_form(c: httpx.Client) -> str:
    r = c.get("/")
    assert r.status_code == 200
    m = re.search(r'name="csrf" value="([^"]+)"', r.text)
    assert m
    return m.group(1)


def _signed_in(server: Server, who: str = "alice") -> tuple[httpx.Client, str]:
    c = _client(server)
    nonce = _login_form(c)
    r = c.post("/inbox/login", data={"csrf": nonce, "token": server.tokens[who]})
    assert r.status_code == 303
    page = c.get("/")
    csrf = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text)
    assert csrf and csrf.group(1) != nonce
    return c, csrf.group(1)


def _set_cookie(r: httpx.Response, name: str) -> str:
    for h in r.headers.get_list("set-cookie"):
        if h.startswith(name + "="):
            return h
    raise AssertionError(f"no Set-Cookie {name}: {r.headers.get_list('set-cookie')}")


def _an_ask(c: httpx.Client, text: str) -> str:
    m = re.search(
        r'id="ask-([0-9a-f-]+)"[^>]*>\s*<a[^>]*>\s*<span class="ask-main">\s*<span class="prompt">'
        + re.escape(text),
        c.get("/").text,
    )
    assert m, text
    return m.group(1)


def test_cookie_flags_and_security_headers(srv: tuple[Server, Path]) -> None:
    server, _ = srv
    with _client(server) as c:
        r = c.get("/")
        login = _set_cookie(r, "askgate_login").lower()
        assert "httponly" in login and "samesite=lax" in login and "path=/" in login
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"
        nonce = re.search(r'name="csrf" value="([^"]+)"', r.text).group(1)  # type: ignore[union-attr]
        r = c.post("/inbox/login", data={"csrf": nonce, "token": server.tokens["alice"]})
        assert r.status_code == 303 and r.headers["location"] == "/"
        session = _set_cookie(r, "askgate_session").lower()
        assert "httponly" in session and "samesite=lax" in session and "max-age=43200" in session
        assert "secure" not in session  # plain http on 127.0.0.1; https sets Secure
        assert server.tokens["alice"].lower() not in session


def test_sign_in_needs_its_csrf_nonce_and_same_origin(srv: tuple[Server, Path]) -> None:
    server, _ = srv
    with _client(server) as c:
        nonce = _login_form(c)
        token = server.tokens["alice"]
        assert c.post("/inbox/login", data={"token": token}).status_code == 403
        assert c.post("/inbox/login", data={"token": token, "csrf": nonce + "x"}).status_code == 403
        r = c.post(
            "/inbox/login", data={"token": token, "csrf": nonce}, headers={"Origin": "http://evil.example"}
        )
        assert r.status_code == 403 and "askgate_session" not in r.headers.get("set-cookie", "")
    with _client(server) as c:  # a fresh visitor has no nonce cookie: a forged form cannot sign them in
        assert c.post("/inbox/login", data={"token": token, "csrf": nonce}).status_code == 403


def test_every_post_refuses_a_missing_or_wrong_csrf_token(srv: tuple[Server, Path]) -> None:
    server, _ = srv
    c, csrf = _signed_in(server, "bob")
    with closing(c):
        ask_id = _an_ask(c, "Is the staging environment free")
        event = {
            "version": "v0.9",
            "action": {
                "name": "elicitation.decline",
                "surfaceId": f"elicit-{ask_id}",
                "sourceComponentId": "btn-decline",
                "timestamp": "2026-11-30T10:00:00Z",
                "context": {},
            },
        }
        url = f"/inbox/asks/{ask_id}/action"
        for headers in (
            {},
            {"X-CSRF-Token": "wrong"},
            {"X-CSRF-Token": csrf, "Origin": "http://evil.example"},
        ):
            r = c.post(url, json=event, headers=headers)
            assert r.status_code == 403 and r.json()["status"] == "forbidden"
        assert c.post(url, data={"a2ui_source": "btn-decline"}).status_code == 403  # a plain form post
        assert c.post(url, data={"a2ui_source": "btn-decline", "csrf": "nope"}).status_code == 403
        assert c.post(f"/inbox/asks/{ask_id}/consent", data={"granted": "true"}).status_code == 403
        assert c.post("/inbox/logout", data={}).status_code == 403
        assert c.get(f"/inbox/asks/{ask_id}").status_code == 200  # nothing was answered by the refusals
        assert 'form class="a2ui-surface"' in c.get(f"/inbox/asks/{ask_id}").text
        # a faulty event comes back as the re-rendered surface with faults, and nothing is recorded
        bad = {
            "version": "v0.9",
            "action": {
                **event["action"],
                "name": "elicitation.accept",  # type: ignore[dict-item]
                "sourceComponentId": "btn-accept",
                "context": {"free": [], "until": ""},
            },
        }
        r = c.post(url, json=bad, headers={"X-CSRF-Token": csrf})
        assert r.status_code == 422
        assert [f["pointer"] for f in r.json()["faults"]] == ["/form/free"]
        assert 'aria-invalid="true"' in r.json()["html"]
        r = c.post(url, json=event, headers={"X-CSRF-Token": csrf})  # the right token: accepted
        assert r.status_code == 200 and r.json()["message"] == "Declined by bob"
        r = c.post(url, json=event, headers={"X-CSRF-Token": csrf})
        assert r.status_code == 409 and r.json() == {
            "status": "taken",
            "message": "Already taken. Declined by bob",
        }
        assert c.post("/inbox/logout", data={"csrf": csrf}).status_code == 303


def test_tampered_or_foreign_session_cookies_are_ignored(srv: tuple[Server, Path]) -> None:
    server, _ = srv
    c, _csrf = _signed_in(server)
    with closing(c):
        good = c.cookies["askgate_session"]
        for bad in (good[:-4] + "AAAA", "garbage", good + "x" * 5000):
            with _client(server) as other:
                other.cookies.set("askgate_session", bad)
                r = other.get("/")
                assert r.status_code == 200 and "Sign in to your inbox" in r.text
                assert other.get("/inbox/events").status_code == 401
                assert other.get("/inbox/history").status_code == 303


def test_a_respondent_sees_only_asks_offered_to_them(srv: tuple[Server, Path]) -> None:
    server, _ = srv
    alice, _ = _signed_in(server, "alice")
    bob, _ = _signed_in(server, "bob")
    with closing(alice), closing(bob):
        acs = _an_ask(alice, "Allow the deploy agent")  # offered to alice only
        assert "Allow the deploy agent" not in bob.get("/").text
        for path in ("", "/audit"):
            r = bob.get(f"/inbox/asks/{acs}{path}")
            assert r.status_code == 404 and "Allow the deploy agent" not in r.text


def test_the_live_feed_streams_server_sent_events(srv: tuple[Server, Path]) -> None:
    server, _ = srv
    c, _ = _signed_in(server, "alice")
    with closing(c), c.stream("GET", "/inbox/events") as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        lines = r.iter_lines()
        assert next(lines) == "event: hello"
        assert json.loads(next(lines).removeprefix("data: ")) == {"me": "alice"}


def test_a_revoked_token_ends_its_browser_sessions(srv: tuple[Server, Path]) -> None:
    server, folder = srv
    c, _ = _signed_in(server, "bob")
    with closing(c):
        assert "Signed in as" in c.get("/").text

        async def revoke() -> bool:
            store = await Store.open(f"sqlite:///{folder / 'askgate.db'}")
            try:
                return await store.revoke_token(server.tokens["bob"])
            finally:
                await store.close()

        assert asyncio.run(revoke())
        deadline = time.monotonic() + 10  # the server caches a token's principal for a couple of seconds
        while "Signed in as" in c.get("/").text and time.monotonic() < deadline:
            time.sleep(0.25)
        assert "Sign in to your inbox" in c.get("/").text


def test_where_an_aqp_answer_goes_shows_the_host_never_the_credential(srv: tuple[Server, Path]) -> None:
    server, _ = srv
    c, _ = _signed_in(server, "alice")
    with closing(c):
        ask_id = _an_ask(c, "How confident are you in shipping")
        for path in ("", "/audit"):
            page = c.get(f"/inbox/asks/{ask_id}{path}").text
            assert "demo-secret-never-shown" not in page
        page = c.get(f"/inbox/asks/{ask_id}").text
        assert "<strong>release-agent.example.com</strong>" in page and "/aqp/answers" not in page
        assert "No consent step: answering is enough." in page


def test_the_audit_view_reports_a_tampered_chain(srv: tuple[Server, Path]) -> None:
    server, folder = srv
    c, _ = _signed_in(server, "alice")
    with closing(c):
        ask_id = _an_ask(c, "Which environments should the hotfix go to?")
        page = c.get(f"/inbox/asks/{ask_id}/audit").text
        assert 'data-verified="true"' in page and "Chain verified: 2 entries" in page
        db = sqlite3.connect(folder / "askgate.db")
        try:
            (entry,) = db.execute(
                "SELECT entry FROM audit_entries WHERE chain_kind='ask' AND chain_id=? AND seq=1", (ask_id,)
            ).fetchone()
            doc = json.loads(entry)
            doc["timestamp"] = "2020-01-01T00:00:00Z"  # rewrite history without fixing the hashes
            db.execute(
                "UPDATE audit_entries SET entry=? WHERE chain_kind='ask' AND chain_id=? AND seq=1",
                (json.dumps(doc), ask_id),
            )
            db.commit()
        finally:
            db.close()
        page = c.get(f"/inbox/asks/{ask_id}/audit").text
        assert 'data-verified="false"' in page and "Chain broken at entry 1" in page
