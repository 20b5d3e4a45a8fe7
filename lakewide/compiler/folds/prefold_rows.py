"""Rule: a deduplicate or first_row model's rows put together per key from per-source pre-folds
(``build_prefolds``), so that its bootstrap and combined batch grow with the columns, not
with sources x columns.

The union's fold keeps, per key, the whole row of its last (deduplicate) or first (first_row)
record in ``(sequence, source, arrival)`` order: the columns its source owns, NULL for the
others, and the record's place without its arrival as the row version ``__lw_v``
(``STRUCT(sequence fields, source index)``). Each source's pre-fold is that same fold over its
own rows and columns: its last (first) record's columns and version. The key's record is then
the one of the source whose version is the greatest (least): versions of different sources
differ in the source index, and a NULL sequence sorts first in both orders. So:

* the key universe is the ``UNION ALL`` of the folds' keys and versions, grouped by key, with
  the ``MAX`` (``MIN``) version: the winner's, computed once per key;
* each column is the value of the owner whose index the winning version names
  (``CASE __lw_v.b WHEN i THEN ...``), NULL when the winner does not own it, as the union's
  whole row has it; a column of several owners (shared) takes the winner's value;
* with row kinds, a deduplicate key is deleted when the winner's last record retracts
  (``__lw_deleted`` of its fold); first_row and ``ignore_delete`` drop retracts in each fold.
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.folds.fold_rows import Rows, helper
from lakewide.compiler.folds.prefold_columns import fold_name, joined, struct_field, typed
from lakewide.compiler.model.versions import BRANCH_FIELD, ROW_VERSION
from lakewide.compiler.model.wide_model import Branch, WideModel

WINNERS = "__lw_keys"
DELETED = helper("deleted")


def _retracts(model: WideModel, branch: Branch) -> bool:
    """Whether the source's fold folds retracts (and so says whether its record deletes)."""
    kind = model.row_kind is not None and model.row_kind in branch.owned
    return Rows(model, [], with_branch=False, has_row_kind=kind).retracts


def _winners(model: WideModel) -> exp.Select:
    """Per key of any fold, the version of the record the engine keeps (the greatest of the
    folds' versions for deduplicate, the least for first_row)."""
    keys = model.primary_key
    union: exp.Query | None = None
    for branch in model.branches:
        part = exp.select(
            *(exp.column(k) for k in keys), exp.column(ROW_VERSION), copy=False
        ).from_(fold_name(branch), copy=False)
        union = part if union is None else exp.union(union, part, distinct=False, copy=False)
    assert union is not None
    place = exp.Min if model.engine.keeps_first else exp.Max
    return (
        exp.select(
            *(exp.column(k) for k in keys),
            exp.alias_(place(this=exp.column(ROW_VERSION)), ROW_VERSION),
            copy=False,
        )
        .from_(union.subquery("v", copy=False), copy=False)
        .group_by(*(exp.column(k) for k in keys), copy=False)
    )


def _winner() -> exp.Expr:
    """The source index of the key's winning record."""
    return struct_field(exp.column(ROW_VERSION, table=WINNERS), BRANCH_FIELD)


def _from_winner(name: str, sources: list[Branch], default: exp.Expr | None = None) -> exp.Expr:
    """``name`` of the fold of the winning source among ``sources`` (else ``default``)."""
    ifs = [
        exp.If(this=exp.Literal.number(b.index), true=exp.column(name, table=fold_name(b)))
        for b in sources
    ]
    return exp.Case(this=_winner(), ifs=ifs, default=default)


def _projections(model: WideModel) -> dict[str, exp.Expr]:
    """Every output the union's fold has, by name: keys, values, deleted flag, version."""
    out: dict[str, exp.Expr] = {k: exp.column(k, table=WINNERS) for k in model.primary_key}
    for column in model.stored:
        if column not in out:
            value = typed(model, column, _from_winner(column, model.owners(column)))
            out[column] = exp.alias_(value, column, copy=False)
    deleting = [b for b in model.branches if _retracts(model, b)]
    if deleting:
        flag = _from_winner(DELETED, deleting, exp.false())
        out[DELETED] = exp.alias_(flag, DELETED, copy=False)
    out[ROW_VERSION] = exp.column(ROW_VERSION, table=WINNERS)
    return out


def rows_assembled(
    model: WideModel, folds: dict[int, exp.Select], *, helpers: bool = False
) -> exp.Select:
    """The per-source ``folds`` (``build_prefolds.source_fold``, one per branch) put together
    per key: the bootstrap's rows, deleted keys left out (``helpers``: a batch's rows, in the
    union's fold's columns, deleted keys flagged)."""
    projections = _projections(model)
    keys = model.primary_key
    names = [*keys, *(c for c in model.stored if c not in keys)]
    names += [n for n in (DELETED, ROW_VERSION) if n in projections]
    keep = None
    if not helpers and DELETED in projections:  # as the union's bootstrap: deleted keys go
        names = [*model.table_columns]
        keep = exp.not_(exp.func("COALESCE", projections[DELETED].this.copy(), exp.false()))
    select = exp.select(*(projections[n] for n in names), copy=False).from_(
        _winners(model).subquery(WINNERS, copy=False), copy=False
    )
    select = joined(model, select, WINNERS)
    if keep is not None:
        select = select.where(keep, copy=False)
    for branch in model.branches:
        select = select.with_(fold_name(branch), as_=folds[branch.index], copy=False)
    return select
