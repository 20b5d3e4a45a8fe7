"""The ``lakewide`` command line; the single place errors become exit codes (0 / 1 / 2)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import click
import yaml
from rich.console import Console
from rich.markup import escape

from lakewide import __version__
from lakewide.errors import LakewideError, RunInterrupted
from lakewide.manifest import Manifest, load_manifest
from lakewide.profiles import find_profiles_file, load_output
from lakewide.project import load_project

# Piped output (CI logs, `| less`) gets room for wide tables instead of 80 columns.
console = Console(highlight=False, soft_wrap=True,
                  width=None if sys.stdout.isatty() or "COLUMNS" in os.environ else 200)


@dataclass
class Options:
    project_dir: Path
    profiles_dir: Path | None
    target: str | None
    variables: dict[str, Any]
    lock_wait: float = 30.0

    def manifest(self) -> Manifest:
        project = load_project(self.project_dir)
        profiles = find_profiles_file(project.root, self.profiles_dir)
        output = load_output(profiles, project.profile, self.target, project.root)
        return load_manifest(project, output, variables=self.variables)


def _parse_vars(_ctx: click.Context, _param: click.Parameter, value: str | None) -> dict[str, Any]:
    if not value:
        return {}
    try:
        data = yaml.safe_load(value)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "not valid YAML"
        raise click.BadParameter(f"not valid YAML{where} ({problem}); expected a YAML mapping, "
                                 "e.g. --vars '{day: 2024-05-01, limit: 10}'") from None
    if not isinstance(data, dict):
        raise click.BadParameter("expected a YAML mapping, e.g. --vars '{day: 2024-05-01}'")
    return data


def _sub_target(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.find_object(Options).target = value


def _sub_vars(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value:
        options = ctx.find_object(Options)
        options.variables = {**options.variables, **_parse_vars(ctx, param, value)}


def profile_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--target`` and ``--vars`` after the subcommand too (``lakewide run --target prod``).

    Given after the subcommand they win over the same option given before it.
    """
    func = click.option("--vars", callback=_sub_vars, expose_value=False,
                        help="YAML mapping for var() (also accepted before the command).")(func)
    return click.option("--target", "-t", callback=_sub_target, expose_value=False,
                        help="Target of the profile (also accepted before the command).")(func)


@click.group()
@click.version_option(__version__, prog_name="lakewide")
@click.option("--project-dir", type=click.Path(file_okay=False, path_type=Path), default=".",
              show_default=True, help="The project folder (holds pyproject.toml).")
@click.option("--profiles-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder holding profiles.yml (default: the project, then ~/.lakewide).")
@click.option("--target", "-t", help="Target of the profile (default: the profile's target).")
@click.option("--vars", "variables", callback=_parse_vars, help="YAML mapping for var().")
@click.option("--lock-wait", default=30.0, show_default=True, type=click.FloatRange(min=0),
              help="Seconds to wait for another lakewide process on the same warehouse.")
@click.pass_context
def cli(ctx: click.Context, project_dir: Path, profiles_dir: Path | None, target: str | None,
        variables: dict[str, Any], lock_wait: float) -> None:
    """lakewide: wide tables on Apache Iceberg from SQL models with merge engines."""
    ctx.obj = Options(project_dir, profiles_dir, target, variables, lock_wait)


def main() -> None:
    """Console entry point: maps LakewideError to exit code 2 (config) or 1 (model failed);
    Ctrl-C prints "interrupted" and exits 130."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.ClickException as err:
        err.show()
        sys.exit(2)
    except (click.exceptions.Abort, RunInterrupted):
        click.echo("interrupted", err=True)
        sys.exit(130)
    except LakewideError as err:
        console.print(f"[red]error:[/red] {escape(str(err))}", soft_wrap=True)
        sys.exit(err.exit_code)


# Commands live in their own module and attach themselves to ``cli``.
from lakewide import commands as _commands  # noqa: E402,F401
