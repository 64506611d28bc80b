"""Every surface askgate produces is valid A2UI: askgate's validator and the upstream reference agree.

The property runs over generated canonical asks (every answer spec, every field kind and combination,
odd property names, unicode, defaults, bounds), with and without re-render values and faults, for v0.8
and v0.9. The reference SDK (a2ui-agent-sdk 0.2.2) runs once, in one subprocess, over the whole batch;
negative controls prove it (and askgate's validator) still reject the §5.6 traps.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.surface import ask_to_surface
from askgate.a2ui.validator import A2uiValidator
from askgate.errors import Fault, pointer_join
from tests.a2ui.surface_strategies import asks, names
from tests.support.a2ui_reference import run_reference
from tests.support.scale import examples

VERSIONS = ("0.8", "0.9")
CATALOG_IDS = {v: A2uiCatalog.basic(v).catalog_id for v in VERSIONS}

REFERENCE_SCRIPT = """
import json, sys
from a2ui.schema.manager import A2uiSchemaManager
from a2ui.basic_catalog.provider import BasicCatalog
validators = {}
for v in ("0.8", "0.9"):
    manager = A2uiSchemaManager(v, catalogs=[BasicCatalog.get_config(v)])
    validators[v] = manager.get_selected_catalog().validator
out = []
for item in json.load(sys.stdin):
    try:
        validators[item["version"]].validate(item["messages"])
        out.append(None)
    except Exception as exc:
        out.append(f"{type(exc).__name__}: {exc}"[:2000])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def validators() -> dict[str, A2uiValidator]:
    return {v: A2uiValidator(A2uiCatalog.basic(v)) for v in VERSIONS}


faults_for = st.lists(
    st.builds(
        Fault,
        pointer=st.one_of(names.map(lambda n: pointer_join("/form", n)), st.just(""), st.just("/form")),
        message=st.text(max_size=30),
        rule=st.just("test"),
    ),
    max_size=3,
)
typed = st.dictionaries(
    names,
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.text(max_size=10),
        st.lists(st.text(max_size=5), max_size=3),
        st.floats(allow_nan=False),
    ),
    max_size=4,
)
surface_inputs = st.tuples(asks(), st.none() | typed, faults_for)


def _render(case: tuple[Any, Any, list[Fault]], version: str) -> list[dict[str, Any]]:
    ask, values, faults = case
    msgs = ask_to_surface(ask, version, values=values, faults=faults)
    json.dumps(msgs, allow_nan=False)  # plain JSON, nothing a wire encoder would refuse
    return msgs


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(surface_inputs)
def test_askgate_validator_accepts_every_generated_surface(
    validators: dict[str, A2uiValidator], case: Any
) -> None:
    for v in VERSIONS:
        validators[v].validate(_render(case, v))


def _catalog_id_ok(msgs: list[dict[str, Any]], version: str) -> bool:
    """Trap 9: the validator does not check createSurface.catalogId, so check it here."""
    cid = CATALOG_IDS[version]
    if version == "0.9":
        return msgs[0]["createSurface"]["catalogId"] == cid
    return msgs[0]["beginRendering"].get("catalogId") == cid


def _broken_controls() -> list[tuple[str, list[dict[str, Any]]]]:
    """Known-bad variants of a real surface (the §5.6 traps): each must be rejected."""
    from askgate.core.model import Ask, ChoiceField, FormSpec, Option, StringField

    ask = Ask(
        id="c",
        dialect="canonical",
        prompt="p",
        spec=FormSpec(
            fields=(ChoiceField(name="c", options=(Option(value="x"),)), StringField(name="d", format="date"))
        ),
    )
    out = []
    v8 = ask_to_surface(ask, "0.8")
    bad = copy.deepcopy(v8)
    for c in bad[2]["surfaceUpdate"]["components"]:
        if "MultipleChoice" in c["component"]:
            c["component"]["MultipleChoice"]["label"] = {"literalString": "x"}  # trap 7
    out.append(("0.8", bad))
    v9 = ask_to_surface(ask, "0.9")
    for mutate in (
        lambda c: c.update(value="x") if c["component"] == "ChoicePicker" else None,  # trap 3
        lambda c: c.update(min="2025-01-01") if c["component"] == "DateTimeInput" else None,  # trap 2
        lambda c: (
            c.update(checks=[{"call": "required", "args": {"value": {"path": "/form/c"}}, "message": "m"}])
            if c["component"] == "ChoicePicker"
            else None
        ),  # trap 1
    ):
        bad = copy.deepcopy(v9)
        for c in bad[1]["updateComponents"]["components"]:
            mutate(c)
        out.append(("0.9", bad))
    return out


def test_reference_validator_accepts_every_generated_surface(validators: dict[str, A2uiValidator]) -> None:
    batch: list[dict[str, Any]] = []

    @settings(
        max_examples=examples(150), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(surface_inputs)
    def collect(case: Any) -> None:
        for v in VERSIONS:
            msgs = _render(case, v)
            assert _catalog_id_ok(msgs, v)
            batch.append({"version": v, "messages": msgs})

    collect()
    controls = _broken_controls()
    for v, msgs in controls:
        with pytest.raises(ValueError):
            validators[v].validate(msgs)
    payload = batch + [{"version": v, "messages": m} for v, m in controls]
    verdicts = run_reference(REFERENCE_SCRIPT, payload)
    assert len(verdicts) == len(payload)
    ours = verdicts[: len(batch)]
    failures = [(item, err) for item, err in zip(batch, ours) if err is not None]
    assert not failures, (
        f"{len(failures)} of {len(batch)} surfaces rejected by the reference; first: "
        f"{failures[0][1]}\n{json.dumps(failures[0][0])[:3000]}"
    )
    assert all(err is not None for err in verdicts[len(batch) :]), verdicts[len(batch) :]
    assert len(batch) >= 2 * min(examples(150), 10)
