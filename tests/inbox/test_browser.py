"""The inbox in a real browser: Playwright driving Debian's Chromium against a real `askgate demo` process.

Set ASKGATE_SCREENSHOTS=1 to (re)write docs/screenshots/*.png from these runs.
"""

from __future__ import annotations

import os
import re
import uuid
from typing import Any

from tests.conftest import REPO
from tests.inbox.conftest import Server, expires_in

SHOTS = os.environ.get("ASKGATE_SCREENSHOTS", "") not in ("", "0")
TIMEOUT = 10_000


def shot(page: Any, name: str) -> None:
    if SHOTS:
        out = REPO / "docs" / "screenshots" / f"{name}.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        page.evaluate("window.scrollTo(0, 0)")
        page.wait_for_timeout(300)
        page.screenshot(path=str(out), full_page=True)


def sign_in(browser: Any, server: Server, who: str, **ctx: Any) -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 860}, **ctx)
    context.set_default_timeout(TIMEOUT)
    page = context.new_page()
    page.goto(server.url + "/")
    page.fill("#token", server.tokens[who])
    page.click("button[type=submit]")
    page.wait_for_selector("#asks", state="attached")
    if ctx.get("java_script_enabled", True):
        page.wait_for_selector('#live[data-state="live"]')
    return page


def item_for(page: Any, prompt: str) -> Any:
    return page.locator("li.ask", has_text=prompt)


def test_sign_in_list_filters_and_session_cookie(browser: Any, server: Server) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.goto(server.url + "/")
    page.fill("#token", "agk_not-a-real-token")
    page.click("button[type=submit]")
    assert page.locator("#login-error").inner_text() == "Unknown or revoked token."
    page.fill("#token", server.tokens["demo-agent"])
    page.click("button[type=submit]")
    assert page.locator("#login-error").inner_text() == "That token is not a respondent token."
    context.close()

    page = sign_in(browser, server, "alice")
    cookies = {c["name"]: c for c in page.context.cookies()}
    session = cookies["askgate_session"]
    assert session["httpOnly"] is True and session["sameSite"] == "Lax"
    assert server.tokens["alice"] not in session["value"]  # sealed, not the token in clear
    assert page.evaluate("document.cookie") == ""  # nothing readable by scripts

    items = page.locator("li.ask")
    assert items.count() == 7
    assert page.title() == "(7) Inbox · askgate"
    prompts = items.locator(".prompt").all_inner_texts()
    assert prompts[0].startswith("New vendor onboarding")  # newest first
    assert prompts[-1] == "Page the database on-call now?"
    badges = set(page.locator("li.ask .badge.dialect").all_inner_texts())
    assert badges == {"A2A elicitation", "MCP elicitation", "AQP query", "ACS approval"}
    expiring = item_for(page, "Page the database on-call now?")
    assert re.fullmatch(r"\d+(h \d\dm|m \d\ds|s) left", expiring.locator(".countdown time").inner_text())
    assert "urgent" in (expiring.get_attribute("class") or "")  # under five minutes left
    assert expiring.locator("[data-urgency-label]").text_content() == "urgent"
    assert item_for(page, "database migrations").locator("[data-urgency-label]").text_content() == "soon"
    assert item_for(page, "what slowed you down").locator(".badge.consent").inner_text() == "consent needed"
    shot(page, "inbox-list")

    page.fill("#q", "vendor")
    assert page.locator("li.ask:visible").count() == 1
    assert page.locator("#count").inner_text() == "1"
    page.fill("#q", "")
    page.select_option("#f-dialect", "acs")
    assert page.locator("li.ask:visible .prompt").all_inner_texts() == [
        "Allow the deploy agent to run database migrations on prod-eu?"
    ]
    page.select_option("#f-dialect", "")
    page.select_option("#f-kind", "form")
    assert page.locator("li.ask:visible").count() == 3
    page.context.close()


