"""What a script gets: ``show`` prints the table alone on stdout (Spark's start-up and every
other progress line go to stderr), reads a table without a JVM where pyiceberg can, and a
``build`` is never silent for long: each phase says it is starting as it starts."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lakewide.commands.services.spark_start import shared_session
from tests.integration.conftest import ProjectRun
from tests.support.cli_process import quick_jvm
from tests.support.project_factory import no_java_env, run_main

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MAX_SILENCE = 5.0  # seconds a build may go without printing a line, Spark already started


def _show(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(root), "show", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=quick_jvm({**env, "COLUMNS": "200"}),
    )


def _expected(example: ProjectRun, table: str) -> list[list[str]]:
    """The table's header and rows as Spark reads them, each value as ``show`` prints it."""
    frame = example.spark.table(f"lw.{example.namespace}.{table}")
    columns = [c for c in frame.columns if not c.startswith("__lw_")]
    return [columns, *([str(v) for v in row] for row in example.rows(table))]


def test_show_reads_the_table_without_a_jvm_and_prints_only_the_table(
    example: ProjectRun,
) -> None:
    example.seed()
    example.run()
    done = _show(example.root, "user_rec_wide", env=no_java_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split() for line in done.stdout.splitlines()] == _expected(
        example, "user_rec_wide"
    )
    assert "Spark" not in done.stderr, done.stderr


def test_show_through_spark_prints_its_progress_on_stderr(example: ProjectRun) -> None:
    example.seed()
    example.run()
    query = "select * from {{ ref('user_rec_wide') }} order by user_id, item_id"
    done = _show(example.root, "--inline", query, env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split() for line in done.stdout.splitlines()] == _expected(
        example, "user_rec_wide"
    )
    assert "starting Spark" in done.stderr and "started Spark" in done.stderr, done.stderr


class _TimedLines(io.TextIOBase):
    """A stream that notes when each line written to it arrived."""

    def __init__(self, lines: list[tuple[float, str]], lock: threading.Lock) -> None:
        self.lines, self.lock, self.pending = lines, lock, ""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        with self.lock:
            self.pending += text
            *done, self.pending = self.pending.split("\n")
            self.lines.extend((time.monotonic(), line) for line in done)
        return len(text)


def test_build_is_never_silent_for_long(
    example: ProjectRun, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    lines: list[tuple[float, str]] = []
    lock = threading.Lock()
    monkeypatch.setattr(sys, "stdout", _TimedLines(lines, lock))
    monkeypatch.setattr(sys, "stderr", _TimedLines(lines, lock))
    example.spark.sql("select 1").collect()  # Spark already started
    began = time.monotonic()
    with shared_session(example.spark):
        code, _ = run_main(monkeypatch, capsys, "--project-dir", str(example.root), "build")
    ended = time.monotonic()
    shown = "\n".join(f"{at - began:6.1f} {text}" for at, text in lines)
    assert code == 0, shown
    times = [began, *(at for at, _ in lines), ended]
    gaps = [(b - a, i) for i, (a, b) in enumerate(zip(times, times[1:]))]
    longest, where = max(gaps)
    assert longest <= MAX_SILENCE, f"{longest:.1f}s silent before line {where}:\n{shown}"
