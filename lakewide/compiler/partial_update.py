"""Partial-update semantics as SQL expressions (Paimon's ``merge-engine=partial-update``).

Per key, records merge in sequence order; a non-null value overwrites, null never does; a late
record (smaller sequence than the stored row) only fills columns that are still null.
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.wide_model import BRANCH_COLUMN, ROW_COLUMN, WideModel


def ordering(model: WideModel, *, with_branch: bool) -> exp.Struct:
    """Record order inside one batch: sequence fields (null = oldest), then arrival."""
    fields = [*model.sequence, *([BRANCH_COLUMN] if with_branch else []), ROW_COLUMN]
    return exp.Struct(expressions=[exp.column(name) for name in fields])


def fold(model: WideModel, column: str, order: exp.Expression) -> exp.Expression:
    """Aggregate giving a column's merged value over many records of one key."""
    value = exp.column(column)
    latest = exp.ArgMax(this=value, expression=order.copy())
    if column in model.sequence:
        return latest
    return exp.Filter(this=latest, expression=exp.Where(this=value.is_(exp.null()).not_()))


def _greater(new: exp.Expression, old: exp.Expression, *, or_equal: bool) -> exp.Expression:
    """``new > old`` (or ``>=``) with NULL as the oldest value, never NULL itself."""
    if or_equal:
        return exp.or_(old.is_(exp.null()),
                       exp.func("COALESCE", exp.GTE(this=new, expression=old), exp.false()))
    return exp.or_(exp.and_(old.is_(exp.null()), new.is_(exp.null()).not_()),
                   exp.func("COALESCE", exp.GT(this=new, expression=old), exp.false()))


def incoming_wins(model: WideModel, new: str, old: str) -> exp.Expression:
    """True when the incoming sequence is >= the stored one, fields compared in order.

    Ties go to the incoming row: it arrived later.
    """
    *leading, last = model.sequence
    result = _greater(exp.column(last, table=new), exp.column(last, table=old), or_equal=True)
    for name in reversed(leading):
        n, o = exp.column(name, table=new), exp.column(name, table=old)
        result = exp.or_(_greater(n, o, or_equal=False),
                         exp.and_(exp.NullSafeEQ(this=n, expression=o), result))
    return result


def merge_value(model: WideModel, column: str, new: str, old: str) -> exp.Expression:
    """Stored value of ``column`` after merging the incoming row ``new`` into ``old``."""
    n, o = exp.column(column, table=new), exp.column(column, table=old)
    if not model.sequence:
        return exp.func("COALESCE", n, o)
    wins = incoming_wins(model, new, old)
    if column in model.sequence:
        return exp.Case(ifs=[exp.If(this=wins, true=n)], default=o)
    take = exp.and_(n.is_(exp.null()).not_(), exp.or_(o.is_(exp.null()), wins))
    return exp.Case(ifs=[exp.If(this=take, true=n)], default=o)