MCP_EVERY_KIND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "elicitation/create",
    "params": {
        "message": "Every field kind",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 2},
                "bio": {"type": "string", "title": "Bio", "maxLength": 1000},
                "email": {"type": "string", "title": "Email", "format": "email"},
                "site": {"type": "string", "title": "Site", "format": "uri"},
                "day": {"type": "string", "title": "Day", "format": "date"},
                "at": {"type": "string", "title": "At", "format": "date-time"},
                "ratio": {"type": "number", "title": "Ratio"},
                "count": {"type": "integer", "title": "Count"},
                "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 20, "default": 5},
                "ok": {"type": "boolean", "title": "OK"},
                "tier": {"type": "string", "title": "Tier", "enum": ["a", "b"]},
                "window": {
                    "type": "string",
                    "title": "Window",
                    "oneOf": [{"const": "now", "title": "Right now"}, {"const": "later", "title": "Later"}],
                },
                "envs": {
                    "type": "array",
                    "title": "Envs",
                    "items": {"type": "string", "enum": ["dev", "stg", "prd"]},
                },
            },
            "required": ["name", "tier"],
        },
    },
}


def test_answer_an_elicitation_with_every_field_kind(browser: Any, server: Server) -> None:
    ask_id = server.create(MCP_EVERY_KIND, "mcp-elicitation")
    page = sign_in(browser, server, "alice", timezone_id="Europe/Paris")
    page.locator(f"#ask-{ask_id} a").click()
    page.wait_for_selector("form.a2ui-surface")
    page.get_by_label("Name *", exact=True).fill("Ada")
    page.get_by_label("Bio", exact=True).fill("Line one\nLine <two>")
    page.get_by_label("Email", exact=True).fill("ada@example.org")
    page.get_by_label("Site", exact=True).fill("https://ada.example.org/")
    page.get_by_label("Day", exact=True).fill("2026-12-24")
    page.get_by_label("At", exact=True).fill("2026-12-24T09:30")
    page.get_by_label("Ratio", exact=True).fill("0.25")
    page.get_by_label("Count", exact=True).fill("12")
    seats = page.get_by_label("Seats", exact=True)
    seats.focus()
    for _ in range(3):  # keyboard: a slider moves with the arrow keys
        page.keyboard.press("ArrowRight")
    assert page.locator("output[for='a2ui-f_seats']").inner_text() == "8"
    page.get_by_label("OK", exact=True).focus()
    page.keyboard.press("Space")
    page.get_by_label("b", exact=True).check()
    page.get_by_label("Later", exact=True).check()
    page.get_by_label("dev", exact=True).check()
    page.get_by_label("prd", exact=True).check()
    # Chromium's own view: every control has a label, and keyboard focus is visible (a real outline)
    unlabelled = page.evaluate("""() => [...document.querySelectorAll('form.a2ui-surface input, form.a2ui-surface textarea')]
        .filter(e => e.type !== 'hidden' && e.labels.length === 0).map(e => e.id)""")
    assert unlabelled == []
    page.get_by_label("Name *", exact=True).focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "a2ui-f_bio"
    outline = page.evaluate(
        "[getComputedStyle(document.activeElement).outlineStyle,"
        " getComputedStyle(document.activeElement).outlineWidth]"
    )
    assert outline[0] != "none" and float(outline[1].removesuffix("px")) >= 2
    page.get_by_role("button", name="Submit").focus()
    page.keyboard.press("Enter")  # submit from the keyboard
    page.wait_for_selector("#sent:not([hidden])")
    assert page.locator("#sent").inner_text().startswith("Answer sent. Answered by alice")
    view = server.ask(ask_id)
    assert view["state"] == "answered"
    content = view["outcome"]["value"]
    assert content == {
        "name": "Ada",
        "bio": "Line one\nLine <two>",
        "email": "ada@example.org",
        "site": "https://ada.example.org/",
        "day": "2026-12-24",
        "at": "2026-12-24T09:30:00+01:00",
        "ratio": 0.25,
        "count": 12,
        "seats": 8,
        "ok": True,
        "tier": "b",
        "window": "later",
        "envs": ["dev", "prd"],
    }
    assert view["response"] == {"action": "accept", "content": content}  # back in the asker's dialect
    page.goto(server.url + "/inbox/history")
    row = page.locator(f"#h-{ask_id}")
    assert "answered" in row.inner_text().lower() and "alice" in row.inner_text()
    page.context.close()


