#!/usr/bin/env python
"""Request-validation speed: askgate's codecs vs jsonschema, on the same documents (issue #2 item 10).

For each dialect with a seed schema (a2a-elicitation, aqp, acs) this builds a deterministic corpus of
valid requests and of invalid ones (each a valid request with one schema-level mutation, see
``bench/corpus.py``), then, in one run:

- times ``codec.parse_request(doc)`` (askgate: validation plus building the canonical Ask), and
  ``codec.validate_request(doc)`` (the verdict and faults without the Ask) where a codec offers it
  (checking that it reports exactly ``parse_request``'s faults), and
  ``Draft202012Validator(seed, format_checker=FormatChecker()).is_valid(doc)`` (jsonschema: a verdict only,
  stopping at the first error, while askgate collects every fault), best of ``--repeat`` interleaved
  passes with the garbage collector off, and prints documents per second for both and the ratio;
- compares the two verdicts document by document and reports every disagreement (with askgate's faults
  or jsonschema's first error). A disagreement makes the exit status 1.

The A2A seed is a ``oneOf`` of request and response; requests are checked against the request branch
(protocols.md §1.3). The seeds' unpublished ``$ref`` targets resolve to askgate's shipped stand-ins
(``askgate.protocols.schemas.registry()``). MCP elicitation has no seed schema, so only askgate's rate is
shown for it (on the elicitation corpus; its verdicts are not compared).

Usage: ``python bench/validate.py [--n 2000] [--repeat 7] [--seed 7] [--dialect aqp ...] [--json]``
(reads the seeds from ``<repo>/../shared/seeds`` or ``$ASKGATE_SHARED/seeds``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import corpus
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Resource

from askgate.errors import AskgateError
from askgate.protocols import schemas
from askgate.protocols.registry import codec_for

SEEDS = {
    "a2a-elicitation": "a2a-elicitation-v1.schema.json",
    "aqp": "aqp-query-request.schema.json",
    "acs": "acs-ask-details.schema.json",
}
DIALECTS = ("a2a-elicitation", "mcp-elicitation", "aqp", "acs")
TARGET = 20.0


@dataclass
class Row:
    dialect: str
    kind: str  # "valid" | "invalid"
    n: int
    askgate_per_s: float | None = None  # parse_request: validate and build the canonical Ask
    validate_per_s: float | None = None  # validate_request (verdict and faults only), where offered
    jsonschema_per_s: float | None = None
    ratio: float | None = None
    validate_ratio: float | None = None
    askgate_accepted: int = 0
    jsonschema_accepted: int | None = None
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


def shared_dir() -> Path:
    return Path(os.environ.get("ASKGATE_SHARED", REPO.parent / "shared")).resolve()


def seed_validator(dialect: str, shared: Path) -> Draft202012Validator:
    """jsonschema's validator for one seed, format checker on, stand-ins registered."""
    seed = json.loads((shared / "seeds" / SEEDS[dialect]).read_text(encoding="utf-8"))
    registry = schemas.registry().with_resource(seed["$id"], Resource.from_contents(seed))
    if (
        dialect == "a2a-elicitation"
    ):  # the request branch of the request|response oneOf, with the seed's $defs
        request_branch = seed["oneOf"][0]
        seed = {k: v for k, v in seed.items() if k != "oneOf"} | request_branch
    Draft202012Validator.check_schema(seed)
    return Draft202012Validator(seed, registry=registry, format_checker=FormatChecker())


def best_rates(checks: list[Callable[[Any], Any]], docs: list[Any], repeat: int) -> list[float]:
    """Documents per second for each check: the best of ``repeat`` passes, garbage collector off (as
    timeit does). Passes of the checks are interleaved, so a change in machine load during the run
    affects all of them alike rather than skewing the ratio."""
    best = [float("inf")] * len(checks)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for k, check in enumerate(checks):
                start = time.perf_counter()
                for doc in docs:
                    check(doc)
                best[k] = min(best[k], time.perf_counter() - start)
    finally:
        if enabled:
            gc.enable()
    return [len(docs) / b if b > 0 else float("inf") for b in best]


