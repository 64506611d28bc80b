"""The streaming parser: the upstream suite through the runner, and differential runs against the reference.

The differential tests feed the same chunks to askgate's StreamParser and to the reference SDK (in one
subprocess per test, tests/support/a2ui_streams.py) and require the same parts, or the same error
message, after every chunk: on the benchmark responses (N = 10 and 100 components, both versions, in
40-character chunks) and on random re-chunkings of every suite case's input.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from askgate.a2ui.catalog import A2uiCatalog
from askgate.cli import app
from askgate.conformance.runner import collect_file
from tests.support.a2ui_streams import askgate_run, catalog_json, chunked, llm_response, random_chunks, reference_run
from tests.support.scale import QUICK

SUITE = "a2ui-conformance/suites/streaming_parser.yaml"


def test_upstream_streaming_suite_passes(shared_dir: Path) -> None:
    result = CliRunner().invoke(app, ["conformance", "run", str(shared_dir / SUITE)])
    assert result.exit_code == 0, result.output[-3000:]
    assert "80 passed, 0 failed" in result.output


def _suite_streams(shared_dir: Path) -> list[tuple[str, A2uiCatalog, list[str]]]:
    """(case id, catalog, the case's inputs in order) for every streaming suite case."""
    entries, failure = collect_file(shared_dir / SUITE)
    assert failure is None
    out = []
    for case in entries:
        cfg = case.catalog
        catalog = A2uiCatalog.from_config(cfg.version, cfg.s2c_schema, cfg.catalog_schema, cfg.common_types_schema)
        out.append((case.id, catalog, [step.input for step in case.steps]))
    assert len(out) == 80
    return out


def _compare(label: str, ours: dict[str, Any], theirs: dict[str, Any], chunks: list[str]) -> None:
    assert not theirs["timed_out"]
    assert len(ours["records"]) == len(theirs["records"]) == len(chunks), label
    for i, (a, b) in enumerate(zip(ours["records"], theirs["records"])):
        assert a == b, f"{label}: chunk {i} {chunks[i]!r} differs:\n askgate   {a}\n reference {b}"


def test_suite_inputs_rechunked_match_reference(shared_dir: Path) -> None:
    """Every suite input, as written and cut at random points, yields what the reference yields."""
    rng = random.Random(20261130)
    cuts = 2 if QUICK else 6  # random re-chunkings per case, besides the case's own chunks
    jobs, runs, labels, chunk_lists = [], [], [], []
    for case_id, catalog, inputs in _suite_streams(shared_dir):
        text = "".join(inputs)
        variants = [inputs] + [random_chunks(text, rng, max_size=rng.choice((3, 10, 40))) for _ in range(cuts)]
        for k, chunks in enumerate(variants):
            jobs.append({"catalog": catalog_json(catalog), "chunks": chunks})
            runs.append(askgate_run(catalog, chunks))
            labels.append(f"{case_id} variant {k}")
            chunk_lists.append(chunks)
    theirs = reference_run(jobs)
    for label, ours, ref, chunks in zip(labels, runs, theirs, chunk_lists):
        _compare(label, ours, ref, chunks)


@pytest.mark.parametrize("version", ["0.8", "0.9"])
def test_benchmark_streams_match_reference(version: str) -> None:
    """The benchmark responses (N = 10, 100) in 40-character chunks, and re-cut at random."""
    catalog = A2uiCatalog.basic(version)
    rng = random.Random(7)
    streams = []
    for n in (10, 100):
        text = llm_response(n, version, catalog.catalog_id)
        streams.append((f"N={n} 40-char chunks", chunked(text, 40)))
    streams.append(("N=10 random chunks", random_chunks(llm_response(10, version, catalog.catalog_id), rng, 25)))
    jobs = [{"catalog": catalog_json(catalog), "chunks": chunks} for _, chunks in streams]
    theirs = reference_run(jobs)
    for (label, chunks), ref in zip(streams, theirs):
        ours = askgate_run(catalog, chunks)
        _compare(f"v{version} {label}", ours, ref, chunks)
        # The stream is not trivial: components were shown progressively.
        shown = sum(1 for rec in ours["records"] for part in rec.get("parts", []) if part[1])
        assert shown >= 3
