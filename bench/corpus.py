"""Deterministic request corpora for the validation benchmark (issue #2 item 10).

Valid documents are realistic requests of each dialect, built to satisfy the seed schema AND askgate's
documented runtime rules (so both validators must accept them). Invalid documents are valid ones with
exactly one *schema-level* mutation (a seed keyword breaks: a missing required member, a wrong type, an
out-of-range length, an unknown member of a closed object, a bad format ...), so both validators must
reject them. Everything is drawn from one seeded ``random.Random``: the same seed gives the same corpus.
"""

from __future__ import annotations

import copy
import random
import string
import uuid
from collections.abc import Callable
from typing import Any

Doc = dict[str, Any]
Mutation = Callable[[random.Random, Doc], Doc | None]

_WORDS = [
    "deploy",
    "region",
    "replicas",
    "budget",
    "owner",
    "review",
    "release",
    "ticket",
    "customer",
    "invoice",
    "refund",
    "approve",
    "schedule",
    "window",
    "rollback",
    "database",
    "migration",
    "cluster",
    "latency",
    "quota",
    "vendor",
    "contract",
    "summary",
    "feedback",
    "rating",
    "comment",
    "reason",
    "priority",
    "environment",
    "staging",
    "production",
    "café",
    "naïve",
    "übung",
    "東京",
    "データ",
]
_FIELD_NAMES = (
    "region", "replicas", "email", "website", "start_date", "deadline", "notify", "ratio", "comment", "priority",
    "owner", "budget", "team", "approved", "reason", "__proto__", "constructor", "größe", "名前", "count",
)  # fmt: skip


def _label(name: str, fn: Mutation) -> Mutation:
    fn.__qualname__ = name
    return fn


def _text(rng: random.Random, lo: int = 1, hi: int = 12) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


def _token(rng: random.Random, n: int = 8) -> str:
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _timestamp(rng: random.Random) -> str:
    base = f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    frac = rng.choice(["", "", ".5", ".123456"])
    offset = rng.choice(["Z", "Z", "+02:00", "-05:30", "+00:00"])
    return base + frac + offset


def _https(rng: random.Random) -> str:
    return (
        f"https://{_token(rng, 6)}.example.com/{_token(rng, 4)}/{rng.choice(['hook', 'aqp', 'v1/answers'])}"
    )


# --------------------------------------------------------------------------------------------------
# Flat form schemas (A2A elicitation/v1 and MCP form; AQP structured jsonSchema).
# --------------------------------------------------------------------------------------------------


def _string_property(rng: random.Random) -> Doc:
    prop: Doc = {"type": "string"}
    if rng.random() < 0.6:
        prop["title"] = _text(rng, 1, 3).title()
    if rng.random() < 0.4:
        prop["description"] = _text(rng, 3, 10)
    style = rng.choice(["plain", "enum", "format", "bounded"])
    if style == "enum":
        values = list(dict.fromkeys(_token(rng, rng.randint(1, 6)) for _ in range(rng.randint(1, 6))))
        prop["enum"] = values
        if rng.random() < 0.6:
            prop["enumNames"] = [v.upper() + " label" for v in values]
        if rng.random() < 0.4:
            prop["default"] = rng.choice(values)
    elif style == "format":
        prop["format"] = rng.choice(["email", "uri", "date", "date-time"])
    elif style == "bounded":
        lo = rng.randint(0, 5)
        prop["minLength"] = lo
        prop["maxLength"] = lo + rng.randint(0, 200)
        if rng.random() < 0.3:
            prop["default"] = "x" * lo
    elif rng.random() < 0.3:
        prop["default"] = _text(rng, 1, 3)
    return prop


