"""``lakewide retry``: re-run what failed or was skipped in the last run, with its flags."""

from __future__ import annotations

from pathlib import Path

import click

from lakewide.artifacts.run_results import read_run_results
from lakewide.commands.output.console import console
from lakewide.commands.output.output import output_options
from lakewide.commands.services.context import Options, pass_options, profile_options, runnable
from lakewide.commands.services.run_models import RunFlags, run_and_report
from lakewide.commands.services.spark_start import with_adapter
from lakewide.project.graph import topological_order
from lakewide.project.manifest import Manifest
from lakewide.project.settings import load_project

RETRIED = ("error", "skipped")


@click.command()
@profile_options
@output_options
@pass_options
def retry(options: Options) -> None:
    """Re-run the models that failed or were skipped in target/run_results.json, with the
    same flags (--full-refresh, --restate, --threads, --fail-fast, --target, --vars, --state,
    --defer, --branch)."""
    last = read_run_results(load_project(options.project_dir))
    args = last.get("args") or {}
    todo = {r["name"] for r in last["results"] if r.get("status") in RETRIED}
    if not todo:
        console.print("Nothing to retry: the last run had no failed or skipped model.")
        return
    if options.target is None:
        options.target = args.get("target")
    if args.get("branch"):  # a run on an environment's branch is retried on it
        options.branch = args["branch"]
    options.variables = {**(args.get("vars") or {}), **options.variables}
    if args.get("state"):  # the run compared with a state, and maybe deferred to it
        options.state_dir, options.defer = Path(args["state"]), bool(args.get("defer"))
        options.chosen = (tuple(args.get("select") or ()), tuple(args.get("exclude") or ()))
    flags = RunFlags(
        bool(args.get("full_refresh")),
        int(args.get("threads") or 1),
        bool(args.get("fail_fast")),
        args.get("restate"),  # a restate run's failed models are restated again
    )

    def names(manifest: Manifest) -> list[str]:
        gone = sorted(todo - set(manifest.models))
        if gone:
            console.print(f"no longer in the project, not retried: {', '.join(gone)}")
        return [n for n in topological_order(manifest.models) if n in todo]

    with_adapter(
        options,
        lambda m, a: run_and_report(m, a, names(m), flags, args, lock_wait=options.lock_wait),
        check=lambda m: runnable(m, names(m)),
    )
