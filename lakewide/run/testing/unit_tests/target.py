"""The target of a unit test: its columns, and the stored rows ``this`` gives it.

A ``this`` row is stored as the model's bootstrap would have stored it had one record of each value
set that value: the hidden version of a column (``__lw_v_<column>``,
docs/concepts/run-boundaries.md) is the row's own sequence fields and the lowest source index owning
the column (NULL, "never set", when the value is NULL); a row version (``__lw_v``) is the row's
sequence fields and source 0; an aggregation row count (``__lw_rows``) is 1. A hidden column given
in the row is stored as given.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from lakewide.compiler import CompiledModel
from lakewide.compiler.model.versions import (
    NON_NULL_PREFIX,
    PREFIX,
    ROW_COUNT,
    ROW_VERSION,
    version_struct,
)
from lakewide.project.nodes import Relation
from lakewide.run.testing.unit_tests.spec import Input, UnitTest
from lakewide.run.testing.unit_tests.values import ValueMismatch, convert, data_type, rows_query
from lakewide.spark.adapter import SparkAdapter
from lakewide.vocabulary.dialect import DIALECT

GIVEN = "__lw_given"


def target_columns(adapter: SparkAdapter, relation: Relation) -> dict[str, str]:
    """Column -> Spark type of the model's table (hidden columns included)."""
    return adapter.column_types(exp.select("*").from_(relation.table()))


def insert_stored_rows(
    adapter: SparkAdapter, compiled: CompiledModel, this: Input, test: UnitTest
) -> None:
    """One plain INSERT (no lakewide offsets) of ``this``'s rows into the bootstrapped table."""
    model = compiled.model
    assert model is not None, "`this` is given for key tables only"
    relation = compiled.node.relation
    types = target_columns(adapter, relation)
    given: list[str] = []
    for row in this.rows:
        given += [c for c in row if c not in given]
    unknown = [c for c in given if c not in types]
    if unknown:
        visible = ", ".join(c for c in types if not c.startswith("__lw_"))
        raise test.error(
            f"column '{unknown[0]}' of `this` is not a column of model {test.model}; its "
            f"columns: {visible}",
            f"{this.key}.rows",
        )
    values = [c for c in types if c in given or not c.startswith("__lw_")]
    dtypes = {c: data_type(types[c]) for c in values}
    rows = [
        [_value(row.get(c), dtypes[c], c, n, this, test) for c in values]
        for n, row in enumerate(this.rows)
    ]
    owners = {
        c: min(b.index for b in model.branches if c in b.owned)
        for c in model.stored
        if any(c in b.owned for b in model.branches)
    }

    def derived(column: str) -> exp.Expr:
        if column in values:
            return exp.column(column, table=GIVEN)
        target = data_type(types[column])
        if column == ROW_COUNT:
            return exp.cast(exp.Literal.number(1), target)
        if column.startswith(NON_NULL_PREFIX):  # one upstream row: its value, if any
            counted = exp.column(column[len(NON_NULL_PREFIX) :])
            return exp.cast(
                exp.case()
                .when(counted.is_(exp.null()), exp.Literal.number(0))
                .else_(exp.Literal.number(1)),
                target,
            )
        if column == ROW_VERSION:
            return exp.cast(version_struct(model.sequence, exp.Literal.number(0)), target)
        value = column[len(PREFIX) :]
        if column.startswith(PREFIX) and value in owners:
            version: exp.Expr
            if value in model.versions.plain:
                version = exp.column(model.sequence[0])
            else:
                version = version_struct(model.sequence, exp.Literal.number(owners[value]))
            return (
                exp.case()
                .when(exp.column(value).is_(exp.null()), exp.null())
                .else_(exp.cast(version, target))
            )
        return exp.cast(exp.null(), target)

    source = rows_query(dtypes, rows).subquery(GIVEN)
    select = exp.select(*(exp.alias_(derived(c), c) for c in types)).from_(source)
    adapter.sql(exp.insert(select, relation.table()))


def _value(
    value: Any, dtype: exp.DataType, column: str, n: int, this: Input, test: UnitTest
) -> Any:
    try:
        return convert(value, dtype)
    except ValueMismatch:
        raise test.error(
            f"value {value!r} is not a valid {dtype.sql(DIALECT).lower()} (the type of "
            f"column '{column}' of model {test.model})",
            f"{this.key}.rows[{n}].{column}",
        ) from None