def _number_property(rng: random.Random, integer: bool) -> Doc:
    prop: Doc = {"type": "integer" if integer else "number"}
    if rng.random() < 0.5:
        prop["title"] = _text(rng, 1, 2).title()
    lo = rng.randint(-100, 100) if integer else round(rng.uniform(-100, 100), 2)
    hi = lo + (rng.randint(0, 1000) if integer else round(rng.uniform(0, 1000), 2))
    if rng.random() < 0.7:
        prop["minimum"] = lo
    if rng.random() < 0.7:
        prop["maximum"] = hi
    if rng.random() < 0.4:
        prop["default"] = lo if "minimum" in prop or "maximum" not in prop else hi
    return prop


def _boolean_property(rng: random.Random) -> Doc:
    prop: Doc = {"type": "boolean"}
    if rng.random() < 0.5:
        prop["title"] = _text(rng, 1, 3).title()
    if rng.random() < 0.5:
        prop["default"] = rng.random() < 0.5
    return prop


def flat_schema(rng: random.Random) -> Doc:
    names = rng.sample(_FIELD_NAMES, rng.randint(0, 6))
    properties: Doc = {}
    for name in names:
        kind = rng.choice(["string", "string", "number", "integer", "boolean"])
        if kind == "string":
            properties[name] = _string_property(rng)
        elif kind == "boolean":
            properties[name] = _boolean_property(rng)
        else:
            properties[name] = _number_property(rng, kind == "integer")
    schema: Doc = {"type": "object", "properties": properties}
    if names and rng.random() < 0.7:
        schema["required"] = rng.sample(names, rng.randint(1, len(names)))
    return schema


def elicitation_request(rng: random.Random) -> Doc:
    return {"message": _text(rng, 3, 20) + "?", "requestedSchema": flat_schema(rng)}


def _some_property(rng: random.Random, doc: Doc, kind: str | None = None) -> Doc | None:
    props = doc["requestedSchema"]["properties"]
    names = [n for n, p in props.items() if kind is None or p["type"] == kind]
    return props[rng.choice(names)] if names else None


def _elicitation_mutations() -> list[Mutation]:
    def drop(key: str) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc:
            del d[key]
            return d

        return _label(f"drop {key}", m)

    def set_top(key: str, value: Any) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc:
            d[key] = copy.deepcopy(value)
            return d

        return _label(f"{key}={value!r}", m)

    def schema_set(key: str, value: Any) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc:
            d["requestedSchema"][key] = copy.deepcopy(value)
            return d

        return _label(f"requestedSchema.{key}={value!r}", m)

    def prop_set(kind: str | None, key: str, value: Any) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc | None:
            prop = _some_property(rng, d, kind)
            if prop is None:
                return None
            prop[key] = copy.deepcopy(value)
            return d

        return _label(f"{kind or 'any'} property {key}={value!r}", m)

    def prop_drop_type(rng: random.Random, d: Doc) -> Doc | None:
        prop = _some_property(rng, d)
        if prop is None:
            return None
        del prop["type"]
        return d

    def duplicate_required(rng: random.Random, d: Doc) -> Doc | None:
        req = d["requestedSchema"].get("required")
        if not req:
            return None
        req.append(req[0])
        return d

    def enum_duplicate(rng: random.Random, d: Doc) -> Doc | None:
        prop = _some_property(rng, d, "string")
        if prop is None:
            return None
        prop.pop("enumNames", None)
        prop.pop("default", None)
        prop["enum"] = ["same", "same"]
        return d

    def enum_names_without_enum(rng: random.Random, d: Doc) -> Doc | None:
        prop = _some_property(rng, d, "string")
        if prop is None:
            return None
        prop.pop("enum", None)
        prop.pop("default", None)
        prop["enumNames"] = ["A"]
        return d

    return [
        drop("message"),
        drop("requestedSchema"),
        set_top("message", ""),
        set_top("message", 42),
        set_top("extra", True),
        schema_set("type", "array"),
        schema_set("properties", []),
        schema_set("additionalProperties", False),
        schema_set("required", "region"),
        _label("requestedSchema.required duplicate", duplicate_required),
        _label("property without type", prop_drop_type),
        prop_set(None, "type", "object"),
        prop_set(None, "title", 7),
        prop_set(None, "x-widget", "slider"),
        prop_set("string", "minLength", -1),
        prop_set("string", "maxLength", "10"),
        prop_set("string", "format", "phone"),
        prop_set("string", "enum", []),
        _label("string property enum duplicate", enum_duplicate),
        _label("string property enumNames without enum", enum_names_without_enum),
        prop_set("string", "pattern", "^a$"),
        prop_set("integer", "minimum", 1.5),
        prop_set("number", "maximum", "high"),
        prop_set("boolean", "default", "yes"),
        prop_set("boolean", "minimum", 0),
    ]


