"""A2UI validator benchmark: components validated per second, askgate vs the upstream reference SDK.

Both sides validate the same payloads against the same catalogs (askgate's basic catalogs, handed to the
reference as JSON), each building its validator once and timing only ``validate`` calls inside its own
process (the reference runs in a subprocess, tests/support/a2ui_reference.py). Time is CPU time of the
validating process (``time.process_time``; both validators are single-threaded), so other load on the
machine does not count; each figure is the fastest of 5 repeats of at least 0.15 CPU-seconds. Ratios are
same-run.
It also checks that both give the same verdict and the same message on a set of invalid payloads.

Run:  .venv/bin/python bench/a2ui_validator_bench.py        (``run()`` returns the figures as a dict)
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# Run as a script, this folder is sys.path[0]; bench/a2ui.py would then shadow the a2ui-core package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from askgate.a2ui.catalog import A2uiCatalog  # noqa: E402
from askgate.a2ui.validator import A2uiValidator  # noqa: E402

SIZES = (10, 100)
VERSIONS = ("0.8", "0.9")
REPEATS = 5          # per measurement and side; the fastest repeat counts (timeit's convention)
MIN_SECONDS = 0.15   # CPU seconds per repeat

# The reference side: build the validator once, time validate() calls, report seconds per call; then
# collect str(exc) (or None) for every invalid payload.
REFERENCE_SCRIPT = r"""
import json, sys, time
from a2ui.schema.catalog import A2uiCatalog
from a2ui.schema.validator import A2uiValidator
job = json.load(sys.stdin)
out = {"timings": [], "verdicts": []}
def catalog(c):
    return A2uiCatalog(version=c["version"], name="bench", s2c_schema=c["s2c"],
                       common_types_schema=c["common"], catalog_schema=c["catalog"])
validators = {v: A2uiValidator(catalog(c)) for v, c in job["catalogs"].items()}
for item in job["timed"]:
    val = validators[item["version"]]
    payload = item["payload"]
    val.validate(payload)
    best = None
    for _ in range(job["repeats"]):
        n, start = 0, time.process_time()
        while True:
            val.validate(payload)
            n += 1
            elapsed = time.process_time() - start
            if elapsed >= job["min_seconds"] and n >= 3:
                break
        best = elapsed / n if best is None else min(best, elapsed / n)
    out["timings"].append(best)
for item in job["invalid"]:
    try:
        validators[item["version"]].validate(item["payload"])
        out["verdicts"].append(None)
    except Exception as exc:
        out["verdicts"].append(type(exc).__name__ + ": " + str(exc))
print(json.dumps(out))
"""


def catalogs() -> dict[str, A2uiCatalog]:
    """askgate's basic catalogs (from a2ui-core), the ones both sides validate against."""
    return {v: A2uiCatalog.basic(v) for v in VERSIONS}


def _component(version: str, cid: str, kind: str, **props: Any) -> dict[str, Any]:
    if version == "0.8":
        return {"id": cid, "component": {kind: props}}
    return {"id": cid, "component": kind, **props}


