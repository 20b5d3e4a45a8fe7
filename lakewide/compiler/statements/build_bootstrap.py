"""Rule: the bootstrap plan, one pass over every source folded per key (no MERGE at all)."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from lakewide.compiler.folds.build_folds import keep_key
from lakewide.compiler.folds.build_prefolds import bootstraps_apart, prefolded_bootstrap
from lakewide.compiler.folds.fold_per_key import reduce_per_key
from lakewide.compiler.folds.fold_rows import Rows, case
from lakewide.compiler.model import versions
from lakewide.compiler.model.layout import create_table_as, partitions, sort_keys
from lakewide.compiler.model.number_rows import number_rows
from lakewide.compiler.model.ordering import BRANCH_COLUMN, ROW_COLUMN
from lakewide.compiler.model.wide_model import Branch, WideModel
from lakewide.compiler.trees.copying import copy_without
from lakewide.compiler.trees.rewrite import driving_table, table_key
from lakewide.vocabulary.errors import CompileError


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


def key_columns(model: WideModel, branch: Branch) -> tuple[str, ...] | None:
    """The columns of the branch's driving table that are its primary key as they are: a
    key is NULL only where its column is, so the files' statistics of that column can answer
    the NULL-key count. None where a key is computed, comes from another table or a subquery,
    or a RIGHT or FULL join, a pivot or a grouping could make it NULL."""
    select, source = branch.select, branch.select.args.get("from_")
    table = source.this if source is not None else None
    if (
        not isinstance(table, exp.Table)
        or table.args.get("pivots")
        or select.args.get("group")
        or table_key(table) != driving_table(select)
        or any(j.side in ("RIGHT", "FULL") for j in select.args.get("joins") or [])
    ):
        return None
    names = {table.name.lower(), table.alias_or_name.lower()}
    alone = not select.args.get("joins") and not select.args.get("laterals")
    columns: list[str] = []
    for key in model.primary_key:
        found = branch.owned.get(key)
        if not isinstance(found, exp.Column) or not (
            found.table.lower() in names if found.table else alone
        ):
            return None
        columns.append(found.name)
    return tuple(columns)


def tagged_branch(
    model: WideModel, branch: Branch, *, numbered: bool = True, where: exp.Expr | None = None
) -> exp.Select:
    """The branch's SELECT aliased to the model's columns and tagged with its position and,
    when ``numbered``, its rows' arrival (``__lw_row``, taken where the driving table is read:
    lakewide.compiler.model.number_rows). ``where``: a condition on primary-key columns (model
    names) the branch's rows must meet, applied as the branch's own filter.

    Every model column is projected (a NULL where the branch owns none): for the one fold of
    every branch's union only. Folds of a source on its own read :func:`owned_branch`."""
    select = _filtered(branch, where)
    select.set(
        "expressions",
        [
            exp.alias_((p.this if isinstance(p, exp.Alias) else p).copy(), name, copy=False)
            for name, p in zip(model.columns, branch.projections)
        ],
    )
    select.select(
        exp.alias_(exp.Literal.number(branch.index), BRANCH_COLUMN, copy=False),
        append=True,
        copy=False,
    )
    return _numbered(select) if numbered else select


def owned_branch(model: WideModel, branch: Branch, *, where: exp.Expr | None = None) -> exp.Select:
    """The branch's SELECT with the model columns it owns only (row kind included), in model
    order, aliased to the model's names, and its rows' arrival (``__lw_row``): what a fold of
    the source on its own reads (``build_prefolds``). ``where`` as :func:`tagged_branch`.

    The same rows and columns as :func:`tagged_branch`'s without its NULLs for the columns of
    other sources (and without the branch's position), built in the branch's own width."""
    select = _filtered(branch, where)
    select.set(
        "expressions",
        [
            exp.alias_(branch.owned[c].copy(), c, copy=False)
            for c in model.columns
            if c in branch.owned
        ],
    )
    # judged on every projection of the branch as written (a window, an aggregate)
    arrival = number_rows(select, branch.select.expressions)
    return select.select(exp.alias_(arrival, ROW_COLUMN, copy=False), append=True, copy=False)


def _filtered(branch: Branch, where: exp.Expr | None) -> exp.Select:
    """A copy of the branch's SELECT without its projections, with ``where`` applied."""
    select = copy_without(branch.select, "expressions")
    if where is not None and not _computed_by_rows(branch, where):
        select.where(branch.on_owned(where), copy=False)
    return select


def _numbered(select: exp.Select) -> exp.Select:
    return select.select(
        exp.alias_(number_rows(select), ROW_COLUMN, copy=False), append=True, copy=False
    )


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
    if union is None and bootstraps_apart(model):
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
