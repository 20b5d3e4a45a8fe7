"""Rows as ``show`` and ``diff`` print them: NULL for a missing value, a plain table (no box,
as the README shows), each table at its full width however narrow the terminal."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.markup import escape
from rich.measure import Measurement
from rich.segment import Segment, Segments
from rich.table import Table

from lakewide.commands.output.console import console

_UNBOUNDED = 1_000_000


def cell(value: Any) -> str:
    """A value as a table shows it: ``NULL`` for None (as Spark SQL prints it)."""
    return "NULL" if value is None else str(value)


def rows_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Table:
    """A plain table of ``rows``: the header line, then a line per row, columns two spaces
    apart, no box."""
    table = Table(box=None, pad_edge=False, show_edge=False)
    for name in header:
        table.add_column(escape(name), no_wrap=True)
    for row in rows:
        table.add_row(*(escape(cell(value)) for value in row))
    return table


def print_table(table: Table) -> None:
    """Print ``table`` at its natural width: a column header or value is never cut or wrapped
    to fit the terminal (a line longer than the terminal wraps as any long line does)."""
    natural = Measurement.get(console, console.options.update_width(_UNBOUNDED), table).maximum
    options = console.options.update_width(max(console.width, natural))
    lines = console.render_lines(table, options, pad=False)
    console.print(
        Segments(segment for line in lines for segment in [*_rstrip(line), Segment.line()]),
        end="",
        crop=False,
    )


def _rstrip(line: list[Segment]) -> list[Segment]:
    """A rendered line without the padding after its last value."""
    line = list(line)
    while line and not line[-1].control and not line[-1].text.strip():
        line.pop()
    if line and not line[-1].control:
        last = line[-1]
        line[-1] = Segment(last.text.rstrip(), last.style)
    return line
