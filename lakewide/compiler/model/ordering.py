"""Record order and "who wins" predicates, shared by every merge engine.

Within a batch records are ordered by (sequence fields with NULL oldest, source, arrival);
between a folded batch and the stored row, the incoming row wins when its sequence is >= the
stored one (ties: the incoming row arrived later).

A fold sorts each key's rows in that order (``record_sort``) and numbers them (``POSITION_COLUMN``,
a BIGINT increasing along the sort within every key): its aggregates then order by one
number, which Spark aggregates by hash, instead of by the ordering STRUCT, which forces a
sort-based aggregate comparing structs once per row and aggregate.
"""

from __future__ import annotations

from sqlglot import exp

BRANCH_COLUMN = "__lw_branch"
ROW_COLUMN = "__lw_row"
POSITION_COLUMN = "__lw_pos"


def ordering(fields: list[str], *, with_branch: bool) -> exp.Struct:
    """Order of records inside one fold: the given sequence fields, then arrival."""
    names = [*fields, *([BRANCH_COLUMN] if with_branch else []), ROW_COLUMN]
    return exp.Struct(expressions=[exp.column(name) for name in names])


def record_sort(fields: list[str], *, with_branch: bool) -> list[exp.Ordered]:
    """``ordering``'s fields as ascending sort keys, NULL first (as a STRUCT compares them)."""
    return [
        exp.Ordered(this=field, desc=False, nulls_first=True)
        for field in ordering(fields, with_branch=with_branch).expressions
    ]


def _greater(new: exp.Expr, old: exp.Expr, *, or_equal: bool) -> exp.Expr:
    """``new > old`` (or ``>=``) with NULL as the oldest value, never NULL itself.

    ``new`` and ``old`` become part of the result: pass columns used nowhere else.
    """
    if or_equal:
        return exp.or_(
            old.is_(exp.null()),
            exp.func("COALESCE", exp.GTE(this=new, expression=old), exp.false(), copy=False),
            copy=False,
        )
    return exp.or_(
        exp.and_(old.is_(exp.null()), new.is_(exp.null()).not_(copy=False), copy=False),
        exp.func("COALESCE", exp.GT(this=new, expression=old), exp.false(), copy=False),
        copy=False,
    )


def incoming_wins(
    fields: list[str], new: str, old: str, new_fields: list[str] | None = None
) -> exp.Expr:
    """True when the incoming sequence is >= the stored one, fields compared in order;
    ``new_fields``: the incoming side's names of the fields (default: the same)."""
    if not fields:
        return exp.true()
    pairs = list(zip(new_fields or fields, fields))
    *leading, (last_new, last) = pairs
    result = _greater(exp.column(last_new, table=new), exp.column(last, table=old), or_equal=True)
    for name_new, name in reversed(leading):
        n, o = exp.column(name_new, table=new), exp.column(name, table=old)
        same = exp.NullSafeEQ(this=n.copy(), expression=o.copy())
        result = exp.or_(
            _greater(n, o, or_equal=False), exp.and_(same, result, copy=False), copy=False
        )
    return result


def incoming_older(fields: list[str], new: str, old: str) -> exp.Expr:
    """True when the incoming sequence is strictly older than the stored one."""
    if not fields:
        return exp.false()
    return exp.not_(incoming_wins(fields, new, old), copy=False)
