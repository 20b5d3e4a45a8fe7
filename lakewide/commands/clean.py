"""``lakewide clean``: remove the project's clean-targets (default: the target folder)."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from lakewide.commands.output.console import console
from lakewide.commands.services.context import Options, pass_options
from lakewide.project.profiles import warehouse_path
from lakewide.project.profiles_file import find_profiles_file, load_output
from lakewide.project.settings import Project, load_project
from lakewide.vocabulary.errors import ConfigError, LakewideError

KEY = "tool.lakewide.clean-targets"


def _warehouse(options: Options, project: Project) -> Path | None:
    """The profile's local hadoop warehouse; None when there is none or no profile loads (clean
    needs no profile)."""
    try:
        profiles = find_profiles_file(project.root, options.profiles_dir)
        output = load_output(profiles, project.profile, options.target, project.root)
    except LakewideError:
        return None
    folder = warehouse_path(output.warehouse) if output.catalog_type == "hadoop" else None
    return None if folder is None else folder.resolve()


def clean_paths(options: Options) -> list[Path]:
    """The folders to remove, checked: inside the project but not the project itself, and not
    holding the warehouse unless the warehouse folder itself is listed."""
    project = load_project(options.project_dir)
    targets = [p.resolve() for p in project.clean_targets]
    warehouse = _warehouse(options, project)
    for listed, path in zip(project.clean_targets, targets):
        shown = (
            str(listed.relative_to(project.root))
            if listed.is_relative_to(project.root)
            else str(listed)
        )
        if path == project.root or not path.is_relative_to(project.root):
            raise ConfigError(
                f"clean-targets: '{shown}' is not a folder inside the project "
                f"({project.root}); lakewide clean only removes folders inside it",
                path=project.root / "pyproject.toml",
                key=KEY,
            )
        if warehouse is not None and warehouse.is_relative_to(path) and warehouse not in targets:
            raise ConfigError(
                f"clean-targets: '{shown}' holds the warehouse ({warehouse}); list the "
                "warehouse folder itself in clean-targets to remove it too",
                path=project.root / "pyproject.toml",
                key=KEY,
            )
    return targets


@click.command()
@pass_options
def clean(options: Options) -> None:
    """Remove the clean-targets (default: target/); never the warehouse unless it is listed."""
    project_root = load_project(options.project_dir).root
    for path in clean_paths(options):
        shown = path.relative_to(project_root)
        if path.is_dir():
            shutil.rmtree(path)
            console.print(f"removed {shown}/")
        elif path.exists():
            path.unlink()
            console.print(f"removed {shown}")
        else:
            console.print(f"nothing to remove: {shown}")
