"""What a Spark command shows under a pipe: at once what is starting, Spark's start-up as its own
step before the first model, and a ``Done ... in Ns`` that counts the whole command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.cli_process import quick_jvm
from tests.support.project_factory import make_project

pytestmark = [pytest.mark.spark, pytest.mark.slow]

PROJECT = {
    "seeds/people.csv": "id,name\n1,Ada\n2,Grace\n",
    "models/people_copy.sql": "{{ config(materialized='table') }}\nSELECT 1 AS id, 'Ada' AS name\n",
}


def _lines_with_arrival(command: list[str], cwd: Path) -> tuple[list[tuple[float, str]], float]:
    """Each line the command prints under a pipe with the seconds since just before it was
    started when it arrived, and the seconds until it exited."""
    began = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=quick_jvm({**os.environ, "COLUMNS": "200"}),
    )
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append((time.monotonic() - began, line.rstrip("\n")))

    reader = threading.Thread(target=read)
    reader.start()
    process.wait(timeout=600)
    reader.join(timeout=60)
    return lines, time.monotonic() - began


def test_build_says_spark_is_starting_first_and_done_counts_the_whole_command(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, PROJECT)
    lines, total = _lines_with_arrival(
        [sys.executable, "-m", "lakewide", "--project-dir", str(root), "build"], root
    )
    texts = [text for _, text in lines]
    shown = "\n".join(texts)
    assert re.fullmatch(r"starting Spark local\[\*\] \(Iceberg \d+\.\d+\.\d+\) \.\.\.", texts[0]), (
        shown
    )
    started = next(i for i, t in enumerate(texts) if t.startswith("started Spark local"))
    first_seed = next(i for i, t in enumerate(texts) if t.startswith("seed people"))
    first_model = next(i for i, t in enumerate(texts) if "1 of 1" in t)
    assert 0 < started < first_seed < first_model, shown
    [(arrived, done)] = [(at, t) for at, t in lines if t.startswith("Done.")]
    reported = float(re.search(r" in ([0-9.]+)s\.$", done).group(1))  # type: ignore[union-attr]
    # the process started after the clock was read and printed the line before it arrived:
    # its own count can be short of the arrival time only by the start of a process and the
    # rounding to 0.1 s, and cannot exceed the whole run
    assert arrived - 1.0 <= reported <= total + 0.1, shown
