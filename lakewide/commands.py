"""The subcommands of ``lakewide`` (init, debug, seed, compile, run, build, ls, show)."""

from __future__ import annotations

import contextlib
import datetime
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable

import click
from rich.markup import escape
from rich.table import Table
from sqlglot import exp

from lakewide.cli import Options, cli, console, profile_options
from lakewide.upstream import compile_in
from lakewide.errors import ConfigError, ModelRunError, UsageError
from lakewide.graph import select
from lakewide.manifest import Manifest
from lakewide.metadata import warehouse_path
from lakewide.nodes import ModelNode
from lakewide.profiles import Output, check_warehouse_writable
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
    result = init_project(directory)
    for path in result.written:
        console.print(f"created {path}")
    for path in result.appended:
        console.print(f"appended the starter's missing lines to {path}")
    for path in result.kept:
        console.print(f"[yellow]kept[/yellow] {escape(str(path))} (it already existed; not "
                      "overwritten: merge the starter's content by hand if needed)")
    if any(p.name == "profiles.yml" for p in result.kept):
        name = directory.resolve().name.replace("-", "_")
        console.print(f"note: pyproject.toml uses profile '{name}'; make sure the kept "
                      "profiles.yml defines it")
    console.print(f"next: cd {directory} && lakewide build")


def _replace_folder(folder: Path, files: dict[str, str]) -> None:
    """Make ``folder`` hold exactly ``files`` (overwriting in place is cheaper than rmtree)."""
    if folder.is_dir():
        keep = {name.split("/", 1)[0] for name in files}
        for stale in folder.iterdir():
            if stale.name in keep:
                continue
            if stale.is_dir():
                shutil.rmtree(stale)
            else:
                stale.unlink()
    else:
        folder.mkdir(parents=True)
    for file_name, text in files.items():
        path = folder / file_name
        if "/" in file_name:
            path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")


