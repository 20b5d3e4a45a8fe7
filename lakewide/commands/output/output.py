"""How a command speaks: ``--quiet`` and ``--log-format text|json`` (global flags, also accepted
after the command), and the JSON event lines of ``--log-format json``.

In JSON mode stdout carries one JSON object per line and nothing else: lakewide's events
(lakewide.vocabulary.events) with dbt's fields, and every line a command prints (as a ``Note``
event).
"""

from __future__ import annotations

import datetime
import io
import json
import os
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import click

from lakewide.commands.output.console import console, progress_console
from lakewide.commands.output.heartbeat import NotedStream, heartbeat
from lakewide.vocabulary import events

LOG_FORMATS = ("text", "json")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class Mode:
    """The output mode of this invocation."""

    quiet: bool = False
    log_format: str = "text"
    invocation_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    project: str = ""  # the project's name once parsed (unique ids: model.<project>.<name>)

    @property
    def json(self) -> bool:
        return self.log_format == "json"

    def unique_id(self, node: str) -> str:
        return f"model.{self.project}.{node}"


mode = Mode()


def record(event: events.Event) -> dict[str, Any]:
    """An event as dbt writes it: ``info`` (name, code, msg, level, ts, invocation_id, ...)
    and ``data`` (with ``node_info`` when the event concerns a model)."""
    data = dict(event.data)
    if event.node is not None:
        data["node_info"] = {
            "unique_id": mode.unique_id(event.node),
            "node_name": event.node,
            "resource_type": "model",
            **data.get("node_info", {}),
        }
        data["node_info"].setdefault("node_status", "running")
    return {
        "info": {
            "name": event.name,
            "code": event.code,
            "msg": event.msg,
            "level": event.level,
            "ts": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "invocation_id": mode.invocation_id,
            "pid": os.getpid(),
            "thread": threading.current_thread().name,
        },
        "data": data,
    }


_write_lock = threading.Lock()
_IMPORTED = time.monotonic()  # the fallback start of the process (see ``elapsed``)
#: steps of a command shown as their own lines in text mode, on stderr: Spark's start-up, a
#: phase starting (``StepStart``: seeds, data tests, a read without Spark), a model or one of
#: its unit tests starting
STEP_EVENTS = ("SparkStarting", "SparkStarted", "StepStart", "NodeStart", "UnitTestStart")


def elapsed() -> float:
    """Seconds since this process started (from /proc on Linux; elsewhere since lakewide's
    command line was imported), what a command's ``Done ... in Ns`` counts."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic() - _IMPORTED


_step: list[Any] = []  # the live timer of the step running (on a terminal)


def step_line(event: events.Event) -> str:
    """The line a step event shows: its message (a unit test's names the model it tests)."""
    if event.name == "UnitTestStart":
        return f"START unit test {event.data.get('unit_test')} of {event.node}"
    return event.msg


def write_step(event: events.Event) -> None:
    """In text mode, a step of the command (Spark starting, started, a phase or model starting)
    as a line on stderr, at once; on a terminal, Spark's start-up running with its seconds
    below it until it ends."""
    if mode.json or event.name not in STEP_EVENTS:
        return
    end_step()
    line = step_line(event)
    heartbeat.started(line)
    progress_console.print(line, markup=False, highlight=False)
    progress_console.file.flush()
    if (
        event.name == "SparkStarting"
        and progress_console.is_terminal
        and not progress_console.quiet
    ):
        from rich.live import Live

        began, what = time.monotonic(), f"Spark {event.data.get('master', '')}"

        def timer() -> str:
            return f"[cyan]START[/cyan]  {what}  {time.monotonic() - began:5.1f}s"

        live = Live(
            console=progress_console,
            transient=True,
            refresh_per_second=4,
            get_renderable=timer,
            redirect_stdout=sys.stdout.isatty(),
        )
        live.start()
        _step.append(live)


def end_step() -> None:
    """Stop showing the step running (it ended, or the command did)."""
    while _step:
        _step.pop().stop()


def write_event(event: events.Event) -> None:
    """In JSON mode, one JSON line on stdout (``--quiet``: errors and the summary only)."""
    if not mode.json or mode.quiet and event.level != "error" and event.name != "StatsLine":
        return
    line = json.dumps(record(event), default=str)
    with _write_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class _NoteLines(io.TextIOBase):
    """The console's file in JSON mode: each line printed becomes a ``Note`` event."""

    def __init__(self) -> None:
        self._pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            plain = _ANSI.sub("", line).rstrip()
            if plain.strip():
                if plain.startswith("error:"):
                    write_event(events.Event("MainEncounteredError", plain, "error"))
                else:
                    write_event(events.Event("Note", plain))
        return len(text)


def start(quiet: bool, log_format: str) -> None:
    """This invocation's output mode (the group's flags; the command's may change it)."""
    reset()
    mode.quiet, mode.log_format = quiet, log_format
    for listener in (write_event, write_step):
        if listener not in events.listeners():
            events.subscribe(listener)
    apply()


def reset() -> None:
    """The default mode (the CLI may run in-process, in tests)."""
    heartbeat.end()
    end_step()
    mode.quiet, mode.log_format = False, "text"
    mode.invocation_id, mode.project = str(uuid.uuid4()), ""
    console.file, console.quiet = None, False  # type: ignore[assignment]
    progress_console.file, progress_console.quiet = None, False  # type: ignore[assignment]


def apply() -> None:
    """Point the console at the mode: JSON lines, or silence outside errors and summaries."""
    console.file = _NoteLines() if mode.json else NotedStream("stdout", heartbeat)  # type: ignore[assignment]
    console.quiet = mode.quiet and not mode.json
    progress_console.file = NotedStream("stderr", heartbeat)  # type: ignore[assignment]
    progress_console.quiet = mode.quiet
    if mode.json or mode.quiet:
        heartbeat.end()
    else:
        heartbeat.begin(_say)


def _say(line: str) -> None:
    """A line of the heartbeat (lakewide.commands.output.heartbeat) on stderr; none while a
    live view counts the seconds on the terminal."""
    if getattr(progress_console, "_live_stack", None) or getattr(progress_console, "_live", None):
        return
    progress_console.print(line, markup=False, highlight=False)
    progress_console.file.flush()


@contextmanager
def loud() -> Iterator[None]:
    """Print even in ``--quiet`` (errors and the summary line)."""
    saved, console.quiet = console.quiet, False
    try:
        yield
    finally:
        console.quiet = saved


def _after_command(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(_ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is not None and value is not False:
            setattr(mode, name, value)
            apply()

    return callback


def output_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--quiet`` and ``--log-format`` after the command too (``lakewide run --quiet``)."""
    func = click.option(
        "--quiet",
        "-q",
        is_flag=True,
        default=None,
        expose_value=False,
        callback=_after_command("quiet"),
        help="Only errors and the summary line (also accepted before the command).",
    )(func)
    return click.option(
        "--log-format",
        type=click.Choice(LOG_FORMATS),
        expose_value=False,
        callback=_after_command("log_format"),
        help="json: one JSON event per line on stdout (also accepted before the command).",
    )(func)
