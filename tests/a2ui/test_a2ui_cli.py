"""``askgate a2ui validate`` and ``askgate a2ui parse``: exit codes, output, never a traceback."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.surface import ask_to_surface
from askgate.cli import app
from askgate.core.model import Ask, BooleanField, ChoiceField, FormSpec, Option, StringField

runner = CliRunner()
ASK = Ask(
    id="a1",
    dialect="canonical",
    prompt="Who?",
    spec=FormSpec(
        fields=(
            StringField(name="name", required=True),
            BooleanField(name="ok"),
            ChoiceField(name="c", options=(Option(value="x"),)),
        )
    ),
)


def _run(*args: str, stdin: str | bytes | None = None) -> Any:
    result = runner.invoke(app, ["a2ui", *args], input=stdin)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _write(tmp: Path, name: str, data: Any) -> str:
    p = tmp / name
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(p)


def test_valid_surfaces_exit_0(tmp_path: Path) -> None:
    f8 = _write(tmp_path, "v8.json", ask_to_surface(ASK, "0.8"))
    f9 = _write(tmp_path, "v9.json", ask_to_surface(ASK, "0.9"))
    one = _write(tmp_path, "one.json", ask_to_surface(ASK, "0.9")[0])  # a single message, not a list
    r = _run("validate", f8, f9, one)
    assert r.exit_code == 0, r.output
    assert f"valid    {f8} (v0.8)" in r.output and f"valid    {f9} (v0.9)" in r.output
    assert "3 valid, 0 invalid, 0 unusable" in r.output
    assert _run("validate", "--version", "0.9", f9).exit_code == 0


def test_invalid_surfaces_exit_1_with_every_fault(tmp_path: Path) -> None:
    v8 = ask_to_surface(ASK, "0.8")
    bad8 = copy.deepcopy(v8)
    for c in bad8[2]["surfaceUpdate"]["components"]:
        if "MultipleChoice" in c["component"]:
            c["component"]["MultipleChoice"]["label"] = {"literalString": "x"}  # trap 7
        if "CheckBox" in c["component"]:
            c["component"]["Text"] = {"text": {"literalString": "two keys"}}  # trap 9: one type key
    v9 = ask_to_surface(ASK, "0.9")
    bad9 = copy.deepcopy(v9)
    bad9[0]["createSurface"]["catalogId"] = "https://example.com/other.json"  # trap 9: catalog id
    f8, f9 = _write(tmp_path, "bad8.json", bad8), _write(tmp_path, "bad9.json", bad9)
    r = _run("validate", f8)
    assert r.exit_code == 1, r.output
    assert "'label' was unexpected" in r.output
    assert "[a2ui.one-type-key]" in r.output
    assert "/2/surfaceUpdate/components/" in r.output
    r = _run("validate", f9)
    assert r.exit_code == 1 and "[a2ui.catalog-id]" in r.output and "/0/createSurface/catalogId" in r.output
    # v0.8: no catalogId, or the standard catalog's derived id, both name the standard catalog
    named = copy.deepcopy(v8)
    named[0]["beginRendering"]["catalogId"] = (
        "https://a2ui.org/specification/v0_8/standard_catalog_definition.json"
    )
    assert _run("validate", _write(tmp_path, "named8.json", named)).exit_code == 0
    named[0]["beginRendering"]["catalogId"] = "https://example.com/mine.json"
    r = _run("validate", _write(tmp_path, "other8.json", named))
    assert r.exit_code == 1 and "/0/beginRendering/catalogId" in r.output
    # a v0.9 payload judged as v0.8 is invalid, not unusable
    assert _run("validate", "--version", "0.8", _write(tmp_path, "v9.json", v9)).exit_code == 1


def test_unusable_inputs_exit_2(tmp_path: Path) -> None:
    good = _write(tmp_path, "good.json", ask_to_surface(ASK, "0.9"))
    bad = copy.deepcopy(ask_to_surface(ASK, "0.9"))
    bad[1]["updateComponents"]["components"][0]["child"] = "nowhere"
    invalid = _write(tmp_path, "invalid.json", bad)
    cases = {
        "missing": str(tmp_path / "missing.json"),
        "not json": _write(tmp_path, "text.json", "{not json"),
        "duplicate keys": _write(tmp_path, "dup.json", '{"a": 1, "a": 2}'),
        "nan": _write(tmp_path, "nan.json", "[NaN]"),
    }
    for what, path in cases.items():
        r = _run("validate", good, invalid, path)
        assert r.exit_code == 2, (what, r.output)  # unusable wins over invalid
        assert f"unusable {path}" in r.output
        assert "1 valid, 1 invalid, 1 unusable" in r.output
    assert _run("validate", "--version", "1.0", good).exit_code == 2  # not a version
    assert _run("validate", "--catalog", cases["missing"], good).exit_code == 2
    assert _run("validate", "--catalog", _write(tmp_path, "c.json", [1]), good).exit_code == 2
    r = _run("validate", "-", stdin=json.dumps(ask_to_surface(ASK, "0.8")))
    assert r.exit_code == 0 and "valid    - (v0.8)" in r.output


def test_catalog_option_uses_the_given_catalog(tmp_path: Path) -> None:
    schema = copy.deepcopy(A2uiCatalog.basic("0.9").catalog_schema)
    f9 = _write(tmp_path, "v9.json", ask_to_surface(ASK, "0.9"))
    same = _write(tmp_path, "same.json", schema)
    assert _run("validate", "--catalog", same, f9).exit_code == 0
    pruned = copy.deepcopy(schema)
    del pruned["components"]["ChoicePicker"]
    any_component = pruned["$defs"]["anyComponent"]
    any_component["oneOf"] = [r for r in any_component["oneOf"] if not r["$ref"].endswith("/ChoicePicker")]
    r = _run("validate", "--catalog", _write(tmp_path, "pruned.json", pruned), f9)
    assert r.exit_code == 1, r.output


def test_parse_unusable_inputs_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    r = _run("parse", str(bad))
    assert r.exit_code == 2 and "not UTF-8" in r.output
    assert _run("parse", str(tmp_path / "missing.txt")).exit_code == 2
    assert _run("parse", "--chunk", "0", str(bad)).exit_code == 2


@pytest.mark.parametrize("version", ["0.8", "0.9"])
def test_parse_streams_parts_as_json_lines(tmp_path: Path, version: str) -> None:
    msgs = ask_to_surface(ASK, version)
    text = f"Here is the form.\n<a2ui-json>{json.dumps(msgs)}</a2ui-json>\nThanks."
    f = _write(tmp_path, "response.txt", text)
    for chunk in ("7", "40", "100000"):
        r = _run("parse", "--version", version, "--chunk", chunk, f)
        assert r.exit_code == 0, r.output
        parts = [json.loads(line) for line in r.output.splitlines()]
        assert parts and all(set(p) == {"text", "a2ui_json"} for p in parts)
        seen = [m for p in parts if p["a2ui_json"] for m in p["a2ui_json"]]
        start = "createSurface" if version == "0.9" else "beginRendering"
        assert any(start in m and m[start]["surfaceId"] == "elicit-a1" for m in seen), parts
        assert "Here is the form." in "".join(p["text"] for p in parts)


def test_parse_rejected_response_exits_1(tmp_path: Path) -> None:
    f = _write(tmp_path, "bad.txt", 'Hi <a2ui-json>[{"version": "v0.9", "bogus": 1}]</a2ui-json>')
    r = _run("parse", f)
    assert r.exit_code == 1, r.output
    first = json.loads(r.output.splitlines()[0])  # the text before the block was already streamed
    assert first["a2ui_json"] is None and first["text"].startswith("Hi")
    assert "Unknown message type" in r.output