# --------------------------------------------------------------------------------------------------
# AQP QueryRequest.
# --------------------------------------------------------------------------------------------------

_AQP_TYPES = (
    "feedback",
    "evaluation",
    "clarification",
    "approval",
    "status",
    "preference",
    "correction",
    "survey",
    "custom",
)


def aqp_request(rng: random.Random) -> Doc:
    fmt = rng.choice(["text", "structured", "choice", "boolean", "number"])
    response: Doc = {"format": fmt}
    if fmt == "text" and rng.random() < 0.7:
        response["maxLength"] = rng.randint(1, 16000)
    elif fmt == "structured":
        response["jsonSchema"] = flat_schema(rng)
    elif fmt == "choice":
        response["choices"] = list(dict.fromkeys(_text(rng, 1, 3) for _ in range(rng.randint(1, 8))))
    binding = rng.choice(["https", "mcp", "a2a", "other"])
    delivery: Doc = {"binding": binding}
    if binding == "https":
        delivery["endpoint"] = _https(rng)
        if rng.random() < 0.6:
            delivery["authorization"] = "Bearer " + _token(rng, 32)
    elif binding == "mcp":
        delivery["endpoint"] = _https(rng)
        delivery["operation"] = rng.choice(["receive_answer", "aqp.deliver", "tools.answer"])
    elif binding == "a2a":
        delivery["endpoint"] = _https(rng)
        if rng.random() < 0.5:
            delivery["operation"] = "aqp-answer"
    mode = rng.choice(["not_required", "ask_once", "ask_always"])
    doc: Doc = {
        "protocolVersion": "2026-07-30",
        "queryId": _uuid(rng),
        "type": rng.choice(_AQP_TYPES),
        "subject": rng.choice(
            [
                {"kind": "release", "id": _token(rng), "title": _text(rng, 2, 6)},
                {"task": _token(rng), "links": [_https(rng)], "summary": _text(rng, 5, 30)},
                _text(rng, 2, 8),
            ]
        ),
        "prompt": _text(rng, 3, 40) + "?",
        "timing": rng.choice(["immediate", "after_outcome_known", "after_task_complete", "deferred"]),
        "consentMode": mode,
        "response": response,
        "delivery": delivery,
        "expiresAt": _timestamp(rng),
    }
    if mode == "ask_once":
        doc["consentScope"] = "scope:" + _token(rng, rng.randint(2, 40))
    if rng.random() < 0.5:
        doc["instructions"] = _text(rng, 5, 60)
    if rng.random() < 0.3:
        doc["dataPolicy"] = _text(rng, 5, 30)
    return doc


