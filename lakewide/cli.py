"""The ``lakewide`` command line; the single place errors become exit codes (0 / 1 / 2).

The group and its global options live here; each subcommand is a module of
``lakewide.commands``, registered below (those modules never import this one).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from lakewide import __version__
from lakewide.commands.output import output
from lakewide.commands.output.console import console
from lakewide.commands.services.context import Options, parse_vars, parsed
from lakewide.vocabulary.errors import LakewideError, RunInterrupted

# each command's module, imported only when the command is invoked or listed (a command's
# start-up then imports its own layers, not every other command's)
COMMANDS = {
    "init": "init:init",
    "debug": "debug:debug",
    "seed": "seed:seed",
    "load": "load:load",
    "compile": "compile:compile_",
    "run": "run:run",
    "build": "build:build",
    "ls": "ls:ls",
    "show": "show:show",
    "lineage": "lineage:lineage",
    "freshness": "freshness:freshness",
    "unit-test": "unit_test:unit_test",
    "test": "test:data_test_command",
    "retry": "retry:retry",
    "plan": "plan:plan",
    "publish": "publish:publish",
    "branch": "branch:branch",
    "diff": "diff:diff",
    "clean": "clean:clean",
    "maintain": "maintain:maintain",
    "docs": "docs:docs",
}


class _Commands(click.Group):
    """The command group, loading each command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            module, name = COMMANDS[cmd_name].split(":")
            command = getattr(importlib.import_module(f"lakewide.commands.{module}"), name)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands)
@click.version_option(__version__, prog_name="lakewide")
@click.option(
    "--project-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The project folder (holds pyproject.toml).",
)
@click.option(
    "--profiles-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding profiles.yml (default: the project, then ~/.lakewide).",
)
@click.option("--target", "-t", help="Target of the profile (default: the profile's target).")
@click.option("--vars", "variables", callback=parse_vars, help="YAML mapping for var().")
@click.option(
    "--lock-wait",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds to wait for another lakewide process on the same warehouse, or for a "
    "model's lease on a PostgreSQL catalog.",
)
@click.option("--quiet", "-q", is_flag=True, help="Only errors and the summary line.")
@click.option(
    "--log-format",
    type=click.Choice(output.LOG_FORMATS),
    default="text",
    show_default=True,
    help="json: one JSON event per line on stdout (dbt's fields), nothing else.",
)
@click.pass_context
def cli(
    ctx: click.Context,
    project_dir: Path,
    profiles_dir: Path | None,
    target: str | None,
    variables: dict[str, Any],
    lock_wait: float,
    quiet: bool,
    log_format: str,
) -> None:
    """lakewide: wide tables on Apache Iceberg from SQL models with merge engines."""
    ctx.obj = Options(project_dir, profiles_dir, target, variables, lock_wait)
    parsed.clear()  # what an earlier in-process invocation parsed is not this one's
    output.start(quiet, log_format)


_exit_hook: list[bool] = []  # set once per process


def main() -> None:
    """Console entry point: maps LakewideError to exit code 2 (config) or 1 (model failed);
    Ctrl-C prints "interrupted" and exits 130. Writes target/manifest.json on exit 0 and 1."""
    if not _exit_hook:
        # the process ends with the command: what it still holds is freed by reference counting
        # at exit, without the interpreter's last collection of every object (a tenth of a
        # second after pydantic, sqlglot and pyiceberg are imported: a run with nothing new
        # takes well under a second)
        atexit.register(gc.freeze)
        _exit_hook.append(True)
    code: int | str | None = 0
    try:
        _main()
    except SystemExit as done:
        code = done.code
        raise
    except BaseException:
        code = "crashed"
        raise
    finally:
        if code in (0, 1, None) and parsed:  # a usage or config error writes nothing
            from lakewide.artifacts.manifest_json import write_manifest_json

            write_manifest_json(parsed[0], output.mode.invocation_id)
        parsed.clear()
        output.reset()


def _main() -> None:
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
        with output.loud():
            console.print(f"[red]error:[/red] {escape(str(err))}", soft_wrap=True)
        sys.exit(err.exit_code)
