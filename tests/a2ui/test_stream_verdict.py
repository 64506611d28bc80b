"""The streaming parser's schema verdict (``_schema_verdict``) against the validator's own ``is_valid``.

For v0.8 the verdict asks the compiled validator first and returns its "valid" directly; whatever the
component (valid, cut, wrong types, unknown kinds, values jsonschema-rs cannot take), the verdict must
be the validator's.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from askgate.a2ui import streaming
from askgate.a2ui.catalog import A2uiCatalog
from tests.support.scale import examples

_CATALOG = A2uiCatalog.basic("0.8")
_VALIDATOR = _CATALOG.validator()

_leaf = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False), st.text(max_size=4),
                  st.sampled_from(["/a", "item_1", "loading_x"]), st.integers(2**64, 2**66))
_value = st.recursive(_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["literalString", "path", "explicitList", "children", "text", "x"]), inner,
                    max_size=2)), max_leaves=6)
_body = st.one_of(
    st.builds(lambda t: {"Text": {"text": t}}, _value),
    st.builds(lambda c: {"Column": {"children": c}}, _value),
    st.builds(lambda c: {"Column": {"children": {"explicitList": c}}}, st.lists(st.text(max_size=3), max_size=30)),
    st.dictionaries(st.sampled_from(["Text", "Row", "Nope", "Card"]), _value, max_size=2),
)
_component = st.fixed_dictionaries({"id": st.one_of(st.text(max_size=3), st.integers()), "component": _body})


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(_component, max_size=3), st.sampled_from(["s", 1]))
def test_verdict_is_the_validators(components: list[Any], sid: Any) -> None:
    verdict = streaming._schema_verdict(_VALIDATOR, False)
    assert verdict is not None
    messages = [{"surfaceUpdate": {"surfaceId": sid, "components": components}}]
    try:
        expected = bool(_VALIDATOR._whole.is_valid(messages))
    except ValueError:
        expected = False
    assert verdict(messages) is expected


def test_verdict_takes_both_answers() -> None:
    verdict = streaming._schema_verdict(_VALIDATOR, False)
    assert verdict is not None
    ok = {"surfaceUpdate": {"surfaceId": "s", "components": [
        {"id": "a", "component": {"Text": {"text": {"literalString": "hi"}}}}]}}
    assert verdict([ok]) is True
    bad = {"surfaceUpdate": {"surfaceId": "s", "components": [{"id": "a", "component": {"Text": {"text": 3}}}]}}
    assert verdict([bad]) is False
