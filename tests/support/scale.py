"""Example counts for property, fuzz and differential tests.

The README's test command (and CI) runs the full counts the issues require. While iterating, set
``ASKGATE_QUICK=1`` to divide them by 20.
"""

from __future__ import annotations

import os

QUICK = os.environ.get("ASKGATE_QUICK", "") not in ("", "0")


def examples(full: int) -> int:
    """``full`` in CI and the README's test command; a twentieth of it when ASKGATE_QUICK=1."""
    return max(10, full // 20) if QUICK else full
