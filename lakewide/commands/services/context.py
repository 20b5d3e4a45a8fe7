"""What every command gets: the console, the global options and the model selection."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml

from lakewide.project.branch_name import check_branch_name
from lakewide.project.graph import select
from lakewide.project.manifest import Manifest, load_manifest
from lakewide.project.nodes import ModelNode
from lakewide.project.profiles_file import find_profiles_file, load_output
from lakewide.project.settings import load_project
from lakewide.vocabulary.errors import ConfigError


@dataclass
class Options:
    """The options given before the command (``lakewide --project-dir x run``)."""

    project_dir: Path
    profiles_dir: Path | None
    target: str | None
    variables: dict[str, Any]
    lock_wait: float = 30.0
    state_dir: Path | None = None  # --state: an earlier run's target/
    defer: bool = False  # --defer: ref() of a model not selected reads the state's table
    chosen: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # --select, --exclude
    branch: str | None = None  # --branch: the Iceberg branch of an environment

    def manifest(self) -> Manifest:
        """The project's models, sources and profile output for these options."""
        project = load_project(self.project_dir)
        profiles = find_profiles_file(project.root, self.profiles_dir)
        output = load_output(profiles, project.profile, self.target, project.root)
        if self.branch is not None:  # checked by its option (check_branch_name)
            output = output.model_copy(update={"branch": self.branch})
        manifest = load_manifest(project, output, variables=self.variables)
        from lakewide.commands.output.output import mode

        mode.project = project.name
        parsed.append(manifest)  # written to manifest.json as it is, never deferred
        if self.state_dir is not None:
            manifest = self._with_state(manifest)
        return manifest

    def _with_state(self, manifest: Manifest) -> Manifest:
        """``manifest`` compared with ``--state``; with ``--defer`` rendered again, the models
        not selected standing for the state's tables, and each seed read from production's
        table unless it changed (then loaded into and read from the target's own namespace:
        lakewide.artifacts.seed_state)."""
        from lakewide.artifacts.seed_state import deferred_seeds
        from lakewide.artifacts.state_compare import compare, deferred_relations, load_state

        assert self.state_dir is not None
        state = load_state(self.state_dir)
        manifest.state = compare(manifest, state)
        if not self.defer:
            return manifest
        select_, exclude = (_models_only(manifest, given) for given in self.chosen)
        names = selected(manifest, select_, exclude)
        deferred = deferred_relations(manifest, state, names)
        loads, instead = deferred_seeds(manifest, state.seeds, (state.catalog, state.namespace))
        if deferred or instead:  # else the state's tables are this target's
            again = load_manifest(
                manifest.project,
                manifest.output,
                variables=self.variables,
                deferred=deferred,
                tables_instead=instead,
            )
            again.state, manifest = manifest.state, again
        manifest.seed_tables = loads
        return manifest


#: the projects this invocation parsed; the first is written to target/manifest.json when the
#: command ends without a usage or configuration error (lakewide.cli.main)
parsed: list[Manifest] = []


pass_options = click.make_pass_decorator(Options)


def parse_vars(_ctx: click.Context, _param: click.Parameter, value: str | None) -> dict[str, Any]:
    """``--vars``: a YAML mapping, or a BadParameter saying what is wrong with it."""
    if not value:
        return {}
    try:
        data = yaml.safe_load(value)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "not valid YAML"
        raise click.BadParameter(
            f"not valid YAML{where} ({problem}); expected a YAML mapping, "
            "e.g. --vars '{day: 2024-05-01, limit: 10}'"
        ) from None
    if not isinstance(data, dict):
        raise click.BadParameter("expected a YAML mapping, e.g. --vars '{day: 2024-05-01}'")
    return data


