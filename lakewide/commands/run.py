"""``lakewide run``: the selected models, in DAG order, on one SparkSession."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from lakewide.commands.context import (
    Options,
    console,
    pass_options,
    profile_options,
    selected,
    selection,
)
from lakewide.commands.session import with_adapter
from lakewide.manifest import Manifest

if TYPE_CHECKING:
    from lakewide.build_tests import TestsAfterModels
    from lakewide.executor import ModelResult
    from lakewide.spark.adapter import SparkAdapter


full_refresh_option = click.option(
    "--full-refresh", is_flag=True, help="Rebuild key tables with the bootstrap plan."
)


def _report(result: ModelResult) -> None:
    """One line for one model: status, plan, rows, keys read, seconds, message."""
    colour = {"success": "green", "error": "red", "skipped": "yellow"}[result.status]
    rows = "" if result.rows is None else f"{result.rows} rows"
    read = f"{result.rows_read} keys read" if result.plan == "incremental" else ""
    console.print(
        f"[{colour}]{result.status.upper():<7}[/{colour}] {result.name:<28} "
        f"{result.plan:<12} {rows:>12} {read:>16} {result.seconds:6.1f}s "
        f"{escape(result.message)}",
        soft_wrap=True,
    )


def run_and_report(
    manifest: Manifest,
    adapter: SparkAdapter,
    names: list[str],
    full_refresh: bool,
    tests: TestsAfterModels | None = None,
    lock_wait: float = 30.0,
) -> int:
    """Run ``names``, a line per model, then write run_results.json; the exit code (1 when a
    model failed or was skipped, or one of ``tests``, run after each model, failed).
    ``lock_wait``: seconds to wait for a model's lease."""
    from lakewide.executor import run_models
    from lakewide.lease import model_leases
    from lakewide.run_results import write_run_results

    started = time.time()
    with console.status("running models...") as status:

        def progress(result: ModelResult) -> None:
            # Ctrl-C or a dead JVM ends the run at once, before the next model
            adapter.raise_if_stopped(wait=2.0 if result.status == "error" else 0.0)
            status.update(f"ran {result.name}")
            _report(result)

        leases = model_leases(manifest.output, lock_wait)
        try:
            results = run_models(
                manifest,
                names,
                adapter,
                full_refresh=full_refresh,
                on_result=progress,
                leases=leases,
                after_model=tests.after_model if tests else None,
            )
        finally:
            leases.close()
    everything = tests.merged(results) if tests else results
    write_run_results(manifest.project, everything, started, spark_started=True)
    failed = [r for r in results if r.status == "error"]
    skipped = [r for r in results if r.status == "skipped"]
    console.print(
        f"Done. {len(results) - len(failed) - len(skipped)} ok, {len(failed)} failed, "
        f"{len(skipped)} skipped."
    )
    if tests:
        from lakewide.commands.test import summarize

        return max(summarize(tests.final), int(bool(failed or skipped)))
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
    results = [
        ModelResult(n, "success", plan="skipped", message="upstream unchanged") for n in names
    ]
    write_run_results(manifest.project, results, started, spark_started=False)
    console.print(
        f"Nothing to do: no new upstream snapshots for {len(names)} model(s) "
        "(checked Iceberg metadata; Spark not started)."
    )
    return True


@click.command()
@selection
@full_refresh_option
@profile_options
@pass_options
def run(
    options: Options, select: tuple[str, ...], exclude: tuple[str, ...], full_refresh: bool
) -> None:
    """Run models: bootstrap missing tables, MERGE each source's new rows into existing ones."""

    def precheck(manifest: Manifest) -> bool:
        return not full_refresh and _nothing_to_do(manifest, selected(manifest, select, exclude))

    with_adapter(
        options,
        lambda m, a: run_and_report(
            m, a, selected(m, select, exclude), full_refresh, lock_wait=options.lock_wait
        ),
        check=lambda m: selected(m, select, exclude),
        precheck=precheck,
    )
