"""The broker's CPU per ask created and answered, in one process: no sockets, no load generator.

``bench/broker.py`` measures the real thing (an ``askgate serve`` process driven over loopback), but on a
shared machine its CPU-per-ask figure moves by a third from one run to the next with what the neighbours
do. This drives the same two requests (an A2A elicitation created with ``?respondent=``, then answered)
through the askgate ASGI app directly, on a SQLite file with ``synchronous=FULL`` and group commit as
served, from 32 concurrent tasks; it reports the CPU per ask. With ``--callgrind`` it runs itself under
valgrind and counts the instructions of the measured asks only (the warm-up and start-up are not
counted): a figure that does not depend on the machine's load, for comparing two versions of the code.

    .venv/bin/python bench/broker_cpu.py                    # CPU ms per ask (3,000 asks)
    .venv/bin/python bench/broker_cpu.py --callgrind        # instructions per ask (320 asks; ~1 min)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.broker import A2A, ANSWER  # noqa: E402


async def run(asks: int, workers: int, warm: int, toggle_callgrind: bool) -> dict[str, Any]:
    from askgate.server.app import create_app
    from askgate.server.settings import Settings
    from tests.support.lifespan import start_lifespan

    workdir = Path(tempfile.mkdtemp(prefix="askgate-cpu-"))
    try:
        app = create_app(Settings.from_env(db_url=f"sqlite:///{workdir / 'bench.db'}", log_level="warning"))
        stop, task = await start_lifespan(app)
        try:
            store = app.state.store
            agent = await store.create_token("bench-agent", "asker")
            bob = await store.create_token("bench-bob", "respondent")
            body, answer = json.dumps(A2A).encode(), json.dumps(ANSWER).encode()

            async def call(path: str, query: bytes, token: str, payload: bytes) -> tuple[int, bytes]:
                scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                         "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
                         "query_string": query, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2),
                         "headers": [(b"host", b"bench"), (b"authorization", b"Bearer " + token.encode()),
                                     (b"content-type", b"application/json"),
                                     (b"content-length", str(len(payload)).encode())]}
                sent = False
                out: dict[str, Any] = {"body": b""}

                async def receive() -> dict[str, Any]:
                    nonlocal sent
                    if not sent:
                        sent = True
                        return {"type": "http.request", "body": payload, "more_body": False}
                    await asyncio.Event().wait()  # no disconnect while the request runs
                    raise AssertionError("unreachable")

                async def send(message: dict[str, Any]) -> None:
                    if message["type"] == "http.response.start":
                        out["status"] = message["status"]
                    elif message["type"] == "http.response.body":
                        out["body"] += message.get("body", b"")

                await app(scope, receive, send)
                return out["status"], out["body"]

            async def one() -> None:
                status, data = await call("/v1/asks", b"respondent=bench-bob", agent, body)
                if status != 201:
                    raise AssertionError(f"create: {status} {data[:200]!r}")
                ask_id = json.loads(data)["id"]
                status, data = await call(f"/v1/asks/{ask_id}/answer", b"", bob, answer)
                if status != 200:
                    raise AssertionError(f"answer: {status} {data[:200]!r}")

            async def worker(n: int) -> None:
                for _ in range(n):
                    await one()

            await asyncio.gather(*(worker(warm // workers) for _ in range(workers)))
            each = asks // workers
            if toggle_callgrind:
                subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
            cpu0, t0 = time.process_time(), time.monotonic()
            await asyncio.gather(*(worker(each) for _ in range(workers)))
            cpu, wall = time.process_time() - cpu0, time.monotonic() - t0
            if toggle_callgrind:
                subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)
            done = each * workers
            return {"asks": done, "cpu_ms_per_ask": cpu * 1000 / done, "per_second_in_process": done / wall}
        finally:
            stop.set()
            await task
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def under_callgrind(args: argparse.Namespace) -> int:
    """Re-run this script under callgrind with counting off until the measured asks start."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind (with callgrind_control) is needed for --callgrind: apt-get install valgrind", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable,
               __file__, "--asks", str(args.asks), "--warm", str(args.warm), "--workers", str(args.workers),
               "--toggled"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        collected = re.search(r"Collected : (\d+)", proc.stderr)
        asks = re.search(r"^asks: (\d+)", proc.stdout, re.M)
        if proc.returncode != 0 or collected is None or asks is None:
            print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
            return 1
        n, total = int(asks.group(1)), int(collected.group(1))
        print(f"asks: {n}\ninstructions: {total}\ninstructions per ask created and answered: {total / n / 1000:.0f} k")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--asks", type=int, help="asks measured (default 3,000; 320 with --callgrind)")
    p.add_argument("--warm", type=int, default=320, help="asks before the measured ones (not counted)")
    p.add_argument("--workers", type=int, default=32, help="concurrent askers")
    p.add_argument("--callgrind", action="store_true", help="count instructions under valgrind instead of CPU time")
    p.add_argument("--toggled", action="store_true", help=argparse.SUPPRESS)  # the run inside valgrind
    args = p.parse_args()
    args.asks = args.asks or (320 if args.callgrind or args.toggled else 3000)
    os.environ.setdefault("ASKGATE_SQLITE_SYNCHRONOUS", "FULL")
    if args.callgrind:
        return under_callgrind(args)
    import uvloop

    result = uvloop.run(run(args.asks, args.workers, args.warm, args.toggled))
    print(f"asks: {result['asks']}")
    if not args.toggled:
        print(f"CPU per ask created and answered: {result['cpu_ms_per_ask']:.3f} ms "
              f"({result['per_second_in_process']:.0f} asks/s in process, no HTTP)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
