"""README's command table names every command and every flag of the CLI (read from click).

``python -m tests.test_cli_reference`` prints the rows click defines (to paste the missing ones).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import click

from lakewide.cli import cli
from tests.project_factory import REPO_ROOT

START, END = "<!-- cli-table:start -->", "<!-- cli-table:end -->"


def commands(
    group: click.Group = cli, prefix: str = "lakewide"
) -> Iterator[tuple[str, click.Command]]:
    """(``lakewide run``, command) for the group and every command under it, nested groups too."""
    yield prefix, group
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from commands(command, f"{prefix} {name}")
        else:
            yield f"{prefix} {name}", command


def param_name(param: click.Parameter) -> str:
    """How the table names a parameter: its long flag (``--select``) or argument (``MODEL``)."""
    if isinstance(param, click.Argument):
        return (param.name or "").upper()
    longs = [o for o in param.opts if o.startswith("--")]
    return longs[0] if longs else param.opts[0]


def param_cell(param: click.Parameter) -> str:
    if isinstance(param, click.Argument):
        return f"`{param_name(param)}`"
    flags = "/".join([*param.opts, *param.secondary_opts])
    assert isinstance(param, click.Option)
    metavar = "" if param.is_flag else f" {param.make_metavar(click.Context(cli))}"
    return f"`{flags}{metavar}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def expected_rows() -> dict[tuple[str, str], str]:
    """(command, parameter name or "") -> the row as README would hold it."""
    rows: dict[tuple[str, str], str] = {}
    for path, command in commands():
        summary = (command.help or "").strip().split("\n\n")[0]
        rows[(path, "")] = f"| `{path}` | | {_cell(summary)} |"
        for param in command.params:
            if param.name == "help":
                continue
            text = _cell(getattr(param, "help", None) or "")
            rows[(path, param_name(param))] = f"| `{path}` | {_cell(param_cell(param))} | {text} |"
    return rows


def readme_rows() -> set[tuple[str, str]]:
    """(command, parameter name or "") of every row of README's command table."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert START in text and END in text, f"README.md lacks the {START} ... {END} table"
    table = text.split(START, 1)[1].split(END, 1)[0]
    found: set[tuple[str, str]] = set()
    for line in table.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) < 2 or not cells[0].startswith("`lakewide"):
            continue
        flag = re.match(r"`(--?[\w-]+|[A-Z_]+)", cells[1])
        found.add((cells[0].strip("`"), flag.group(1) if flag else ""))
    return found


def test_readme_table_names_every_command_and_flag() -> None:
    expected = expected_rows()
    documented = readme_rows()
    missing = [row for key, row in expected.items() if key not in documented]
    stale = sorted(key for key in documented if key not in expected)
    assert not missing, "README.md's command table lacks these rows:\n" + "\n".join(missing)
    assert not stale, f"README.md's command table has rows for what the CLI lacks: {stale}"


if __name__ == "__main__":  # pragma: no cover - a helper for editing README
    for row in expected_rows().values():
        print(row)