def valid_payload(version: str, n: int, catalog_id: str) -> list[dict[str, Any]]:
    """One surface of ``n`` components: a Column root over blocks of Card(Text), TextField, CheckBox and
    Button(Text), topped up with Texts. Every component is reachable; data bindings use paths."""
    v8 = version == "0.8"

    def text(value: str) -> Any:
        return {"literalString": value} if v8 else value

    comps: list[dict[str, Any]] = []
    top: list[str] = []
    i = 0
    while len(comps) + 1 + 6 <= n:
        i += 1
        top += [f"card{i}", f"field{i}", f"box{i}", f"send{i}"]
        comps.append(_component(version, f"card{i}", "Card", child=f"cardtext{i}"))
        comps.append(_component(version, f"cardtext{i}", "Text", text=text(f"Question {i}")))
        if v8:
            comps.append(_component(version, f"field{i}", "TextField", label=text(f"Field {i}"),
                                    text={"path": f"/form/f{i}"}, textFieldType="shortText"))
        else:
            comps.append(_component(version, f"field{i}", "TextField", label=f"Field {i}",
                                    value={"path": f"/form/f{i}"}, variant="shortText"))
        comps.append(_component(version, f"box{i}", "CheckBox", label=text(f"Box {i}"),
                                value={"path": f"/form/b{i}"}))
        if v8:
            action = {"name": "submit", "context": [{"key": "f", "value": {"path": f"/form/f{i}"}}]}
            comps.append(_component(version, f"send{i}", "Button", child=f"sendtext{i}", action=action))
        else:
            action = {"event": {"name": "submit", "context": {"f": {"path": f"/form/f{i}"}}}}
            comps.append(_component(version, f"send{i}", "Button", child=f"sendtext{i}", variant="primary",
                                    action=action))
        comps.append(_component(version, f"sendtext{i}", "Text", text=text("Send")))
    j = 0
    while len(comps) + 1 < n:
        j += 1
        top.append(f"note{j}")
        comps.append(_component(version, f"note{j}", "Text", text=text(f"Note {j}")))
    root = _component(version, "root", "Column", children={"explicitList": top} if v8 else top)
    comps.insert(0, root)
    if v8:
        return [{"beginRendering": {"surfaceId": "bench", "root": "root"}},
                {"surfaceUpdate": {"surfaceId": "bench", "components": comps}}]
    return [{"version": "v0.9", "createSurface": {"surfaceId": "bench", "catalogId": catalog_id}},
            {"version": "v0.9", "updateComponents": {"surfaceId": "bench", "components": comps}}]


def _components(payload: list[dict[str, Any]]) -> int:
    for message in payload:
        body = message.get("surfaceUpdate") or message.get("updateComponents")
        if body:
            return len(body["components"])
    return 0


def n_cards(payload: list[dict[str, Any]]) -> int:
    return sum(1 for m in payload for body in [m.get("surfaceUpdate") or m.get("updateComponents")] if body
               for c in body["components"] if c["id"].startswith("card") and not c["id"].startswith("cardtext"))


def invalid_payloads(version: str, catalog_id: str) -> list[list[dict[str, Any]]]:
    """Broken variants of a valid 20-component payload, one rule each (schema, integrity, limits)."""
    base = valid_payload(version, 20, catalog_id)
    v8 = version == "0.8"
    out = []

    def variant(fn: Any) -> None:
        p = copy.deepcopy(base)
        fn(p)
        out.append(p)

    comps = (lambda p: p[1]["surfaceUpdate"]["components"]) if v8 else (lambda p: p[1]["updateComponents"]["components"])
    body = (lambda c: next(iter(c["component"].values()))) if v8 else (lambda c: c)
    variant(lambda p: comps(p).append(copy.deepcopy(comps(p)[1])))                     # duplicate id
    variant(lambda p: comps(p).__setitem__(0, {**comps(p)[0], "id": "top"}))            # missing root
    variant(lambda p: comps(p).append({**copy.deepcopy(comps(p)[1]), "id": "lonely"}))  # orphan
    variant(lambda p: body(comps(p)[0])["children"].__setitem__(
        "explicitList", ["ghost"]) if v8 else comps(p)[0].__setitem__("children", ["ghost"]))  # dangling
    variant(lambda p: p[0][("beginRendering" if v8 else "createSurface")].__setitem__("surfaceId", 7))  # type
    variant(lambda p: p[0][("beginRendering" if v8 else "createSurface")].pop(
        "root" if v8 else "catalogId"))                                                 # required
    variant(lambda p: p.append({"surfaceUpdate": {"surfaceId": "bench"}} if v8 else
                               {"version": "v0.9", "updateDataModel": {"value": 1}}))  # required (nested)
    variant(lambda p: p.append({"deleteSurface": {}} if v8 else
                               {"deleteSurface": {"surfaceId": "bench"}, "version": "v0.8"}))  # required / const
    variant(lambda p: body(comps(p)[2]).__setitem__("text", 42))                        # wrong property type
    variant(lambda p: body(comps(p)[2]).__setitem__("bogus", True))                     # closed component
    variant(lambda p: comps(p).append({"id": "x", "component": {"Nope": {}} if v8 else "Nope"}))  # unknown type
    variant(lambda p: p.append({"dataModelUpdate": {"surfaceId": "bench", "path": "/a/~2", "contents": []}} if v8
                               else {"version": "v0.9", "updateDataModel": {"surfaceId": "bench", "path": "/a/~2",
                                                                            "value": 1}}))  # path syntax
    deep: Any = {"x": 1}
    for _ in range(60):
        deep = {"next": deep}
    if not v8:  # v0.8 has no free-form JSON slot, so deep nesting is always a schema error first
        variant(lambda p: p.append({"version": "v0.9", "updateDataModel": {"surfaceId": "bench", "value": deep}}))

    def cycle(p: Any) -> None:  # card1 -> card2 -> card1
        by_id = {c["id"]: c for c in comps(p)}
        body(by_id["card1"])["child"] = "card2"
        body(by_id["card2"])["child"] = "card1"

    if n_cards(base) >= 2:
        variant(cycle)
    variant(lambda p: body(comps(p)[1]).__setitem__("child", comps(p)[1]["id"]))        # self reference
    return out


