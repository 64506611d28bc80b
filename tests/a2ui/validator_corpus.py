"""Payloads for differential validator tests: valid surfaces on the basic catalogs and seeded mutations.

Each mutation breaks (or keeps) a payload in one way a producer plausibly would: a wrong type, a missing or
extra property, a duplicated, renamed or dangling id, a cycle, an unknown component, a bad data path, deep
nesting, nested function calls, a wrong version, a missing start message. The same seed always gives the
same payload, so a failure can be replayed.
"""

from __future__ import annotations

import copy
import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]


def load_bench() -> ModuleType:
    """bench/a2ui_validator_bench.py as a module, loaded by path: putting bench/ on sys.path would let
    bench/a2ui.py shadow the a2ui-core package."""
    name = "a2ui_validator_bench"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


valid_payload = load_bench().valid_payload

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
    if not dicts:  # earlier mutations may leave no object to change
        return
    node = rng.choice(dicts)
    key = rng.choice(list(node))
    node[key] = rng.choice(SCALARS + [{}, [], {"path": "/x~3y"}, ["a", 1]])


def _delete_key(rng: random.Random, payload: list[Any]) -> None:
    dicts = [c for c in _containers(payload, []) if isinstance(c, dict) and c]
    if not dicts:
        return
    node = rng.choice(dicts)
    del node[rng.choice(list(node))]


def _add_key(rng: random.Random, payload: list[Any]) -> None:
    dicts = [c for c in _containers(payload, []) if isinstance(c, dict)]
    if not dicts:
        return
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
    if not dicts:
        return
    rng.choice(dicts)["nested"] = node


def _function_calls(rng: random.Random, payload: list[Any]) -> None:
    """Nested function calls. In v0.9 they go into a data-model value: inside a component, calls to
    unknown functions make jsonschema's error report exponential (the reference hangs; askgate gives up
    after a step budget), which is tested separately."""
    depth = rng.choice([1, 4, 5, 6, 8])
    node: Any = {"call": "f", "args": {}}
    for i in range(depth - 1):
        node = {"call": f"f{i}", "args": {"value": node}}
    if any(isinstance(m, dict) and "version" in m for m in payload):
        payload.append({"version": "v0.9", "updateDataModel": {"surfaceId": "bench", "path": "/calc",
                                                                "value": {"functionCall": node}}})
        return
    dicts = [c for c in _containers(payload, []) if isinstance(c, dict)]
    if not dicts:
        return
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


