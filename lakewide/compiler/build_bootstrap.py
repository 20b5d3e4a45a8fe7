"""Rule: the bootstrap plan, one pass over every source folded per key (no MERGE at all)."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler import partial_update
from lakewide.compiler.layout import create_table_as
from lakewide.compiler.wide_model import BRANCH_COLUMN, ROW_COLUMN, WideModel


def reduce_per_key(model: WideModel, rows: exp.Query, columns: list[str], *,
                   with_branch: bool) -> exp.Select:
    """Fold ``rows`` (already aliased to model column names) to one row per primary key.

    Rows whose primary key has a NULL are dropped here (a key table cannot hold them).
    """
    numbered = (exp.select(exp.Star(), exp.alias_(exp.func("MONOTONICALLY_INCREASING_ID"),
                                                 ROW_COLUMN))
                .from_(rows.subquery("b")))
    order = partial_update.ordering(model, with_branch=with_branch)
    projections: list[exp.Expression] = []
    for column in columns:
        if column in model.primary_key:
            projections.append(exp.column(column))
        else:
            projections.append(exp.alias_(partial_update.fold(model, column, order), column))
    key_not_null = exp.and_(*(exp.column(k).is_(exp.null()).not_() for k in model.primary_key))
    return (exp.select(*projections).from_(numbered.subquery("r"))
            .where(key_not_null).group_by(*(exp.column(k) for k in model.primary_key)))


def bootstrap_query(model: WideModel) -> exp.Select:
    """All branches, each tagged with its position, folded per key with the engine's rule."""
    union: exp.Query | None = None
    for branch in model.branches:
        select = branch.select.copy()
        select.set("expressions", [
            *(exp.alias_(p.this.copy() if isinstance(p, exp.Alias) else p.copy(), name)
              for name, p in zip(model.columns, branch.select.expressions)),
            exp.alias_(exp.Literal.number(branch.index), BRANCH_COLUMN),
        ])
        union = select if union is None else exp.union(union, select, distinct=False)
    assert union is not None
    return reduce_per_key(model, union, model.columns, with_branch=True)


def build_bootstrap(model: WideModel, *, replace: bool = False) -> exp.Create:
    """``CREATE TABLE <model> USING iceberg ... AS <fold of all sources>``."""
    return create_table_as(model.node, bootstrap_query(model), replace=replace)
