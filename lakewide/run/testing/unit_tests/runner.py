"""Run model unit tests on the embedded Spark. A ``bootstrap`` test runs on inline data
(``lakewide.run.testing.unit_tests.inline``: the model's query over temporary views of the given
rows, nothing written). An ``incremental`` test gets a throwaway Iceberg catalog in a temporary
folder, its inputs become tables there holding the given rows, and the model's real compiled
plans run against them (bootstrap over no rows, the stored rows of ``this``, then the
incremental MERGE). The project's warehouse is never touched."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from lakewide.compiler import CompiledModel
from lakewide.compiler.plans.upstream import compile_in
from lakewide.project.manifest import Manifest, load_manifest
from lakewide.project.nodes import ModelNode
from lakewide.run.testing.unit_tests.columns import check_columns, check_expected
from lakewide.run.testing.unit_tests.inline import inline_query, runs_inline
from lakewide.run.testing.unit_tests.inputs import Declared, declared_types
from lakewide.run.testing.unit_tests.spec import UnitTest
from lakewide.run.testing.unit_tests.tables import input_tables
from lakewide.run.testing.unit_tests.target import insert_stored_rows, target_columns
from lakewide.run.testing.unit_tests.values import (
    ValueMismatch,
    comparable,
    convert,
    data_type,
    shown,
)
from lakewide.spark.adapter import SparkAdapter
from lakewide.spark.scratch_catalog import scratch_catalog
from lakewide.vocabulary import events
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import ConfigError, LakewideError

HIDDEN = "__lw_"


@dataclass
class UnitTestResult:
    """What one unit test gave: ``pass``, ``fail`` (rows differ: ``message`` shows them) or
    ``error`` (the model failed to run)."""

    name: str
    model: str
    status: str
    message: str = ""
    seconds: float = 0.0
    plan: str = ""


def check_unit_tests(manifest: Manifest, tests: list[UnitTest]) -> None:
    """Raise ConfigError for a test whose given rows do not fit their columns (no Spark)."""
    declared = declared_types(manifest)
    for test in tests:
        node = manifest.models[test.model]
        check_columns(node, test)
        input_tables(manifest, node, test, declared)


def run_unit_tests(
    manifest: Manifest,
    adapter: SparkAdapter,
    tests: list[UnitTest],
    *,
    variables: dict[str, Any] | None = None,
    on_result: Callable[[UnitTestResult], None] | None = None,
) -> list[UnitTestResult]:
    """Run ``tests`` on ``adapter``'s SparkSession, one result each, in order.

    A ConfigError (a value that does not fit its column, an expected column the model does not
    have) is raised; a model that fails to run gives an ``error`` result.
    """

    declared = declared_types(manifest)
    results = []
    for test in tests:
        started = time.perf_counter()
        events.emit("UnitTestStart", f"unit test {test.name}", "debug", unit_test=test.name)
        try:
            compiled = compile_in(manifest, manifest.models[test.model])
            if runs_inline(compiled, test.plan):
                result = _run_inline(manifest, adapter, compiled, test, declared)
            else:
                result = _run_in_scratch(manifest, adapter, test, declared, variables)
        except ConfigError:
            raise
        except LakewideError as err:
            result = UnitTestResult(test.name, test.model, "error", str(err))
        finally:
            events.emit("UnitTestEnd", f"unit test {test.name} done", "debug", unit_test=test.name)
        result.plan = test.plan
        result.seconds = time.perf_counter() - started
        results.append(result)
        if on_result:
            on_result(result)
    return results


def _run_inline(
    manifest: Manifest,
    adapter: SparkAdapter,
    compiled: CompiledModel,
    test: UnitTest,
    declared: Declared,
) -> UnitTestResult:
    """The model's query over temporary views of the given rows: nothing is written."""
    node = manifest.models[test.model]
    with inline_query(adapter, compiled, input_tables(manifest, node, test, declared)) as query:
        frame = adapter.sql(query)  # one analysis: the columns' types and the rows
        types = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
        collected = [tuple(row) for row in frame.collect()]
    return _compare(types, collected, node, test)


def _run_in_scratch(
    manifest: Manifest,
    adapter: SparkAdapter,
    test: UnitTest,
    declared: Declared,
    variables: dict[str, Any] | None,
) -> UnitTestResult:
    """The model's real plans on a throwaway Iceberg catalog (the incremental plan)."""
    with scratch_catalog(adapter.spark) as (catalog, folder):
        output = manifest.output.model_copy(
            update={"catalog": catalog, "catalog_type": "hadoop", "warehouse": str(folder)}
        )
        scratch = load_manifest(manifest.project, output, variables=variables)
        return _run_one(scratch, SparkAdapter(output, spark=adapter.spark), test, declared)


