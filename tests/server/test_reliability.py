"""Reliability with real processes and a real database file: kill -9 under load, restart, then verify that
every acknowledged ask and answer is there, none twice, every due deadline settled exactly once; then
1,000 answer races with exactly one winner each."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sqlite3
import time
from pathlib import Path

import httpx

from tests.support import askdocs, serve
from tests.support.scale import examples


async def _load(url: str, toks: dict[str, str], acked: dict, stop_at: float) -> None:
    """Create asks (some with a 1 s deadline, left unanswered) and answer the others, until ``stop_at``."""
    ha = {"Authorization": f"Bearer {toks['agent']}"}
    hb = {"Authorization": f"Bearer {toks['bob']}"}
    counter = iter(range(10**9))
    limits = httpx.Limits(max_connections=32)

    async def worker(c: httpx.AsyncClient) -> None:
        while time.monotonic() < stop_at:
            i = next(counter)
            deadline = _has_deadline(i)
            params = _create_params(i)
            try:
                r = await c.post("/v1/asks", json=askdocs.a2a(f"load {i}"), params=params, headers={
                    **ha, "Idempotency-Key": f"create-{i}"})
            except httpx.HTTPError:
                acked["unacked_creates"].append(i)
                return
            assert r.status_code == 201, r.text
            acked["asks"][i] = (r.json()["id"], deadline)
            if deadline:
                continue
            try:
                r = await c.post(f"/v1/asks/{acked['asks'][i][0]}/answer",
                                 json={"action": "accept", "content": {"name": f"v{i}"}},
                                 headers={**hb, "Idempotency-Key": f"answer-{i}"})
            except httpx.HTTPError:
                return
            assert r.status_code == 200, r.text
            acked["answers"][i] = f"v{i}"

    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=10) as c:
        await asyncio.gather(*(worker(c) for _ in range(16)))


def _has_deadline(i: int) -> bool:
    return i % 5 == 0


def _create_params(i: int) -> dict[str, object]:
    """The query of create ``i``: part of the idempotency hash, so a re-send must repeat it exactly."""
    return {"respondent": "bob", **({"timeout": 1} if _has_deadline(i) else {})}


def _tokens(served: serve.Served) -> dict[str, str]:
    admin = served.first_token()
    out = {"admin": admin}
    for pid, role in (("agent", "asker"), ("bob", "respondent"), ("rival", "respondent")):
        r = httpx.post(served.url + "/v1/tokens", json={"principal": pid, "role": role},
                       headers={"Authorization": f"Bearer {admin}"})
        out[pid] = r.json()["token"]
    return out  # type: ignore[return-value]


def test_kill_9_under_load_then_restart_then_answer_races(tmp_path: Path) -> None:
    served = serve.ready(serve.start(tmp_path, name="first"))
    toks = _tokens(served)
    acked: dict = {"asks": {}, "answers": {}, "unacked_creates": []}
    target = examples(600)  # 600 acknowledged asks and ~480 answers before the kill; the races add 1,000 more asks

    async def load_then_kill() -> None:
        task = asyncio.create_task(_load(served.url, toks, acked, time.monotonic() + 120))
        while len(acked["asks"]) < target and not task.done():
            await asyncio.sleep(0.05)
        served.proc.send_signal(signal.SIGKILL)  # mid-flight: requests are in progress right now
        await asyncio.wait_for(task, 30)

    asyncio.run(load_then_kill())
    served.proc.wait(10)
    assert len(acked["asks"]) >= target
    time.sleep(1.2)  # every 1 s deadline passes while askgate is down
    again = serve.ready(serve.start(tmp_path, name="second"))
    try:
        ha = {"Authorization": f"Bearer {toks['agent']}"}
        with httpx.Client(base_url=again.url, headers=ha, timeout=30) as c:
            # re-send the creates whose response was lost: the idempotency key must not make a second ask
            for i in acked["unacked_creates"]:
                r = c.post("/v1/asks", json=askdocs.a2a(f"load {i}"), params=_create_params(i),
                           headers={"Idempotency-Key": f"create-{i}"})
                assert r.status_code == 201, r.text
            views: dict[str, dict] = {}
            cursor = None
            while True:
                page = c.get("/v1/asks", params={"limit": 500, **({"cursor": cursor} if cursor else {})}).json()
                views.update({v["id"]: v for v in page["items"]})
                cursor = page["next_cursor"]
                if not cursor:
                    break
        prompts = [v["prompt"] for v in views.values()]
        assert len(prompts) == len(set(prompts)), "an ask was created twice"
        for i, (ask_id, deadline) in acked["asks"].items():
            view = views[ask_id]  # every acknowledged ask survived
            if deadline:
                assert view["state"] == "timed_out", view  # settled on start-up
            if i in acked["answers"]:
                assert view["state"] == "answered" and view["outcome"]["value"] == {"name": acked["answers"][i]}
        # 1,000 races: two respondents answer the same ask at the same moment; exactly one wins
        asyncio.run(_races(again.url, toks, examples(1000)))
    finally:
        again.stop()
    db = sqlite3.connect(tmp_path / ".askgate" / "askgate.db")
    per_ask: dict[str, list[str]] = {}
    for chain_id, entry in db.execute("SELECT chain_id, entry FROM audit_entries WHERE chain_kind = 'ask'"):
        per_ask.setdefault(chain_id, []).append(json.loads(entry)["step_type"])
    db.close()
    for ask_id, steps in per_ask.items():
        assert steps.count("answer") + steps.count("timeout") <= 1, (ask_id, steps)
        assert steps[0] == "ask"
    for ask_id, deadline in acked["asks"].values():
        if deadline:
            assert per_ask[ask_id].count("timeout") == 1


async def _races(url: str, toks: dict[str, str], n: int) -> None:
    ha = {"Authorization": f"Bearer {toks['agent']}"}
    people = {"bob": {"Authorization": f"Bearer {toks['bob']}"}, "rival": {"Authorization": f"Bearer {toks['rival']}"}}
    sem = asyncio.Semaphore(16)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=httpx.Limits(max_connections=48, keepalive_expiry=2.0)) as c:
        # keepalive_expiry below uvicorn's 5 s keep-alive: never reuse a connection the server may be closing

        async def race(i: int) -> None:
            async with sem:
                ask = (await c.post("/v1/asks", json=askdocs.aqp(), headers=ha,
                                    params=[("respondent", "bob"), ("respondent", "rival")])).json()
                rs = await asyncio.gather(*(c.post(f"/v1/asks/{ask['id']}/answer", headers=h,
                                                   json=askdocs.aqp_answer("ship" if who == "bob" else "hold"))
                                            for who, h in people.items()))
            codes = sorted(r.status_code for r in rs)
            assert codes == [200, 409], [r.text for r in rs]
            win = next(r for r in rs if r.status_code == 200).json()["outcome"]
            lose = next(r for r in rs if r.status_code == 409).json()
            assert lose["outcome"] == win

        await asyncio.gather(*(race(i) for i in range(n)))


def test_kill_9_of_one_of_two_processes_on_one_sqlite_file(tmp_path: Path) -> None:
    """Two processes share one SQLite file under load; one is killed (maybe holding the file's write turn,
    maybe in the middle of a commit): the other goes on serving at once, and every ask and answer either
    acknowledged is there."""
    db = str(tmp_path / "shared.db")
    a = serve.ready(serve.start(tmp_path, db=db, name="a"))
    b = serve.ready(serve.start(tmp_path, db=db, name="b"))
    try:
        toks = _tokens(a)
        on_a: dict = {"asks": {}, "answers": {}, "unacked_creates": []}
        on_b: dict = {"asks": {}, "answers": {}, "unacked_creates": []}

        async def load_both_then_kill_a() -> None:
            end = time.monotonic() + 60
            task_a = asyncio.create_task(_load(a.url, toks, on_a, end))
            task_b = asyncio.create_task(_load(b.url, toks, on_b, end))
            while len(on_a["asks"]) < examples(300) and not task_a.done():
                await asyncio.sleep(0.05)
            a.proc.send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            before = len(on_b["asks"])
            await asyncio.wait_for(task_a, 30)
            while len(on_b["asks"]) < before + 50 and time.monotonic() - killed_at < 10:
                await asyncio.sleep(0.05)
            assert len(on_b["asks"]) >= before + 50, "the survivor stalled after the kill"
            task_b.cancel()  # what was acknowledged so far is recorded; a request cut off now was not
            with contextlib.suppress(asyncio.CancelledError):
                await task_b

        asyncio.run(load_both_then_kill_a())
        a.proc.wait(10)
        ha = {"Authorization": f"Bearer {toks['agent']}"}
        with httpx.Client(base_url=b.url, headers=ha, timeout=30) as c:
            for acked in (on_a, on_b):
                for i, (ask_id, _deadline) in acked["asks"].items():
                    view = c.get(f"/v1/asks/{ask_id}").json()
                    assert view["id"] == ask_id
                    if i in acked["answers"]:
                        assert view["state"] == "answered"
                        assert view["outcome"]["value"] == {"name": acked["answers"][i]}
                    assert c.get(f"/v1/asks/{ask_id}/audit").json()["verification"]["ok"]
    finally:
        a.stop()
        b.stop()
