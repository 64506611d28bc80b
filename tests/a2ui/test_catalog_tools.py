"""Catalog tools beyond the suite: pruning, rendering, examples, modifiers and the schema manager
(with properties: pruning is a closed, idempotent subset; loosening removes every strict flag)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.errors import CatalogError, ValidationError
from askgate.a2ui.modifiers import remove_strict_validation
from askgate.a2ui.prompts import SCHEMA_BLOCK_END, SCHEMA_BLOCK_START, render_catalog
from askgate.a2ui.prune import collect_refs
from askgate.a2ui.schema_manager import A2uiSchemaManager, CatalogConfig, basic_catalog_config
from tests.support.scale import examples


def test_basic_catalogs_have_ids_and_schema() -> None:
    v8, v9 = A2uiCatalog.basic("0.8"), A2uiCatalog.basic(0.9)
    assert v8.catalog_id == "https://a2ui.org/specification/v0_8/standard_catalog_definition.json"
    assert v9.catalog_id == v9.catalog_schema["$id"]
    assert v8.catalog_schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert v9.version == "0.9" and v9.common_types_schema["$defs"]
    with pytest.raises(CatalogError):
        A2uiCatalog.basic("1.0")


def test_pruning_basic_v09_keeps_only_what_is_reachable() -> None:
    full = A2uiCatalog.basic("0.9")
    pruned = full.with_pruning(["Text", "Button"], ["CreateSurfaceMessage", "UpdateComponentsMessage"])
    assert sorted(pruned.catalog_schema["components"]) == ["Button", "Text"]
    assert [x["$ref"] for x in pruned.catalog_schema["$defs"]["anyComponent"]["oneOf"]] == \
        ["#/components/Text", "#/components/Button"]
    assert sorted(pruned.s2c_schema["$defs"]) == ["CreateSurfaceMessage", "UpdateComponentsMessage"]
    kept = set(pruned.common_types_schema["$defs"])
    assert {"DynamicString", "ComponentId", "Action"} <= kept < set(full.common_types_schema["$defs"])
    # Pruning never mutates the original.
    assert len(full.catalog_schema["components"]) > 10
    # A pruned catalog still validates what it kept.
    pruned.validator().validate([{"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
        {"id": "root", "component": "Button", "child": "t", "action": {"event": {"name": "go"}}},
        {"id": "t", "component": "Text", "text": "Go"}]}}])


def test_render_is_two_space_json_with_ascii_escapes() -> None:
    cat = A2uiCatalog.from_config("0.9", {"é": []}, {"catalogId": "c", "x": {}}, {"$defs": {}})
    text = render_catalog(cat)
    assert text == "\n\n".join([
        SCHEMA_BLOCK_START,
        '### Server To Client Schema:\n{\n  "\\u00e9": []\n}',
        '### Catalog Schema:\n{\n  "catalogId": "c",\n  "x": {}\n}',
        SCHEMA_BLOCK_END,
    ])
    assert "### Server To Client Schema:\n{}" in render_catalog(A2uiCatalog.from_config("0.8", None, {}, {}))


def test_remove_strict_validation_keeps_true_and_schemas() -> None:
    schema = {"additionalProperties": False, "properties": {"a": {"additionalProperties": True},
                                                            "b": {"additionalProperties": {"type": "string"}}},
              "items": [{"additionalProperties": False}]}
    assert remove_strict_validation(schema) == {
        "properties": {"a": {"additionalProperties": True}, "b": {"additionalProperties": {"type": "string"}}},
        "items": [{}]}
    assert schema["additionalProperties"] is False  # input untouched


def test_examples_are_framed_sorted_and_validated(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text('[{"beginRendering": {"surfaceId": "s", "root": "r"}}]')
    (tmp_path / "a.json").write_text('[{"deleteSurface": {"surfaceId": "s"}}]')
    (tmp_path / "c.txt").write_text("ignored")
    cat = A2uiCatalog.basic("0.8")
    out = cat.load_examples(str(tmp_path), validate=True)
    assert out == ('---BEGIN a---\n[{"deleteSurface": {"surfaceId": "s"}}]\n---END a---\n\n'
                   '---BEGIN b---\n[{"beginRendering": {"surfaceId": "s", "root": "r"}}]\n---END b---')
    (tmp_path / "d.json").write_text('[{"beginRendering": {"surfaceId": 5, "root": "r"}}]')
    with pytest.raises(ValidationError, match=r"^Failed to validate example .*d\.json: Validation failed: 5 is"):
        cat.load_examples(str(tmp_path), validate=True)
    assert cat.load_examples("") == "" and cat.load_examples(str(tmp_path / "none*.json")) == ""


def _manager(**kw: object) -> A2uiSchemaManager:
    configs = [CatalogConfig.from_schema("a", {"catalogId": "A", "components": {"Text": {}, "Row": {}}}),
               CatalogConfig.from_schema("b", {"catalogId": "B", "components": {"Text": {}}})]
    return A2uiSchemaManager("0.9", configs, **kw)  # type: ignore[arg-type]


def test_selection_rules() -> None:
    m = _manager()
    assert m.supported_catalog_ids == ["A", "B"]
    assert m.select_catalog(None).catalog_id == "A"
    assert m.select_catalog("nonsense").catalog_id == "A"
    assert m.select_catalog({"supportedCatalogIds": ["Z", "B", "A"]}).catalog_id == "B"
    with pytest.raises(CatalogError, match=r"Agent-supported catalogs are: \['A', 'B'\]$"):
        m.select_catalog({"supportedCatalogIds": ["Z"]})
    with pytest.raises(CatalogError, match="does not accept inline catalogs"):
        m.select_catalog({"inlineCatalogs": [{"components": {}}]})
    merged = _manager(accepts_inline_catalogs=True).select_catalog(
        {"supportedCatalogIds": ["B"], "inlineCatalogs": [{"catalogId": "X", "components": {"Text": {"a": 1}}}]})
    assert merged.catalog_id == "B" and merged.catalog_schema["components"] == {"Text": {"a": 1}}
    assert merged.name == "inline"


def test_missing_catalog_id_is_reported_by_name() -> None:
    with pytest.raises(CatalogError, match=r"^Catalog 'nameless' missing catalogId$"):
        A2uiSchemaManager("0.8", [CatalogConfig.from_schema("nameless", {"components": {}})])


def test_unreadable_catalog_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="Could not load schema"):
        A2uiSchemaManager("0.8", [CatalogConfig.from_path("x", tmp_path / "missing.json")])
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(OSError):
        A2uiSchemaManager("0.8", [CatalogConfig.from_path("x", bad)])


def test_system_prompt_sections_in_order(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text("[]")
    m = A2uiSchemaManager("0.9", [basic_catalog_config("0.9", str(tmp_path))])
    prompt = m.generate_system_prompt("ROLE", "EXTRA RULE", "UI TEXT", include_schema=True, include_examples=True,
                                      allowed_components=["Text"])
    order = [prompt.index(s) for s in ("ROLE", "## Workflow Description:", "MUST follow these rules:", "EXTRA RULE",
                                       "## UI Description:\nUI TEXT", SCHEMA_BLOCK_START, "### Common Types Schema:",
                                       SCHEMA_BLOCK_END, "### Examples:\n---BEGIN one---")]
    assert order == sorted(order)
    catalog_json = prompt.split("### Catalog Schema:\n", 1)[1].split("\n\n" + SCHEMA_BLOCK_END)[0]
    assert list(json.loads(catalog_json)["components"]) == ["Text"]
    bare = m.generate_system_prompt("ROLE")
    assert SCHEMA_BLOCK_START not in bare and "### Examples" not in bare and "## UI Description" not in bare


# ---- properties -------------------------------------------------------------------------------------

_V09 = A2uiCatalog.basic("0.9")
_V08 = A2uiCatalog.basic("0.8")
_MESSAGES = ["CreateSurfaceMessage", "UpdateComponentsMessage", "UpdateDataModelMessage", "DeleteSurfaceMessage"]


@settings(max_examples=examples(100), deadline=None)
@given(st.sampled_from([_V08, _V09]), st.data())
def test_pruning_is_a_closed_idempotent_subset(catalog: A2uiCatalog, data: st.DataObject) -> None:
    names = list(catalog.catalog_schema["components"])
    allowed = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=6))
    messages = data.draw(st.lists(st.sampled_from(_MESSAGES if catalog.version == "0.9" else
                                                  ["beginRendering", "surfaceUpdate", "dataModelUpdate",
                                                   "deleteSurface"]), unique=True, max_size=3))
    pruned = catalog.with_pruning(allowed, messages)
    kept = list(pruned.catalog_schema["components"])
    assert kept == ([n for n in names if n in allowed] if allowed else names)
    assert pruned.with_pruning(allowed, messages).catalog_schema == pruned.catalog_schema
    assert pruned.with_pruning(allowed, messages).common_types_schema == pruned.common_types_schema
    common = pruned.common_types_schema.get("$defs", {})
    for ref in collect_refs(pruned.catalog_schema) | collect_refs(pruned.s2c_schema) | collect_refs(common):
        if "common_types.json#/$defs/" in ref:
            assert ref.split("#/$defs/")[-1] in common, ref  # every common type still referenced is kept


def _has_false_additional(node: object) -> bool:
    if isinstance(node, dict):
        return node.get("additionalProperties") is False or any(_has_false_additional(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_false_additional(v) for v in node)
    return False


def test_remove_strict_validation_on_the_basic_catalogs() -> None:
    for catalog in (_V08, _V09):
        for schema in (catalog.s2c_schema, catalog.catalog_schema, catalog.common_types_schema):
            loose = remove_strict_validation(schema)
            assert not _has_false_additional(loose)
            assert remove_strict_validation(loose) == loose
    assert _has_false_additional(_V09.catalog_schema)  # the check above is not vacuous
