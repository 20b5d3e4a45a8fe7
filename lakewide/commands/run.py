"""``lakewide run``: the selected models, in DAG order, on one SparkSession."""

from __future__ import annotations

import click

from lakewide.commands.output.output import output_options
from lakewide.commands.services.context import (
    Options,
    pass_options,
    profile_options,
    runnable,
    selected,
    selection,
    state_options,
)
from lakewide.commands.services.restate import check_restate
from lakewide.commands.services.run_models import (
    RunFlags,
    _nothing_to_do,
    check_branch,
    plan_only,
    run_and_report,
    run_args,
    run_options,
)
from lakewide.commands.services.run_tag import tag_options, tag_request
from lakewide.commands.services.spark_start import with_adapter
from lakewide.project.manifest import Manifest


@click.command()
@selection
@run_options
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print each key table's plan of schema changes (or refusal); run and write nothing.",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Keep running: refresh the models due by their freshness target, in DAG order, "
    "until SIGINT/SIGTERM.",
)
@click.option(
    "--interval",
    metavar="SECONDS",
    type=click.FloatRange(min=0.1),
    help="With --watch: seconds between polls of the upstream snapshots (default 30).",
)
@tag_options
@profile_options
@output_options
@state_options
@pass_options
def run(
    options: Options,
    select: tuple[str, ...],
    exclude: tuple[str, ...],
    full_refresh: bool,
    restate: str | None,
    threads: int,
    fail_fast: bool,
    dry_run: bool,
    watch: bool,
    interval: float | None,
    tag: str | None,
    replace_tag: bool,
    no_tag: bool,
) -> None:
    """Run models: bootstrap missing tables, MERGE each source's new rows into existing ones."""
    flags = RunFlags(full_refresh, threads, fail_fast, restate)
    tagging = tag_request(tag, replace_tag, no_tag)
    if interval is not None and not watch:
        raise click.UsageError("--interval applies to --watch")
    if restate is not None and (dry_run or watch):
        raise click.UsageError("--restate runs once and writes: drop --dry-run and --watch")
    if dry_run:
        if watch:
            raise click.UsageError("--dry-run writes nothing: drop --watch")
        with_adapter(
            options,
            lambda m, a: plan_only(m, a, selected(m, select, exclude)),
            check=lambda m: runnable(m, selected(m, select, exclude)),
        )
        return
    if watch:
        from lakewide.commands.services.watch import watch_models

        if full_refresh or threads > 1:
            raise click.UsageError(
                "--watch runs the due models one at a time, incrementally: "
                "drop --full-refresh and --threads"
            )
        if tagging.name:
            raise click.UsageError("--watch makes no tags: drop --tag")
        watch_models(
            options,
            select,
            exclude,
            interval or 30.0,
            run_args("run", options, select, exclude, flags),
        )
        return

    def precheck(manifest: Manifest) -> bool:
        # a named tag is made even when nothing changed: Spark starts for it
        return (
            not full_refresh
            and restate is None
            and not (tagging.name and not tagging.off)
            and _nothing_to_do(manifest, selected(manifest, select, exclude))
        )

    def check(manifest: Manifest) -> None:
        flags.check(manifest)
        names = runnable(manifest, selected(manifest, select, exclude))
        check_restate(manifest, names, restate, select, full_refresh=full_refresh)
        check_branch(manifest, names, full_refresh)

    with_adapter(
        options,
        lambda m, a: run_and_report(
            m,
            a,
            selected(m, select, exclude),
            flags,
            run_args("run", options, select, exclude, flags),
            lock_wait=options.lock_wait,
            tagging=tagging,
        ),
        check=check,
        precheck=precheck,
    )
