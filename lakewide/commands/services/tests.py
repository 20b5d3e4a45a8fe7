"""Choosing and reporting data and unit tests (``test``, ``build``, ``run`` and ``compile``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from lakewide.commands.output.console import console
from lakewide.project.data_tests import DataTest
from lakewide.project.graph import select, topological_order
from lakewide.project.manifest import Manifest
from lakewide.vocabulary.errors import ConfigError

if TYPE_CHECKING:
    from lakewide.run.testing.data_test_runner import TestResult
    from lakewide.run.testing.unit_tests import UnitTest

TEST_TYPES = ("data", "unit")
#: dbt's resource types (``--resource-type``) -> the kind of test (``test_type:``)
RESOURCE_TYPES = {"test": "data", "unit_test": "unit"}
COLOURS = {"pass": "green", "warn": "yellow", "fail": "red", "error": "red", "skipped": "yellow"}


def report_test(result: TestResult) -> None:
    """One line per test: status, name, model, failing rows (a unit test: its plan), seconds,
    message; the lines of a multi-line message (a unit test's differing rows) below it."""
    colour = COLOURS[result.status]
    failing = result.plan if result.failures is None else f"{result.failures} failing"
    first, *rest = result.message.splitlines() or [""]
    console.print(
        f"[{colour}]{result.status.upper():<7}[/{colour}] {result.name:<48} "
        f"{result.model or '':<20} {failing:>12} {result.seconds:6.1f}s {escape(first)}",
        soft_wrap=True,
    )
    for line in rest:
        console.print(f"        {escape(line)}", soft_wrap=True)


def resource_type_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--resource-type`` and ``--exclude-resource-type`` (dbt's: ``test``, ``unit_test``)."""
    choice = click.Choice(sorted(RESOURCE_TYPES))
    func = click.option(
        "--exclude-resource-type",
        "exclude_resource_types",
        multiple=True,
        type=choice,
        help="Kinds of test to leave out: test (data tests), unit_test.",
    )(func)
    return click.option(
        "--resource-type",
        "resource_types",
        multiple=True,
        type=choice,
        help="Kinds of test to run (default both): test (data tests), unit_test.",
    )(func)


def summarize(results: list[TestResult]) -> int:
    """Print the totals; 1 when a test failed or could not run (error severity), else 0."""
    counts = {s: sum(r.status == s for r in results) for s in COLOURS}
    console.print(f"Tests: {', '.join(f'{n} {s}' for s, n in counts.items())}.")
    return 1 if any(r.blocks for r in results) else 0


def _split(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in value.split()]


def _unit_test_names(manifest: Manifest) -> set[str]:
    from lakewide.run.testing.unit_tests import load_unit_tests

    return {t.name for t in load_unit_tests(manifest)}


def _matching(manifest: Manifest, selectors: list[str]) -> set[str]:
    """The names of the data tests the selectors (test_type: aside) choose."""
    tests = manifest.data_tests
    chosen: set[str] = set()
    model_selectors: list[str] = []
    kinds = sorted({t.test for t in tests.values()})
    unit_names: set[str] | None = None  # read when a selector is nothing else
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
        elif selector.strip("+") in manifest.models or ":" in selector or "," in selector:
            model_selectors.append(selector)
        else:
            if unit_names is None:
                unit_names = _unit_test_names(manifest)
            if selector in unit_names:
                continue  # a unit test: chosen_unit_tests takes it
            raise ConfigError(
                f"selector '{selector}' names no model and no test; models: "
                f"{', '.join(sorted(manifest.models))}; also accepted: a data or unit test's "
                "name, test_name:unique, test_type:data|unit, +name, name+, tag:x, "
                "path:models/x"
            )
    if model_selectors:
        root = manifest.project.root
        models = set(select(manifest.models, model_selectors, None, root, manifest.state))
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


def kinds_to_run(
    selectors: tuple[str, ...],
    exclude: tuple[str, ...],
    resource_types: tuple[str, ...] = (),
    exclude_resource_types: tuple[str, ...] = (),
) -> set[str]:
    """The kinds of test (``data``, ``unit``) that ``--select``/``--exclude`` (``test_type:``)
    and ``--resource-type``/``--exclude-resource-type`` leave to run."""
    wanted, _ = _types(_split(selectors))
    unwanted, _ = _types(_split(exclude))
    kinds = wanted or set(TEST_TYPES)
    if resource_types:
        kinds &= {RESOURCE_TYPES[r] for r in resource_types}
    return kinds - unwanted - {RESOURCE_TYPES[r] for r in exclude_resource_types}


def chosen_unit_tests(
    manifest: Manifest,
    selectors: tuple[str, ...],
    exclude: tuple[str, ...],
    kinds: set[str] | None = None,
) -> list[UnitTest]:
    """The unit tests ``--select``/``--exclude`` choose (a unit test's name, or the tests of
    the models a model selector selects), checked (their rows fit their columns); none when
    ``kinds`` leaves out ``unit``."""
    from lakewide.run.testing.unit_tests import load_unit_tests
    from lakewide.run.testing.unit_tests.runner import check_unit_tests
    from lakewide.run.testing.unit_tests.select import select_unit_tests

    if "unit" not in (kinds_to_run(selectors, exclude) if kinds is None else kinds):
        return []
    tests = load_unit_tests(manifest)

    def for_units(values: tuple[str, ...]) -> tuple[list[str], bool]:
        """The selectors that can name unit tests; whether any selector was given."""
        _, tokens = _types(_split(values))
        data = manifest.data_tests
        kept = [t for t in tokens if t not in data and not t.startswith("test_name:")]
        return kept, bool(tokens)

    wanted, given = for_units(selectors)
    unwanted, _ = for_units(exclude)
    if given and not wanted:
        return []  # the selectors name data tests only
    chosen = select_unit_tests(manifest, tests, wanted, unwanted, require_match=False)
    check_unit_tests(manifest, chosen)
    return chosen


def chosen_tests(
    manifest: Manifest,
    selectors: tuple[str, ...],
    exclude: tuple[str, ...],
    kinds: set[str] | None = None,
) -> list[DataTest]:
    """The data tests ``--select``/``--exclude`` choose, in the run order of their models;
    none when ``kinds`` leaves out ``data``."""
    if "data" not in (kinds_to_run(selectors, exclude) if kinds is None else kinds):
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
