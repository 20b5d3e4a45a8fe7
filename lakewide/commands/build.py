"""``lakewide build``: seed, then run, on one SparkSession; each model's unit tests run right
before it and its data tests right after it (as ``dbt build``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from lakewide.commands.output.console import console
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
    check_branch,
    run_and_report,
    run_args,
    run_options,
)
from lakewide.commands.services.run_tag import refuse_taken, tag_options, tag_request
from lakewide.commands.services.seeds import check_seeds, load_and_report
from lakewide.commands.services.spark_start import with_adapter
from lakewide.commands.services.tests import RESOURCE_TYPES, chosen_unit_tests, kinds_to_run
from lakewide.project.manifest import Manifest
from lakewide.vocabulary.errors import ConfigError

if TYPE_CHECKING:
    from lakewide.run.testing.unit_tests import UnitTest
    from lakewide.spark.adapter import SparkAdapter


def _models_only(select: tuple[str, ...], exclude: tuple[str, ...]) -> tuple[str, ...]:
    """``--exclude`` without its ``test_type:`` selectors (they leave a kind of test out);
    ``test_type:`` in ``--select`` is refused (build selects models)."""
    if any(p.startswith("test_type:") for value in select for p in value.split()):
        raise ConfigError(
            "build --select takes models; to run one kind of test only use `lakewide test "
            "-s test_type:unit` (or data); to leave a kind out of the build: --exclude "
            "test_type:unit or --exclude-resource-type unit_test"
        )
    return tuple(p for value in exclude for p in value.split() if not p.startswith("test_type:"))


@click.command()
@selection
@click.option(
    "--exclude-resource-type",
    "exclude_resource_types",
    multiple=True,
    type=click.Choice(sorted(RESOURCE_TYPES)),
    help="Tests to leave out: test (data tests), unit_test.",
)
@run_options
@tag_options
@profile_options
@output_options
@state_options
@pass_options
def build(
    options: Options,
    select: tuple[str, ...],
    exclude: tuple[str, ...],
    exclude_resource_types: tuple[str, ...],
    full_refresh: bool,
    restate: str | None,
    threads: int,
    fail_fast: bool,
    tag: str | None,
    replace_tag: bool,
    no_tag: bool,
) -> None:
    """Seed, then run; each model's unit tests run right before it (a failing one skips it and
    its downstream models), its data tests right after it."""
    flags = RunFlags(full_refresh, threads, fail_fast, restate)
    tagging = tag_request(tag, replace_tag, no_tag)
    models_exclude = _models_only(select, exclude)
    kinds = kinds_to_run((), exclude, (), exclude_resource_types)

    def unit_tests(manifest: Manifest, names: list[str]) -> list[UnitTest]:
        return [t for t in chosen_unit_tests(manifest, (), (), kinds) if t.model in names]

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        from lakewide.commands.services.tests import report_test
        from lakewide.run.testing.tests_after_models import TestsAfterModels
        from lakewide.run.testing.unit_tests_before_models import UnitTestsBeforeModels

        names = selected(manifest, select, models_exclude)
        refuse_taken(manifest, tagging, adapter)  # before the seeds are loaded
        if manifest.output.branch is None:
            load_and_report(manifest, adapter)
        else:  # seed tables are not models: loading them would write production's
            console.print(
                f"Seeds not loaded on branch {manifest.output.branch}: models read the seed "
                "tables on main (`lakewide seed` without --branch loads them)."
            )
        tests = TestsAfterModels(manifest, adapter, names, report_test) if "data" in kinds else None
        units = UnitTestsBeforeModels(
            manifest, adapter, unit_tests(manifest, names), options.variables
        )
        args = run_args("build", options, select, exclude, flags)
        return run_and_report(
            manifest,
            adapter,
            names,
            flags,
            args,
            tests,
            lock_wait=options.lock_wait,
            tagging=tagging,
            unit_tests=units,
            tag_checked=True,
        )

    def check(manifest: Manifest) -> None:
        flags.check(manifest)
        names = runnable(manifest, selected(manifest, select, models_exclude))
        unit_tests(manifest, names)
        check_restate(manifest, names, restate, select, full_refresh=full_refresh)
        check_branch(manifest, names, full_refresh)
        check_seeds(manifest)

    with_adapter(options, body, check=check)
