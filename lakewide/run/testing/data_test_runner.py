"""Run data tests on the Spark adapter: count (or store) each test's failing rows and judge them
by its severity and thresholds, as dbt does."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlglot import exp

from lakewide.compiler.plans.upstream import compile_in
from lakewide.compiler.queries.data_test_queries import (
    count_failures,
    failing_rows,
    only_columns,
    store_failures,
)
from lakewide.project.data_tests import DataTest, threshold_holds
from lakewide.project.graph import topological_order
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.spark.adapter import SparkAdapter
from lakewide.vocabulary.errors import LakewideError


@dataclass
class TestResult:
    """What one test found. ``status``: pass | warn | fail | error (the test could not run) |
    skipped (a model it reads failed or was skipped). The shape every kind of test reports."""

    __test__ = False  # not a pytest class

    name: str
    status: str
    test_type: str = "data"
    resource_type: str = "test"
    model: str | None = None
    column: str | None = None
    severity: str = "error"
    failures: int | None = None
    seconds: float = 0.0
    message: str = ""
    stored_in: str | None = None  # the audit table holding the failing rows
    plan: str = ""  # unit tests: the model's plan they ran (bootstrap | incremental)

    @property
    def blocks(self) -> bool:
        """Whether the result fails the command (and, in ``build``, skips downstream models)."""
        return self.status in ("fail", "error")


def blocking(results: list[TestResult]) -> str | None:
    """``<test> failed`` (or ``could not run``) for the first result that fails the command;
    None when none does."""
    found = next((r for r in results if r.blocks), None)
    if found is None:
        return None
    return f"{found.name} {'failed' if found.status == 'fail' else 'could not run'}"


def audit_relation(manifest: Manifest, test: DataTest) -> Relation:
    """Where ``store_failures`` keeps a test's failing rows: ``<namespace>_audit.<test>`` in the
    profile's catalog (``config: schema`` names another namespace)."""
    output = manifest.output
    return Relation(output.catalog, test.config.schema_ or f"{output.namespace}_audit", test.name)


def _judge(test: DataTest, failures: int) -> tuple[str, str]:
    """dbt's rule: error when the severity is error and ``error_if`` holds, else warn when
    ``warn_if`` holds, else pass; the message says which threshold."""
    config = test.config
    if config.severity == "error" and threshold_holds(config.error_if, failures):
        return "fail", f"got {failures} failing row(s), configured to fail if {config.error_if}"
    if threshold_holds(config.warn_if, failures):
        return "warn", f"got {failures} failing row(s), configured to warn if {config.warn_if}"
    return "pass", ""


def run_test(
    adapter: SparkAdapter, manifest: Manifest, test: DataTest, counted: Counted | None = None
) -> TestResult:
    """Run one test: its failing rows are counted, or written to its audit table and counted
    there (replacing the last run's). ``counted``: the failing rows of tests counted together
    already (``count_together``), this one's taken from there when it holds it."""
    started = time.perf_counter()
    result = TestResult(
        test.name, "error", model=test.model, column=test.column, severity=test.config.severity
    )
    if counted is not None and test.name in counted.failures:
        result.failures = counted.failures[test.name]
        result.status, result.message = _judge(test, result.failures)
        result.seconds = counted.seconds
        return result
    try:
        failing: exp.Query = failing_rows(test.spec)
        if test.config.store_failures:
            audit = audit_relation(manifest, test)
            adapter.ensure_namespace(audit)
            adapter.sql(store_failures(_visible(adapter, failing), audit.table()))
            result.stored_in = str(audit)
            failing = exp.select(exp.Star()).from_(audit.table())
        _, rows = adapter.rows(count_failures(failing.copy()))
        result.failures = int(rows[0][0])
        result.status, result.message = _judge(test, result.failures)
        if result.stored_in and result.failures:
            result.message += f"; failing rows in {result.stored_in}"
    except LakewideError as err:
        result.message = str(err)
    result.seconds = time.perf_counter() - started
    return result


@dataclass
class Counted:
    """The failing rows of tests counted by one query (``count_together``): by test name,
    and the seconds of that query per test."""

    failures: dict[str, int]
    seconds: float = 0.0


