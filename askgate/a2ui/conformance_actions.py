"""The A2UI toolkit's actions for the conformance runner (protocols.md §5.7 "Comparison per action").

Each action builds what the case describes, calls the toolkit exactly as production code does, and
compares with the case's expectation; the streaming parser's ``process_chunk`` lives in
:mod:`askgate.a2ui.streaming_actions`.
"""

from __future__ import annotations

import re

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.examples import load_examples
from askgate.a2ui.modifiers import MODIFIERS, remove_strict_validation
from askgate.a2ui.payload import fix_payload, has_parts, parse_full
from askgate.a2ui.prune import prune_catalog
from askgate.a2ui.prompts import render_catalog
from askgate.a2ui.schema_manager import A2uiSchemaManager, CatalogConfig, basic_catalog_config
from askgate.a2ui.validator import A2uiValidator
from askgate.conformance.registry import Case, CaseFailure, action

__all__: list[str] = []


def _catalog(case: Case) -> A2uiCatalog:
    cfg = case.catalog
    if cfg is None:
        raise CaseFailure("case has no catalog")
    return A2uiCatalog.from_config(cfg.version, cfg.s2c_schema, cfg.catalog_schema, cfg.common_types_schema)


@action("validate")
def _validate(case: Case) -> None:
    catalog = _catalog(case)
    if not case.steps:
        raise CaseFailure("validate case has no steps")
    for step in case.steps:
        # A fresh validator per step (§5.7), built inside the expectation: building may be what fails.
        case.expect_outcome(lambda p: A2uiValidator(catalog).validate(p), step.payload,
                            expect_error=step.expect_error)


@action("parse_full")
def _parse_full(case: Case) -> None:
    result = case.expect_outcome(parse_full, case.input, expect_error=case.expect_error)
    if case.expect_error is not None:
        return
    expected = case.expect or []
    if len(result) != len(expected):
        raise CaseFailure(f"expected {len(expected)} parts, got {len(result)}")
    for i, (part, want) in enumerate(zip(result, expected)):
        if part.text.strip() != str(want.get("text", "")).strip():
            raise CaseFailure(f"part {i}: text {part.text!r} != {want.get('text', '')!r}")
        case.check_equal(part.a2ui_json, want.get("a2ui"), f"part {i} a2ui")


@action("fix_payload")
def _fix_payload(case: Case) -> None:
    result = case.expect_outcome(fix_payload, case.input, expect_error=case.expect_error)
    if case.expect_error is None:
        case.check_equal(result, case.expect, "fixed payload")


@action("has_parts")
def _has_parts(case: Case) -> None:
    result = has_parts(case.input)
    if result is not case.expect:
        raise CaseFailure(f"has_parts returned {result!r}, expected {case.expect!r}")


@action("prune")
def _prune(case: Case) -> None:
    catalog = _catalog(case)
    pruned = prune_catalog(
        catalog, case.args.get("allowed_components") or [], case.args.get("allowed_messages") or []
    )
    expected = case.expect or {}
    if not isinstance(expected, dict) or not expected:
        raise CaseFailure("prune case has no expectation")
    for key in ("catalog_schema", "s2c_schema", "common_types_schema"):
        if key in expected:
            case.check_equal(getattr(pruned, key), expected[key], key)


def _check_output(case: Case, output: str) -> None:
    expected = case.get("expect_output")
    if expected is None:
        raise CaseFailure("case has no expect_output")
    if output.strip() != str(expected).strip():
        raise CaseFailure(f"output differs:\n--- expected\n{expected}\n--- actual\n{output}")


@action("render")
def _render(case: Case) -> None:
    _check_output(case, render_catalog(_catalog(case)))


@action("load")
def _load(case: Case) -> None:
    catalog = _catalog(case)
    raw = case.args.get("path")
    path = None if raw is None else str(case.resolve(raw)) if raw else ""
    validate = bool(case.args.get("validate", False))
    result = case.expect_outcome(load_examples, catalog, path, validate=validate, expect_error=case.expect_error)
    if case.expect_error is None:
        _check_output(case, result)


