"""Broker benchmarks: round trip at 1/100/1,000 waiters (vs 3-second polling), sustained throughput, and
deadline accuracy for many pending asks, also across a restart. SQLite by default; ``--pg`` adds PostgreSQL.

The server is a real ``askgate serve`` process; this script is the load generator, in another process,
talking over loopback. Figures are printed as a table (and ``--json`` writes them to a file).

    python bench/broker.py                     # everything on SQLite, issue-sized (takes minutes)
    python bench/broker.py --quick --pg        # small counts, SQLite and PostgreSQL
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

A2A = {"message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                                                    "required": ["name"]}}
ANSWER = {"action": "accept", "content": {"name": "Ada"}}


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, workdir: Path, db: str | None) -> None:
        self.workdir, self.db, self.port = workdir, db, free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.token: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        args = [sys.executable, "-m", "askgate.cli", "serve", "--port", str(self.port), "--log-level", "warning"]
        if self.db:
            args += ["--db", self.db]
        out = (self.workdir / "serve.out").open("ab")
        self.proc = subprocess.Popen(args, cwd=self.workdir, stdout=out, stderr=(self.workdir / "serve.err").open("ab"),
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        end = time.monotonic() + 600  # a restart settles every due ask before it serves
        while time.monotonic() < end:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise RuntimeError("server did not start")
        if self.token is None:
            lines = [x for x in (self.workdir / "serve.out").read_text().splitlines() if x.startswith("agk_")]
            self.token = lines[0]

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the server process has used so far (Linux /proc)."""
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)

    def tokens(self) -> dict[str, str]:
        out = {}
        for pid, role in (("bench-agent", "asker"), ("bench-bob", "respondent")):
            r = httpx.post(self.url + "/v1/tokens", json={"principal": pid, "role": role},
                           headers={"Authorization": f"Bearer {self.token}"})
            out[pid] = r.json()["token"]
        return out


