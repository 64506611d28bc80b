"""What askgate uses (schemas built from the a2ui-core dependency) agrees with ../shared/a2ui-spec.

Two kinds of check, both reading the spec files at test time:

1. Documents: each schema askgate uses is compared with its spec file, and every difference must be one
   of the documented kinds (docs/a2ui.md, "Where the schemas come from"): the v0.9 catalog's id,
   absolute-vs-relative ``$ref`` spellings that resolve to the same schema, and reworded descriptions.
2. Verdicts: a corpus of valid and invalid payloads (generated surfaces, a surface using every component,
   and seeded mutations of both) is validated with askgate's schemas and with the spec's, by plain
   ``jsonschema`` message by message and by askgate's validator; verdicts and messages must be equal.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import pytest
import referencing
from referencing.jsonschema import DRAFT202012

from askgate.a2ui import sources
from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.errors import A2uiError
from askgate.a2ui.validator import A2uiValidator, _inject
from tests.a2ui.validator_corpus import mutated, mutated_zoo, valid_payload, zoo_payload
from tests.conftest import SHARED
from tests.support.scale import examples

SPEC = SHARED / "a2ui-spec"
V09_BASE = "https://a2ui.org/specification/v0_9/"


def spec(rel: str) -> Any:
    return json.loads((SPEC / rel).read_text(encoding="utf-8"))


def differences(ours: Any, theirs: Any, pointer: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(pointer, ours, spec) for every leaf or key that differs; missing sides are ``...``."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in list(ours) + [k for k in theirs if k not in ours]:
            sub = f"{pointer}/{key}"
            if key not in theirs or key not in ours:
                yield sub, ours.get(key, ...), theirs.get(key, ...)
            else:
                yield from differences(ours[key], theirs[key], sub)
    elif isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for i, (a, b) in enumerate(zip(ours, theirs)):
            yield from differences(a, b, f"{pointer}/{i}")
    elif ours != theirs or type(ours) is not type(theirs):
        yield pointer, ours, theirs


# ---- 1. documents ---------------------------------------------------------------------------------


def test_v08_documents_are_identical(shared_dir: Path) -> None:
    assert sources.server_to_client_schema("0.8") == spec("v0_8/server_to_client.json")
    assert sources.basic_catalog_schema("0.8") == spec("v0_8/standard_catalog_definition.json")
    assert sources.common_types_schema("0.8") is None


def test_v08_bundling_adds_only_the_id_and_dialect() -> None:
    bundled = sources.bundled_catalog_schema("0.8")
    extra = {p: o for p, o, t in differences(bundled, spec("v0_8/standard_catalog_definition.json"))}
    assert extra == {"/catalogId": "https://a2ui.org/specification/v0_8/standard_catalog_definition.json",
                     "/$schema": "https://json-schema.org/draft/2020-12/schema"}


def test_v08_bundle_versus_the_spec_prebundled_file() -> None:
    """askgate bundles the standard catalog into the s2c schema at run time; the spec also ships a
    pre-bundled file, which is older: it lacks MultipleChoice.variant and .filterable, both of which the
    spec's own standard catalog defines. That is the only difference."""
    catalog = sources.basic_catalog_schema("0.8")
    ours = _inject(sources.server_to_client_schema("0.8"),
                   {"component": catalog["components"], "styles": catalog["styles"]})
    diff = list(differences(ours, spec("v0_8/server_to_client_with_standard_catalog.json")))
    mc = "/properties/surfaceUpdate/properties/components/items/properties/component/properties/MultipleChoice"
    assert [(p, t) for p, _, t in diff] == [(f"{mc}/properties/variant", ...), (f"{mc}/properties/filterable", ...)]
    standard = spec("v0_8/standard_catalog_definition.json")["components"]["MultipleChoice"]["properties"]
    assert [o for _, o, _ in diff] == [standard["variant"], standard["filterable"]]


def test_v09_common_types_are_identical() -> None:
    assert sources.common_types_schema("0.9") == spec("v0_9/common_types.json")


def test_v09_s2c_differs_only_in_descriptions() -> None:
    diff = list(differences(sources.server_to_client_schema("0.9"), spec("v0_9/server_to_client.json")))
    assert diff, "a2ui-core rewords three descriptions; if this changed, update docs/a2ui.md"
    assert all(p.endswith("/description") and isinstance(o, str) and isinstance(t, str) for p, o, t in diff)


def _resolve(ref: str, base: str) -> str:
    if "://" in ref:
        return ref
    doc, _, frag = ref.partition("#")
    return posixpath.join(posixpath.dirname(base), doc) + "#" + frag