@cli.command(name="compile")
@selection
@profile_options
@pass_options
def compile_(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Write each model's statements to target/compiled/<model>/ (no JVM needed)."""
    manifest = options.manifest()
    out_root = manifest.project.target_path / "compiled"
    for name in _selected(manifest, select, exclude):
        compiled = compile_in(manifest, manifest.models[name])
        folder = out_root / name
        files = compiled.files(in_place=True, plans=True)  # dropped right after
        _replace_folder(folder, files)
        console.print(f"compiled {name} ({compiled.kind}) -> "
                      f"{manifest.project.relative(folder)} [{len(files)} file(s)]")


@cli.command(name="ls")
@selection
@profile_options
@pass_options
def ls(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """List models in run order with their materialization and relation."""
    manifest = options.manifest()
    for name in _selected(manifest, select, exclude):
        node = manifest.models[name]
        engine = node.config.merge_engine or node.config.kind
        console.print(f"{name}\t{engine}\t{node.relation}\t{manifest.project.relative(node.path)}")


@cli.command()
@profile_options
@pass_options
def debug(options: Options) -> None:
    """Check Java, the Iceberg jars, the profile and that the catalog answers."""
    from lakewide.spark.adapter import SparkAdapter
    from lakewide.spark.jars import bundled_jars
    from lakewide.spark.java import find_java

    manifest = options.manifest()
    _check_output(manifest.output, writes=False)
    java = find_java()
    console.print(f"java: {java.executable} (Java {java.major})")
    user_conf = manifest.output.spark_conf
    if "spark.jars.packages" in user_conf or "spark.jars" in user_conf:
        console.print("jars: from the profile's spark_conf")
    else:
        for jar in bundled_jars():
            console.print(f"jar: {jar}")
    console.print(f"profile: {manifest.project.profile} -> catalog {manifest.output.catalog} "
                  f"({manifest.output.catalog_type}, {manifest.output.warehouse or manifest.output.uri})")
    adapter = SparkAdapter(manifest.output, "lakewide-debug")
    try:
        console.print(_catalog_check(manifest, adapter))
    finally:
        adapter.stop()
    console.print("[green]all checks passed[/green]")


def _catalog_check(manifest: Manifest, adapter: Any) -> str:
    """One line about the catalog; a local hadoop warehouse not created yet is fine (new
    projects have none until the first ``seed``/``build``)."""
    output = manifest.output
    adapter.start()
    local = warehouse_path(output.warehouse) if output.catalog_type == "hadoop" else None
    if local is not None and not local.is_dir():
        return (f"catalog {output.catalog}: warehouse {local} does not exist yet "
                "(the first `lakewide seed` or `lakewide build` creates it)")
    namespaces = adapter.namespaces()
    return f"catalog {output.catalog}: reachable ({len(namespaces)} namespaces)"


def _seed(manifest: Manifest, adapter: Any) -> None:
    """Load every seed; all changed seeds' values are checked first, so a bad value in one
    seed leaves every seed table as it was."""
    from lakewide.seeds import SeedResult, find_seeds, load_seeds

    for found in find_seeds(manifest.project, manifest.output):
        adapter.check_seed(found.path, found.relation, found.column_types)

    def report(seed: SeedResult) -> None:
        adapter.raise_if_stopped()
        rows = "unchanged" if seed.rows is None else f"{seed.rows} rows"
        console.print(f"seed {seed.name:<24} {rows:>12} -> {seed.relation} "
                      f"({seed.seconds:.1f}s)")
    load_seeds(manifest, adapter, report)


def _report(result: Any) -> None:
    colour = {"success": "green", "error": "red", "skipped": "yellow"}[result.status]
    rows = "" if result.rows is None else f"{result.rows} rows"
    read = f"{result.rows_read} keys read" if result.plan == "incremental" else ""
    console.print(f"[{colour}]{result.status.upper():<7}[/{colour}] {result.name:<28} "
                  f"{result.plan:<12} {rows:>12} {read:>16} {result.seconds:6.1f}s "
                  f"{escape(result.message)}", soft_wrap=True)


def _run(manifest: Manifest, adapter: Any, names: list[str], full_refresh: bool) -> int:
    from lakewide.executor import ModelResult, run_models
    from lakewide.run_results import write_run_results

    started = time.time()
    with console.status("running models...") as status:
        def progress(result: ModelResult) -> None:
            # Ctrl-C or a dead JVM ends the run at once, before the next model
            adapter.raise_if_stopped(wait=2.0 if result.status == "error" else 0.0)
            status.update(f"ran {result.name}")
            _report(result)
        results = run_models(manifest, names, adapter, full_refresh=full_refresh,
                             on_result=progress)
    write_run_results(manifest.project, results, started, spark_started=True)
    failed = [r for r in results if r.status == "error"]
    skipped = [r for r in results if r.status == "skipped"]
    console.print(f"Done. {len(results) - len(failed) - len(skipped)} ok, {len(failed)} failed, "
                  f"{len(skipped)} skipped.")
    return 1 if failed or skipped else 0


def _nothing_to_do(manifest: Manifest, names: list[str]) -> bool:
    """True (and reported) when Iceberg metadata shows no model has new upstream data."""
    from lakewide.executor import ModelResult
    from lakewide.freshness import fresh_models
    from lakewide.run_results import write_run_results

    started = time.time()
    fresh = fresh_models(manifest, names)
    if fresh is None or set(names) - fresh:
        return False
    results = [ModelResult(n, "success", plan="skipped", message="upstream unchanged")
               for n in names]
    write_run_results(manifest.project, results, started, spark_started=False)
    console.print(f"Nothing to do: no new upstream snapshots for {len(names)} model(s) "
                  "(checked Iceberg metadata; Spark not started).")
    return True


def _check_output(output: Output, writes: bool) -> None:
    """Profile settings Spark would fail on late: a catalog the bundled jars cannot run, and
    (for writing commands) a local warehouse that cannot be written. No JVM needed."""
    from lakewide.spark.jars import check_catalog_supported

    check_catalog_supported(output)
    if writes:
        check_warehouse_writable(output)


def _with_adapter(options: Options, body: Callable[[Manifest, Any], int], *,
                  check: Callable[[Manifest], Any] | None = None,
                  precheck: Callable[[Manifest], bool] | None = None,
                  writes: bool = True) -> None:
    """Run ``body`` with one SparkSession, holding the warehouse lock on hadoop catalogs.

    ``check`` raises on bad input before anything is locked, written or started.
    """
    from lakewide.spark.adapter import SparkAdapter
    from lakewide.lock import warehouse_lock

    manifest = options.manifest()
    if check is not None:
        check(manifest)
    output = manifest.output
    _check_output(output, writes)
    # hadoop catalogs: plain paths and file: URIs share one lock (lakewide.lock.lock_path)
    lock: Any = warehouse_lock(output, options.lock_wait) if writes else contextlib.nullcontext()
    with lock:
        if precheck is not None and precheck(manifest):
            sys.exit(0)
        adapter = SparkAdapter(output)
        try:
            code = body(manifest, adapter)
            adapter.raise_if_stopped()
        except Exception:
            adapter.raise_if_stopped(wait=2.0)  # Ctrl-C or a dead JVM caused it: say so
            raise
        finally:
            adapter.stop()
    sys.exit(code)


@cli.command()
@profile_options
@pass_options
def seed(options: Options) -> None:
    """Load seeds/*.csv into Iceberg tables."""
    def body(manifest: Manifest, adapter: Any) -> int:
        _seed(manifest, adapter)
        return 0
    _with_adapter(options, body, check=_check_seeds)


def _check_seeds(manifest: Manifest) -> None:
    """Seed files are checked (types files, UTF-8, headers) before Spark starts."""
    from lakewide.seeds import find_seeds

    find_seeds(manifest.project, manifest.output)


@cli.command()
@selection
@click.option("--full-refresh", is_flag=True, help="Rebuild key tables with the bootstrap plan.")
@profile_options
@pass_options
def run(options: Options, select: tuple[str, ...], exclude: tuple[str, ...],
        full_refresh: bool) -> None:
    """Run models: bootstrap missing tables, MERGE each source's new rows into existing ones."""
    def precheck(manifest: Manifest) -> bool:
        return not full_refresh and _nothing_to_do(manifest, _selected(manifest, select, exclude))
    _with_adapter(options, lambda m, a: _run(m, a, _selected(m, select, exclude), full_refresh),
                  check=lambda m: _selected(m, select, exclude), precheck=precheck)


@cli.command()
@selection
@click.option("--full-refresh", is_flag=True, help="Rebuild key tables with the bootstrap plan.")
@profile_options
@pass_options
def build(options: Options, select: tuple[str, ...], exclude: tuple[str, ...],
          full_refresh: bool) -> None:
    """Seed, then run."""
    def body(manifest: Manifest, adapter: Any) -> int:
        names = _selected(manifest, select, exclude)
        _seed(manifest, adapter)
        return _run(manifest, adapter, names, full_refresh)

    def check(manifest: Manifest) -> None:
        _selected(manifest, select, exclude)
        _check_seeds(manifest)
    _with_adapter(options, body, check=check)


@cli.command()
@click.argument("model")
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(min=0))
@profile_options
@pass_options
def show(options: Options, model: str, limit: int) -> None:
    """Print a model's rows as a table (ordered by primary key)."""
    def check(manifest: Manifest) -> None:
        _model_named(manifest, model)

    def body(manifest: Manifest, adapter: Any) -> int:
        node = manifest.models[model]
        _ensure_showable(manifest, node, adapter)
        order = node.config.primary_key or []
        query = exp.select("*").from_(node.relation.table())
        if order:
            query = query.order_by(*(exp.column(c) for c in order))
        columns, rows = adapter.rows(query.limit(limit))
        # lakewide's own columns (stored versions, row counts: README "Run boundaries") hidden
        shown = [i for i, c in enumerate(columns) if not c.startswith("__lw_")]
        table = Table(title=str(node.relation))
        for i in shown:
            table.add_column(columns[i])
        for row in rows:
            table.add_row(*("NULL" if row[i] is None else str(row[i]) for i in shown))
        console.print(table)
        return 0
    _with_adapter(options, body, check=check, writes=False)


def _model_named(manifest: Manifest, model: str) -> ModelNode:
    if model not in manifest.models:
        raise ConfigError(f"no model named '{model}'; models: "
                          f"{', '.join(sorted(manifest.models)) or 'none'}")
    return manifest.models[model]


def _ensure_showable(manifest: Manifest, node: ModelNode, adapter: Any) -> None:
    """A session view (hadoop catalog) is created for this session; a table must exist."""
    from lakewide.executor import run_models

    if node.config.kind == "view" and not node.relation.catalog:
        failed = [r for r in run_models(manifest, [node.name], adapter) if r.status != "success"]
        if failed and "TABLE_OR_VIEW_NOT_FOUND" in failed[0].message:
            raise UsageError(f"{failed[0].message}; build what view {node.name} reads first "
                             f"with `lakewide run -s +{node.name}`")
        if failed:  # the view itself is wrong: a failed model
            raise ModelRunError(failed[0].message)
        return
    if not adapter.table_exists(node.relation):
        raise UsageError(f"{node.relation} does not exist yet (never built); run "
                         f"`lakewide run -s {node.name}` (or `lakewide build`) first",
                         model=node.name)


@cli.command()
@click.argument("model")
@profile_options
@pass_options
def lineage(options: Options, model: str) -> None:
    """Which upstream snapshots each of MODEL's snapshots was built from."""
    from lakewide.metadata import metadata_reader
    from lakewide.offsets import OFFSETS, RUN_ID, last_commit, offset_relation

    manifest = options.manifest()
    node = _model_named(manifest, model)
    output = manifest.output
    reader = metadata_reader(output)
    if reader is not None:
        meta = reader.table_meta(node.relation)
    else:
        from lakewide.spark.adapter import SparkAdapter
        adapter = SparkAdapter(output, "lakewide-lineage")
        try:
            meta = adapter.table_meta(node.relation)
        finally:
            adapter.stop()
    if meta is None or last_commit(meta) is None:
        console.print(f"{node.relation}: no lakewide commits yet")
        return
    table = Table(title=f"lineage of {node.relation} (newest first)")
    for column in ("snapshot", "committed (UTC)", "operation", "run", "built from"):
        table.add_column(column)
    for snap in meta.ancestors():
        if OFFSETS not in snap.summary:
            continue
        offsets = json.loads(snap.summary[OFFSETS])
        upstream = "\n".join(f"{offset_relation(key)} @ {value}"
                             for key, value in sorted(offsets.items()))
        when = datetime.datetime.fromtimestamp(snap.timestamp_ms / 1000, datetime.timezone.utc)
        table.add_row(str(snap.id), when.strftime("%Y-%m-%d %H:%M:%S"), snap.operation,
                      snap.summary.get(RUN_ID, "")[:12], upstream)
    console.print(table)