def _askgate_seconds(validator: A2uiValidator, payload: Any) -> float:
    validator.validate(payload)
    best = float("inf")
    for _ in range(REPEATS):
        n, start = 0, time.process_time()
        while True:
            validator.validate(payload)
            n += 1
            elapsed = time.process_time() - start
            if elapsed >= MIN_SECONDS and n >= 3:
                break
        best = min(best, elapsed / n)
    return best


def _askgate_verdict(validator: A2uiValidator, payload: Any) -> str | None:
    try:
        validator.validate(payload)
    except ValueError as exc:
        return str(exc)
    return None


def run() -> dict[str, Any]:
    """Measure both sides on the same inputs; return per-(version, size) rates and ratios plus the
    invalid-payload comparison."""
    from tests.support.a2ui_reference import run_reference

    cats = catalogs()
    timed = [{"version": v, "size": n, "payload": valid_payload(v, n, cats[v].catalog_id or "")}
             for v in VERSIONS for n in SIZES]
    invalid = [{"version": v, "payload": p} for v in VERSIONS for p in invalid_payloads(v, cats[v].catalog_id or "")]
    job = {
        "catalogs": {v: {"version": v, "s2c": c.s2c_schema, "common": c.common_types_schema,
                         "catalog": c.catalog_schema} for v, c in cats.items()},
        "timed": timed,
        "invalid": invalid,
        "min_seconds": MIN_SECONDS,
        "repeats": REPEATS,
    }
    reference = run_reference(REFERENCE_SCRIPT, job)
    validators = {v: A2uiValidator(c) for v, c in cats.items()}
    rows = []
    for item, ref_seconds in zip(timed, reference["timings"]):
        count = _components(item["payload"])
        ours = _askgate_seconds(validators[item["version"]], item["payload"])
        rows.append({
            "version": item["version"], "components": count,
            "askgate_components_per_s": count / ours, "reference_components_per_s": count / ref_seconds,
            "ratio": ref_seconds / ours,
        })
    mismatches = []
    for item, ref in zip(invalid, reference["verdicts"]):
        mine = _askgate_verdict(validators[item["version"]], item["payload"])
        theirs = None if ref is None else ref.split(": ", 1)[1]
        if mine != theirs:
            mismatches.append({"version": item["version"], "askgate": mine, "reference": ref})
    return {"rows": rows, "invalid_checked": len(invalid), "invalid_rejected_by_reference":
            sum(r is not None for r in reference["verdicts"]), "mismatches": mismatches}


def main() -> int:
    result = run()
    print("A2UI validator: components validated per second (valid payloads; same catalogs, same inputs)")
    print(f"{'version':>7} {'components':>10} {'askgate/s':>12} {'reference/s':>12} {'ratio':>8}")
    for r in result["rows"]:
        print(f"{r['version']:>7} {r['components']:>10} {r['askgate_components_per_s']:>12.0f} "
              f"{r['reference_components_per_s']:>12.0f} {r['ratio']:>7.1f}x")
    print(f"invalid payloads: {result['invalid_checked']} checked, "
          f"{result['invalid_rejected_by_reference']} rejected by the reference, "
          f"{len(result['mismatches'])} verdict/message mismatches")
    for m in result["mismatches"]:
        print("  MISMATCH", json.dumps(m)[:400])
    return 1 if result["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