def test_v09_catalog_differences_are_the_documented_ones() -> None:
    ours, theirs = sources.basic_catalog_schema("0.9"), spec("v0_9/basic_catalog.json")
    kinds: dict[str, int] = {}
    for pointer, o, t in differences(ours, theirs):
        if pointer in ("/$id", "/catalogId"):
            assert (o, t) == (V09_BASE + "catalogs/basic/catalog.json", V09_BASE + "basic_catalog.json")
            kind = "id"
        elif pointer.endswith("/$ref"):
            assert _resolve(o, ours["$id"]) == _resolve(t, theirs["$id"]), pointer
            kind = "ref spelling"
        elif pointer.endswith("/description"):
            assert isinstance(o, str) and isinstance(t, str)
            kind = "description"
        else:
            pytest.fail(f"undocumented difference at {pointer}: ours={o!r} spec={t!r}")
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds["id"] == 2 and kinds["ref spelling"] > 50 and 0 < kinds["description"] <= 6
    assert ours["catalogId"] == sources.basic_catalog_id("0.9")


_NAME_MAPS = ("/properties", "/$defs", "/components", "/functions")
_ANNOTATIONS = {"title", "description", "$comment", "examples", "default", "$schema", "$id", "catalogId"}


def _order_differences(ours: Any, theirs: Any, pointer: str = "") -> Iterator[tuple[str, list[str], list[str]]]:
    """Schema objects whose shared keywords come in a different order (jsonschema reports errors in keyword
    order), and name maps (``properties`` ...) whose names do (they are checked in that order).
    Annotations (``title``, ``description`` ...) may sit anywhere."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        skip = set() if pointer.endswith(_NAME_MAPS) else _ANNOTATIONS
        a = [k for k in ours if k in theirs and k not in skip]
        b = [k for k in theirs if k in ours and k not in skip]
        if a != b:
            yield pointer, a, b
        for key in (k for k in ours if k in theirs):
            yield from _order_differences(ours[key], theirs[key], f"{pointer}/{key}")
    elif isinstance(ours, list) and isinstance(theirs, list):
        for i, (x, y) in enumerate(zip(ours, theirs)):
            yield from _order_differences(x, y, f"{pointer}/{i}")


@pytest.mark.parametrize(("version", "kind", "rel"), [
    ("0.8", "s2c", "v0_8/server_to_client.json"), ("0.8", "catalog", "v0_8/standard_catalog_definition.json"),
    ("0.9", "s2c", "v0_9/server_to_client.json"), ("0.9", "common", "v0_9/common_types.json"),
    ("0.9", "catalog", "v0_9/basic_catalog.json")])
def test_keys_come_in_the_spec_order(version: str, kind: str, rel: str) -> None:
    ours = {"s2c": sources.server_to_client_schema, "common": sources.common_types_schema,
            "catalog": sources.basic_catalog_schema}[kind](version)
    assert list(_order_differences(ours, spec(rel))) == []


# ---- 2. verdicts ----------------------------------------------------------------------------------


def _registry(pairs: list[tuple[str, Any]]) -> referencing.Registry:
    return referencing.Registry().with_resources(
        [(uri, referencing.Resource.from_contents(s, default_specification=DRAFT202012)) for uri, s in pairs])


class RawSchemas:
    """Plain jsonschema validation of single messages against one set of documents.

    v0.9 ``updateComponents`` messages are checked as the envelope (with the component list opened up)
    plus each component against its own catalog entry: through the ``anyComponent`` union, jsonschema's
    ``unevaluatedProperties`` handling makes a 30-component message take minutes, and a union failure
    only says "not valid under any of the given schemas" anyway.
    """

    def __init__(self, version: str, s2c: Any, catalog: Any, common: Any) -> None:
        self.version = version
        if version == "0.8":
            self.validator = jsonschema.Draft202012Validator(s2c)
            return
        base = s2c["$id"]
        pairs = [(posixpath.join(posixpath.dirname(base), "catalog.json"), catalog), (catalog["$id"], catalog),
                 (posixpath.join(posixpath.dirname(base), "common_types.json"), common), (common["$id"], common)]
        registry = _registry(pairs)
        self.validator = jsonschema.Draft202012Validator(s2c, registry=registry)
        envelope = json.loads(json.dumps(s2c["$defs"]["UpdateComponentsMessage"]))
        envelope["properties"]["updateComponents"]["properties"]["components"]["items"] = True
        self.envelope = jsonschema.Draft202012Validator(envelope, registry=registry)
        self.components = {
            name: jsonschema.Draft202012Validator({"$ref": f"{catalog['$id']}#/components/{name}"}, registry=registry)
            for name in catalog["components"]
        }

    def errors(self, message: Any) -> list[tuple[str, str]]:
        uc = message.get("updateComponents") if isinstance(message, dict) else None
        if self.version == "0.9" and isinstance(uc, dict) and isinstance(uc.get("components"), list):
            found = [(json.dumps(list(e.absolute_path)), e.message) for e in self.envelope.iter_errors(message)]
            for i, comp in enumerate(uc["components"]):
                kind = comp.get("component") if isinstance(comp, dict) else None
                if not isinstance(kind, str) or kind not in self.components:
                    found.append((json.dumps(["updateComponents", "components", i]), f"unknown {kind!r}"))
                    continue
                found += [(json.dumps(["updateComponents", "components", i] + list(e.absolute_path)), e.message)
                          for e in self.components[kind].iter_errors(comp)]
            return found
        return [(json.dumps(list(e.absolute_path)), e.message) for e in self.validator.iter_errors(message)]


def _ours(version: str) -> RawSchemas:
    catalog = sources.basic_catalog_schema(version)
    if version == "0.8":
        s2c = _inject(sources.server_to_client_schema("0.8"),
                      {"component": catalog["components"], "styles": catalog["styles"]})
        return RawSchemas("0.8", s2c, None, None)
    return RawSchemas("0.9", sources.server_to_client_schema("0.9"), catalog, sources.common_types_schema("0.9"))


def _theirs(version: str) -> RawSchemas:
    if version == "0.8":
        # The spec's pre-bundled file lacks two MultipleChoice properties (see above); bundle the spec's own
        # s2c and standard catalog the same way askgate does, so the comparison is about the documents.
        catalog = spec("v0_8/standard_catalog_definition.json")
        s2c = _inject(spec("v0_8/server_to_client.json"),
                      {"component": catalog["components"], "styles": catalog["styles"]})
        return RawSchemas("0.8", s2c, None, None)
    return RawSchemas("0.9", spec("v0_9/server_to_client.json"), spec("v0_9/basic_catalog.json"),
                      spec("v0_9/common_types.json"))


def _corpus(version: str, catalog_id: str) -> list[Any]:
    out = [valid_payload(version, n, catalog_id) for n in (1, 7, 30)] + [zoo_payload(version, catalog_id)]
    n = examples(80)
    out += [mutated(version, catalog_id, seed) for seed in range(n)]
    out += [mutated_zoo(version, catalog_id, seed) for seed in range(n)]
    return out


@pytest.mark.parametrize("version", ["0.8", "0.9"])
def test_messages_get_the_same_verdict_and_errors(version: str) -> None:
    ours, theirs = _ours(version), _theirs(version)
    checked = rejected = 0
    for payload in _corpus(version, sources.bundled_catalog_schema(version)["catalogId"]):
        for message in payload if isinstance(payload, list) else [payload]:
            mine = ours.errors(message)
            assert mine == theirs.errors(message), json.dumps(message)[:300]
            checked += 1
            rejected += bool(mine)
    assert checked > 30 and checked // 10 < rejected < checked - checked // 10


def _spec_catalog(version: str) -> A2uiCatalog:
    if version == "0.8":
        catalog = spec("v0_8/standard_catalog_definition.json")
        catalog["catalogId"] = "https://a2ui.org/specification/v0_8/standard_catalog_definition.json"
        return A2uiCatalog.from_config("0.8", spec("v0_8/server_to_client.json"), catalog, {})
    return A2uiCatalog.from_config("0.9", spec("v0_9/server_to_client.json"), spec("v0_9/basic_catalog.json"),
                                   spec("v0_9/common_types.json"))


def _outcome(validator: A2uiValidator, payload: Any) -> tuple[str, str] | None:
    try:
        validator.validate(payload)
    except A2uiError as exc:
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("version", ["0.8", "0.9"])
def test_validator_gives_the_same_outcome_with_spec_files(version: str) -> None:
    ours = A2uiValidator(A2uiCatalog.basic(version))
    theirs = A2uiValidator(_spec_catalog(version))
    outcomes = []
    for payload in _corpus(version, A2uiCatalog.basic(version).catalog_id or ""):
        mine = _outcome(ours, payload)
        assert mine == _outcome(theirs, payload), json.dumps(payload)[:300]
        outcomes.append(mine)
    invalid = sum(o is not None for o in outcomes)
    assert len(outcomes) // 10 < invalid < len(outcomes) - len(outcomes) // 10
