"""A ``lakewide`` command in a process of its own, SIGKILLed at a fault point (lakewide.faults):
the crash tests' one process boundary that cannot be run in the test's own process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: JVM options of a process that is killed a few statements after it started: HotSpot's first
#: compiler tier only (no C2 compilation of code the short-lived process never runs again). A
#: JIT setting: what Spark and Iceberg compute is unchanged. Measured on a loaded 2-core
#: machine: session start plus a first CREATE, INSERT and read 28 s with the default tiers,
#: 12 s with this.
QUICK_JVM = "-XX:TieredStopAtLevel=1"


def killed_at(
    project: Path, point: str, *args: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``lakewide --project-dir PROJECT ARGS`` in a process of its own, SIGKILLed the first time
    it reaches ``point`` (``LAKEWIDE_CRASH_AT``); its JVM runs with ``QUICK_JVM``."""
    java = " ".join(filter(None, (os.environ.get("JAVA_TOOL_OPTIONS"), QUICK_JVM)))
    return subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(project), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "LAKEWIDE_CRASH_AT": f"{point}:1", "JAVA_TOOL_OPTIONS": java},
    )