def test_validation_fault_is_shown_and_corrected(browser: Any, server: Server) -> None:
    page = sign_in(browser, server, "alice")
    item_for(page, "New vendor onboarding").locator("a").click()
    page.wait_for_selector("form.a2ui-surface")
    page.get_by_label("Company name").fill("Acme")
    page.get_by_label("Billing email").fill("not-an-email")
    page.get_by_label("Annual budget (EUR)").fill("12k")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#fault-summary:not([hidden])")
    email = page.get_by_label("Billing email")
    assert email.get_attribute("aria-invalid") == "true"
    described = (email.get_attribute("aria-describedby") or "").split()
    texts = [page.locator(f"#{d}").inner_text() for d in described]
    assert texts[0] == "Invoices go here." and "email" in texts[1] and texts[1].startswith("⚠")
    assert page.locator("#a2ui-f_start-err-0").inner_text() == "⚠ Contract start is required"
    assert "not a number" in page.locator("#a2ui-f_budget-err-0").inner_text()
    # nothing typed is lost, and focus goes to the first field to fix
    assert page.get_by_label("Company name").input_value() == "Acme"
    assert email.input_value() == "not-an-email"
    assert page.get_by_label("Annual budget (EUR)").input_value() == "12k"
    assert page.evaluate("document.activeElement.id") == "a2ui-f_email"
    shot(page, "elicitation-fault")

    email.fill("billing@acme.example")
    page.get_by_label("Contract start").fill("2027-01-01")
    page.get_by_label("Annual budget (EUR)").fill("12000")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#sent:not([hidden])")
    assert page.locator("#fault-summary").is_hidden()
    view = server.ask(_id_of(page))
    assert view["outcome"]["value"] == {
        "company": "Acme",
        "email": "billing@acme.example",
        "start": "2027-01-01",
        "budget": 12000,
        "seats": 5,
        "nda": False,
        "tier": "plus",
    }
    assert view["response"] == {"action": "accept", "content": view["outcome"]["value"]}
    page.context.close()


def _id_of(page: Any) -> str:
    return str(page.evaluate("document.body.dataset.askId"))


def test_approve_an_acs_ask_with_an_intent_extension(browser: Any, server: Server) -> None:
    page = sign_in(browser, server, "alice")
    item_for(page, "database migrations").locator("a").click()
    page.wait_for_selector("form.a2ui-surface")
    panel = page.locator("#acs-context")
    text = panel.inner_text()
    for expected in (
        "deploy-agent",
        "steps/toolCallRequest",
        "sess-deploy-7f3a",
        "psql",
        "migrate",
        "db://prod-eu/billing",
        "this session",
        "deny when the time runs out",
    ):
        assert expected in text, expected
    surface = page.locator("form.a2ui-surface")
    assert (
        "psql · migrate · db://prod-eu/billing" in surface.inner_text()
    )  # the surface itself shows the grant
    shot(page, "approval")
    page.get_by_role("button", name="Allow").click()  # allow without an option: a fault at the option group
    page.wait_for_selector("#a2ui-f_option-err-0")
    assert page.locator("#a2ui-f_option").get_attribute("aria-invalid") == "true"
    page.get_by_label("run in the maintenance window").check()
    page.get_by_label("This request only").check()
    page.get_by_label("Reason (optional)").fill("Window is safer.")
    page.get_by_role("button", name="Allow").click()
    page.wait_for_selector("#sent:not([hidden])")
    ask_id = _id_of(page)
    decision = server.ask(ask_id, "alice")["outcome"]["value"]
    assert decision["decision"] == "allow" and decision["selected_option"] == "run in the maintenance window"
    assert decision["reasoning"] == "Window is safer."
    assert decision["intent_extension"]["scope"] == "this_request"
    assert [c["operation"] for c in decision["intent_extension"]["capabilities"]] == ["migrate", "read"]

    page.goto(f"{server.url}/inbox/asks/{ask_id}/audit")  # the audit view: chain and its verification
    checks = page.locator(".verify")
    assert checks.count() == 2  # the ask's chain and the ACS session's chain
    assert all(v == "true" for v in [checks.nth(i).get_attribute("data-verified") for i in range(2)])
    steps = page.locator(".chain").first.locator(".step").all_inner_texts()
    assert steps[0] == "ask" and "answer" in steps
    page.context.close()


