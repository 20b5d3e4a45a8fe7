"""Data tests as sqlglot trees: each test is a query returning its failing rows (dbt's contract).

The generic tests build the queries dbt's macros build (``unique``, ``not_null``,
``accepted_values``, ``relationships``; ``expression_is_true`` as in dbt_utils); a singular
test is its own query. Around them: the count of failing rows and the audit table that keeps
them (``store_failures``).
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.project.data_tests import TestQuery

MODEL_ALIAS = "__lw_model"


def _model(query: TestQuery) -> exp.Expr:
    """The model's rows, filtered by ``where`` when given, as ``__lw_model``."""
    if query.where is None:
        table = query.table.copy()
        table.set("alias", exp.TableAlias(this=exp.to_identifier(MODEL_ALIAS)))
        return table
    return (
        exp.select(exp.Star())
        .from_(query.table.copy())
        .where(query.where.copy())
        .subquery(MODEL_ALIAS)
    )


def _count() -> exp.Expr:
    return exp.Count(this=exp.Star())


def _unique(query: TestQuery) -> exp.Select:
    columns = [c.copy() for c in query.columns]
    select = exp.select(*columns, exp.alias_(_count(), "n_records")).from_(_model(query))
    if len(columns) == 1:  # dbt's unique: NULLs are not_null's business
        select = select.where(exp.Not(this=exp.Is(this=columns[0].copy(), expression=exp.null())))
    return select.group_by(*[c.copy() for c in columns]).having(
        exp.GT(this=_count(), expression=exp.Literal.number(1))
    )


def _not_null(query: TestQuery) -> exp.Select:
    nulls = [exp.Is(this=c.copy(), expression=exp.null()) for c in query.columns]
    return exp.select(exp.Star()).from_(_model(query)).where(exp.or_(*nulls))


def _accepted_values(query: TestQuery) -> exp.Select:
    (column,) = query.columns
    outside = exp.Not(this=exp.In(this=column.copy(), expressions=[v.copy() for v in query.values]))
    return (
        exp.select(exp.alias_(column.copy(), "value_field"), exp.alias_(_count(), "n_records"))
        .from_(_model(query))
        .where(outside)
        .group_by(column.copy())
    )


def _relationships(query: TestQuery) -> exp.Select:
    (column,) = query.columns
    assert query.to is not None and query.to_field is not None, "checked when the test was read"
    child = (
        exp.select(exp.alias_(column.copy(), "from_field"))
        .from_(_model(query))
        .where(exp.Not(this=exp.Is(this=column.copy(), expression=exp.null())))
        .subquery("child")
    )
    parent = (
        exp.select(exp.alias_(query.to_field.copy(), "to_field"))
        .from_(query.to.copy())
        .subquery("parent")
    )
    return (
        exp.select(exp.column("from_field", table="child"))
        .from_(child)
        .join(
            parent,
            on=exp.EQ(
                this=exp.column("from_field", table="child"),
                expression=exp.column("to_field", table="parent"),
            ),
            join_type="left",
        )
        .where(exp.Is(this=exp.column("to_field", table="parent"), expression=exp.null()))
    )


def _expression_is_true(query: TestQuery) -> exp.Select:
    assert query.expression is not None, "checked when the test was read"
    return (
        exp.select(exp.Star())
        .from_(_model(query))
        .where(exp.Not(this=exp.paren(query.expression.copy())))
    )


BUILDERS = {
    "unique": _unique,
    "not_null": _not_null,
    "accepted_values": _accepted_values,
    "relationships": _relationships,
    "expression_is_true": _expression_is_true,
}


def failing_rows(spec: TestQuery | exp.Query) -> exp.Query:
    """The rows that make the test fail (none: it passes): a generic test's query built from
    its parts, a singular test's own query as written."""
    if isinstance(spec, exp.Query):
        return spec
    return BUILDERS[spec.test](spec)


def count_failures(failing: exp.Query) -> exp.Select:
    """``SELECT COUNT(*) AS failures FROM (<failing rows>)``."""
    return exp.select(exp.alias_(_count(), "failures")).from_(failing.subquery("__lw_failures"))


def only_columns(failing: exp.Query, columns: list[str]) -> exp.Select:
    """The failing rows in ``columns`` only (an audit table leaves out lakewide's hidden
    ``__lw_`` columns, which a test's ``SELECT *`` of a key table returns)."""
    return exp.select(*(exp.column(c, quoted=True) for c in columns)).from_(
        failing.subquery("__lw_failures")
    )


def store_failures(failing: exp.Query, audit: exp.Table) -> exp.Create:
    """``CREATE OR REPLACE TABLE <audit> USING iceberg AS <failing rows>`` (one commit)."""
    return exp.Create(
        this=audit,
        kind="TABLE",
        replace=True,
        expression=failing,
        properties=exp.Properties(expressions=[exp.FileFormatProperty(this=exp.var("iceberg"))]),
    )
