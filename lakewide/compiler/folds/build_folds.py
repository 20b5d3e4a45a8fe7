"""Rule: the aggregates folding one key's rows with the merge engine's semantics, and which
folded keys become rows of a new table (deleted ones do not)."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.aggregates.aggregate_inputs import FoldInput, filtered, present
from lakewide.compiler.folds.fold_rows import (
    LAST_DELETE,
    Rows,
    and_all,
    any_not_null,
    count_where,
    helper,
)
from lakewide.compiler.model import versions
from lakewide.compiler.model.ordering import BRANCH_COLUMN
from lakewide.compiler.model.wide_model import Group
from lakewide.compiler.trees import placeholders


def _last_of(column: str, order: exp.Expr, keep: exp.Expr | None) -> exp.Expr:
    """``column`` of the last record (by ``order``) among those satisfying ``keep``."""
    last = exp.ArgMax(this=exp.column(column), expression=order.copy())
    return exp.alias_(filtered(last, keep), column, copy=False)


def folds(rows: Rows) -> list[exp.Expr]:
    """Aggregates folding the rows of one key (aliased; key columns are grouped on)."""
    model, engine = rows.model, rows.model.engine
    order = rows.order()
    out: list[exp.Expr] = []
    if engine.picks_rows:
        pick = exp.ArgMin if engine.keeps_first else exp.ArgMax
        for column in rows.values():
            out.append(exp.alias_(pick(this=exp.column(column), expression=order.copy()), column))
        if rows.retracts:
            out.append(
                exp.alias_(
                    exp.ArgMax(this=rows.retract(), expression=order.copy()), helper("deleted")
                )
            )
        if model.versions.row:
            place = exp.Min if engine.keeps_first else exp.Max
            out.append(exp.alias_(place(this=rows.version()), versions.ROW_VERSION))
        return out
    live = rows.live()
    if rows.removing_groups() and not rows.into_empty:
        # a MERGE needs both: the fold of every record (the batch's removing delete loses to
        # the stored row) and that of the records after it (it wins: they make a new row)
        out += _value_folds(rows, None)
        out += [after(e) for e in _value_folds(rows, live)]
    else:
        out += _value_folds(rows, live)
    out += _removal_helpers(rows, live)
    if model.versions.count:
        out.append(exp.alias_(_row_count(rows), versions.ROW_COUNT))
    return out


def _row_count(rows: Rows) -> exp.Expr:
    """How many upstream rows the batch adds to the key: +1 per row, -1 per retract, 0 for
    the rows of a source read again in full (a new column of it: they were counted)."""
    sign: exp.Expr = exp.Literal.number(1)
    if rows.retracts:  # an upstream row deleted or updated away counts -1
        sign = exp.If(this=rows.retract(), true=exp.Literal.number(-1), false=exp.Literal.number(1))
    if rows.into_empty:
        return exp.Count(this=exp.Star()) if not rows.retracts else exp.Sum(this=sign)
    if rows.branch is not None:
        again: exp.Expr = placeholders.param(placeholders.rereading(rows.branch))
    else:  # the combined batch: each row's own source
        again = exp.Case(
            ifs=[
                exp.If(
                    this=exp.EQ(
                        this=exp.column(BRANCH_COLUMN), expression=exp.Literal.number(b.index)
                    ),
                    true=placeholders.param(placeholders.rereading(b.index)),
                )
                for b in rows.model.branches
            ],
            default=exp.false(),
        )
    return exp.Sum(this=exp.If(this=again, true=exp.Literal.number(0), false=sign))


def after_name(name: str) -> str:
    """The name of a folded column over the records after the batch's last removing delete."""
    return helper("after_" + name.removeprefix(helper("")))


def after(projection: exp.Expr) -> exp.Expr:
    """``projection`` renamed with :func:`after_name`."""
    assert isinstance(projection, exp.Alias)
    return exp.alias_(projection.this, after_name(projection.alias), copy=False)


def _value_folds(rows: Rows, live: exp.Expr | None) -> list[exp.Expr]:
    """The folds of a partial_update or aggregation key's columns over its records (those
    satisfying ``live``, when given) and their helper columns."""
    model, engine = rows.model, rows.model.engine
    order = rows.order()
    out: list[exp.Expr] = []
    group_rows = exp.not_(rows.retract()) if rows.retracts and model.groups else None
    plain_keep = and_all(live, group_rows)
    for column in rows.values():
        group = model.group_of(column)
        if column in model.sequence:  # remove_record_on_delete judges its deletes by it
            keep = and_all(live if rows.removing_groups() else None, group_rows)
            out.append(_last_of(column, order, keep.copy() if keep else None))
        elif group is not None:
            out += _group_column_fold(rows, group, column, live)
        elif engine.aggregates_values:
            out += _aggregate_fold(rows, column, order, None)
        else:
            cond = and_all(exp.column(column).is_(exp.null()).not_(copy=False), plain_keep)
            out.append(_last_of(column, order, cond))  # and_all copied plain_keep
            stored_version = model.versions.of(column)
            if stored_version is not None:
                out.append(
                    exp.alias_(
                        filtered(exp.Max(this=rows.version_of(column)), cond.copy()), stored_version
                    )
                )
    for group in model.groups:
        if any(c in rows.columns for c in group.all_columns):
            present = and_all(any_not_null(group.sequence), live.copy() if live else None)
            out.append(exp.alias_(count_where(present), helper(f"gn_{group.index}")))
            if rows.retracts:  # a -D removes the row (remove_record_on_sequence_group); -U not
                out.append(
                    exp.alias_(
                        filtered(
                            exp.ArgMax(
                                this=rows.is_delete(), expression=rows.order(group.sequence)
                            ),
                            present.copy(),
                        ),
                        helper(f"gdel_{group.index}"),
                    )
                )
    return out


