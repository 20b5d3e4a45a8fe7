"""What a run shows while it works and when it ends: live progress per model and statement
(rich), a line per finished model, the summary table; as JSON events with ``--log-format
json``; errors and the summary line only with ``--quiet``."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.live import Live
from rich.markup import escape
from rich.table import Table

from lakewide.commands.output.console import console, progress_console
from lakewide.commands.output.output import elapsed, loud, mode
from lakewide.vocabulary import events

if TYPE_CHECKING:
    from lakewide.run.models.outcomes import ModelResult

COLOURS = {"success": "green", "error": "red", "skipped": "yellow"}
RUN, UNIT = "RUN", "UNIT"  # a model running, a unit test of it running before it


def _rows(result: ModelResult) -> str:
    return "" if result.rows is None else str(result.rows)


def _keys_read(result: ModelResult) -> str:
    """The keys each source's new rows held, added up over the sources (a key two sources
    changed counts twice): ``source keys``, not the distinct keys the table changed."""
    return str(result.rows_read) if result.plan == "incremental" else ""


class RunProgress:
    """Listens to a run's events; shows the models running and their current statement (a
    model's unit tests, run before it by ``build``, as ``UNIT <test>`` lines of their own)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.finished = 0
        # model -> (started, statement, what runs: "RUN" or "UNIT <test>")
        self.running: dict[str, tuple[float, str, str]] = {}
        self._lock = threading.Lock()

    def __call__(self, event: events.Event) -> None:
        if event.node is None:
            return
        with self._lock:
            now = time.perf_counter()
            if event.name == "NodeStart":
                self.running[event.node] = (now, "", RUN)
            elif event.name == "UnitTestStart" and event.node in self.running:
                self.running[event.node] = (now, "", f"{UNIT} {event.data.get('unit_test')}")
            elif event.name == "UnitTestEnd" and event.node in self.running:
                self.running[event.node] = (now, "", RUN)  # the model's own time from here
            elif event.name in ("SQLQuery", "TableRead") and event.node in self.running:
                started, _, label = self.running[event.node]
                self.running[event.node] = (started, event.msg, label)

    def render(self) -> Table:
        """The live view: one line per running model with its current statement."""
        table = Table.grid(padding=(0, 2))
        with self._lock:
            now = time.perf_counter()
            for name, (started, statement, label) in sorted(self.running.items()):
                short = statement if len(statement) <= 90 else statement[:87] + "..."
                what, _, test = label.partition(" ")
                shown = name if not test else f"{name} {test}"
                colour = "cyan" if what == RUN else "magenta"
                table.add_row(
                    f"[{colour}]{what}[/{colour}]",
                    escape(shown),
                    f"{now - started:5.1f}s",
                    f"[dim]{escape(short)}[/]",
                )
        table.add_row("", f"[dim]{self.finished} of {self.total} done[/dim]", "", "")
        return table

    def finish(self, result: ModelResult) -> None:
        with self._lock:
            self.running.pop(result.name, None)
            self.finished += 1


def report(result: ModelResult, index: int, total: int) -> None:
    """One finished model: a line (text; errors only with --quiet) or a LogModelResult event."""
    status = result.status
    if mode.json:
        name = "LogSkipResult" if status == "skipped" else "LogModelResult"
        events.emit(
            name,
            f"{index} of {total} {status.upper()} {result.name} "
            f"({result.plan or '-'}) in {result.seconds:.2f}s"
            + (f": {result.message}" if result.message else ""),
            "error" if status == "error" else "info",
            node_info={
                "unique_id": mode.unique_id(result.name),
                "node_name": result.name,
                "node_status": status,
                "resource_type": "model",
            },
            status=status,
            plan=result.plan,
            rows=result.rows,
            keys_read=result.rows_read,
            statements=result.statements,
            execution_time=round(result.seconds, 3),
            message=result.message,
        )
        return
    colour = COLOURS[status]
    rows = f"{_rows(result)} rows" if result.rows is not None else ""
    read = f"{_keys_read(result)} source keys" if _keys_read(result) else ""
    line = (
        f"{index:>3} of {total} [{colour}]{status.upper():<7}[/{colour}] {result.name:<28} "
        f"{result.plan:<12} {rows:>12} {read:>16} {result.seconds:6.1f}s "
        f"{escape(result.message)}"
    )
    if status == "error":
        with loud():
            console.print(line, soft_wrap=True)
    else:
        console.print(line, soft_wrap=True)


def summary(results: list[ModelResult], seconds: float | None = None) -> None:
    """The summary table (text, not --quiet) and the summary line (always); ``seconds``:
    default the whole command's, since its process started."""
    seconds = elapsed() if seconds is None else seconds
    failed = sum(r.status == "error" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    ok = len(results) - failed - skipped
    line = f"Done. {ok} ok, {failed} failed, {skipped} skipped in {seconds:.1f}s."
    if mode.json:
        level = "error" if failed or skipped else "info"
        events.emit("StatsLine", line, level, ok=ok, error=failed, skip=skipped, total=len(results))
        return
    if results and not mode.quiet:
        table = Table(title="Summary", title_justify="left")
        for column, justify in (
            ("model", "left"),
            ("status", "left"),
            ("plan", "left"),
            ("rows", "right"),
            ("source keys", "right"),
            ("seconds", "right"),
        ):
            table.add_column(column, justify=justify)  # type: ignore[arg-type]
        for r in results:
            colour = COLOURS[r.status]
            table.add_row(
                r.name,
                f"[{colour}]{r.status}[/{colour}]",
                r.plan,
                _rows(r),
                _keys_read(r),
                f"{r.seconds:.1f}",
            )
        console.print(table)
    with loud():
        console.print(line)


@contextmanager
def live(total: int) -> Iterator[RunProgress]:
    """Live progress while the run lasts, on stderr (only on a terminal, not with --quiet or
    json)."""
    progress = RunProgress(total)
    show = progress_console.is_terminal and not mode.quiet and not mode.json
    display: Any = (
        Live(
            console=progress_console,  # stderr; the results printed meanwhile go above it
            transient=True,
            refresh_per_second=4,
            get_renderable=progress.render,
            redirect_stdout=sys.stdout.isatty(),
        )
        if show
        else None
    )
    with events.listening(progress):
        if display is None:
            yield progress
            return
        with display:
            yield progress
