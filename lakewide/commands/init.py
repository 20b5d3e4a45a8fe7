"""``lakewide init``: a new project from the starter."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from lakewide.commands.output.console import console
from lakewide.project.scaffold import init_project


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Create a new project in DIRECTORY."""
    result = init_project(directory)
    for path in result.written:
        console.print(f"created {path}")
    for path in result.appended:
        console.print(f"appended the starter's missing lines to {path}")
    for path in result.kept:
        console.print(
            f"[yellow]kept[/yellow] {escape(str(path))} (it already existed; not "
            "overwritten: merge the starter's content by hand if needed)"
        )
    if any(p.name == "profiles.yml" for p in result.kept):
        name = directory.resolve().name.replace("-", "_")
        console.print(
            f"note: pyproject.toml uses profile '{name}'; make sure the kept "
            "profiles.yml defines it"
        )
    console.print(f"next: cd {directory} && lakewide build")
