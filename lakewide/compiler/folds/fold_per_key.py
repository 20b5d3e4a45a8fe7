"""Rule: fold rows numbered in arrival order to one row per primary key (the bootstrap's and
every batch's reduction)."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.folds.build_folds import folds
from lakewide.compiler.folds.fold_rows import Rows
from lakewide.compiler.model.number_rows import row_number
from lakewide.compiler.model.ordering import POSITION_COLUMN, record_sort

ROWS_ALIAS = "b"


def reduce_per_key(rows: Rows, source: exp.Query) -> exp.Select:
    """Fold ``source`` (rows aliased to model column names, with their arrival as
    ``__lw_row``: lakewide.compiler.model.number_rows) to one row per primary key.

    Rows whose primary key has a NULL are dropped here (a key table cannot hold them).
    ``__lw_row`` orders ties; a changelog read gives its change order first, so that a
    retract precedes the add of the same commit.
    """
    model = rows.model
    # builders run with copy=False: the trees are fresh, and copying them at every step is
    # most of the compile time
    numbered = exp.select(exp.Star(), copy=False).from_(
        source.subquery(ROWS_ALIAS, copy=False), copy=False
    )
    prefilter = rows.prefilter()
    if prefilter is not None:
        numbered = numbered.where(prefilter, copy=False)
    # Shuffle the (numbered) rows by key; when the folds order records, sort each key's rows in
    # record order and number them along the sort: the folds then order by that one BIGINT
    # (Rows.order), which Spark aggregates by hash, without a partial-aggregate shuffle (the
    # rows are distributed already); ordering by the STRUCT of the sequence fields, source and
    # arrival made Spark sort-aggregate, comparing structs once per row and aggregate (1M keys
    # x 4 sources: the bootstrap took 1.7-1.8x the JVM CPU it takes now;
    # benchmarks/logs.md#folds-ordered-by-position). Folds that order nothing by position
    # (sums, sequence groups) skip the sort.
    keys = [exp.column(k) for k in model.primary_key]
    numbered.set("distribute", exp.Distribute(expressions=[k.copy() for k in keys]))
    aggregates, windows = folds(rows), rows.windows()
    rows_in: exp.Select = numbered
    if any(
        c.name == POSITION_COLUMN
        for e in (*aggregates, *(w for layer in windows for w in layer))
        for c in e.find_all(exp.Column)
    ):
        numbered.set(
            "sort",
            exp.Sort(
                expressions=[
                    *(exp.Ordered(this=k.copy(), desc=False, nulls_first=True) for k in keys),
                    *record_sort(model.sequence, with_branch=rows.with_branch),
                ]
            ),
        )
        position = exp.alias_(row_number(), POSITION_COLUMN)
        rows_in = exp.select(exp.Star(), position, copy=False).from_(
            numbered.subquery("n", copy=False), copy=False
        )
    for n, layer in enumerate(windows):
        rows_in = exp.select(exp.Star(), *layer, copy=False).from_(
            rows_in.subquery(f"w{n or ''}", copy=False), copy=False
        )
    key_not_null = exp.and_(
        *(exp.column(k).is_(exp.null()).not_() for k in model.primary_key), copy=False
    )
    return (
        exp.select(*keys, *aggregates, copy=False)
        .from_(rows_in.subquery("r", copy=False), copy=False)
        .where(key_not_null, copy=False)
        .group_by(*(k.copy() for k in keys), copy=False)
    )