def count_together(adapter: SparkAdapter, tests: list[DataTest]) -> Counted:
    """The failing rows of every test among ``tests`` that stores none, counted by one query
    (a ``UNION ALL`` of each test's count, tagged with its position): one statement, one
    analysis and one result stage where each test took its own. Empty when fewer than two
    such tests, or when the query fails (a test that cannot run): each test then runs on its
    own and reports its own error."""
    chosen = [t for t in tests if not t.config.store_failures]
    if len(chosen) < 2:
        return Counted({})
    started = time.perf_counter()
    try:
        parts = [
            count_failures(failing_rows(t.spec)).select(
                exp.alias_(exp.Literal.number(i), "__lw_test")
            )
            for i, t in enumerate(chosen)
        ]
        query: exp.Expression = parts[0]
        for part in parts[1:]:
            query = exp.union(query, part, distinct=False)
        _, rows = adapter.rows(query)
    except LakewideError:
        return Counted({})
    failures = {chosen[int(position)].name: int(count) for count, position in rows}
    return Counted(failures, (time.perf_counter() - started) / len(chosen))


#: lakewide's own columns of a key table (versions, row counts): never in an audit table
HIDDEN_PREFIX = "__lw_"


def _visible(adapter: SparkAdapter, failing: exp.Query) -> exp.Query:
    """The failing-rows query without lakewide's hidden columns (from its analysis: no rows
    read); the query itself when it has none."""
    columns = list(
        adapter.column_types(exp.select(exp.Star()).from_(failing.subquery("__lw_failures")))
    )
    visible = [c for c in columns if not c.startswith(HIDDEN_PREFIX)]
    if visible == columns or not visible:
        return failing.copy()
    return only_columns(failing.copy(), visible)


def register_session_views(
    manifest: Manifest, adapter: SparkAdapter, models: Iterable[str]
) -> None:
    """Session views (hadoop catalogs have no views) that the tests of ``models`` read, with the
    session views they read, created upstream first. A view that fails is left to the test
    reading it to report."""

    needed: set[str] = set()
    stack = list(models)
    while stack:
        name = stack.pop()
        node = manifest.models.get(name)
        if node is None or name in needed or node.relation.catalog:
            continue
        needed.add(name)
        stack.extend(node.refs)
    for name in topological_order(manifest.models):
        if name in needed:
            try:
                adapter.sql(compile_in(manifest, manifest.models[name]).bootstrap)
            except LakewideError:
                continue


def run_tests(
    manifest: Manifest,
    adapter: SparkAdapter,
    tests: list[DataTest],
    on_result: Callable[[TestResult], None] | None = None,
) -> list[TestResult]:
    """Run ``tests`` in order on one session; a result per test (an error, without running,
    when a model it reads was never built)."""
    register_session_views(manifest, adapter, {m for t in tests for m in t.depends_on})
    missing = _never_built(manifest, adapter, {m for t in tests for m in t.depends_on})
    counted = count_together(
        adapter, [t for t in tests if not any(m in missing for m in t.depends_on)]
    )
    results = []
    for test in tests:
        unbuilt = [m for m in test.depends_on if m in missing]
        if unbuilt:
            result = TestResult(
                test.name,
                "error",
                model=test.model,
                column=test.column,
                severity=test.config.severity,
                message=f"model {unbuilt[0]} was never built: `lakewide run -s {unbuilt[0]}`",
            )
        else:
            result = run_test(adapter, manifest, test, counted)
        results.append(result)
        if on_result:
            on_result(result)
    return results


def _never_built(manifest: Manifest, adapter: SparkAdapter, models: set[str]) -> set[str]:
    """The models among ``models`` whose table does not exist (session views aside)."""
    missing = set()
    for name in models:
        relation = manifest.models[name].relation
        try:
            if relation.catalog and not adapter.table_exists(relation):
                missing.add(name)
        except LakewideError:
            continue  # unreadable metadata: the test's own run reports it
    return missing


def skipped(test: DataTest, why: str) -> TestResult:
    """The result of a test not run because a model it reads failed or was skipped."""
    return TestResult(
        test.name,
        "skipped",
        model=test.model,
        column=test.column,
        severity=test.config.severity,
        message=why,
    )
