"""Instructions the A2UI streaming parser spends on one benchmark stream, counted by callgrind.

CPU time on this shared machine drifts by up to 2x within minutes; instruction counts do not, so each
parser change is judged by them. The stream is bench/a2ui.py's (one surface of N components in
40-character chunks). Start-up and imports are taken out by difference: a run that feeds the stream 6
times minus one that feeds it twice, divided by 4 (``PYTHONHASHSEED=0`` for stable dict and set layouts).

Run:  .venv/bin/python bench/a2ui_instructions.py [--versions 0.8,0.9] [--components 100]   (~1 min)
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def feed(version: str, components: int, times: int) -> None:
    """The measured work: a fresh parser fed the whole stream, ``times`` times."""
    # This script's folder holds bench/a2ui.py, which would shadow a2ui-core's ``a2ui`` package.
    here = Path(__file__).resolve().parent
    sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != here]
    from askgate.a2ui.catalog import A2uiCatalog
    from askgate.a2ui.streaming import StreamParser
    from tests.support.a2ui_streams import chunked, llm_response

    catalog = A2uiCatalog.basic(version)
    chunks = chunked(llm_response(components, version, catalog.catalog_id), 40)
    for _ in range(times):
        parser = StreamParser(catalog)
        for chunk in chunks:
            parser.process_chunk(chunk)


def count(version: str, components: int, times: int) -> int:
    """Instructions of a whole process that feeds the stream ``times`` times."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={Path(tmp) / 'out'}", sys.executable,
               __file__, "--feed", version, str(components), str(times)]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in callgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--versions", default="0.8,0.9")
    p.add_argument("--components", type=int, default=100)
    p.add_argument("--feed", nargs=3, help=argparse.SUPPRESS)  # the run inside valgrind
    args = p.parse_args()
    if args.feed:
        feed(args.feed[0], int(args.feed[1]), int(args.feed[2]))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is needed: apt-get install valgrind", file=sys.stderr)
        return 2
    for version in args.versions.split(","):
        per_stream = (count(version, args.components, 6) - count(version, args.components, 2)) / 4
        print(f"v{version} N={args.components}: {per_stream / 1e6:.2f} M instructions per stream")
    return 0


if __name__ == "__main__":
    sys.exit(main())