def test_new_asks_appear_and_expire_live(browser: Any, server: Server) -> None:
    page = sign_in(browser, server, "bob")
    page.evaluate("window.__noReload = true")
    prompt = f"Expiring soon {uuid.uuid4().hex[:6]}"
    ask_id = server.create(
        {
            "protocolVersion": "2026-07-30",
            "queryId": str(uuid.uuid4()),
            "type": "approval",
            "subject": "s",
            "prompt": prompt,
            "timing": "immediate",
            "consentMode": "not_required",
            "response": {"format": "boolean"},
            "delivery": {"binding": "other"},
            "expiresAt": expires_in(8),
        },
        "aqp",
        ("bob",),
    )
    item = page.locator(f"#ask-{ask_id}")
    item.wait_for(state="visible", timeout=6000)  # arrived over SSE
    assert item.locator(".prompt").inner_text() == prompt
    assert "urgent" in (item.get_attribute("class") or "")
    assert re.fullmatch(r"\ds left", item.locator(".countdown time").inner_text())
    item.wait_for(state="detached", timeout=15000)  # left when the deadline settled it
    assert page.evaluate("window.__noReload") is True  # never reloaded
    assert server.ask(ask_id)["state"] == "expired"
    page.goto(server.url + "/inbox/history")
    assert "expired" in page.locator(f"#h-{ask_id}").inner_text().lower()
    page.context.close()


def test_two_people_race_for_one_ask(browser: Any, server: Server) -> None:
    doc = {
        "message": "Who takes the pager tonight?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Your name"}},
            "required": ["name"],
        },
    }
    ask_id = server.create(doc, "a2a-elicitation", ("alice", "bob"))
    pages = {}
    for who in ("alice", "bob"):
        page = sign_in(browser, server, who)
        page.goto(f"{server.url}/inbox/asks/{ask_id}")
        page.wait_for_selector('#live[data-state="live"]')
        page.get_by_label("Your name").fill(who.title())
        pages[who] = page
    watcher = pages["bob"].context.new_page()  # bob also has the list open in another tab
    watcher.goto(server.url + "/")
    watcher.wait_for_selector('#live[data-state="live"]')
    assert watcher.locator(f"#ask-{ask_id}").is_visible()
    for page in pages.values():  # both press Submit at (nearly) the same moment
        page.evaluate("document.getElementById('a2ui-btn-accept').click()")
    outcome = {}
    for who, page in pages.items():
        page.wait_for_selector("#sent:not([hidden]), #taken:not([hidden])")
        outcome[who] = "won" if page.locator("#sent").is_visible() else "lost"
    assert sorted(outcome.values()) == ["lost", "won"]
    winner = next(w for w, o in outcome.items() if o == "won")
    loser = next(w for w, o in outcome.items() if o == "lost")
    taken = pages[loser].locator("#taken").inner_text()
    assert f"Answered by {winner}" in taken and winner.title() in taken
    assert pages[loser].locator("#a2ui-btn-accept").is_disabled()
    view = server.ask(ask_id)
    assert view["state"] == "answered" and view["outcome"]["respondent"]["id"] == winner
    assert view["outcome"]["value"] == {"name": winner.title()}
    watcher.locator(f"#ask-{ask_id}").wait_for(state="detached", timeout=5000)  # answered: it left the list

    # the loser opening the ask again sees who took it; there is nothing left to submit
    pages[loser].goto(f"{server.url}/inbox/asks/{ask_id}")
    assert f"Answered by {winner}" in pages[loser].locator("#taken").inner_text()
    assert pages[loser].locator("form.a2ui-surface").count() == 0
    for page in pages.values():
        page.context.close()


def test_consent_step_then_answer_without_a_script(browser: Any, server: Server) -> None:
    """AQP ask_once consent, answered with scripting off: the plain form post becomes the same A2UI event."""
    page = sign_in(browser, server, "bob", java_script_enabled=False)
    item_for(page, "what slowed you down").locator("a").click()
    step = page.locator(".consent-step")
    text = step.inner_text()
    assert "remembered for “dx-survey-2026”" in text and "90 days" in text and "survey.example.org" in text
    page.get_by_role("button", name="I consent").click()
    page.wait_for_selector("form.a2ui-surface")
    assert "Answers are kept for 90 days" in page.locator("#aqp-context").inner_text()
    page.get_by_role("button", name="Submit").click()  # empty: a fault, shown by the server-rendered page
    assert page.locator("#a2ui-f_value-err-0").inner_text() == "⚠ Your answer is required"
    page.get_by_label("Your answer").fill("Flaky CI & slow reviews <really>")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_selector(".alert.ok")
    assert page.url.startswith(server.url + "/?done=")
    ask_id = page.url.split("done=")[1]
    assert server.ask(ask_id)["outcome"]["value"] == "Flaky CI & slow reviews <really>"
    page.context.close()