def zoo_payload(version: str, catalog_id: str) -> list[Any]:
    """One valid surface using every basic-catalog component type, with typical properties."""
    if version == "0.8":
        def c(cid: str, kind: str, **props: Any) -> dict[str, Any]:
            return {"id": cid, "component": {kind: props}}

        s = lambda v: {"literalString": v}  # noqa: E731
        comps = [
            c("root", "Column", children={"explicitList": ["t", "img", "ico", "vid", "aud", "row", "lst", "card",
                                                           "tabs", "div", "modal", "btn", "cb", "tf", "dt", "mc",
                                                           "sl"]}, distribution="start", alignment="stretch"),
            c("t", "Text", text=s("Hello"), usageHint="h2"),
            c("img", "Image", url=s("https://x/y.png"), altText={"path": "/alt"}, fit="cover", usageHint="avatar"),
            c("ico", "Icon", name=s("check")),
            c("vid", "Video", url={"path": "/video"}),
            c("aud", "AudioPlayer", url=s("https://x/a.mp3"), description=s("song")),
            c("row", "Row", children={"template": {"componentId": "rowitem", "dataBinding": "/items"}},
              distribution="spaceBetween", alignment="center"),
            c("rowitem", "Text", text={"path": "name"}),
            c("lst", "List", children={"explicitList": ["li"]}, direction="horizontal", alignment="start"),
            c("li", "Text", text=s("item")),
            c("card", "Card", child="cardbody"),
            c("cardbody", "Text", text=s("in card")),
            c("tabs", "Tabs", tabItems=[{"title": s("One"), "child": "tab1"}, {"title": {"path": "/t2"},
                                                                               "child": "tab2"}]),
            c("tab1", "Text", text=s("1")),
            c("tab2", "Text", text=s("2")),
            c("div", "Divider", axis="vertical"),
            c("modal", "Modal", entryPointChild="open", contentChild="inside"),
            c("open", "Text", text=s("open")),
            c("inside", "Text", text=s("inside")),
            c("btn", "Button", child="btntext", primary=True, action={"name": "go", "context": [
                {"key": "a", "value": {"path": "/form/a"}}, {"key": "b", "value": {"literalNumber": 2}}]}),
            c("btntext", "Text", text=s("Go")),
            c("cb", "CheckBox", label=s("ok?"), value={"path": "/form/ok", "literalBoolean": False}),
            c("tf", "TextField", label=s("Name"), text={"path": "/form/name"}, textFieldType="shortText",
              validationRegexp="^.{1,20}$"),
            c("dt", "DateTimeInput", value={"path": "/form/when"}, enableDate=True, enableTime=False),
            c("mc", "MultipleChoice", selections={"path": "/form/pick", "literalArray": ["a"]},
              options=[{"label": s("A"), "value": "a"}, {"label": s("B"), "value": "b"}], maxAllowedSelections=1),
            c("sl", "Slider", label=s("Level"), value={"path": "/form/level"}, minValue=0, maxValue=10),
        ]
        return [{"beginRendering": {"surfaceId": "zoo", "root": "root", "styles": {"font": "Roboto",
                                                                                  "primaryColor": "#00AAff"}}},
                {"surfaceUpdate": {"surfaceId": "zoo", "components": comps}},
                {"dataModelUpdate": {"surfaceId": "zoo", "path": "/form", "contents": [
                    {"key": "name", "valueString": "x"}, {"key": "n", "valueNumber": 3},
                    {"key": "m", "valueMap": [{"key": "k", "valueBoolean": True}]}]}},
                {"deleteSurface": {"surfaceId": "old"}}]

    def d(cid: str, kind: str, **props: Any) -> dict[str, Any]:
        return {"id": cid, "component": kind, **props}

    comps = [
        d("root", "Column", children=["t", "img", "ico", "ico2", "vid", "aud", "row", "lst", "card", "tabs", "div",
                                      "modal", "btn", "cb", "tf", "dt", "cp", "sl"], justify="start", align="stretch"),
        d("t", "Text", text="Hello", variant="h2"),
        d("img", "Image", url="https://x/y.png", description={"path": "/alt"}, fit="scaleDown", variant="avatar"),
        d("ico", "Icon", name="check"),
        d("ico2", "Icon", name={"path": "/icon"}),
        d("vid", "Video", url={"path": "/video"}),
        d("aud", "AudioPlayer", url="https://x/a.mp3", description="song"),
        d("row", "Row", children={"componentId": "rowitem", "path": "/items"}, justify="spaceBetween",
          align="center"),
        d("rowitem", "Text", text={"path": "name"}),
        d("lst", "List", children=["li"], direction="horizontal", align="start"),
        d("li", "Text", text="item"),
        d("card", "Card", child="cardbody"),
        d("cardbody", "Text", text="in card"),
        d("tabs", "Tabs", tabs=[{"title": "One", "child": "tab1"}, {"title": {"path": "/t2"}, "child": "tab2"}]),
        d("tab1", "Text", text="1"),
        d("tab2", "Text", text="2"),
        d("div", "Divider", axis="vertical"),
        d("modal", "Modal", trigger="open", content="inside"),
        d("open", "Text", text="open"),
        d("inside", "Text", text="inside"),
        d("btn", "Button", child="btntext", variant="primary",
          action={"event": {"name": "go", "context": {"a": {"path": "/form/a"}, "b": 2}}},
          checks=[{"condition": {"call": "required", "args": {"value": {"path": "/form/name"}}},
                   "message": "needed"}]),
        d("btntext", "Text", text="Go"),
        d("cb", "CheckBox", label="ok?", value={"path": "/form/ok"}),
        d("tf", "TextField", label="Name", value={"path": "/form/name"}, variant="shortText",
          checks=[{"condition": {"call": "length", "args": {"value": {"path": "/form/name"}, "min": 1, "max": 9}},
                   "message": "1-9"}]),
        d("dt", "DateTimeInput", value={"path": "/form/when"}, enableDate=True, label="When"),
        d("cp", "ChoicePicker", label="Pick", variant="mutuallyExclusive",
          options=[{"label": "A", "value": "a"}, {"label": {"path": "/b"}, "value": "b"}],
          value={"path": "/form/pick"}),
        d("sl", "Slider", label="Level", min=0, max=10, value={"path": "/form/level"}),
    ]
    return [{"version": "v0.9", "createSurface": {"surfaceId": "zoo", "catalogId": catalog_id,
                                                   "theme": {"primaryColor": "#00AAff"}, "sendDataModel": True}},
            {"version": "v0.9", "updateComponents": {"surfaceId": "zoo", "components": comps}},
            {"version": "v0.9", "updateDataModel": {"surfaceId": "zoo", "path": "/form", "value": {"name": "x"}}},
            {"version": "v0.9", "deleteSurface": {"surfaceId": "old"}}]


def mutated_zoo(version: str, catalog_id: str, seed: int) -> list[Any]:
    """The zoo surface with 0-3 seeded mutations."""
    rng = random.Random(seed)
    payload = zoo_payload(version, catalog_id)
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        rng.choice(MUTATIONS)(rng, payload)
    return payload