def _aqp_mutations() -> list[Mutation]:
    def drop(key: str) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc:
            del d[key]
            return d

        return _label(f"drop {key}", m)

    def put(path: tuple[str, ...], value: Any) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc:
            target = d
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = copy.deepcopy(value)
            return d

        return _label(f"{'.'.join(path)}={_short(value)}", m)

    def consent(mode: str, scope: Any) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc:
            d["consentMode"] = mode
            if scope is None:
                d.pop("consentScope", None)
            else:
                d["consentScope"] = scope
            return d

        return _label(f"consentMode={mode} consentScope={scope!r}", m)

    def response_only(fmt: str) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc:
            d["response"] = {"format": fmt}
            return d

        return _label(f"response={{format: {fmt}}} only", m)

    mutations: list[Mutation] = [
        drop(k) for k in ("protocolVersion", "queryId", "type", "subject", "prompt", "timing")
    ]
    mutations += [drop(k) for k in ("consentMode", "response", "delivery", "expiresAt")]
    mutations += [
        put(("protocolVersion",), "2025-01-01"),
        put(("queryId",), "not-a-uuid"),
        put(("queryId",), "9b2f7c1e2a4d4e8b9f210c5d7a3e6b10"),
        put(("type",), "poll"),
        put(("prompt",), ""),
        put(("prompt",), "p" * 4001),
        put(("instructions",), ""),
        put(("timing",), "later"),
        put(("consentMode",), "sometimes"),
        consent("ask_once", None),
        consent("not_required", "scope:abcdefgh"),
        consent("ask_always", "scope:abcdefgh"),
        consent("ask_once", "short"),
        put(("response", "format"), "audio"),
        response_only("structured"),
        response_only("choice"),
        put(("response", "choices"), []),
        put(("response", "choices"), ["a", "a"]),
        put(("response", "choices"), [""]),
        put(("response", "maxLength"), 0),
        put(("response", "maxLength"), 16001),
        put(("response", "maxLength"), 2.5),
        put(("response", "jsonSchema"), "schema"),
        put(("response", "style"), "long"),
        put(("delivery", "binding"), "smtp"),
        put(("delivery", "endpoint"), "not a uri"),
        put(("delivery", "endpoint"), "https://example.com/" + "a" * 2040),
        put(("delivery", "authorization"), ""),
        put(("delivery", "operation"), "o" * 129),
        put(("delivery", "retries"), 3),
        put(("dataPolicy",), ""),
        put(("expiresAt",), "2027-01-01T00:00:00"),
        put(("expiresAt",), "2027-02-30T10:00:00Z"),
        put(("expiresAt",), "tomorrow"),
        put(("priority",), "high"),
        put(("prompt",), 7),
    ]
    return mutations


# --------------------------------------------------------------------------------------------------
# ACS ask_details.
# --------------------------------------------------------------------------------------------------


def acs_request(rng: random.Random) -> Doc:
    kind = rng.choice(["human", "human", "agent", "service"])
    approver: Doc = {"type": kind, "id": f"{kind}:{_token(rng, 6)}"}
    if kind != "human":
        approver["endpoint"] = _https(rng)
        if rng.random() < 0.7:
            approver["auth"] = {"method": rng.choice(["bearer", "mtls"])}
    doc: Doc = {
        "approver": approver,
        "question": f"Allow {rng.choice(['shell.exec', 'db.write', 'http.post', 'fs.delete'])} on {_token(rng)}? "
        + _text(rng, 0, 10),
        "timeout_seconds": rng.choice([rng.randint(1, 86400), 60, 300, 1.0 * rng.randint(1, 50)]),
    }
    if rng.random() < 0.5:
        doc["context"] = _text(rng, 5, 40)
    if rng.random() < 0.5:
        doc["options"] = list(
            dict.fromkeys(
                rng.choice(["once", "always", "this session", "never", "ask later"])
                for _ in range(rng.randint(1, 4))
            )
        )
    if rng.random() < 0.6:
        doc["timeout_disposition"] = rng.choice(["allow", "deny"])
    if rng.random() < 0.4:
        caps = []
        for _ in range(rng.randint(1, 3)):
            cap = {k: v for k, v in (
                ("tool", rng.choice(["shell", "http", "db"])),
                ("operation", rng.choice(["exec", "get", "write"])),
                ("resource", f"posix:///srv/{_token(rng, 4)}"),
            ) if rng.random() < 0.8}  # fmt: skip
            caps.append(cap)
        ext: Doc = {"capabilities": caps, "scope": rng.choice(["this_request", "session"])}
        if rng.random() < 0.5:
            origin = {"human": "user_input", "agent": "agent_generated", "service": "external"}[kind]
            ext["provenance"] = {
                "provenance_id": _token(rng, 12),
                "origin": origin,
                "source_id": approver["id"],
            }
        doc["intent_extension"] = ext
    return doc


