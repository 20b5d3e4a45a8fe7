"""``lakewide build``: seed, then run, on one SparkSession."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from lakewide.commands.context import Options, pass_options, profile_options, selected, selection
from lakewide.commands.output import output_options
from lakewide.commands.run import RunFlags, run_and_report, run_args, run_options
from lakewide.commands.run_tag import refuse_taken, tag_options, tag_request
from lakewide.commands.seed import check_seeds, load_and_report
from lakewide.commands.session import with_adapter
from lakewide.manifest import Manifest

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


@click.command()
@selection
@run_options
@tag_options
@profile_options
@output_options
@pass_options
def build(
    options: Options,
    select: tuple[str, ...],
    exclude: tuple[str, ...],
    full_refresh: bool,
    threads: int,
    fail_fast: bool,
    tag: str | None,
    replace_tag: bool,
    no_tag: bool,
) -> None:
    """Seed, then run; each model's data tests run right after it."""
    flags = RunFlags(full_refresh, threads, fail_fast)
    tagging = tag_request(tag, replace_tag, no_tag)

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        from lakewide.build_tests import TestsAfterModels
        from lakewide.commands.test import report_test

        names = selected(manifest, select, exclude)
        refuse_taken(manifest, tagging, adapter)  # before the seeds are loaded
        load_and_report(manifest, adapter)
        tests = TestsAfterModels(manifest, adapter, names, report_test)
        args = run_args("build", options, select, exclude, flags)
        return run_and_report(
            manifest, adapter, names, flags, args, tests, options.lock_wait, tagging
        )

    def check(manifest: Manifest) -> None:
        selected(manifest, select, exclude)
        check_seeds(manifest)

    with_adapter(options, body, check=check)
