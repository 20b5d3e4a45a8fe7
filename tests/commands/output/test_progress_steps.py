"""Spark's start-up as a step of its own in text mode: its lines at once, and on a terminal the
step running with its seconds until it ends (or the command does). No JVM: the events are
emitted as the session emits them."""

from __future__ import annotations

import io
import re
import time

import pytest

from lakewide.commands.output import heartbeat, output
from lakewide.commands.output.console import progress_console as console
from lakewide.vocabulary import events

STARTING = events.Event("SparkStarting", "starting Spark local[2] ...", data={"master": "local[2]"})
STARTED = events.Event("SparkStarted", "started Spark local[2] in 9.5s", data={"seconds": 9.5})


@pytest.mark.parametrize("terminal", [True, False])
def test_spark_start_is_its_own_step(monkeypatch: pytest.MonkeyPatch, terminal: bool) -> None:
    monkeypatch.setattr(console, "_force_terminal", terminal)
    monkeypatch.setattr(console, "file", io.StringIO())
    output.write_step(STARTING)
    assert console.file.getvalue().startswith("starting Spark local[2] ...\n")  # type: ignore[attr-defined]
    assert bool(output._step) is terminal  # the running step shown below the lines
    output.write_step(STARTED)
    assert not output._step
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert printed.endswith("started Spark local[2] in 9.5s\n"), printed


def test_the_command_ending_ends_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "_force_terminal", True)
    monkeypatch.setattr(console, "file", io.StringIO())
    output.write_step(STARTING)
    assert output._step
    output.reset()  # what the CLI does when the command ends, e.g. as Spark failed to start
    assert not output._step


def test_a_silence_is_broken_by_a_line_naming_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "_force_terminal", False)
    monkeypatch.setattr(console, "file", io.StringIO())
    monkeypatch.setattr(heartbeat, "QUIET_SECONDS", 0.3)
    heartbeat.heartbeat.begin(output._say)
    try:
        output.write_step(events.Event("NodeStart", "START wide", node="wide"))
        deadline = time.monotonic() + 10
        while "still working" not in console.file.getvalue() and time.monotonic() < deadline:  # type: ignore[attr-defined]
            time.sleep(0.05)
    finally:
        heartbeat.heartbeat.end()
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[0] == "START wide"
    assert re.fullmatch(r"\.\.\. still working, \d+s since: START wide", lines[1]), lines