def _acs_mutations() -> list[Mutation]:
    def drop(*path: str) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc | None:
            target = d
            for key in path[:-1]:
                if key not in target:
                    return None
                target = target[key]
            if path[-1] not in target:
                return None
            del target[path[-1]]
            return d

        return _label(f"drop {'.'.join(path)}", m)

    def put(path: tuple[str, ...], value: Any, needs: str | None = None) -> Mutation:
        def m(rng: random.Random, d: Doc) -> Doc | None:
            if needs is not None and needs not in d:
                return None
            target = d
            for key in path[:-1]:
                target = target.setdefault(key, {})
            target[path[-1]] = copy.deepcopy(value)
            return d

        return _label(f"{'.'.join(path)}={_short(value)}", m)

    ext = {"capabilities": [{"tool": "shell"}], "scope": "this_request"}
    return [
        drop("approver"),
        drop("question"),
        drop("timeout_seconds"),
        drop("approver", "type"),
        drop("approver", "id"),
        put(("approver",), "user:lead"),
        put(("approver", "type"), "robot"),
        put(("approver", "id"), 17),
        put(("approver", "endpoint"), "not a uri"),
        put(("approver", "auth"), {"method": "basic"}),
        put(("approver", "auth"), "bearer"),
        put(("question",), 42),
        put(("context",), ["c"]),
        put(("options",), "once"),
        put(("options",), [1, 2]),
        put(("timeout_seconds",), 0),
        put(("timeout_seconds",), True),
        put(("timeout_seconds",), 1.5),
        put(("timeout_seconds",), "60"),
        put(("timeout_disposition",), "maybe"),
        put(("intent_extension",), {"scope": "session"}),
        put(("intent_extension",), {"capabilities": [{"tool": "shell"}]}),
        put(("intent_extension",), {**ext, "capabilities": []}),
        put(("intent_extension",), {**ext, "capabilities": [{"tool": 5}]}),
        put(("intent_extension",), {**ext, "capabilities": ["shell"]}),
        put(("intent_extension",), {**ext, "scope": "forever"}),
        put(("intent_extension",), {**ext, "provenance": {"provenance_id": "p1"}}),
        put(("intent_extension",), {**ext, "provenance": {"provenance_id": "p1", "origin": "rumour"}}),
    ]


# --------------------------------------------------------------------------------------------------
# Public entry points.
# --------------------------------------------------------------------------------------------------

GENERATORS: dict[str, Callable[[random.Random], Doc]] = {
    "a2a-elicitation": elicitation_request,
    "mcp-elicitation": elicitation_request,
    "aqp": aqp_request,
    "acs": acs_request,
}
MUTATIONS: dict[str, list[Mutation]] = {
    "a2a-elicitation": _elicitation_mutations(),
    "mcp-elicitation": _elicitation_mutations(),
    "aqp": _aqp_mutations(),
    "acs": _acs_mutations(),
}


def valid_corpus(dialect: str, n: int, seed: int) -> list[Doc]:
    rng = random.Random(f"{seed}:{dialect}:valid")
    return [GENERATORS[dialect](rng) for _ in range(n)]


def invalid_corpus(dialect: str, n: int, seed: int) -> list[tuple[str, Doc]]:
    """``n`` (mutation name, document) pairs; mutations are used round-robin so each one is exercised."""
    rng = random.Random(f"{seed}:{dialect}:invalid")
    mutations = MUTATIONS[dialect]
    out: list[tuple[str, Doc]] = []
    i = 0
    while len(out) < n:
        mutation = mutations[i % len(mutations)]
        i += 1
        doc = mutation(rng, GENERATORS[dialect](rng))
        if doc is not None:
            out.append((mutation.__qualname__, doc))
    return out
