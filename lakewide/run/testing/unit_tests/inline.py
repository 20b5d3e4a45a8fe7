"""Unit tests on inline data, as dbt's unit tests run: the given rows of each input become a
temporary view over ``VALUES`` and the model's query is read from them, nothing is written.

The query is the one the model's first run commits (a view's ``SELECT``; a table's or key
table's bootstrap ``CREATE TABLE ... AS SELECT``, whose pinned upstream views are the inline
rows in the order given: arrival order). The ``incremental`` plan still needs real Iceberg
tables (the stored rows of ``this``, the new rows after a snapshot, the MERGE into the target),
and so does a model whose first run is more than one query (a snapshot model): those run on a
throwaway catalog (``lakewide.run.testing.unit_tests.runner``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

from sqlglot import exp

from lakewide.compiler import CompiledModel
from lakewide.compiler.plans import steps as p
from lakewide.compiler.plans.run_plan import temporary_view
from lakewide.compiler.trees import placeholders
from lakewide.compiler.trees.rewrite import replace_tables
from lakewide.run.testing.unit_tests.tables import InputTable
from lakewide.run.testing.unit_tests.values import rows_query
from lakewide.spark.adapter import SparkAdapter
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import ModelRunError

INPUT_VIEW = "__lw_unit_input_{}"


def _query(node: object) -> exp.Expression | None:
    return cast(exp.Expression, node) if isinstance(node, exp.Query) else None


def _named_tables(query: exp.Expression) -> list[str]:
    """Tables named with their namespace (not temporary views nor CTEs): the warehouse's."""
    return [t.sql(DIALECT) for t in query.find_all(exp.Table) if t.args.get("db")]


def _first_query(compiled: CompiledModel) -> exp.Expression | None:
    """The query the model's first run commits, over its pinned views; None when that run is
    more than one query (it needs the scratch catalog)."""
    if compiled.kind.is_view:
        query = compiled.bootstrap.args.get("expression")
        return _query(query)
    if not compiled.kind.has_query_plans or compiled.plans is None:
        return None
    for step in compiled.plans.bootstrap:
        if isinstance(step, p.Query):  # the count of rejected NULL keys: no rows to compare
            continue
        if isinstance(step, p.Commit) and not step.changelog:
            query = _query(step.statement.args.get("expression"))
            # it reads pinned views only; a table named outright needs the scratch catalog
            return None if query is None or _named_tables(query) else query
        return None
    return None


def runs_inline(compiled: CompiledModel, plan: str) -> bool:
    """Whether a test of this plan on this model runs on inline data."""
    return plan != "incremental" and _first_query(compiled) is not None


@contextmanager
def inline_query(
    adapter: SparkAdapter, compiled: CompiledModel, inputs: list[InputTable]
) -> Iterator[exp.Expression]:
    """Register the inputs as temporary views of their rows; yield the model's query over
    them; drop the views."""
    query = _first_query(compiled)
    assert query is not None, "runs_inline() said no"
    views: dict[str, str] = {}
    created: list[str] = []

    def register(view: str, rows: exp.Select) -> None:
        adapter.sql(temporary_view(view, rows))
        created.append(view)

    try:
        for n, table in enumerate(inputs, start=1):
            rows = rows_query(table.columns, table.rows)
            if not table.relation.catalog:  # a view model upstream: a session view of its name
                register(table.relation.name, rows)
                continue
            views[table.relation.key] = INPUT_VIEW.format(n)
            register(INPUT_VIEW.format(n), rows)
        if compiled.plans is None:  # a view: its SELECT reads the inputs by name
            query = replace_tables(query, views)
            named = _named_tables(query)
            if named:
                raise ModelRunError(
                    f"model {compiled.node.name} reads {named[0]}, which is none of its "
                    "ref()/source() inputs: a unit test reads only the rows it gives"
                )
            yield query
            return
        params: placeholders.Params = {}
        for read in compiled.plans.pins:
            register(read.view, exp.select("*").from_(views[read.table]))
            if read.at is not None:
                params[read.at] = None
        for check in compiled.plans.checks:  # the aggregates' types, as a run checks them
            check.check(adapter.column_types(placeholders.bind(check.probe, params)))
        yield placeholders.bind(query, params)
    finally:
        for view in created:
            adapter.spark.catalog.dropTempView(view)