@action("remove_strict_validation")
def _remove_strict(case: Case) -> None:
    if "schema" not in case.args:
        raise CaseFailure("case has no args.schema")
    expected = case.expect or {}
    case.check_equal(remove_strict_validation(case.args["schema"]), expected.get("schema"), "schema")


@action("select_catalog")
def _select_catalog(case: Case) -> None:
    args = case.args
    configs = []
    for entry in args.get("supported_catalogs") or []:
        configs.append(CatalogConfig.from_schema(str(entry.get("catalogId")), entry))

    def select() -> A2uiCatalog:
        manager = A2uiSchemaManager(
            "0.9", configs, accepts_inline_catalogs=bool(args.get("accepts_inline_catalogs", False))
        )
        return manager.get_selected_catalog(args.get("client_capabilities") or {})

    chosen = case.expect_outcome(select, expect_error=case.expect_error)
    if case.expect_error is not None:
        return
    checked = False
    if "expect_selected" in case.raw:
        checked = True
        if chosen.catalog_id != case.get("expect_selected"):
            raise CaseFailure(f"selected {chosen.catalog_id!r}, expected {case.get('expect_selected')!r}")
    if "expect_catalog_schema" in case.raw:
        checked = True
        case.check_equal(chosen.catalog_schema, case.get("expect_catalog_schema"), "catalog schema")
    if not checked:
        raise CaseFailure("select_catalog case has no expectation")


@action("load_catalog")
def _load_catalog(case: Case) -> None:
    configs = [CatalogConfig.from_path(str(c["name"]), case.resolve(c["path"])) for c in case.get("catalog_configs") or []]
    modifiers = []
    for name in case.get("modifiers") or []:
        if name not in MODIFIERS:
            raise CaseFailure(f"unknown modifier {name!r}")
        modifiers.append(MODIFIERS[name])
    manager = case.expect_outcome(lambda: A2uiSchemaManager("0.8", configs, schema_modifiers=modifiers),
                                  expect_error=case.expect_error)
    if case.expect_error is not None:
        return
    expected = case.expect or {}
    if not expected:
        raise CaseFailure("load_catalog case has no expectation")
    if "catalog_schema" in expected:
        case.check_equal(manager.get_selected_catalog().catalog_schema, expected["catalog_schema"], "catalog schema")
    if "supported_catalog_ids" in expected:
        case.check_equal(manager.supported_catalog_ids, expected["supported_catalog_ids"], "supported catalog ids")


_NO_SPACE = re.compile(r"\s+")


@action("generate_prompt")
def _generate_prompt(case: Case) -> None:
    args = case.args
    version = str(args.get("version", "0.8"))
    examples = args.get("examples_path")
    config = basic_catalog_config(version, str(case.resolve(examples)) if examples else None)

    def generate() -> str:
        manager = A2uiSchemaManager(
            version, [config], accepts_inline_catalogs=bool(args.get("accepts_inline_catalogs", False))
        )
        return manager.generate_system_prompt(
            role_description=args.get("role_description") or "",
            workflow_description=args.get("workflow_description") or "",
            ui_description=args.get("ui_description") or "",
            client_ui_capabilities=args.get("client_ui_capabilities"),
            allowed_components=args.get("allowed_components"),
            allowed_messages=args.get("allowed_messages"),
            include_schema=bool(args.get("include_schema", False)),
            include_examples=bool(args.get("include_examples", False)),
            validate_examples=bool(args.get("validate_examples", False)),
        )

    prompt = case.expect_outcome(generate, expect_error=case.expect_error)
    if case.expect_error is not None:
        return
    wanted = case.get("expect_contains") or []
    if not wanted:
        raise CaseFailure("generate_prompt case has no expect_contains")
    flat = _NO_SPACE.sub("", prompt)
    for text in wanted:
        if _NO_SPACE.sub("", str(text)) not in flat:
            raise CaseFailure(f"prompt lacks {text!r}")


