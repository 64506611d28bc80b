"""askgate/server/logs.py: JSON lines on stderr, redacted; ``final`` fixes the configuration for the process.

Each case runs in a child interpreter: a final configuration lasts for the life of the process.
"""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import structlog
from askgate.server import logs
logs.configure({first!r}, final={final})
logs.configure({second!r})
log = structlog.get_logger("askgate.test")
for _ in range(2):  # the second call goes through the cached logger when final
    log.debug("a_debug_line")
    log.info("an_info_line", api_token="agk_SECRET")
    log.warning("a_warning_line")
"""


def lines(first: str, second: str, final: bool) -> list[dict]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(first=first, second=second, final=final)],
                          capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout == ""
    return [json.loads(line) for line in proc.stderr.splitlines()]


def test_a_final_configuration_is_not_changed_by_a_later_one() -> None:
    got = lines("warning", "debug", final=True)
    assert [e["event"] for e in got] == ["a_warning_line", "a_warning_line"]
    assert debug_flag("warning", "debug", final=True) is False


def test_without_final_the_last_configuration_holds() -> None:
    got = lines("warning", "debug", final=False)
    assert [e["event"] for e in got] == ["a_debug_line", "an_info_line", "a_warning_line"] * 2
    assert all(e["api_token"] == "<redacted>" for e in got if e["event"] == "an_info_line")
    assert debug_flag("warning", "debug", final=False) is True


def test_a_final_info_configuration_redacts_through_cached_loggers() -> None:
    got = lines("info", "warning", final=True)
    assert [e["event"] for e in got] == ["an_info_line", "a_warning_line"] * 2
    assert [e["api_token"] for e in got if e["event"] == "an_info_line"] == ["<redacted>"] * 2


def debug_flag(first: str, second: str, *, final: bool) -> bool:
    code = (f"from askgate.server import logs; logs.configure({first!r}, final={final}); "
            f"logs.configure({second!r}); print(logs.debug_enabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip() == "True"
