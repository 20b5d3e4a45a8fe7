"""How ``show`` and ``diff`` print rows: plain as the README shows, NULL for a missing value,
headers never cut to the terminal's width. No JVM: the tables are fed rows directly."""

from __future__ import annotations

import re

import pytest

from lakewide.commands.output.console import console
from lakewide.commands.output.diff_report import DiffOutcome, show
from lakewide.commands.output.tables import print_table, rows_table
from tests.support.project_factory import REPO_ROOT


def _printed(monkeypatch: pytest.MonkeyPatch, width: int, draw: object) -> str:
    monkeypatch.setattr(console, "width", width)
    with console.capture() as captured:
        assert callable(draw)
        draw()
    return captured.get()


def readme_table() -> str:
    """The table the README says the first command prints."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"The first command prints the wide table.*?\n```\n(.*?)```", readme, re.S)
    assert found, "the README's first-command table"
    return found.group(1)


@pytest.mark.parametrize("width", [200, 40])
def test_show_prints_the_table_as_the_readme_shows_it(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    expected = readme_table()
    header, *rows = [line.split() for line in expected.splitlines()]
    printed = _printed(monkeypatch, width, lambda: print_table(rows_table(header, rows)))
    assert printed == expected


def test_show_prints_null_and_keeps_markup_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    printed = _printed(
        monkeypatch, 80, lambda: print_table(rows_table(["a", "b"], [[None, "[red]x[/red]"]]))
    )
    assert printed.splitlines() == ["a     b", "NULL  [red]x[/red]"]


def test_diff_prints_null_as_show_does_and_whole_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    compared = [f"column_number_{i}" for i in range(6)]
    header = ["user_id"] + [f"{c}__{side}" for c in compared for side in "ab"]
    outcome = DiffOutcome(
        "m",
        "dev",
        "prod",
        ["user_id"],
        {"only_a": 0, "only_b": 0, "both": 1, "rows_differing": 1, **dict.fromkeys(compared, 1)},
        compared,
        [],
        [],
    )
    samples = {"only_a": None, "only_b": None, "differing": (header, [["u1"] + [None, "x"] * 6])}
    printed = _printed(monkeypatch, 100, lambda: show(outcome, samples))
    assert "None" not in printed
    [values] = [line for line in printed.splitlines() if "u1" in line]
    assert values.count("NULL") == 6
    [names] = [line for line in printed.splitlines() if "column_number_0__a" in line]
    assert re.findall(r"\w+", names) == header  # every column's name whole, none cut