async def round_trip(url: str, toks: dict[str, str], waiters: int, *, poll: float | None = None) -> dict[str, float]:
    """Answer-accepted -> waiter-holds-it latency (ms) with ``waiters`` concurrent waiters (long poll, or
    GET every ``poll`` seconds for the baseline)."""
    ha = {"Authorization": f"Bearer {toks['bench-agent']}"}
    hb = {"Authorization": f"Bearer {toks['bench-bob']}"}
    # keepalive_expiry below uvicorn's 5 s keep-alive: a connection idle that long may be closing on the
    # server's side at the moment it is reused (httpx RemoteProtocolError "Server disconnected")
    limits = httpx.Limits(max_connections=waiters + 64, max_keepalive_connections=waiters + 64, keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as c:
        sem = asyncio.Semaphore(32)

        async def make() -> str:
            async with sem:
                r = await c.post("/v1/asks", json=A2A, params={"respondent": "bench-bob"}, headers=ha)
                return r.json()["id"]

        ids = await asyncio.gather(*(make() for _ in range(waiters)))
        got: dict[str, float] = {}

        async def wait(ask_id: str) -> None:
            if poll is None:
                while True:
                    r = await c.get(f"/v1/asks/{ask_id}/wait", params={"timeout": 60}, headers=ha)
                    if r.json()["terminal"]:
                        got[ask_id] = time.perf_counter()
                        return
            else:
                await asyncio.sleep(poll * (hash(ask_id) % 1000) / 1000)  # pollers are not in phase
                while True:
                    r = await c.get(f"/v1/asks/{ask_id}", headers=ha)
                    if r.json()["terminal"]:
                        got[ask_id] = time.perf_counter()
                        return
                    await asyncio.sleep(poll)

        tasks = [asyncio.create_task(wait(i)) for i in ids]
        await asyncio.sleep(1.0 + waiters / 500)  # every waiter is parked
        acked: dict[str, float] = {}

        async def answer(ask_id: str) -> None:
            async with sem:
                r = await c.post(f"/v1/asks/{ask_id}/answer", json=ANSWER, headers=hb)
                assert r.status_code == 200, r.text
                acked[ask_id] = time.perf_counter()

        # answers are spread out so that each measures one wake-up, not a thundering herd
        for ask_id in ids:
            await answer(ask_id)
            await asyncio.sleep(0.002)
        await asyncio.gather(*tasks)
    lat = [max(0.0, got[i] - acked[i]) * 1000 for i in ids]
    return {"waiters": waiters, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "max_ms": max(lat)}


async def throughput(urls: list[str], toks: dict[str, str], seconds: float, workers: int = 32) -> dict[str, float]:
    """Asks created and answered per second, sustained for ``seconds``; also the generator's own CPU per ask.

    With several ``urls`` (askgate processes on one database) the workers are dealt out among them, as a
    load balancer in front of the processes would; each worker creates and answers its asks on one.

    The generator must not eat the core the server needs (httpx cost ~12 ms of CPU per ask created and
    answered, more than the server), so each worker speaks HTTP/1.1 itself over one keep-alive asyncio
    stream: pre-built request bytes, a status line, headers and a Content-Length body read back, every
    status checked (201 for a create, 200 for an answer), the ask id taken from the create's JSON body.
    """
    body = json.dumps(A2A).encode()
    answer = json.dumps(ANSWER).encode()
    done = errors = 0
    bad: list[str] = []
    end = time.monotonic() + seconds

    async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> tuple[int, bytes]:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length = None
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
            elif name.lower() == b"transfer-encoding":
                raise RuntimeError("the server sent a chunked response; the bench reads Content-Length only")
        if length is None:
            raise RuntimeError("response without Content-Length")
        return status, await reader.readexactly(length)

    async def worker(url: str) -> None:
        nonlocal done, errors
        host, _, port = url.removeprefix("http://").partition(":")
        create_req = (f"POST /v1/asks?respondent=bench-bob HTTP/1.1\r\nHost: {host}:{port}\r\n"
                      f"Authorization: Bearer {toks['bench-agent']}\r\nContent-Type: application/json\r\n"
                      f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        answer_tail = (f" HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {toks['bench-bob']}\r\n"
                       f"Content-Type: application/json\r\nContent-Length: {len(answer)}\r\n\r\n").encode() + answer
        reader = writer = None
        while time.monotonic() < end:
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(host, int(port))
                status, data = await exchange(reader, writer, create_req)
                if status != 201:
                    bad.append(f"create: {status} {data[:200]!r}")
                    continue
                ask_id = json.loads(data)["id"]
                status, data = await exchange(reader, writer, b"POST /v1/asks/" + ask_id.encode() + b"/answer"
                                              + answer_tail)
                if status != 200:
                    bad.append(f"answer: {status} {data[:200]!r}")
                    continue
                done += 1
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                errors += 1  # counted and reported; the worker reconnects and goes on
                if writer is not None:
                    writer.close()
                reader = writer = None
        if writer is not None:
            writer.close()

    cpu0 = time.process_time()
    t0 = time.monotonic()
    await asyncio.gather(*(worker(urls[i % len(urls)]) for i in range(workers)))
    elapsed = time.monotonic() - t0
    cpu = time.process_time() - cpu0
    if bad:
        raise AssertionError(f"{len(bad)} unexpected statuses, first: {bad[0]}")
    return {"seconds": round(elapsed, 1), "asks_answered": done, "per_second": done / elapsed,
            "transport_errors": errors, "generator_cpu_ms_per_ask": cpu * 1000 / max(1, done)}


async def seed_deadlines(db_url: str, n: int, start_in: float, spread: float) -> datetime:
    """Insert ``n`` pending asks straight into the store, deadlines spread evenly over ``spread`` seconds;
    returns the first deadline."""
    from askgate.broker.broker import Broker
    from askgate.broker import records
    from askgate.core import lifecycle as lc
    from askgate.core.model import Respondent
    from askgate.protocols.registry import codec_for
    from askgate.store import Store

    store = await Store.open(db_url, sqlite_synchronous="NORMAL")
    broker = Broker(store, scheduler=False)
    ask0 = codec_for("a2a-elicitation").parse_request(A2A)
    routing = lc.Routing(respondents=(Respondent(kind="human", id="bench-bob"),))
    now = datetime.now(UTC)
    first = now + timedelta(seconds=max(start_in, 0.001))
    batch = 1000
    for base in range(0, n, batch):
        async with store.write(now) as tx:
            for i in range(base, min(n, base + batch)):
                ask_id = str(uuid.uuid4())
                ask = ask0.model_copy(update={"id": ask_id, "asker": "bench-agent"})
                deadline = first + timedelta(seconds=spread * i / n)
                tr = lc.open_ask(ask, ask_id=ask_id, routing=routing, now=now,
                                 timeout_seconds=(deadline - now).total_seconds())
                await tx.insert_ask(records.to_row(tr.record))
                await broker._append(tx, tr.audit)  # noqa: SLF001 - the bench seeds the chain exactly as the broker does
    await store.close()
    return first


async def deadline_lateness(db_url: str) -> list[tuple[datetime, datetime]]:
    """(deadline, settled at) of every ask with a deadline, read back from the store."""
    from askgate.core.lifecycle import AskRecord
    from askgate.store import AskQuery, Store

    store = await Store.open(db_url)
    out: list[tuple[datetime, datetime]] = []
    cursor = None
    unsettled = 0
    while True:
        page = await store.list_asks(AskQuery(limit=500, cursor=cursor))
        for row in page.items:
            rec = AskRecord.from_json(row.record)
            if rec.deadline_at is None:
                continue
            if rec.settled_at is None:
                unsettled += 1
                continue
            out.append((rec.deadline_at, rec.settled_at))
        cursor = page.next_cursor
        if not cursor:
            break
    await store.close()
    if unsettled:
        print(f"  WARNING: {unsettled} asks with a deadline were not settled", file=sys.stderr)
    return out


def _lateness_figures(late: list[float]) -> dict[str, Any]:
    if not late:
        return {"settled": 0}
    return {"settled": len(late), "p50_ms": pct(late, 50) * 1000, "p99_ms": pct(late, 99) * 1000,
            "max_ms": max(late) * 1000, "within_1s": sum(1 for x in late if x <= 1.0) / len(late)}


def deadlines(workdir: Path, db: str | None, n: int, spread: float, restart: bool) -> dict[str, Any]:
    """Lateness of ``n`` deadlines spread over ``spread`` s. With ``restart``, the server is killed (SIGKILL)
    half-way and started again at once; asks that fell due between the kill and the new process's start
    cannot be settled before it runs its start-up sweep: the asks due between the kill and the new process
    serving HTTP are reported apart from the others, with the time from the new process's start to its first
    settlement."""
    db_url = db or f"sqlite:///{workdir / '.askgate' / 'askgate.db'}"
    server = Server(workdir, db)
    server.start()  # migrate + first admin
    server.stop()
    t0 = time.monotonic()
    first = asyncio.run(seed_deadlines(db_url, n, start_in=30.0 + n / 800, spread=spread))  # seeding takes ~1 ms an ask
    seeded = time.monotonic() - t0
    if seeded > 25 + n / 800:
        print(f"  note: seeding took {seeded:.0f}s; early deadlines were already due at start-up", file=sys.stderr)
    killed_at = started_at = ready_at = None
    try:
        server.start()
        if restart:
            time.sleep(max(0.0, (first - datetime.now(UTC)).total_seconds()) + spread / 2)
            killed_at = datetime.now(UTC)
            server.stop(signal.SIGKILL)
            started_at = datetime.now(UTC)
            server.start()
            ready_at = datetime.now(UTC)
        # until 5 s after the last deadline (the deadlines count from when seeding began, not from t0)
        time.sleep(max(0.0, (first - datetime.now(UTC)).total_seconds()) + spread + 5)
    finally:
        server.stop()
    pairs = asyncio.run(deadline_lateness(db_url))
    out: dict[str, Any] = {"asks": n, "spread_s": spread, "restart": restart,
                           **_lateness_figures([(s - d).total_seconds() for d, s in pairs])}
    if restart:
        assert killed_at and started_at and ready_at
        def in_restart(d: datetime) -> bool:
            return killed_at <= d < ready_at  # type: ignore[operator]

        out["restart_downtime_s"] = round((started_at - killed_at).total_seconds(), 2)
        out["restart_until_serving_s"] = round((ready_at - started_at).total_seconds(), 1)
        after = [s for _, s in pairs if s >= started_at]
        out["restart_first_settle_s"] = round((min(after) - started_at).total_seconds(), 2) if after else None
        out["due_during_restart"] = _lateness_figures([(s - d).total_seconds() for d, s in pairs if in_restart(d)])
        out["due_otherwise"] = _lateness_figures([(s - d).total_seconds() for d, s in pairs if not in_restart(d)])
    return out


def run_backend(name: str, db: str | None, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"backend": name}
    workdir = Path(tempfile.mkdtemp(prefix=f"askgate-bench-{name}-"))
    server = Server(workdir, db)
    try:
        server.start()
        toks = server.tokens()
        parts = set(args.only or ("round_trip", "throughput", "deadlines"))
        if "round_trip" in parts:
            out["round_trip"] = [asyncio.run(round_trip(server.url, toks, n)) for n in args.waiters]
            out["round_trip_polling_3s"] = asyncio.run(round_trip(server.url, toks, min(args.waiters[-1], 100),
                                                                  poll=3.0))
        if "throughput" in parts:
            for processes in args.processes:
                out.setdefault("throughput", []).append(
                    _throughput_with(server, processes, db or str(workdir / ".askgate" / "askgate.db"), toks, args))
        server.stop()
        if "deadlines" not in parts:
            return out
        dl_dir = Path(tempfile.mkdtemp(prefix=f"askgate-bench-dl-{name}-"))
        dl_db = _fresh(db) if db else None
        out["deadlines"] = deadlines(dl_dir, dl_db, args.deadline_asks, args.spread, restart=False)
        if args.no_restart:
            return out
        dl_dir2 = Path(tempfile.mkdtemp(prefix=f"askgate-bench-dl2-{name}-"))
        out["deadlines_restart"] = deadlines(dl_dir2, _fresh(db) if db else None, args.deadline_asks, args.spread,
                                             restart=True)
    finally:
        server.stop()  # also when a measurement failed: never leave a server running behind the bench
        err = workdir / "serve.err"
        if err.exists() and "Traceback" in err.read_text():
            print(err.read_text()[-3000:], file=sys.stderr)
        shutil.rmtree(workdir, ignore_errors=True)
    return out


def _throughput_with(server: Server, processes: int, db: str, toks: dict[str, str],
                     args: argparse.Namespace) -> dict[str, Any]:
    """Throughput with ``processes`` askgate processes on the one database: ``server`` and more started
    for the run (same database, their own ports), stopped after it."""
    extra = []
    try:
        for i in range(1, processes):
            more_dir = server.workdir / f"process-{processes}-{i}"
            more_dir.mkdir()
            more = Server(more_dir, db)
            more.token = server.token  # the first admin exists already
            more.start()
            extra.append(more)
        everyone = [server, *extra]
        cpu0 = sum(s.cpu_seconds() for s in everyone)
        with asyncio.Runner(loop_factory=_fast_loop()) as runner:  # uvloop (uvicorn[standard]) when present
            result = runner.run(throughput([s.url for s in everyone], toks, args.duration))
        done = max(1, result["asks_answered"])
        # the machine is shared: CPU per ask says what the server costs whatever else runs
        result["server_cpu_ms_per_ask"] = (sum(s.cpu_seconds() for s in everyone) - cpu0) * 1000 / done
        result["load_average"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
        result["processes"] = processes
        return result
    finally:
        for more in extra:
            more.stop()
            err = more.workdir / "serve.err"
            if err.exists() and "Traceback" in err.read_text():
                print(err.read_text()[-3000:], file=sys.stderr)


def _fast_loop() -> Any:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _fresh(db: str | None) -> str | None:
    if db is None:
        return None
    from tests.support import postgres

    return postgres.fresh_database()


def _exit_on_sigterm(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds through the finally blocks that stop the servers


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small counts (a smoke run)")
    p.add_argument("--pg", action="store_true", help="also run on PostgreSQL (started by the bench itself)")
    p.add_argument("--sqlite", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--json", type=Path, help="also write the figures to this file")
    p.add_argument("--sqlite-synchronous", default="FULL", choices=["FULL", "NORMAL"],
                   help="SQLite commit durability: FULL (fsync per commit, the default) or NORMAL (WAL, survives a "
                        "crash of askgate but not of the machine)")
    p.add_argument("--only", choices=["round_trip", "throughput", "deadlines"], action="append",
                   help="run only these parts (repeatable)")
    p.add_argument("--processes", type=int, action="append",
                   help="askgate processes on the one database for the throughput run (repeatable; default: 1 "
                        "and 2, one per core of a 2-core machine)")
    p.add_argument("--no-restart", action="store_true", help="skip the deadlines run with a kill -9 + restart")
    p.add_argument("--deadline-asks", type=int, help="how many asks the deadline runs seed (default 100,000; "
                   "2,000 with --quick)")
    args = p.parse_args()
    os.environ["ASKGATE_SQLITE_SYNCHRONOUS"] = args.sqlite_synchronous
    args.processes = args.processes or [1, 2]
    args.waiters = [1, 10, 50] if args.quick else [1, 100, 1000]
    args.duration = 10.0 if args.quick else 60.0
    args.deadline_asks = args.deadline_asks or (2000 if args.quick else 100_000)
    args.spread = 10.0 if args.quick else 60.0
    print(f"SQLite synchronous={args.sqlite_synchronous}", file=sys.stderr)
    results = []
    if args.sqlite:
        results.append(run_backend("sqlite", None, args))
    if args.pg:
        from tests.support import postgres

        results.append(run_backend("postgresql", postgres.fresh_database(), args))
    for r in results:
        print(f"\n== {r['backend']} ==")
        for rt in r.get("round_trip", []):
            print(f"round trip, {rt['waiters']:>5} waiters (long poll): p50 {rt['p50_ms']:8.2f} ms  "
                  f"p99 {rt['p99_ms']:8.2f} ms  max {rt['max_ms']:8.2f} ms")
        if "round_trip_polling_3s" in r:
            b = r["round_trip_polling_3s"]
            print(f"round trip, {b['waiters']:>5} waiters (poll 3 s): p50 {b['p50_ms']:8.2f} ms  "
                  f"p99 {b['p99_ms']:8.2f} ms  max {b['max_ms']:8.2f} ms   [baseline]")
        for t in r.get("throughput", []):
            print(f"throughput, {t['processes']} process{'es' if t['processes'] > 1 else ''}: "
                  f"{t['per_second']:.0f} asks created+answered/s over {t['seconds']} s "
                  f"({t['asks_answered']}; transport errors: {t['transport_errors']}); server CPU "
                  f"{t['server_cpu_ms_per_ask']:.2f} ms, load generator CPU {t['generator_cpu_ms_per_ask']:.2f} ms "
                  f"per ask created+answered (2 requests); load average {t['load_average']}")
        for key in ("deadlines", "deadlines_restart"):
            if key not in r:
                continue
            d = r[key]
            print(f"{key}: {d['settled']}/{d['asks']} settled over {d['spread_s']} s; lateness p50 {d['p50_ms']:.0f} ms "
                  f"p99 {d['p99_ms']:.0f} ms max {d['max_ms']:.0f} ms; within 1 s: {d['within_1s']:.1%}"
                  )
            if d["restart"]:
                print(f"  kill -9, then a new process: its first settlement {d['restart_first_settle_s']} s after "
                      f"it started, serving HTTP after {d['restart_until_serving_s']} s")
                for part in ("due_during_restart", "due_otherwise"):
                    g = d[part]
                    if g["settled"]:
                        print(f"  {part.replace('_', ' ')}: {g['settled']} asks; lateness p50 {g['p50_ms']:.0f} ms "
                              f"p99 {g['p99_ms']:.0f} ms max {g['max_ms']:.0f} ms; within 1 s: {g['within_1s']:.1%}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
