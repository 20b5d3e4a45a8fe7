"""What ``lakewide diff`` found, told as tables (text) or as one ``TableDiff`` event (JSON)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from rich.table import Table

from lakewide.commands.output.console import console
from lakewide.commands.output.output import loud, mode
from lakewide.commands.output.tables import cell, print_table
from lakewide.vocabulary import events


@dataclass
class DiffOutcome:
    """What differs between side a and side b of one model."""

    model: str
    a: str
    b: str
    key: list[str]
    counts: dict[str, int]  # only_a, only_b, both, rows_differing, then per compared column
    compared: list[str]
    columns_only_a: list[str]
    columns_only_b: list[str]

    @property
    def equal(self) -> bool:
        return not (
            self.counts["only_a"]
            or self.counts["only_b"]
            or self.counts["rows_differing"]
            or self.columns_only_a
            or self.columns_only_b
        )


def show(outcome: DiffOutcome, samples: dict[str, Any]) -> None:
    """The outcome as a TableDiff event (JSON) or as tables (text)."""
    c = outcome.counts
    verdict = "equal" if outcome.equal else "different"
    msg = (
        f"{outcome.model}: {outcome.a} vs {outcome.b}: {verdict} ({c['only_a']} only in a, "
        f"{c['only_b']} only in b, {c['both']} in both, {c['rows_differing']} of them differing)"
    )
    if mode.json:
        events.emit(
            "TableDiff",
            msg,
            "info",
            **dataclasses.asdict(outcome),
            equal=outcome.equal,
            samples={
                k: None if v is None else {"columns": v[0], "rows": [list(r) for r in v[1]]}
                for k, v in samples.items()
            },
        )
        return
    console.print(
        f"[bold]{escape(outcome.model)}[/bold]: a = {outcome.a}, b = {outcome.b}, "
        f"key ({', '.join(outcome.key)})"
    )
    rows = Table(title="rows", title_justify="left")
    rows.add_column("")
    rows.add_column("count", justify="right")
    for label, name in (
        ("only in a", "only_a"),
        ("only in b", "only_b"),
        ("in both", "both"),
        ("in both, differing", "rows_differing"),
    ):
        rows.add_row(label, str(c[name]))
    console.print(rows)
    if outcome.compared:
        columns = Table(title="columns (rows in both that differ)", title_justify="left")
        for name, justify in (("column", "left"), ("differing", "right"), ("% of both", "right")):
            columns.add_column(name, justify=justify)  # type: ignore[arg-type]
        for column in outcome.compared:
            share = f"{100 * c[column] / c['both']:.1f}" if c["both"] else ""
            columns.add_row(column, str(c[column]), share)
        console.print(columns)
    for side, names in (("a", outcome.columns_only_a), ("b", outcome.columns_only_b)):
        if names:
            console.print(f"columns only in {side}: {', '.join(names)}")
    for title, found in samples.items():
        if found is None:
            continue
        table = Table(title=f"sample: {title.replace('_', ' ')}", title_justify="left")
        header, values = found
        for name in header:
            table.add_column(name)
        for value_row in values:
            table.add_row(*(escape(cell(v)) for v in value_row))
        print_table(table)
    with loud():
        console.print(msg)
