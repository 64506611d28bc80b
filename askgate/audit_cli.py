"""``askgate audit verify FILE``: check a hash-chained audit log and name the first broken entry.

Reads a JSON file holding a chain (a list of entries, or ``{"entries": [...]}`` as the HTTP API returns
it). Exit 0: the chain verifies; 1: it is broken (the first bad entry's index, id and why); 2: the input
is unusable (missing, unreadable, not JSON, not a chain). It never prints a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from askgate.core.audit import HASH_RE, verify_chain
from askgate.errors import AskgateError
from askgate.jsonload import loads_strict

audit_app = typer.Typer(
    name="audit",
    help="Work with askgate's hash-chained audit log.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _entries(doc: Any) -> list[Any] | None:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("entries"), list):
        return doc["entries"]
    return None


def _emit(as_json: bool, payload: dict[str, Any], text: str, *, err: bool = False) -> None:
    typer.echo(json.dumps(payload) if as_json else text, err=err and not as_json)


@audit_app.command("verify")
def verify(
    file: Annotated[Path, typer.Argument(help="JSON file: a list of entries or {\"entries\": [...]}")],
    anchor: Annotated[
        str | None, typer.Option(help="expected previous_hash of the first entry (verifying a segment)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as one JSON object")] = False,
) -> None:
    """Verify every link and entry_hash (SHA-256 over RFC 8785 JSON, chained by raw previous hash)."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        _emit(as_json, {"status": "unusable", "reason": f"cannot read {file}: {exc.strerror or exc}"},
              f"unusable: cannot read {file}: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None
    try:
        doc = loads_strict(raw)
    except AskgateError as exc:
        _emit(as_json, {"status": "unusable", "reason": f"not JSON: {exc}"}, f"unusable: not JSON: {exc}",
              err=True)
        raise typer.Exit(2) from None
    entries = _entries(doc)
    if entries is None:
        reason = "expected a list of entries or an object with an \"entries\" list"
        _emit(as_json, {"status": "unusable", "reason": reason}, f"unusable: {reason}", err=True)
        raise typer.Exit(2)
    if anchor is not None and not HASH_RE.match(anchor):
        reason = "--anchor must be 64 lowercase hex digits"
        _emit(as_json, {"status": "unusable", "reason": reason}, f"unusable: {reason}", err=True)
        raise typer.Exit(2)
    result = verify_chain(entries, anchor=anchor)
    if result.ok:
        _emit(as_json, {"status": "ok", "entries": len(entries), "head": result.head},
              f"ok: {len(entries)} entries" + (f", head {result.head}" if result.head else ""))
        return
    i = result.first_bad
    bad = entries[i] if i is not None else None
    entry_id = bad.get("entry_id") if isinstance(bad, dict) else None
    label = f"entry {i}" + (f" ({entry_id})" if isinstance(entry_id, str) else "")
    _emit(as_json, {"status": "broken", "first_bad": i, "entry_id": entry_id, "reason": result.reason},
          f"broken: {label}: {result.reason}")
    raise typer.Exit(1)
