"""Streams for the A2UI streaming parser: benchmark responses, re-chunking, and both parsers side by side.

Used by tests/a2ui/test_streaming_*.py (differential tests) and bench/a2ui.py (the speed ratio). The
reference SDK only ever runs in a subprocess (tests/support/a2ui_reference.py); many streams are batched
into one subprocess call, and its timing is measured inside that process around ``process_chunk`` only.
Both sides record, per chunk, either the returned parts ``[[text, a2ui_json], ...]`` or the error
message, after a JSON round trip, so the records compare with ``==``.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from typing import Any, Callable

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.streaming import StreamParser
from tests.support.a2ui_reference import run_reference

__all__ = [
    "REFERENCE_SCRIPT",
    "askgate_run",
    "catalog_json",
    "chunked",
    "llm_response",
    "part_records",
    "random_chunks",
    "reference_run",
]

# Runs in the reference SDK's process. A job: {"catalog": {...}, "chunks": [...], "digest": bool,
# "budget": seconds or null}. Result per job: {"records": [...], "seconds": float, "timed_out": bool}.
REFERENCE_SCRIPT = r"""
import hashlib, json, sys, time
from a2ui.schema.catalog import A2uiCatalog
from a2ui.parser.streaming import A2uiStreamParser

def record(parts, error, digest):
    rec = {"error": error} if error is not None else {"parts": [[p.text, p.a2ui_json] for p in parts]}
    text = json.dumps(rec, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest() if digest else json.loads(text)

out = []
for job in json.load(sys.stdin):
    c = job["catalog"]
    catalog = A2uiCatalog(version=c["version"], name="x", s2c_schema=c["s2c"],
                          common_types_schema=c["common"], catalog_schema=c["catalog"])
    parser = A2uiStreamParser(catalog=catalog)
    records, spent, timed_out = [], 0.0, False
    for chunk in job["chunks"]:
        t0 = time.process_time()
        try:
            parts, error = parser.process_chunk(chunk), None
        except Exception as exc:
            parts, error = None, str(exc)
        spent += time.process_time() - t0
        records.append(record(parts, error, job.get("digest")))
        if job.get("budget") and spent > job["budget"]:
            timed_out = True
            break
    out.append({"records": records, "seconds": spent, "timed_out": timed_out})
json.dump(out, sys.stdout)
"""


def catalog_json(catalog: A2uiCatalog) -> dict[str, Any]:
    """The schemas of ``catalog`` as plain JSON, so the reference validates against exactly the same."""
    return {
        "version": catalog.version,
        "s2c": catalog.s2c_schema,
        "catalog": catalog.catalog_schema or {},
        "common": catalog.common_types_schema or {},
    }


def _record(parts: Any, error: str | None, digest: bool) -> Any:
    rec = {"error": error} if error is not None else {"parts": [[p.text, p.a2ui_json] for p in parts]}
    text = json.dumps(rec, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest() if digest else json.loads(text)


def askgate_run(catalog: A2uiCatalog, chunks: list[str], digest: bool = False) -> dict[str, Any]:
    """Feed ``chunks`` to a fresh :class:`StreamParser`; records as the reference script makes them."""
    parser = StreamParser(catalog)
    records, spent = [], 0.0
    for chunk in chunks:
        t0 = time.process_time()
        try:
            parts, error = parser.process_chunk(chunk), None
        except ValueError as exc:  # the toolkit's errors; anything else is a bug and propagates
            parts, error = None, str(exc)
        spent += time.process_time() - t0
        records.append(_record(parts, error, digest))
    return {"records": records, "seconds": spent, "timed_out": False}


def part_records(
    catalog: A2uiCatalog,
    chunks: list[str],
    *,
    fast: bool = True,
    state: Callable[[StreamParser], Any] | None = None,
    restart: bool = False,
) -> list[Any]:
    """What a fresh :class:`StreamParser` returns after every chunk: the parts as sorted JSON, or
    ``"error: <message>"``; each followed by ``state(parser)`` when given. ``fast``: the parser's shortcuts
    (``_fast_scan``). ``restart``: after an error the parser starts over (an error leaves no defined state)
    instead of taking the next chunk."""

    def fresh() -> StreamParser:
        parser = StreamParser(catalog)
        parser._fast_scan = fast
        return parser

    parser = fresh()
    out: list[Any] = []
    for chunk in chunks:
        try:
            parts = parser.process_chunk(chunk)
        except ValueError as exc:
            out.append(f"error: {exc}")
            if restart:
                parser = fresh()
            continue
        out.append(json.dumps([[p.text, p.a2ui_json] for p in parts], sort_keys=True))
        if state is not None:
            out.append(state(parser))
    return out


def reference_run(jobs: list[dict[str, Any]], timeout: float = 900) -> list[dict[str, Any]]:
    """Run several streams through the reference SDK in one subprocess."""
    return run_reference(REFERENCE_SCRIPT, jobs, timeout=timeout)


def chunked(text: str, size: int = 40) -> list[str]:
    """``text`` in fixed-size chunks (the issue's 40-character chunks)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def cut_at(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at the given positions (any order, repeats give empty chunks): for drawn cut points."""
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def random_chunks(text: str, rng: random.Random, max_size: int = 30) -> list[str]:
    """``text`` cut at random points (chunk sizes 1..max_size, occasionally an empty chunk)."""
    out, i = [], 0
    while i < len(text):
        if rng.random() < 0.03:
            out.append("")
        size = rng.randint(1, max_size)
        out.append(text[i : i + size])
        i += size
    return out


_WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def llm_response(n: int, version: str, catalog_id: str | None = None) -> str:
    """An LLM response showing one surface with ``n`` components: a root Column and ``n - 1`` Texts.

    Conversational text, then one ``<a2ui-json>`` block (start message, one component update with the
    root first, as the system prompt asks, a small data-model update), then closing text.
    """
    kids = [f"item_{i}" for i in range(1, n)]
    words = [f"{_WORDS[i % len(_WORDS)]} {_WORDS[(i * 7) % len(_WORDS)]}" for i in range(1, n)]
    if version == "0.9":
        comps: list[dict[str, Any]] = [{"id": "root", "component": "Column", "children": kids}]
        comps += [{"id": k, "component": "Text", "text": f"Item {i}: {w}"} for i, (k, w) in enumerate(zip(kids, words), 1)]
        messages: list[dict[str, Any]] = [
            {"version": "v0.9", "createSurface": {"surfaceId": "main", "catalogId": catalog_id}},
            {"version": "v0.9", "updateComponents": {"surfaceId": "main", "components": comps}},
            {"version": "v0.9", "updateDataModel": {"surfaceId": "main", "path": "/", "value": {"count": n}}},
        ]
    else:
        comps = [{"id": "root", "component": {"Column": {"children": {"explicitList": kids}}}}]
        comps += [
            {"id": k, "component": {"Text": {"text": {"literalString": f"Item {i}: {w}"}}}}
            for i, (k, w) in enumerate(zip(kids, words), 1)
        ]
        messages = [
            {"beginRendering": {"surfaceId": "main", "root": "root"}},
            {"surfaceUpdate": {"surfaceId": "main", "components": comps}},
            {"dataModelUpdate": {"surfaceId": "main", "contents": [{"key": "count", "valueNumber": n}]}},
        ]
    body = json.dumps(messages, indent=1)
    return f"Here is the list you asked for.\n<a2ui-json>\n{body}\n</a2ui-json>\nAnything else?"