def askgate_checker(parse: Callable[..., Any]) -> Callable[[Any], bool]:
    def check(doc: Any) -> bool:
        try:
            parse(doc)
        except AskgateError:
            return False
        return True

    return check


def _askgate_verdict(parse: Callable[..., Any], doc: Any) -> tuple[bool, str]:
    try:
        parse(doc)
    except AskgateError as exc:
        return False, "; ".join(f"{f.pointer or '/'} [{f.rule}] {f.message}" for f in exc.faults[:4]) or str(
            exc
        )
    except Exception as exc:  # noqa: BLE001 - a leak is reported, not raised
        return False, f"LEAKED {type(exc).__name__}: {exc}"
    return True, ""


def _jsonschema_error(validator: Draft202012Validator, doc: Any) -> str:
    from jsonschema.exceptions import best_match

    err = best_match(validator.iter_errors(doc))
    if err is None:
        return ""
    where = "/" + "/".join(str(p) for p in err.absolute_path)
    return f"{where} [{err.validator}] {err.message[:160]}"


def measure(dialect: str, kind: str, docs: list[Any], labels: list[str], repeat: int, shared: Path) -> Row:
    row = Row(dialect, kind, len(docs))
    try:
        codec = codec_for(dialect)
    except AskgateError as exc:
        row.note = f"codec unavailable ({exc.code})"
        return row
    parse = codec.parse_request
    verdicts = [_askgate_verdict(parse, d) for d in docs]  # also the warm-up pass
    leaks = [i for i, (_, why) in enumerate(verdicts) if why.startswith("LEAKED")]
    row.askgate_accepted = sum(ok for ok, _ in verdicts)
    timed = [d for i, d in enumerate(docs) if i not in set(leaks)]
    for i in leaks:
        row.disagreements.append({"label": labels[i], "problem": verdicts[i][1], "doc": docs[i]})
    checks: list[Callable[[Any], Any]] = [askgate_checker(parse)]
    validate_only = getattr(codec, "validate_request", None)
    if validate_only is not None:
        checks.append(validate_only)
        for i, doc in enumerate(docs):  # the verdict-only path must find exactly parse_request's faults
            if i in leaks:
                continue
            try:
                parse(doc)
                expected: list[Any] = []
            except AskgateError as exc:
                expected = exc.faults
            if validate_only(doc) != expected:
                problem = "validate_request and parse_request report different faults"
                row.disagreements.append({"label": labels[i], "problem": problem, "doc": doc})
    if dialect not in SEEDS:
        row.note = "n/a: no seed schema"
        rates = best_rates(checks, timed, repeat)
        row.askgate_per_s = rates[0]
        row.validate_per_s = rates[1] if validate_only is not None else None
        return row
    validator = seed_validator(dialect, shared)
    reference = [validator.is_valid(d) for d in docs]  # also jsonschema's warm-up pass
    row.jsonschema_accepted = sum(reference)
    rates = best_rates([*checks, validator.is_valid], timed, repeat)
    row.askgate_per_s, row.jsonschema_per_s = rates[0], rates[-1]
    row.ratio = row.askgate_per_s / row.jsonschema_per_s
    if validate_only is not None:
        row.validate_per_s = rates[1]
        row.validate_ratio = row.validate_per_s / row.jsonschema_per_s
    for i, ((ours, why), theirs) in enumerate(zip(verdicts, reference)):
        if i in leaks or ours == theirs:
            continue
        if ours:
            problem = f"askgate accepts, jsonschema rejects: {_jsonschema_error(validator, docs[i])}"
        else:
            problem = f"askgate rejects, jsonschema accepts: {why}"
        row.disagreements.append({"label": labels[i], "problem": problem, "doc": docs[i]})
    return row


