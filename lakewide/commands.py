"""The subcommands of ``lakewide`` (init, debug, seed, compile, run, build, ls, show)."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable

import click
from rich.table import Table
from sqlglot import exp

from lakewide.cli import Options, cli, console
from lakewide.compiler import compile_model
from lakewide.errors import ConfigError
from lakewide.graph import select
from lakewide.manifest import Manifest
from lakewide.scaffold import init_project

pass_options = click.make_pass_decorator(Options)


def selection(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--select/-s`` and ``--exclude`` (repeatable; space-separated values allowed)."""
    func = click.option("--exclude", multiple=True, help="Models to leave out (same syntax).")(func)
    return click.option("--select", "-s", multiple=True,
                        help="name, +name, name+, tag:x, path:models/x")(func)


def _split(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in value.split()]


def _selected(manifest: Manifest, selectors: tuple[str, ...], exclude: tuple[str, ...]) -> list[str]:
    return select(manifest.models, _split(selectors), _split(exclude), manifest.project.root)


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Create a new project in DIRECTORY."""
    for path in init_project(directory):
        console.print(f"created {path}")
    console.print(f"next: cd {directory} && lakewide build")


@cli.command(name="compile")
@selection
@pass_options
def compile_(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Write each model's statements to target/compiled/<model>/ (no JVM needed)."""
    manifest = options.manifest()
    out_root = manifest.project.target_path / "compiled"
    for name in _selected(manifest, select, exclude):
        compiled = compile_model(manifest.models[name])
        folder = out_root / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for file_name, text in compiled.files().items():
            (folder / file_name).write_text(text, encoding="utf-8")
        console.print(f"compiled {name} ({compiled.kind}) -> "
                      f"{manifest.project.relative(folder)} [{len(compiled.files())} file(s)]")


@cli.command(name="ls")
@selection
@pass_options
def ls(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """List models in run order with their materialization and relation."""
    manifest = options.manifest()
    for name in _selected(manifest, select, exclude):
        node = manifest.models[name]
        engine = node.config.merge_engine or node.config.kind
        console.print(f"{name}\t{engine}\t{node.relation}\t{manifest.project.relative(node.path)}")


@cli.command()
@pass_options
def debug(options: Options) -> None:
    """Check Java, the Iceberg jars, the profile and that the catalog answers."""
    from lakewide.engine import runtime
    from lakewide.engine.adapter import SparkAdapter

    manifest = options.manifest()
    java = runtime.find_java()
    console.print(f"java: {java.executable} (Java {java.major})")
    user_conf = manifest.output.spark_conf
    if "spark.jars.packages" in user_conf or "spark.jars" in user_conf:
        console.print("jars: from the profile's spark_conf")
    else:
        for jar in runtime.bundled_jars():
            console.print(f"jar: {jar}")
    console.print(f"profile: {manifest.project.profile} -> catalog {manifest.output.catalog} "
                  f"({manifest.output.catalog_type}, {manifest.output.warehouse or manifest.output.uri})")
    adapter = SparkAdapter(manifest.output, "lakewide-debug")
    try:
        adapter.spark.catalog.setCurrentCatalog(manifest.output.catalog)
        namespaces = len(adapter.spark.catalog.listDatabases())
        console.print(f"catalog {manifest.output.catalog}: reachable ({namespaces} namespaces)")
    finally:
        adapter.stop()
    console.print("[green]all checks passed[/green]")


def _seed(manifest: Manifest, adapter: Any) -> None:
    from lakewide.executor import SeedResult, load_seeds

    def report(seed: SeedResult) -> None:
        console.print(f"seed {seed.name:<24} {seed.rows:>8} rows -> {seed.relation} "
                      f"({seed.seconds:.1f}s)")
    load_seeds(manifest, adapter, report)


def _run(manifest: Manifest, adapter: Any, names: list[str], full_refresh: bool) -> int:
    from lakewide.executor import ModelResult, run_models

    def report(result: ModelResult) -> None:
        colour = {"success": "green", "error": "red", "skipped": "yellow"}[result.status]
        rows = "" if result.rows is None else f"{result.rows} rows"
        console.print(f"[{colour}]{result.status.upper():<7}[/{colour}] {result.name:<28} "
                      f"{result.plan:<12} {rows:>12} {result.seconds:6.1f}s "
                      f"{result.message}", soft_wrap=True)

    with console.status("running models...") as status:
        def progress(result: ModelResult) -> None:
            status.update(f"ran {result.name}")
            report(result)
        results = run_models(manifest, names, adapter, full_refresh=full_refresh,
                             on_result=progress)
    failed = [r for r in results if r.status != "success"]
    console.print(f"Done. {len(results) - len(failed)} ok, "
                  f"{sum(r.status == 'error' for r in results)} failed, "
                  f"{sum(r.status == 'skipped' for r in results)} skipped.")
    return 1 if failed else 0


def _with_adapter(options: Options, body: Callable[[Manifest, Any], int]) -> None:
    from lakewide.engine.adapter import SparkAdapter

    manifest = options.manifest()
    adapter = SparkAdapter(manifest.output)
    try:
        code = body(manifest, adapter)
    finally:
        adapter.stop()
    sys.exit(code)


@cli.command()
@pass_options
def seed(options: Options) -> None:
    """Load seeds/*.csv into Iceberg tables."""
    def body(manifest: Manifest, adapter: Any) -> int:
        _seed(manifest, adapter)
        return 0
    _with_adapter(options, body)


@cli.command()
@selection
@click.option("--full-refresh", is_flag=True, help="Rebuild key tables with the bootstrap plan.")
@pass_options
def run(options: Options, select: tuple[str, ...], exclude: tuple[str, ...],
        full_refresh: bool) -> None:
    """Run models: bootstrap missing tables, MERGE each source into existing ones."""
    _with_adapter(options, lambda m, a: _run(m, a, _selected(m, select, exclude), full_refresh))


@cli.command()
@selection
@click.option("--full-refresh", is_flag=True, help="Rebuild key tables with the bootstrap plan.")
@pass_options
def build(options: Options, select: tuple[str, ...], exclude: tuple[str, ...],
          full_refresh: bool) -> None:
    """Seed, then run."""
    def body(manifest: Manifest, adapter: Any) -> int:
        names = _selected(manifest, select, exclude)
        _seed(manifest, adapter)
        return _run(manifest, adapter, names, full_refresh)
    _with_adapter(options, body)


@cli.command()
@click.argument("model")
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(min=0))
@pass_options
def show(options: Options, model: str, limit: int) -> None:
    """Print a model's rows as a table (ordered by primary key)."""
    def body(manifest: Manifest, adapter: Any) -> int:
        if model not in manifest.models:
            raise ConfigError(f"no model named '{model}'; models: "
                              f"{', '.join(sorted(manifest.models))}")
        node = manifest.models[model]
        order = node.config.primary_key or []
        query = exp.select("*").from_(node.relation.table())
        if order:
            query = query.order_by(*(exp.column(c) for c in order))
        columns, rows = adapter.rows(query.limit(limit))
        table = Table(title=str(node.relation))
        for column in columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*("NULL" if v is None else str(v) for v in row))
        console.print(table)
        return 0
    _with_adapter(options, body)