# ---------------------------------------------------------------- one test
def _run_one(
    manifest: Manifest, adapter: SparkAdapter, test: UnitTest, declared: Declared
) -> UnitTestResult:
    from lakewide.run.models.key_table_run import KeyTableRun

    node = manifest.models[test.model]
    inputs = input_tables(manifest, node, test, declared)
    incremental = test.plan == "incremental"
    for table in inputs:
        table.create(adapter, with_rows=not incremental)
    compiled = compile_in(manifest, node)
    if compiled.kind.is_view:
        adapter.sql(compiled.bootstrap)
    elif compiled.kind.rebuilt_each_run:
        KeyTableRun(adapter, manifest, compiled, "unit-test").rebuild()
    else:
        adapter.ensure_namespace(node.relation)
        KeyTableRun(adapter, manifest, compiled, "unit-test").bootstrap(replace=False)
        if incremental:
            this = test.this
            if this is not None and this.rows:
                insert_stored_rows(adapter, compiled, this, test)
            for table in inputs:
                table.append(adapter)
            KeyTableRun(adapter, manifest, compiled, "unit-test").incremental()
    query = exp.select("*").from_(node.relation.table())
    _, collected = adapter.rows(query)
    return _compare(target_columns(adapter, node.relation), collected, node, test)


# ---------------------------------------------------------------- comparing
def _compare(
    types: dict[str, str], collected: list[tuple[Any, ...]], node: ModelNode, test: UnitTest
) -> UnitTestResult:
    """The produced rows (every column, in ``types``' order) against the expected ones."""
    visible = [c for c in types if not c.startswith(HIDDEN)]
    check_expected(test, visible)  # models whose SQL does not name its columns (SELECT *)
    named: list[str] = []
    for row in test.expect:
        named += [c for c in row if c not in named]
    columns = named or visible
    dtypes = {c: data_type(types[c]) for c in columns}
    expected = [
        tuple(_expected(row.get(c), dtypes[c], c, n, test) for c in columns)
        for n, row in enumerate(test.expect)
    ]
    at = {c: i for i, c in enumerate(types)}
    actual = [tuple(convert(row[at[c]], dtypes[c]) for c in columns) for row in collected]
    missing, extra = _difference(expected, actual)
    if not missing and not extra:
        return UnitTestResult(test.name, test.model, "pass")
    message = diff(columns, missing, extra, actual)
    return UnitTestResult(test.name, test.model, "fail", message + _unnamed(test, columns))


def _unnamed(test: UnitTest, columns: list[str]) -> str:
    """Where expect rows name different columns: the rule, and which rows leave which out."""
    left_out = [(n, [c for c in columns if c not in row]) for n, row in enumerate(test.expect)]
    shown = [f"rows[{n}] ({', '.join(cols)})" for n, cols in left_out if cols]
    if not shown:
        return ""
    return (
        "\n  (as in dbt, every column named in any expect row is compared in every row; a row "
        f"that does not name one expects NULL there: {'; '.join(shown)})"
    )


def _expected(value: Any, dtype: exp.DataType, column: str, n: int, test: UnitTest) -> Any:
    try:
        return convert(value, dtype)
    except ValueMismatch:
        raise test.error(
            f"expected value {value!r} is not a valid {dtype.sql(DIALECT).lower()} "
            f"(the type of column '{column}' of model {test.model})",
            f"{test.key}.expect.rows[{n}].{column}",
        ) from None


def _difference(
    expected: list[tuple[Any, ...]], actual: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Rows expected but not produced, rows produced but not expected (as multisets)."""
    want = Counter(_key(row) for row in expected)
    got = Counter(_key(row) for row in actual)
    return _only(expected, want - got), _only(actual, got - want)


def _key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(comparable(v) for v in row)


def _only(rows: list[tuple[Any, ...]], counts: Counter[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The first ``counts[key]`` rows of each key, in order."""
    left = Counter(counts)
    out = []
    for row in rows:
        if left[_key(row)] > 0:
            left[_key(row)] -= 1
            out.append(row)
    return out


def diff(
    columns: list[str],
    missing: list[tuple[Any, ...]],
    extra: list[tuple[Any, ...]],
    actual: list[tuple[Any, ...]],
) -> str:
    """The failure message: counts, then a table of the differing rows (``-`` expected but
    not produced, ``+`` produced but not expected)."""
    marked = [("-", r) for r in missing] + [("+", r) for r in extra]
    marked.sort(key=lambda m: (tuple((v is not None, shown(v)) for v in m[1]), m[0]))
    cells = [[shown(v) for v in row] for _, row in marked]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]

    def line(mark: str, values: list[str]) -> str:
        return f"  {mark} " + " | ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()

    head = (
        f"{len(missing)} expected row(s) missing, {len(extra)} unexpected row(s) "
        f"({len(actual)} row(s) produced); - expected but not produced, + produced but "
        "not expected:"
    )
    return "\n".join(
        [head, line(" ", list(columns))] + [line(m, c) for (m, _), c in zip(marked, cells)]
    )
