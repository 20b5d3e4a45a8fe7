"""``lakewide publish --branch NAME``: test a branch, then fast-forward main to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from lakewide.commands.output.console import console
from lakewide.commands.services.context import (
    Options,
    branch_option,
    pass_options,
    profile_options,
    selected,
    selection,
)
from lakewide.commands.services.spark_start import with_adapter
from lakewide.commands.services.tests import chosen_tests, report_test, summarize
from lakewide.project.manifest import Manifest
from lakewide.vocabulary.errors import UsageError

if TYPE_CHECKING:
    from lakewide.run.maintenance.publish import Move
    from lakewide.spark.adapter import SparkAdapter


@click.command()
@selection
@branch_option
@profile_options
@pass_options
def publish(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Run the data tests of the selected models against branch NAME; only if all pass,
    fast-forward each model's main to the branch, in DAG order. Exit code 1, main untouched,
    when a test fails or main moved since the branch was made."""

    def check(manifest: Manifest) -> None:
        if manifest.output.branch is None:
            raise UsageError(
                "publish needs the branch to publish: --branch NAME (or the profile "
                "output's branch key)"
            )
        selected(manifest, select, exclude)

    def show(move: Move) -> None:
        console.print(
            f"{move.action.upper():<11} {move.model:<24} {move.relation}: main "
            f"{move.state.main} -> {move.state.head}",
            markup=False,
            highlight=False,
        )

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        from lakewide.run.maintenance.publish import publish as publish_branch

        names = selected(manifest, select, exclude)
        tests = chosen_tests(manifest, select, exclude, {"data"})
        results, moves = publish_branch(
            manifest, adapter, names, tests, on_test=report_test, on_move=show
        )
        summarize(results)
        forwarded = sum(m.action == "forwarded" for m in moves)
        console.print(
            f"Published branch {manifest.output.branch}: {forwarded} table(s) fast-forwarded, "
            f"{len(moves) - forwarded} up to date."
        )
        return 0

    with_adapter(options, body, check=check)
