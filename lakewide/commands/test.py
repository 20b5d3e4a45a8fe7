"""``lakewide test``: the unit tests and the data tests of the selected models, on one
SparkSession (as ``dbt test`` since 1.8): the unit tests first (inline data, or a throwaway
catalog each), then the data tests (on the warehouse).

Selectors (``--select``/``--exclude``): model selectors (``name``, ``+name``, ``tag:x``,
``path:...``) choose the tests of those models; a test's own name chooses it;
``test_name:unique`` chooses every data test of that generic test (``singular`` for SQL files);
``test_type:data`` (or ``unit``) keeps only tests of that kind, as ``--resource-type test``
(``unit_test``) does; ``--exclude-resource-type`` leaves a kind out.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

from lakewide.commands.output.console import console
from lakewide.commands.services.context import (
    Options,
    branch_option,
    pass_options,
    profile_options,
    selection,
    state_options,
)
from lakewide.commands.services.spark_start import with_adapter
from lakewide.commands.services.tests import (
    chosen_tests,
    chosen_unit_tests,
    kinds_to_run,
    report_test,
    resource_type_options,
    summarize,
)
from lakewide.project.data_tests import DataTest
from lakewide.project.manifest import Manifest

if TYPE_CHECKING:
    from lakewide.run.testing.data_test_runner import TestResult
    from lakewide.run.testing.unit_tests import UnitTest
    from lakewide.spark.adapter import SparkAdapter


@click.command(name="test")
@selection
@resource_type_options
@branch_option
@profile_options
@state_options
@pass_options
def data_test_command(
    options: Options,
    select: tuple[str, ...],
    exclude: tuple[str, ...],
    resource_types: tuple[str, ...],
    exclude_resource_types: tuple[str, ...],
) -> None:
    """Run the unit tests, then the data tests, of the selected models (PASS / WARN / FAIL
    per test)."""
    kinds = kinds_to_run(select, exclude, resource_types, exclude_resource_types)

    def chosen(manifest: Manifest) -> tuple[list[UnitTest], list[DataTest]]:
        data = chosen_tests(manifest, select, exclude, kinds)  # checks every selector
        return chosen_unit_tests(manifest, select, exclude, kinds), data

    def precheck(manifest: Manifest) -> bool:
        if any(chosen(manifest)):
            return False
        console.print("Nothing to do: no tests selected.")
        return True

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        from lakewide.artifacts.run_results import write_run_results
        from lakewide.run.testing.data_test_runner import run_tests
        from lakewide.run.testing.unit_tests_before_models import run_as_test_results

        adapter.start()  # its own step: not part of the first test's time
        started = time.time()
        units, tests = chosen(manifest)

        def progress(result: TestResult) -> None:
            report_test(result)
            adapter.raise_if_stopped()  # Ctrl-C or a dead JVM ends the command at once

        results: list[TestResult] = []
        if units:
            with console.status(f"running {len(units)} unit test(s)..."):
                results += run_as_test_results(
                    manifest, adapter, units, options.variables, on_result=progress
                )
        if tests:
            with console.status(f"running {len(tests)} data test(s)..."):
                results += run_tests(manifest, adapter, tests, on_result=progress)
        write_run_results(manifest.project, results, started, spark_started=True)
        return summarize(results)

    with_adapter(options, body, check=chosen, precheck=precheck)
