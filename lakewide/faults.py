"""Crash injection for lakewide's own crash tests: ``LAKEWIDE_CRASH_AT=<point>:<n>``.

When set, the process SIGKILLs itself the n-th time it reaches ``point`` (before-stage,
before-commit, after-commit). Unset, ``checkpoint`` does nothing.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

_seen: Counter[str] = Counter()


def checkpoint(point: str) -> None:
    """Die here if LAKEWIDE_CRASH_AT names this point and occurrence."""
    wanted = os.environ.get("LAKEWIDE_CRASH_AT")
    if not wanted:
        return
    _seen[point] += 1
    name, _, count = wanted.partition(":")
    if name == point and _seen[point] == int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
