"""``lakewide unit-test``: the models' unit tests (``unit_tests:`` in models/*.yml) on the
embedded Spark (inline data; the incremental plan on a throwaway catalog)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from lakewide.commands.output.console import console
from lakewide.commands.services.context import Options, pass_options, profile_options, selection
from lakewide.commands.services.spark_start import with_adapter
from lakewide.project.manifest import Manifest

if TYPE_CHECKING:
    from lakewide.run.testing.unit_tests import UnitTest
    from lakewide.run.testing.unit_tests.runner import UnitTestResult
    from lakewide.spark.adapter import SparkAdapter


def selected_unit_tests(
    manifest: Manifest, select: tuple[str, ...], exclude: tuple[str, ...]
) -> list[UnitTest]:
    """The project's unit tests (checked) that ``--select``/``--exclude`` name."""
    from lakewide.run.testing.unit_tests import load_unit_tests
    from lakewide.run.testing.unit_tests.runner import check_unit_tests
    from lakewide.run.testing.unit_tests.select import select_unit_tests

    def split(values: tuple[str, ...]) -> list[str]:
        return [part for value in values for part in value.split()]

    tests = select_unit_tests(manifest, load_unit_tests(manifest), split(select), split(exclude))
    check_unit_tests(manifest, tests)
    return tests


def report(result: UnitTestResult, width: int = 40) -> None:
    """One line per test (names padded to ``width``); a failure's rows or an error's message
    below it."""
    colour = {"pass": "green", "fail": "red", "error": "red"}[result.status]
    console.print(
        f"[{colour}]{result.status.upper():<5}[/{colour}] {result.name:<{width}} "
        f"{result.model:<24} {result.plan:<12} {result.seconds:6.1f}s",
        soft_wrap=True,
    )
    if result.message:
        for line in result.message.splitlines():
            console.print(f"      {escape(line)}", soft_wrap=True)


@click.command("unit-test")
@selection
@profile_options
@pass_options
def unit_test(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Run the models' unit tests on inline data (the warehouse is not touched)."""

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        from lakewide.run.testing.unit_tests.runner import run_unit_tests

        tests = selected_unit_tests(manifest, select, exclude)
        if not tests:
            console.print("No unit tests found (unit_tests: in models/*.yml).")
            return 0
        width = max(len(t.name) for t in tests)
        adapter.start()  # its own step: not part of the first test's time
        with console.status(f"running {len(tests)} unit test(s)...") as status:

            def progress(result: UnitTestResult) -> None:
                adapter.raise_if_stopped(wait=2.0 if result.status == "error" else 0.0)
                status.update(f"ran {result.name}")
                report(result, width)

            results = run_unit_tests(
                manifest, adapter, tests, variables=options.variables, on_result=progress
            )
        failed = [r for r in results if r.status == "fail"]
        errors = [r for r in results if r.status == "error"]
        console.print(
            f"Done. {len(results) - len(failed) - len(errors)} passed, {len(failed)} failed, "
            f"{len(errors)} error(s)."
        )
        return 1 if failed or errors else 0

    with_adapter(
        options, body, check=lambda m: selected_unit_tests(m, select, exclude), writes=False
    )