def run(dialects: list[str], n: int, repeat: int, seed: int, shared: Path) -> list[Row]:
    rows = []
    for dialect in dialects:
        valid = corpus.valid_corpus(dialect, n, seed)
        rows.append(measure(dialect, "valid", valid, ["valid"] * len(valid), repeat, shared))
        invalid = corpus.invalid_corpus(dialect, n, seed)
        rows.append(
            measure(dialect, "invalid", [d for _, d in invalid], [m for m, _ in invalid], repeat, shared)
        )
    return rows


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def print_report(rows: list[Row], args: argparse.Namespace) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, width=max(Console().width, 150))
    table = Table(
        title=f"request validation, {args.n} documents per set, best of {args.repeat}, seed {args.seed}"
    )
    columns = (
        ("dialect", "left"),
        ("documents", "left"),
        ("askgate parse/s", "right"),
        ("askgate validate/s", "right"),
        ("jsonschema/s", "right"),
        ("ratio parse", "right"),
        ("ratio validate", "right"),
        ("accepted askgate/jsonschema", "left"),
        ("verdicts", "left"),
    )
    for col, justify in columns:
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        accepted = f"{r.askgate_accepted} / {'-' if r.jsonschema_accepted is None else r.jsonschema_accepted}"
        if r.disagreements:
            verdict = f"[bold red]{len(r.disagreements)} disagree[/bold red]"
        elif r.note:
            verdict = r.note
        else:
            verdict = "agree"
        table.add_row(
            r.dialect,
            r.kind,
            _fmt(r.askgate_per_s, ",.0f"),
            _fmt(r.validate_per_s, ",.0f"),
            _fmt(r.jsonschema_per_s, ",.0f"),
            _fmt(r.ratio, ".1f") + ("x" if r.ratio is not None else ""),
            _fmt(r.validate_ratio, ".1f") + ("x" if r.validate_ratio is not None else ""),
            accepted,
            verdict,
        )
    console.print(table)
    console.print(
        f"Python {platform.python_version()} on {platform.machine()}; target: askgate >= {TARGET:.0f}x jsonschema on valid documents"
    )
    for r in rows:
        if r.kind == "valid" and r.ratio is not None:
            line = f"  {r.dialect} valid: parse_request {r.ratio:.1f}x ({'met' if r.ratio >= TARGET else 'NOT met'})"
            if r.validate_ratio is not None:
                met = "met" if r.validate_ratio >= TARGET else "NOT met"
                line += f", validate_request {r.validate_ratio:.1f}x ({met})"
            console.print(line)
    for r in rows:
        for d in r.disagreements[:5]:
            console.print(f"[red]{r.dialect} {r.kind} ({d['label']}):[/red] {d['problem']}", soft_wrap=True)
            console.print(f"    {json.dumps(d['doc'], ensure_ascii=False)[:300]}", soft_wrap=True)
        if len(r.disagreements) > 5:
            console.print(f"  ... {len(r.disagreements) - 5} more for {r.dialect} {r.kind}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="documents per set (default 2000)")
    parser.add_argument("--repeat", type=int, default=7, help="timed passes; the best counts (default 7)")
    parser.add_argument("--seed", type=int, default=7, help="corpus seed (default 7)")
    parser.add_argument("--dialect", action="append", choices=DIALECTS, help="limit to these dialects")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    shared = shared_dir()
    if not (shared / "seeds").is_dir():
        print(f"seed schemas not found under {shared}/seeds (set ASKGATE_SHARED)", file=sys.stderr)
        return 2
    rows = run(args.dialect or list(DIALECTS), args.n, args.repeat, args.seed, shared)
    if args.json:
        out = [
            asdict(r)
            | {"disagreements": [{k: v for k, v in d.items() if k != "doc"} for d in r.disagreements]}
            for r in rows
        ]
        print(
            json.dumps(
                {"n": args.n, "repeat": args.repeat, "seed": args.seed, "rows": out},
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        print_report(rows, args)
    return 1 if any(r.disagreements for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
