"""A2uiValidator: messages and order of every rule, error categories, and the fast path's exactness.

The fast path (jsonschema-rs for verdicts, a compiled limits check) must never change a verdict or a
message: hypothesis compares ``A2uiValidator(c)`` with ``A2uiValidator(c, fast=False)`` (jsonschema and
the Python walks alone) on mutated surfaces and on arbitrary JSON.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.errors import (
    A2uiError,
    CatalogError,
    CompileError,
    IntegrityError,
    RecursionError as A2uiRecursion,
    ValidationError,
)
from askgate.a2ui.integrity import check_limits_and_paths, is_valid_path, limits_ok
from askgate.a2ui.validator import TOO_COSTLY, A2uiValidator
from askgate.errors import AskgateError
from tests.a2ui.validator_corpus import mutated, valid_payload
from tests.support.scale import examples

VERSIONS = ("0.8", "0.9")


@pytest.fixture(scope="module")
def basic() -> dict[str, A2uiCatalog]:
    return {v: A2uiCatalog.basic(v) for v in VERSIONS}


@pytest.fixture(scope="module")
def pair(basic: dict[str, A2uiCatalog]) -> dict[str, tuple[A2uiValidator, A2uiValidator]]:
    """(fast, jsonschema-only) validators per version, built once: validators keep no per-call state."""
    return {v: (A2uiValidator(basic[v]), A2uiValidator(basic[v], fast=False)) for v in VERSIONS}


def outcome(validator: A2uiValidator, payload: Any) -> tuple[str, str] | None:
    try:
        validator.validate(payload)
    except A2uiError as exc:
        return type(exc).__name__, str(exc)
    return None


# ---- plain behaviour ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("size", [1, 10, 100])
def test_generated_surfaces_are_valid(basic: dict[str, A2uiCatalog], version: str, size: int) -> None:
    payload = valid_payload(version, size, basic[version].catalog_id or "")
    A2uiValidator(basic[version]).validate(payload)
    A2uiValidator(basic[version], fast=False).validate(payload)


def test_error_hierarchy() -> None:
    for cls in (ValidationError, IntegrityError, A2uiRecursion, CatalogError, CompileError):
        assert issubclass(cls, A2uiError) and issubclass(cls, AskgateError) and issubclass(cls, ValueError)
    assert [k.__name__ for k in A2uiRecursion.__mro__][:3] == ["RecursionError", "A2uiRecursionError",
                                                              "ValidationError"]
    err = IntegrityError("Duplicate component ID: a")
    assert str(err) == "Duplicate component ID: a" and err.faults[0].message == str(err)


def _v08(components: list[Any], root: str | None = "root") -> list[Any]:
    out: list[Any] = []
    if root is not None:
        out.append({"beginRendering": {"surfaceId": "s", "root": root}})
    out.append({"surfaceUpdate": {"surfaceId": "s", "components": components}})
    return out


def _text(cid: str) -> dict[str, Any]:
    return {"id": cid, "component": {"Text": {"text": {"literalString": cid}}}}


def _card(cid: str, child: str) -> dict[str, Any]:
    return {"id": cid, "component": {"Card": {"child": child}}}


def _column(cid: str, kids: list[str]) -> dict[str, Any]:
    return {"id": cid, "component": {"Column": {"children": {"explicitList": kids}}}}


@pytest.mark.parametrize(
    ("payload", "cls", "message"),
    [
        (_v08([_text("root"), _text("a"), _text("a")]), IntegrityError, "Duplicate component ID: a"),
        (_v08([_text("a")]), IntegrityError, "Missing root component: No component has id='root'"),
        (_v08([_card("root", "nope")]), IntegrityError,
         "Component 'root' references non-existent component 'nope' in field 'child'"),
        (_v08([_column("root", ["a", "b"]), _text("a")]), IntegrityError,
         "Component 'root' references non-existent component 'b' in field 'children.explicitList'"),
        (_v08([_card("root", "root")]), IntegrityError,
         "Self-reference detected: Component 'root' references itself in field 'child'"),
        (_v08([_card("root", "a"), _card("a", "b"), _card("b", "a")]), IntegrityError,
         "Circular reference detected involving component 'a'"),
        (_v08([_text("root"), _text("z"), _text("m")]), IntegrityError,
         "Component 'm' is not reachable from 'root'"),
        (_v08([_card("x", "y"), _card("y", "x")], root=None), IntegrityError,
         "Circular reference detected involving component 'x'"),
        # Incremental updates (no start message): missing root, dangling refs and orphans are fine.
        (_v08([_card("x", "elsewhere"), _text("q")], root=None), None, None),
        (_v08([_text("root")]) + [{"dataModelUpdate": {"surfaceId": "s", "path": "/a~2", "contents": []}}],
         IntegrityError, "Invalid path syntax: '/a~2'"),
        (_v08([{"id": "root", "component": {"Text": {"text": {"literalString": 5}}}}]), ValidationError,
         "Validation failed: 5 is not of type 'string'"),
        ([{"beginRendering": {"surfaceId": "s"}}], ValidationError,
         "Validation failed: 'root' is a required property"),
        ([{"bogus": {}}], ValidationError,
         "Validation failed: Additional properties are not allowed ('bogus' was unexpected)"),
    ],
)
def test_v08_rules(basic: dict[str, A2uiCatalog], payload: Any, cls: type | None, message: str | None) -> None:
    for fast in (True, False):
        validator = A2uiValidator(basic["0.8"], fast=fast)
        if cls is None:
            validator.validate(payload)
            continue
        with pytest.raises(cls) as info:
            validator.validate(payload)
        assert str(info.value) == message


def test_logical_depth_limit(basic: dict[str, A2uiCatalog]) -> None:
    def chain(n: int) -> list[Any]:
        comps = [_card("root", "c0")] + [_card(f"c{i}", f"c{i + 1}") for i in range(n)] + [_text(f"c{n}")]
        return _v08(comps)

    A2uiValidator(basic["0.8"]).validate(chain(49))  # deepest node at logical depth 50
    with pytest.raises(A2uiRecursion, match=r"^Global recursion limit exceeded: logical depth > 50$"):
        A2uiValidator(basic["0.8"]).validate(chain(50))


def test_limits_walk_and_fast_check_agree_at_the_edges() -> None:
    def nested(depth: int, leaf: Any = 1) -> Any:
        node = leaf
        for _ in range(depth):
            node = {"k": node}
        return node

    def calls(depth: int) -> Any:
        node: Any = {"call": "f", "args": {}}
        for _ in range(depth - 1):
            node = {"call": "g", "args": {"v": node}}
        return node

    cases = [nested(50), nested(51), nested(49, {}), nested(50, {}), nested(50, []), nested(50, [1]),
             calls(5), calls(6), {"path": "a/b~0"}, {"path": "~"}, {"path": 3}, {"call": 1}, [nested(50)]]
    for case in cases:
        try:
            check_limits_and_paths(case)
            walked = True
        except (IntegrityError, A2uiRecursion):
            walked = False
        assert limits_ok([case]) is walked, case


@pytest.mark.parametrize(("path", "ok"), [("", True), ("/", True), ("/a/b", True), ("a/b", True), ("~0~1", True),
                                          ("/a~", False), ("~2", False), ("/x/~a", False), ("a//b", True)])
def test_path_syntax(path: str, ok: bool) -> None:
    assert is_valid_path(path) is ok


def test_v09_messages_accumulate(basic: dict[str, A2uiCatalog]) -> None:
    cid = basic["0.9"].catalog_id
    payload = [
        {"version": "v0.9", "createSurface": {"surfaceId": 1, "catalogId": cid}},
        {"version": "v0.8", "updateComponents": {"surfaceId": "s", "components": [
            {"id": "root", "component": "Nope"}, {"component": "Text", "text": "t", "bogus": 1}, {"id": "x"}]}},
        {"mystery": True},
        "text",
    ]
    with pytest.raises(ValidationError) as info:
        A2uiValidator(basic["0.9"]).validate(payload)
    assert str(info.value).splitlines() == [
        "Validation failed:",
        "  - messages[0].createSurface.surfaceId: 1 is not of type 'string'",
        "  - messages[1]: Invalid version, expected 'v0.9'",
        "  - messages[1].updateComponents.components[id='root']: Unknown component: Nope",
        "  - messages[1].updateComponents.components[1]: 'id' is a required property",
        "  - messages[1].updateComponents.components[1]: 'bogus' was unexpected",
        "  - messages[1].updateComponents.components[id='x']: Missing 'component' field",
        "  - messages[2]: Unknown message type with keys ['mystery']",
        "  - messages[3]: Is not an object",
    ]


def test_catalog_problems() -> None:
    with pytest.raises(CompileError, match="^A2UI schema is empty$"):
        A2uiValidator(A2uiCatalog.from_config("0.8", None, {}, {}))
    with pytest.raises(CatalogError, match="^Catalog 'mine' missing catalogId$"):
        A2uiValidator(A2uiCatalog.from_config("0.9", {"type": "object"}, {"components": {}}, {}, name="mine"))
    broken = A2uiCatalog.from_config("0.8", {"type": "object", "properties": {"x": {"$ref": "nowhere.json"}}}, {}, {})
    with pytest.raises(CompileError):
        A2uiValidator(broken).validate([{"x": 1}])


def test_catalog_caches_its_validator(basic: dict[str, A2uiCatalog]) -> None:
    assert basic["0.9"].validator() is basic["0.9"].validator()
    assert basic["0.9"].validator() is not A2uiCatalog.basic("0.9").validator()


def test_partial_mode_relaxes_only_root_rules(basic: dict[str, A2uiCatalog]) -> None:
    v = A2uiValidator(basic["0.8"])
    assert v.is_valid_partial(_v08([_card("root", "later")]))
    assert not v.is_valid_partial(_v08([_card("root", "root")]))
    assert not v.is_valid_partial(_v08([_text("root"), _text("root")]))


# ---- the fast path changes nothing ----------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), version=st.sampled_from(VERSIONS))
def test_fast_path_equals_jsonschema_on_mutated_surfaces(basic: dict[str, A2uiCatalog], pair: Any, seed: int,
                                                          version: str) -> None:
    payload = mutated(version, basic[version].catalog_id or "", seed)
    fast = outcome(pair[version][0], copy.deepcopy(payload))
    slow = outcome(pair[version][1], payload)
    assert fast == slow


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "component", "child", "children", "path", "call", "args", "surfaceId", "version",
                         "beginRendering", "surfaceUpdate", "createSurface", "updateComponents", "components",
                         "Text", "Card", "text", "x"]), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=JSON, version=st.sampled_from(VERSIONS))
def test_arbitrary_json_only_a2ui_errors(pair: Any, payload: Any, version: str) -> None:
    fast = outcome(pair[version][0], copy.deepcopy(payload))
    slow = outcome(pair[version][1], payload)
    assert fast == slow


def test_costly_explanations_are_cut_short(basic: dict[str, A2uiCatalog], pair: Any) -> None:
    """Six nested calls to unknown functions in a v0.9 Button: jsonschema's report would be exponential."""
    node: Any = {"call": "f", "args": {}}
    for i in range(6):
        node = {"call": f"f{i}", "args": {"value": node}}
    payload = [{"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
        {"id": "root", "component": "Button", "child": "t", "action": {"functionCall": node}},
        {"id": "t", "component": "Text", "text": "go"}]}}]
    for validator in pair["0.9"]:
        with pytest.raises(ValidationError) as info:
            validator.validate(payload)
        assert str(info.value) == TOO_COSTLY
