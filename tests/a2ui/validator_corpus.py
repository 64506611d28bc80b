"""Payloads for differential validator tests: valid surfaces on the basic catalogs and seeded mutations.

Each mutation breaks (or keeps) a payload in one way a producer plausibly would: a wrong type, a missing or
extra property, a duplicated, renamed or dangling id, a cycle, an unknown component, a bad data path, deep
nesting, nested function calls, a wrong version, a missing start message. The same seed always gives the
same payload, so a failure can be replayed.
"""

from __future__ import annotations

import copy
import random
import sys
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "bench") not in sys.path:
    sys.path.insert(0, str(REPO / "bench"))

from a2ui_validator_bench import valid_payload  # noqa: E402  (the bench's surface generator)

SCALARS: list[Any] = [0, 1, -3, 2.5, True, False, None, "", "x", "root", "/a/b", "a~2", "~1", "#00ff00", "v0.9"]


def _components(payload: list[Any]) -> list[Any] | None:
    for m in payload:
        if isinstance(m, dict):
            for key in ("surfaceUpdate", "updateComponents"):
                body = m.get(key)
                if isinstance(body, dict) and isinstance(body.get("components"), list):
                    return body["components"]
    return None


def _containers(node: Any, out: list[Any]) -> list[Any]:
    if isinstance(node, dict):
        out.append(node)
        for v in node.values():
            _containers(v, out)
    elif isinstance(node, list):
        out.append(node)
        for v in node:
            _containers(v, out)
    return out


def _ids(payload: list[Any]) -> list[str]:
    comps = _components(payload) or []
    return [c["id"] for c in comps if isinstance(c, dict) and isinstance(c.get("id"), str)]


def _set_random_leaf(rng: random.Random, payload: list[Any]) -> None:
    dicts = [c for c in _containers(payload, []) if isinstance(c, dict) and c]
    node = rng.choice(dicts)
    key = rng.choice(list(node))
    node[key] = rng.choice(SCALARS + [{}, [], {"path": "/x~3y"}, ["a", 1]])


def _delete_key(rng: random.Random, payload: list[Any]) -> None:
    dicts = [c for c in _containers(payload, []) if isinstance(c, dict) and c]
    node = rng.choice(dicts)
    del node[rng.choice(list(node))]


def _add_key(rng: random.Random, payload: list[Any]) -> None:
    dicts = [c for c in _containers(payload, []) if isinstance(c, dict)]
    rng.choice(dicts)[rng.choice(["extra", "weight", "path", "child", "children", "call"])] = rng.choice(SCALARS)


def _duplicate(rng: random.Random, payload: list[Any]) -> None:
    comps = _components(payload)
    if comps:
        comps.insert(rng.randrange(len(comps) + 1), copy.deepcopy(rng.choice(comps)))


def _rename(rng: random.Random, payload: list[Any]) -> None:
    comps = _components(payload)
    if comps:
        rng.choice(comps)["id"] = rng.choice(["root", "zz", "orphan", "a"] + _ids(payload))


def _retarget(rng: random.Random, payload: list[Any]) -> None:
    """Point some reference at an existing id, the component itself, or nothing."""
    comps = _components(payload) or []
    ids = _ids(payload)
    for comp in rng.sample(comps, k=min(len(comps), 3)):
        if not isinstance(comp, dict):
            continue
        body = comp["component"] if isinstance(comp.get("component"), dict) else comp
        if isinstance(body, dict) and isinstance(comp.get("component"), dict):
            body = next(iter(body.values()), {})
        if not isinstance(body, dict):
            continue
        target = rng.choice(ids + [comp.get("id"), "missing"]) if ids else "missing"
        if "child" in body:
            body["child"] = target
            return
        if "children" in body:
            if isinstance(body["children"], dict):
                body["children"] = {"explicitList": [target]}
            else:
                body["children"] = [target]
            return


def _unknown_component(rng: random.Random, payload: list[Any]) -> None:
    comps = _components(payload)
    if comps:
        comp = rng.choice(comps)
        if isinstance(comp.get("component"), dict):
            comp["component"] = {"Blink": {}}
        else:
            comp["component"] = rng.choice(["Blink", "", 7])


def _bad_path(rng: random.Random, payload: list[Any]) -> None:
    bindings = [c for c in _containers(payload, []) if isinstance(c, dict) and "path" in c]
    if bindings:
        rng.choice(bindings)["path"] = rng.choice(["/a/~2", "~", "a/~x", "/ok/~0~1", "rel/path", ""])


def _deep(rng: random.Random, payload: list[Any]) -> None:
    depth = rng.choice([10, 45, 48, 49, 50, 51, 60])
    node: Any = "leaf"
    for _ in range(depth):
        node = {"n": node} if rng.random() < 0.7 else [node]
    dicts = [c for c in _containers(payload, []) if isinstance(c, dict)]
    rng.choice(dicts)["nested"] = node


def _function_calls(rng: random.Random, payload: list[Any]) -> None:
    depth = rng.choice([1, 4, 5, 6, 8])
    node: Any = {"call": "f", "args": {}}
    for i in range(depth - 1):
        node = {"call": f"f{i}", "args": {"value": node}}
    dicts = [c for c in _containers(payload, []) if isinstance(c, dict)]
    rng.choice(dicts)["action"] = {"functionCall": node}


def _version(rng: random.Random, payload: list[Any]) -> None:
    msgs = [m for m in payload if isinstance(m, dict)]
    if msgs:
        m = rng.choice(msgs)
        if rng.random() < 0.5:
            m.pop("version", None)
        else:
            m["version"] = rng.choice(["v0.8", "v1.0", 0.9])


def _drop_start(rng: random.Random, payload: list[Any]) -> None:
    if payload:
        payload.pop(0)


def _swap_messages(rng: random.Random, payload: list[Any]) -> None:
    payload.reverse()


def _unknown_message(rng: random.Random, payload: list[Any]) -> None:
    payload.append(rng.choice([{"hello": {}}, {"version": "v0.9"}, [], "text", {"deleteSurface": {"surfaceId": 1}}]))


MUTATIONS: list[Callable[[random.Random, list[Any]], None]] = [
    _set_random_leaf, _delete_key, _add_key, _duplicate, _rename, _retarget, _unknown_component, _bad_path,
    _deep, _function_calls, _version, _drop_start, _swap_messages, _unknown_message,
]


def mutated(version: str, catalog_id: str, seed: int) -> list[Any]:
    """A payload for ``seed``: a valid surface (5-30 components) with 0-3 mutations applied."""
    rng = random.Random(seed)
    payload = valid_payload(version, rng.choice([5, 8, 13, 21, 30]), catalog_id)
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        rng.choice(MUTATIONS)(rng, payload)
    return payload