def _sub_target(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        options = ctx.find_object(Options)
        assert options is not None, "the group's callback made the Options"
        options.target = value


def _sub_vars(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value:
        options = ctx.find_object(Options)
        assert options is not None, "the group's callback made the Options"
        options.variables = {**options.variables, **parse_vars(ctx, param, value)}


def profile_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--target`` and ``--vars`` after the subcommand too (``lakewide run --target prod``).

    Given after the subcommand they win over the same option given before it.
    """
    func = click.option(
        "--vars",
        callback=_sub_vars,
        expose_value=False,
        help="YAML mapping for var() (also accepted before the command).",
    )(func)
    return click.option(
        "--target",
        "-t",
        callback=_sub_target,
        expose_value=False,
        help="Target of the profile (also accepted before the command).",
    )(func)


def checked_branch(name: str, param_hint: str | None = None) -> str:
    """``name`` when it can name an environment's branch; else the usage error (exit 2) saying
    what is accepted. One check for ``--branch`` and ``branch drop NAME``."""
    try:
        return check_branch_name(name)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint=param_hint) from None


def _sub_branch(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        checked_branch(value)
        options = ctx.find_object(Options)
        assert options is not None, "the group's callback made the Options"
        options.branch = value


def branch_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--branch NAME``: the environment on Iceberg branch NAME of every model's table (the
    profile output's ``branch`` key, overridden)."""
    return click.option(
        "--branch",
        metavar="NAME",
        callback=_sub_branch,
        expose_value=False,
        help="Work on Iceberg branch NAME of each model's table (an environment): writes go "
        "to it, reads of tables that have it read it; main is untouched (default: the "
        "profile's branch key, else main).",
    )(func)


def selection(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--select/-s`` and ``--exclude`` (repeatable; space-separated values allowed)."""
    func = click.option("--exclude", multiple=True, help="Models to leave out (same syntax).")(func)
    return click.option(
        "--select",
        "-s",
        multiple=True,
        help="name, +name, name+, tag:x, path:models/x, state:modified (with --state), a,b",
    )(func)


def _models_only(manifest: Manifest, values: tuple[str, ...]) -> tuple[str, ...]:
    """The selectors of ``values`` that select models (``test``'s test names and ``test_type:``
    and ``test_name:`` selectors left out): what ``--defer`` runs or tests."""
    return tuple(
        part
        for part in _split(values)
        if not part.startswith(("test_type:", "test_name:"))
        and (":" in part or "," in part or part.strip("+") in manifest.models)
    )


def _split(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in value.split()]


def selected(manifest: Manifest, selectors: tuple[str, ...], exclude: tuple[str, ...]) -> list[str]:
    """The models ``--select``/``--exclude`` name, in run order."""
    root = manifest.project.root
    return select(manifest.models, _split(selectors), _split(exclude), root, manifest.state)


def runnable(manifest: Manifest, names: list[str]) -> list[str]:
    """``names``, each model's SQL parsed first: a syntax error ends every command that runs
    models as it ends ``compile`` (CompileError, exit 2, naming the file and line), before
    Spark starts, instead of failing that model once Spark runs. A model that compiled from
    the same inputs before (the fingerprints of ``manifest.json``) is not parsed again."""
    from lakewide.artifacts.manifest_json import compiled_before
    from lakewide.compiler.model.wide_model import parse_model_sql

    known = compiled_before(manifest)
    for name in names:
        if name not in known:
            parse_model_sql(manifest.models[name], widen=False)  # as written: a syntax check
    return names


def model_named(manifest: Manifest, model: str) -> ModelNode:
    """The model called ``model``; a ConfigError listing the models when there is none."""
    if model not in manifest.models:
        raise ConfigError(
            f"no model named '{model}'; models: {', '.join(sorted(manifest.models)) or 'none'}"
        )
    return manifest.models[model]


def state_options(func: Callable[..., Any], *, defer: bool = True) -> Callable[..., Any]:
    """``--state DIR`` (the ``state:`` selectors compare with it) and ``--defer`` (unless
    ``defer`` is false); put it above ``@pass_options`` on a command that takes ``@selection``."""

    @functools.wraps(func)
    def with_state(*args: Any, **kwargs: Any) -> Any:
        state, deferring = kwargs.pop("state"), kwargs.pop("defer", False)
        if deferring and state is None:
            raise click.UsageError(
                "--defer reads the models not selected from an earlier run's tables: "
                "give that run's target/ folder with --state DIR too"
            )
        options = click.get_current_context().find_object(Options)
        assert options is not None, "the group's callback made the Options"
        options.state_dir, options.defer = state, deferring
        options.chosen = (kwargs.get("select", ()), kwargs.get("exclude", ()))
        return func(*args, **kwargs)

    if defer:
        with_state = click.option(
            "--defer",
            is_flag=True,
            help="With --state: ref() of a model that is not selected reads the table the "
            "state's manifest.json records (read only, never written).",
        )(with_state)
    return click.option(
        "--state",
        metavar="DIR",
        type=click.Path(path_type=Path),
        help="The target/ folder of an earlier run (its manifest.json): what state:new and "
        "state:modified compare with.",
    )(with_state)
