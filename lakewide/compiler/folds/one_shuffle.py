"""The bootstrap's per-source folds put together by one shuffle instead of an S-way join.

Each fold's rows become its keys and one ``STRUCT`` of its own columns; the other sources'
structs are one NULL each (S NULLs a branch, not S x columns), and the UNION ALL of them is
grouped by the key (``build_prefolds.assembled`` uses it for aggregation and sequence groups).
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.folds.prefold_columns import fold_name
from lakewide.compiler.model.wide_model import WideModel


def one_shuffle(model: WideModel, select: exp.Select, keys_alias: str) -> exp.Select:
    """``select`` (the folds LEFT JOINed to the union of their keys, named ``keys_alias``)
    with the folds put together by one shuffle instead: each fold's rows as its keys and
    one ``STRUCT`` of its columns (NULL in the other sources' rows), UNION ALL, grouped by
    the key with each source's struct its one non-NULL value; a fold's column ``f.c`` is
    read as ``s.c``. Measured at 16 x 16, 20,000 keys (benchmarks/logs.md), JVM CPU of the
    bootstrap SELECT: aggregation 37.6-41.3 s with the joins, 14.7-15.8 s so (the JOIN
    rebuild 23.1 s); the S-way join of sorted folds is where the bootstrap's time went."""
    keys = model.primary_key
    names = {b.index: f"__lw_s{b.index}" for b in model.branches}
    union: exp.Query | None = None
    for branch in model.branches:
        cte = next(c for c in select.args["with_"].expressions if c.alias == fold_name(branch))
        outputs = [e.alias_or_name for e in cte.this.expressions]
        struct = exp.Struct(expressions=[exp.alias_(exp.column(n), n) for n in outputs])
        parts: list[exp.Expr] = [exp.column(k) for k in keys]
        for other in model.branches:
            value = struct if other.index == branch.index else exp.Null()
            parts.append(exp.alias_(value, names[other.index]))
        row = exp.select(*parts, copy=False).from_(fold_name(branch), copy=False)
        union = row if union is None else exp.union(union, row, distinct=False, copy=False)
    assert union is not None
    picked = [
        exp.alias_(exp.func("FIRST", exp.column(names[b.index]), exp.true()), names[b.index])
        for b in model.branches
    ]
    grouped = (
        exp.select(*(exp.column(k) for k in keys), *picked, copy=False)
        .from_(union.subquery("__lw_rows_of", copy=False), copy=False)
        .group_by(*(exp.column(k) for k in keys), copy=False)
    )
    by_fold = {fold_name(b): names[b.index] for b in model.branches}
    for column in list(select.find_all(exp.Column)):
        if column.table in by_fold:
            struct_of = exp.column(by_fold[column.table], table=keys_alias)
            column.replace(exp.Dot(this=struct_of, expression=exp.to_identifier(column.name)))
    select.set("joins", None)
    select.set("from_", exp.From(this=grouped.subquery(keys_alias, copy=False)))
    return select
