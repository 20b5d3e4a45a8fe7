"""``lakewide test``: the data tests of the selected models, on one SparkSession.

Selectors (``--select``/``--exclude``): model selectors (``name``, ``+name``, ``tag:x``,
``path:...``) choose the tests reading those models; a test's own name chooses it;
``test_name:unique`` chooses every test of that generic test (``singular`` for SQL files);
``test_type:data`` (or ``unit``) keeps only tests of that kind.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from lakewide.commands.context import Options, console, pass_options, profile_options, selection
from lakewide.commands.session import with_adapter
from lakewide.data_tests import DataTest
from lakewide.errors import ConfigError
from lakewide.graph import select, topological_order
from lakewide.manifest import Manifest

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter
    from lakewide.test_runner import TestResult

TEST_TYPES = ("data", "unit")
COLOURS = {"pass": "green", "warn": "yellow", "fail": "red", "error": "red", "skipped": "yellow"}


def report_test(result: TestResult) -> None:
    """One line per test: status, name, model, failing rows, seconds, message."""
    colour = COLOURS[result.status]
    failing = "" if result.failures is None else f"{result.failures} failing"
    console.print(
        f"[{colour}]{result.status.upper():<7}[/{colour}] {result.name:<48} "
        f"{result.model or '':<20} {failing:>12} {result.seconds:6.1f}s {escape(result.message)}",
        soft_wrap=True,
    )


def summarize(results: list[TestResult]) -> int:
    """Print the totals; 1 when a test failed or could not run (error severity), else 0."""
    counts = {s: sum(r.status == s for r in results) for s in COLOURS}
    console.print(f"Tests: {', '.join(f'{n} {s}' for s, n in counts.items())}.")
    return 1 if any(r.blocks for r in results) else 0


def _split(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in value.split()]


def _matching(manifest: Manifest, selectors: list[str]) -> set[str]:
    """The names of the tests the selectors (test_type: aside) choose."""
    tests = manifest.data_tests
    chosen: set[str] = set()
    model_selectors: list[str] = []
    kinds = sorted({t.test for t in tests.values()})
    for selector in selectors:
        if selector in tests:
            chosen.add(selector)
        elif selector.startswith("test_name:"):
            wanted = selector.split(":", 1)[1]
            found = {n for n, t in tests.items() if t.test == wanted}
            if not found:
                raise ConfigError(
                    f"selector '{selector}' matches no data test; tests in this project: "
                    f"{', '.join(kinds) or 'none'}"
                )
            chosen |= found
        elif selector.strip("+") in manifest.models or ":" in selector:
            model_selectors.append(selector)
        else:
            raise ConfigError(
                f"selector '{selector}' names no model and no data test; models: "
                f"{', '.join(sorted(manifest.models))}; also accepted: a test's name, "
                "test_name:unique, test_type:data|unit, +name, name+, tag:x, path:models/x"
            )
    if model_selectors:
        models = set(select(manifest.models, model_selectors, None, manifest.project.root))
        chosen |= {n for n, t in tests.items() if models & set(t.depends_on)}
    return chosen


def _types(selectors: list[str]) -> tuple[set[str], list[str]]:
    """The ``test_type:`` selectors' kinds, and the other selectors."""
    types = {s.split(":", 1)[1] for s in selectors if s.startswith("test_type:")}
    unknown = sorted(types - set(TEST_TYPES))
    if unknown:
        raise ConfigError(
            f"test_type:{unknown[0]} is not a kind of test; accepted: "
            + ", ".join(f"test_type:{t}" for t in TEST_TYPES)
        )
    return types, [s for s in selectors if not s.startswith("test_type:")]


def kinds_to_run(selectors: tuple[str, ...], exclude: tuple[str, ...]) -> set[str]:
    """The kinds of test (``data``, ``unit``) that ``--select``/``--exclude`` leave to run."""
    wanted, _ = _types(_split(selectors))
    unwanted, _ = _types(_split(exclude))
    return (wanted or set(TEST_TYPES)) - unwanted


def chosen_tests(
    manifest: Manifest, selectors: tuple[str, ...], exclude: tuple[str, ...]
) -> list[DataTest]:
    """The data tests ``--select``/``--exclude`` choose, in the run order of their models."""
    if "data" not in kinds_to_run(selectors, exclude):
        return []
    _, wanted = _types(_split(selectors))
    _, unwanted = _types(_split(exclude))
    tests = manifest.data_tests
    chosen = _matching(manifest, wanted) if wanted else set(tests)
    chosen -= _matching(manifest, unwanted)
    order = {name: i for i, name in enumerate(topological_order(manifest.models))}

    def position(test: DataTest) -> tuple[int, str]:
        return max((order[m] for m in test.depends_on), default=-1), test.name

    return sorted((tests[n] for n in chosen), key=position)


@click.command(name="test")
@selection
@profile_options
@pass_options
def data_test_command(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Run the data tests of the selected models (PASS / WARN / FAIL per test)."""

    def precheck(manifest: Manifest) -> bool:
        if chosen_tests(manifest, select, exclude):
            return False
        console.print("Nothing to do: no data tests selected.")
        return True

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        from lakewide.run_results import write_run_results
        from lakewide.test_runner import run_tests

        started = time.time()
        tests = chosen_tests(manifest, select, exclude)
        with console.status(f"running {len(tests)} data test(s)..."):

            def progress(result: TestResult) -> None:
                report_test(result)
                adapter.raise_if_stopped()  # Ctrl-C or a dead JVM ends the command at once

            results = run_tests(manifest, adapter, tests, on_result=progress)
        write_run_results(manifest.project, results, started, spark_started=True)
        return summarize(results)

    with_adapter(options, body, check=lambda m: chosen_tests(m, select, exclude), precheck=precheck)
