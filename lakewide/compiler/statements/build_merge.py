"""Rule: one column-scoped ``MERGE INTO`` per source branch."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from lakewide.compiler.folds.build_prefolds import assembled, prefolds, source_fold, touched
from lakewide.compiler.folds.build_whens import whens
from lakewide.compiler.folds.fold_per_key import reduce_per_key
from lakewide.compiler.folds.fold_rows import Rows, S, T
from lakewide.compiler.model.ordering import BRANCH_COLUMN
from lakewide.compiler.model.wide_model import Branch, WideModel
from lakewide.compiler.statements.build_bootstrap import owned_branch, tagged_branch, union_all

#: the staged fold of every source with new rows in a run (one MERGE for all of them)
COMBINED_VIEW = "__lw_batch_all"


def batch_view(branch: Branch) -> str:
    """Name of the temporary view holding a branch's staged, pre-reduced batch."""
    return f"__lw_batch_{branch.index + 1}"


def _rows(model: WideModel, branch: Branch) -> Rows:
    columns = [c for c in model.stored if c in branch.owned]
    has_kind = model.row_kind is not None and model.row_kind in branch.owned
    return Rows(model, columns, with_branch=False, has_row_kind=has_kind, branch=branch.index)


def build_batch(model: WideModel, branch: Branch) -> exp.Select:
    """The branch's new rows, pre-reduced to one row per key with the engine's semantics.

    The executor materializes it (a MERGE source must be deterministic and the arrival order
    used for ties is not), then MERGEs from the materialized view.
    """
    rows = _rows(model, branch)
    carried = rows.columns + ([model.row_kind] if rows.has_row_kind and model.row_kind else [])
    columns = [c for c in model.columns if c in carried]
    return reduce_per_key(rows, branch.projected(columns, numbered=True))


def merge_source(model: WideModel, view: str) -> exp.Subquery:
    """The MERGE's USING clause: the staged view, filtered by ``k = k`` on every key column.

    The staged keys are never NULL, so the filter keeps every row. Spark counts an equality as
    a selective filter, and only a selective filter over a scan lets its optimizer build a
    runtime Bloom filter of the batch's keys and apply it to the target scan, so that only the
    matching target rows are shuffled and sorted for the MERGE's join instead of the whole
    table (docs/reference/defaults.md: the session settings this needs, ``lakewide.spark.runtime``).
    """
    keys = exp.and_(
        *(exp.EQ(this=exp.column(k), expression=exp.column(k)) for k in model.primary_key)
    )
    return exp.select(exp.Star()).from_(view).where(keys).subquery(S)


def keys_match(model: WideModel) -> exp.Expr:
    """A MERGE's ON: the target's and the staged row's primary keys are equal."""
    return exp.and_(
        *(
            exp.EQ(this=exp.column(k, table=T), expression=exp.column(k, table=S))
            for k in model.primary_key
        )
    )


def _merge(model: WideModel, view: str, rows: Rows) -> exp.Merge:
    return exp.Merge(
        this=model.node.relation.table(alias=T),
        using=merge_source(model, view),
        on=keys_match(model),
        whens=exp.Whens(expressions=whens(rows)),
    )


def build_merge(model: WideModel, branch: Branch) -> exp.Merge:
    """MERGE the branch's staged batch into only the columns the branch owns."""
    return _merge(model, batch_view(branch), _rows(model, branch))


def key_bounds(model: WideModel, branch: Branch | None) -> exp.Select:
    """``SELECT MIN(k), MAX(k)`` of the staged batch's first primary-key column (``branch``
    None: the combined batch)."""
    key = exp.column(model.primary_key[0])
    view = COMBINED_VIEW if branch is None else batch_view(branch)
    return exp.select(exp.Min(this=key), exp.Max(this=key.copy())).from_(view)


def _combined_rows(model: WideModel) -> Rows:
    return Rows(model, model.stored, with_branch=True, has_row_kind=model.row_kind is not None)


def build_combined_batch(
    model: WideModel, bind: Callable[[Branch, exp.Select], exp.Select] = lambda _, q: q
) -> exp.Select:
    """Every source's new rows folded per key together, as the bootstrap folds all sources
    (``bind`` puts each branch's views in), plus per source whether it touched the key. Each
    column is still set only from the records of its owners. A model whose sources fold apart
    (``build_prefolds``) is folded per source over the columns each owns, then put together
    per key."""
    if prefolds(model):
        folds = {
            b.index: source_fold(model, b, bind(b, owned_branch(model, b)), into_empty=False)
            for b in model.branches
        }
        return assembled(model, folds, helpers=True)
    tagged = [bind(b, tagged_branch(model, b)) for b in model.branches]
    folded = reduce_per_key(_combined_rows(model), union_all(tagged))
    for branch in model.branches:
        mine = exp.EQ(this=exp.column(BRANCH_COLUMN), expression=exp.Literal.number(branch.index))
        folded.select(
            exp.alias_(exp.func("BOOL_OR", mine), touched(branch.index)), append=True, copy=False
        )
    return folded


def combined_batch(model: WideModel) -> exp.Select:
    """The combined batch over every branch, unbound (what ``compile`` writes)."""
    return build_combined_batch(model)


def build_combined_merge(model: WideModel) -> exp.Merge:
    """MERGE the combined batch: every stored column, each by its own rule (one target scan,
    one commit for every source with new rows)."""
    return _merge(model, COMBINED_VIEW, _combined_rows(model))


def keys_touched(indexes: list[int]) -> exp.Select:
    """Per source, how many keys of the staged combined batch it touched."""
    return exp.select(*(exp.func("COUNT_IF", exp.column(touched(i))) for i in indexes)).from_(
        COMBINED_VIEW
    )


def narrow_merge(
    model: WideModel, statement: exp.Merge, low: exp.Expr, high: exp.Expr
) -> exp.Merge:
    """The MERGE with ``t.k BETWEEN low AND high`` added to its ON clause (``merge_filter``;
    the run plan passes ``:low`` / ``:high`` parameters, bound to the staged batch's key range
    when both are exact literals: ``lakewide.compiler.trees.placeholders.exact_literal``).

    Every batch key lies in the range, so the result is unchanged; Iceberg can then skip the
    target's files whose key statistics lie outside it.
    """
    narrowed = statement.copy()
    column = exp.column(model.primary_key[0], table=T)
    between = exp.Between(this=column, low=low, high=high)
    narrowed.set("on", exp.and_(narrowed.args["on"], between, copy=False))
    return narrowed