def _removal_helpers(rows: Rows, live: exp.Expr | None) -> list[exp.Expr]:
    """How many records follow the key's last removing delete (``live``) and, under
    remove_record_on_sequence_group, that delete's group sequences (``cut_<group>_<i>``, NULL
    without one): a MERGE removes the stored row when that delete wins over it."""
    if live is None:
        return []
    if rows.removes_on_delete:
        return [
            exp.alias_(count_where(rows.is_delete()), helper("dels")),
            exp.alias_(count_where(and_all(live, exp.not_(rows.retract()))), helper("live")),
        ]
    out = [exp.alias_(count_where(live), helper("live"))]
    at_cut = exp.EQ(this=rows.order(), expression=exp.column(LAST_DELETE))
    for group in rows.removing_groups():
        for i, field in enumerate(group.sequence):
            cut = filtered(exp.Max(this=exp.column(field)), at_cut.copy())
            out.append(exp.alias_(cut, helper(f"cut_{group.index}_{i}")))
    return out


def _group_column_fold(
    rows: Rows, group: Group, column: str, live: exp.Expr | None
) -> list[exp.Expr]:
    order = rows.order(group.sequence)
    present = and_all(any_not_null(group.sequence), live.copy() if live else None)
    if rows.model.group_aggregated(column):
        return _aggregate_fold(rows, column, order, present)
    value: exp.Expr = exp.column(column)
    if rows.retracts and column not in group.sequence:
        value = exp.If(this=rows.retract(), true=exp.null(), false=value)
    return [exp.alias_(filtered(exp.ArgMax(this=value, expression=order), present), column)]


def _aggregate_fold(
    rows: Rows, column: str, order: exp.Expr, keep: exp.Expr | None
) -> list[exp.Expr]:
    """The fold of an aggregate column plus its helper columns (count, ordered records)."""
    keep = and_all(keep, _owners(rows, column))
    aggregate = rows.model.aggregate(column)
    function = aggregate.function
    retract = rows.retract() if rows.aggregate_retracts(column) else None
    if rows.retracts and retract is None:  # ignore_retract (validated at compile time)
        keep = and_all(keep, exp.not_(rows.retract()))
    inp = FoldInput(exp.column(column), retract, order, aggregate.options, keep)
    counted = (
        keep if function.counts_nulls else and_all(keep, exp.column(column).is_(exp.null()).not_())
    )
    out = [
        exp.alias_(function.fold(inp), column),
        exp.alias_(count_where(counted), helper(f"n_{column}")),
    ]
    if column in rows.model.versions.non_null:
        out.append(exp.alias_(_non_null_inputs(inp), versions.non_null_name(column)))
    stored_version = rows.model.versions.of(column)
    if stored_version is not None and function.version is not None:
        out.append(exp.alias_(function.version(inp, rows.version_of(column)), stored_version))
    if function.ops is not None and retract is not None:
        out.append(exp.alias_(function.ops(inp), helper(f"ops_{column}")))
    return out


def _non_null_inputs(inp: FoldInput) -> exp.Expr:
    """How many non-null inputs the batch adds to the column: +1 per add, -1 per retract."""
    one = exp.Literal.number(1)
    signed: exp.Expr = one
    if inp.retract is not None:
        signed = exp.If(this=inp.retract.copy(), true=exp.Literal.number(-1), false=one.copy())
    return exp.func("COALESCE", filtered(exp.Sum(this=signed), present(inp)), exp.Literal.number(0))


def _owners(rows: Rows, column: str) -> exp.Expr | None:
    """Bootstrap: only rows of the branches that own ``column`` feed its aggregate (another
    branch's row carries a NULL there, which is not a record of this column)."""
    if not rows.with_branch:
        return None
    owners = [b.index for b in rows.model.owners(column)]
    if len(owners) == len(rows.model.branches):
        return None
    return exp.In(
        this=exp.column(BRANCH_COLUMN), expressions=[exp.Literal.number(i) for i in owners]
    )


def keep_key(rows: Rows) -> exp.Expr | None:
    """Bootstrap: which folded keys become rows (deleted ones do not)."""
    model = rows.model
    if model.engine.keeps_last_row and rows.retracts:
        return exp.not_(exp.func("COALESCE", exp.column(helper("deleted")), exp.false()))
    if rows.removes_on_delete:
        return exp.GT(this=exp.column(helper("live")), expression=exp.Literal.number(0))
    removing = [g for g in model.groups if g.removes_record]
    if removing and rows.retracts:
        kept: exp.Expr = exp.not_(
            exp.or_(
                *(
                    exp.func("COALESCE", exp.column(helper(f"gdel_{g.index}")), exp.false())
                    for g in removing
                )
            )
        )
        if rows.removing_groups():  # records follow the last removing delete
            live = exp.GT(this=exp.column(helper("live")), expression=exp.Literal.number(0))
            kept = exp.and_(kept, live)
        return kept
    return None
