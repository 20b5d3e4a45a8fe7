"""A ``lakewide`` command in a process of its own, SIGKILLed at a fault point
(lakewide.vocabulary.faults): the crash tests' one process boundary that cannot be run in the
test's own process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.cli_process import quick_jvm


def killed_at(
    project: Path, point: str, *args: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``lakewide --project-dir PROJECT ARGS`` in a process of its own, SIGKILLed the first time
    it reaches ``point`` (``LAKEWIDE_CRASH_AT``); its JVM quick to start (tests.support.cli_process)."""
    return subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(project), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=quick_jvm({**os.environ, "LAKEWIDE_CRASH_AT": f"{point}:1"}),
    )
