"""Rule: the bootstrap plan, one pass over every source folded per key (no MERGE at all)."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from lakewide.compiler import versions
from lakewide.compiler.build_folds import folds, keep_key
from lakewide.compiler.build_prefolds import prefolded_bootstrap, prefolds
from lakewide.compiler.fold_rows import Rows, case
from lakewide.compiler.layout import create_table_as, partitions, sort_keys
from lakewide.compiler.number_rows import number_rows, row_number
from lakewide.compiler.ordering import BRANCH_COLUMN, POSITION_COLUMN, ROW_COLUMN, record_sort
from lakewide.compiler.trees import copy_without
from lakewide.compiler.wide_model import Branch, WideModel
from lakewide.errors import CompileError


def reduce_per_key(rows: Rows, source: exp.Query) -> exp.Select:
    """Fold ``source`` (rows aliased to model column names, with their arrival as
    ``__lw_row``: lakewide.compiler.number_rows) to one row per primary key.

    Rows whose primary key has a NULL are dropped here (a key table cannot hold them).
    ``__lw_row`` orders ties; a changelog read gives its change order first, so that a
    retract precedes the add of the same commit.
    """
    model = rows.model
    # builders run with copy=False: the trees are fresh, and copying them at every step is
    # most of the compile time
    numbered = exp.select(exp.Star(), copy=False).from_(
        source.subquery("b", copy=False), copy=False
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


def null_key_count(model: WideModel, source: exp.Query) -> exp.Select:
    """``SELECT COUNT(*)`` of the rows whose primary key has a NULL (they are rejected)."""
    any_null = exp.or_(*(exp.column(k).is_(exp.null()) for k in model.primary_key))
    return (
        exp.select(exp.alias_(exp.Count(this=exp.Star()), "rejected"))
        .from_(source.subquery("b", copy=False), copy=False)
        .where(any_null, copy=False)
    )


def branch_keys(
    model: WideModel, bind: Callable[[Branch, exp.Select], exp.Select] = lambda _, q: q
) -> exp.Query:
    """``UNION ALL`` of every branch's primary key columns (``bind`` puts each branch's
    views in): what :func:`null_key_count` counts, without the other columns."""
    return union_all([bind(b, b.projected(model.primary_key)) for b in model.branches])


def tagged_branch(
    model: WideModel, branch: Branch, *, numbered: bool = True, where: exp.Expr | None = None
) -> exp.Select:
    """The branch's SELECT aliased to the model's columns and tagged with its position and,
    when ``numbered``, its rows' arrival (``__lw_row``, taken where the driving table is read:
    lakewide.compiler.number_rows). ``where``: a condition on primary-key columns (model
    names) the branch's rows must meet, applied as the branch's own filter."""
    select = copy_without(branch.select, "expressions")
    if where is not None and not _computed_by_rows(branch, where):
        select.where(branch.on_owned(where), copy=False)
    select.set(
        "expressions",
        [
            exp.alias_((p.this if isinstance(p, exp.Alias) else p).copy(), name, copy=False)
            for name, p in zip(model.columns, branch.select.expressions)
        ],
    )
    select.select(
        exp.alias_(exp.Literal.number(branch.index), BRANCH_COLUMN, copy=False),
        append=True,
        copy=False,
    )
    if numbered:
        select.select(
            exp.alias_(number_rows(select), ROW_COLUMN, copy=False), append=True, copy=False
        )
    return select


def _computed_by_rows(branch: Branch, condition: exp.Expr) -> bool:
    """Whether a column ``condition`` names is an aggregate or window of the branch (a WHERE
    cannot hold it)."""
    return any(
        branch.owned[c.name].find(exp.AggFunc, exp.Window) is not None
        for c in condition.find_all(exp.Column)
        if c.name in branch.owned
    )


def union_all(selects: list[exp.Select]) -> exp.Query:
    """``UNION ALL`` of the given SELECTs (used as they are)."""
    union: exp.Query | None = None
    for select in selects:
        union = select if union is None else exp.union(union, select, distinct=False, copy=False)
    assert union is not None
    return union


def union_of_branches(model: WideModel) -> exp.Query:
    """Every branch aliased to the model's columns and tagged with its position."""
    return union_all([tagged_branch(model, b) for b in model.branches])


def bootstrap_query(model: WideModel, union: exp.Query | None = None) -> exp.Select:
    """All branches folded per key with the engine's rule (``union``: the branches' rows as
    :func:`union_of_branches` gives them, e.g. bound to pinned views and filtered). Without
    ``union``, a model whose sources can be folded apart is (``build_prefolds``)."""
    if union is None and prefolds(model):
        return prefolded_bootstrap(model)
    union = union_of_branches(model) if union is None else union
    rows = Rows(
        model,
        model.stored,
        with_branch=True,
        has_row_kind=model.row_kind is not None,
        into_empty=True,
    )
    folded = reduce_per_key(rows, union)
    keep = keep_key(rows)
    if (
        keep is None
        and not model.versions.non_null
        and not any(_is_helper(p) for p in folded.expressions)
    ):
        return folded
    final = exp.select(*(_final(model, c) for c in model.table_columns)).from_(
        folded.subquery("f", copy=False), copy=False
    )
    return final.where(keep, copy=False) if keep is not None else final


def _final(model: WideModel, column: str) -> exp.Expr:
    """A stored column of a folded key: a value no non-null input is left for is NULL."""
    if column not in model.versions.non_null:
        return exp.column(column)
    left = exp.GT(this=exp.column(versions.non_null_name(column)), expression=exp.Literal.number(0))
    return exp.alias_(case(left, exp.column(column), exp.null()), column, copy=False)


def _is_helper(projection: exp.Expr) -> bool:
    return projection.alias_or_name.startswith("__lw_")


def _sort_keys(model: WideModel) -> list[exp.Ordered]:
    keys = sort_keys(model.node)
    unknown = [k.this.name for k in keys if k.this.name not in model.stored]
    if unknown:
        raise CompileError(
            f"sort_by names {', '.join(unknown)}, not a stored column of the "
            f"model; expected one of {', '.join(model.stored)}",
            path=model.node.path,
            model=model.node.name,
            key="sort_by",
        )
    return keys


def check_layout(model: WideModel) -> None:
    """The CompileError ``build_bootstrap`` raises for the model's ``sort_by`` or
    ``partition_by``, raised without building the fold."""
    _sort_keys(model)
    partitions(model.node, model.table_columns)


def build_bootstrap(model: WideModel, *, replace: bool = False) -> exp.Create:
    """``CREATE TABLE <model> USING iceberg ... AS <fold of all sources>``.

    With ``sort_by`` the rows are written in that order (files then cover narrow key ranges).
    """
    keys = _sort_keys(model)
    query = bootstrap_query(model)
    if keys:
        query = query.order_by(*keys, copy=False)
    return create_table_as(model.node, query, replace=replace)


def build_refold(model: WideModel) -> exp.Insert:
    """``INSERT OVERWRITE <model> (<stored columns>) <fold of all sources>``: the bootstrap's
    rows written into the table's own history (a re-fold chosen by a run, where reading the
    sources' changes would cost more; its downstream models read it as an overwrite)."""
    query = build_bootstrap(model).expression
    columns = [exp.to_identifier(c) for c in query.named_selects]  # stored and helper columns
    target = exp.Schema(this=model.node.relation.table(), expressions=columns)
    return exp.Insert(this=target, expression=query, overwrite=True)
