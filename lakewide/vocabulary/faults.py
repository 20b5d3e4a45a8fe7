"""Fault injection for lakewide's own crash and race tests.

* ``LAKEWIDE_CRASH_AT=<point>:<n>``: the process SIGKILLs itself the n-th time it reaches
  ``point`` (before-stage, before-commit, after-commit, before-changelog, after-changelog,
  after-forward).
* ``LAKEWIDE_PAUSE_AT=<point>:<folder>``: the first time the process reaches ``point`` it
  writes ``<folder>/<pid>.paused`` and waits (up to 10 minutes) until ``<folder>/go`` exists,
  so that a test can hold several processes at one point and release them together.

Unset, ``checkpoint`` does nothing.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

_seen: Counter[str] = Counter()

#: longest pause at a LAKEWIDE_PAUSE_AT point (seconds)
PAUSE_LIMIT = 600.0


def checkpoint(point: str) -> None:
    """Die here if LAKEWIDE_CRASH_AT names this point and occurrence; wait here the first
    time if LAKEWIDE_PAUSE_AT names this point."""
    crash = os.environ.get("LAKEWIDE_CRASH_AT")
    pause = os.environ.get("LAKEWIDE_PAUSE_AT")
    if not crash and not pause:
        return
    _seen[point] += 1
    name, _, count = (crash or "").partition(":")
    if name == point and _seen[point] == int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
    name, _, folder = (pause or "").partition(":")
    if name == point and _seen[point] == 1:
        _pause(Path(folder))


def _pause(folder: Path) -> None:
    """Say this process is paused, then wait for the go file."""
    (folder / f"{os.getpid()}.paused").touch()
    deadline = time.monotonic() + PAUSE_LIMIT
    while not (folder / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
