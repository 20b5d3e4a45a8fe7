"""Running selected models and reporting them: the service behind ``run``, ``build`` and
``retry`` (flags, options, progress, results, tags)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import click

from lakewide.commands.output.console import console
from lakewide.commands.output.progress import live, report, summary
from lakewide.commands.services.context import (
    Options,
    branch_option,
)
from lakewide.commands.services.restate import restate_option
from lakewide.commands.services.run_tag import AUTO_TAG, TagRequest
from lakewide.project.manifest import Manifest
from lakewide.vocabulary.errors import UsageError

if TYPE_CHECKING:
    from lakewide.run.models.outcomes import ModelResult
    from lakewide.run.schema.schema_steps import ModelSchema
    from lakewide.run.testing.tests_after_models import TestsAfterModels
    from lakewide.run.testing.unit_tests_before_models import UnitTestsBeforeModels
    from lakewide.spark.adapter import SparkAdapter


full_refresh_option = click.option(
    "--full-refresh", is_flag=True, help="Rebuild key tables with the bootstrap plan."
)


@dataclass
class RunFlags:
    """How ``run``, ``build`` and ``retry`` run the models (kept in run_results.json)."""

    full_refresh: bool = False
    threads: int = 1
    fail_fast: bool = False
    restate: str | None = None  # --restate PREDICATE (lakewide.commands.services.restate)

    def check(self, manifest: Manifest) -> None:
        """Refuse what the profile cannot run, before anything is written: ``--threads`` > 1
        over Spark Connect (lakewide.spark.connect: not supported yet)."""
        if self.threads > 1 and manifest.output.connect_url is not None:
            raise UsageError(
                "--threads above 1 is not supported over Spark Connect yet (connect_url in "
                "profiles.yml): run with --threads 1"
            )


def run_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--full-refresh``, ``--restate PREDICATE``, ``--threads N``, ``--fail-fast/-x``."""
    func = restate_option(func)
    func = click.option(
        "--fail-fast",
        "-x",
        is_flag=True,
        help="Stop at the first failed model; the models not started are skipped.",
    )(func)
    func = click.option(
        "--threads",
        metavar="N",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help="Models run at once: those with no ref path between them run concurrently.",
    )(func)
    return full_refresh_option(branch_option(func))


def check_branch(manifest: Manifest, names: list[str], full_refresh: bool) -> None:
    """Refuse what a run on the output's branch cannot do (lakewide.run.models.branch_run)."""
    if manifest.output.branch is None:
        return
    from lakewide.run.models.branch_run import check_branch_run
    from lakewide.state.readers import metadata_reader

    check_branch_run(manifest, names, full_refresh, metadata_reader(manifest.output))


def show_schema(schema: ModelSchema) -> None:
    """A key table's plan of schema changes, printed before it is applied."""
    for line in schema.lines():
        console.print(line, markup=False, highlight=False)


def plan_only(manifest: Manifest, adapter: SparkAdapter, names: list[str]) -> int:
    """``run --dry-run``: print each selected key table's schema changes; write nothing."""
    from lakewide.run.models.executor import run_models

    shown: list[ModelSchema] = []

    def show(schema: ModelSchema) -> None:
        shown.append(schema)
        show_schema(schema)

    run_models(manifest, names, adapter, on_schema=show, dry_run=True)
    console.print(
        f"Dry run: {len(shown)} of {len(names)} selected model(s) with schema changes; "
        "nothing was written."
    )
    return 0


def run_and_report(
    manifest: Manifest,
    adapter: SparkAdapter,
    names: list[str],
    flags: RunFlags,
    args: dict[str, Any] | None = None,
    tests: TestsAfterModels | None = None,
    lock_wait: float = 30.0,
    tagging: TagRequest = AUTO_TAG,
    unit_tests: UnitTestsBeforeModels | None = None,
    tag_checked: bool = False,
) -> int:
    """Run ``names`` with live progress, a line per model and the summary, then write
    run_results.json (with ``args``, what ``retry`` repeats); the exit code (1 when a model
    failed or was skipped, or one of ``tests``, run after each model, or of ``unit_tests``,
    run before it, failed). ``lock_wait``: seconds to wait for a model's lease; ``tagging``:
    the tag of the run's consistent snapshots (lakewide.state.tags), refused before anything
    runs when taken (unless ``tag_checked``: the caller did, before work of its own)."""
    import uuid

    from lakewide.artifacts.run_results import write_run_results
    from lakewide.commands.services.run_tag import refuse_taken, tag_run
    from lakewide.commands.services.tests import report_test
    from lakewide.run.models.executor import run_models
    from lakewide.run.models.jit import QUICK_JIT, merges_only
    from lakewide.state.lease import model_leases

    if not tag_checked:
        refuse_taken(manifest, tagging, adapter)
    if not adapter.started and merges_only(
        manifest, names, adapter.exists_without_spark, flags.full_refresh
    ):
        adapter.java_options.append(QUICK_JIT)  # a short run: C1 only (lakewide.run.models.jit)
    adapter.start()  # its own step: not part of the first model's time
    started = time.time()
    total = len(names)
    run_id = uuid.uuid4().hex
    with live(total) as shown:

        def on_result(result: ModelResult) -> None:
            # Ctrl-C or a dead JVM ends the run at once, before the next model
            adapter.raise_if_stopped(wait=2.0 if result.status == "error" else 0.0)
            shown.finish(result)
            for unit in unit_tests.results.get(result.name, []) if unit_tests else []:
                report_test(unit)
            report(result, shown.finished, total)

        leases = model_leases(manifest.output, lock_wait)
        try:
            results = run_models(
                manifest,
                names,
                adapter,
                full_refresh=flags.full_refresh,
                run_id=run_id,
                on_result=on_result,
                threads=flags.threads,
                fail_fast=flags.fail_fast,
                leases=leases,
                after_model=tests.after_model if tests else None,
                before_model=unit_tests.before_model if unit_tests else None,
                on_schema=show_schema,
                restate=flags.restate,
            )
        finally:
            leases.close()
    everything: list[Any] = []
    test_results: list[Any] = []
    for result in results:  # each model between its unit tests and its data tests
        before = unit_tests.of(result) if unit_tests else []
        after = tests.of(result) if tests else []
        everything += [*before, result, *after]
        test_results += [*before, *after]
    write_run_results(manifest.project, everything, started, spark_started=True, args=args)
    summary(results)
    failed = 1 if any(r.status != "success" for r in results) else 0
    failed = max(failed, tag_run(manifest, adapter, results, run_id, tagging))
    if tests or unit_tests:
        from lakewide.commands.services.tests import summarize

        return max(summarize(test_results), failed)
    return failed


def run_args(
    command: str,
    options: Options,
    select: tuple[str, ...],
    exclude: tuple[str, ...],
    flags: RunFlags,
) -> dict[str, Any]:
    """The invocation as run_results.json keeps it for ``retry``."""
    return {
        "command": command,
        "select": list(select),
        "exclude": list(exclude),
        "target": options.target,
        "vars": options.variables,
        # --state and --defer: retry defers as the run did (its selection, its state)
        "state": None if options.state_dir is None else str(options.state_dir.resolve()),
        "defer": options.defer,
        "branch": options.branch,
        **asdict(flags),
    }


def _nothing_to_do(manifest: Manifest, names: list[str]) -> bool:
    """True (and reported) when Iceberg metadata shows no model has new upstream data."""
    from lakewide.artifacts.run_results import write_run_results
    from lakewide.run.models.outcomes import ModelResult
    from lakewide.state.nothing_new import fresh_models

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
