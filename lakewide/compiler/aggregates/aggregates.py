"""Aggregate functions of the aggregation engine (Paimon's names), one small unit each.

A function says how to fold one batch of a key (an aggregate over the batch's rows) and how to
combine the stored value ``t`` with the folded one ``s``. Adding a function is one entry in
``REGISTRY`` here and one in ``lakewide.project.config.aggregate_functions`` (the names,
options and retraction a config sees).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from lakewide.compiler.aggregates import aggregate_collections as gather
from lakewide.compiler.aggregates.aggregate_inputs import (
    NUMERIC,
    Accepts,
    Combine,
    FoldInput,
    adds,
    coalesce_pair,
    filtered,
    none_if_empty,
    present,
)
from lakewide.project.config.aggregate_functions import FUNCTIONS, AggregateFunction

__all__ = ["REGISTRY", "Accepts", "Aggregate", "Combine", "FoldInput"]


@dataclass(frozen=True)
class Aggregate:
    """One registered function."""

    name: str
    fold: Callable[[FoldInput], exp.Expr]
    combine: Callable[[Combine], exp.Expr]
    types: Accepts | None = None  # accepted column types (None: any)
    counts_nulls: bool = False  # the fold has a value even when every input is NULL
    ops: Callable[[FoldInput], exp.Expr] | None = None  # order-dependent retraction
    picks: str | None = None  # 'last' / 'first': the value is one record's, chosen by order
    # with ``picks``: the version (record place) of the record the fold picks
    version: Callable[[FoldInput, exp.Expr], exp.Expr] | None = None

    @property
    def function(self) -> AggregateFunction:
        """What a model's config sees of this function (its name, options, retraction)."""
        return FUNCTIONS[self.name]

    @property
    def retracts(self) -> bool:
        return self.function.retracts

    @property
    def options(self) -> tuple[str, ...]:
        return self.function.options

    @property
    def idempotent(self) -> bool:
        return self.function.idempotent


def _signed(inp: FoldInput, negate: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
    value = inp.value.copy()
    if inp.retract is None:
        return value
    return exp.If(this=inp.retract.copy(), true=negate(value.copy()), false=value)


def _latest(inp: FoldInput, non_null: bool) -> exp.Expr:
    value = inp.value.copy()
    if inp.retract is not None:
        value = exp.If(this=inp.retract.copy(), true=exp.null(), false=value)
    agg = exp.ArgMax(this=value, expression=inp.order.copy())
    return filtered(agg, present(inp) if non_null else inp.where())


def _earliest(inp: FoldInput, non_null: bool) -> exp.Expr:
    agg = exp.ArgMin(this=inp.value.copy(), expression=inp.order.copy())
    return filtered(agg, adds(inp) if non_null else inp.where())


def _latest_version(non_null: bool) -> Callable[[FoldInput, exp.Expr], exp.Expr]:
    """The version of the record ``_latest`` picks (same rows, greatest place)."""
    return lambda inp, v: filtered(exp.Max(this=v), present(inp) if non_null else inp.where())


def _earliest_version(non_null: bool) -> Callable[[FoldInput, exp.Expr], exp.Expr]:
    """The version of the record ``_earliest`` picks (same rows, smallest place)."""
    return lambda inp, v: filtered(exp.Min(this=v), adds(inp) if non_null else inp.where())


def _bool(op: type[exp.Binary]) -> Callable[[Combine], exp.Expr]:
    return lambda c: coalesce_pair(op(this=c.t.copy(), expression=c.s.copy()), c)


def _sum_combine(c: Combine) -> exp.Expr:
    return coalesce_pair(exp.Add(this=c.t.copy(), expression=c.s.copy()), c)


def _product_fold(inp: FoldInput) -> exp.Expr:
    factors = _signed(inp, lambda v: exp.Div(this=exp.Literal.number(1), expression=v))
    collected = filtered(exp.func("COLLECT_LIST", factors), present(inp))
    one = exp.Cast(this=exp.Literal.number(1), to=exp.DataType.build("DOUBLE"))
    step = exp.Lambda(
        this=exp.Mul(this=exp.column("a"), expression=exp.column("x")),
        expressions=[exp.to_identifier("a"), exp.to_identifier("x")],
    )
    product = exp.func("AGGREGATE", collected, one, step)
    return none_if_empty(collected, product)


REGISTRY: dict[str, Aggregate] = {
    a.name: a
    for a in (
        Aggregate(
            "sum",
            lambda i: filtered(exp.func("SUM", _signed(i, lambda v: exp.Neg(this=v))), present(i)),
            _sum_combine,
            types=NUMERIC,
        ),
        Aggregate(
            "product",
            _product_fold,
            lambda c: coalesce_pair(exp.Mul(this=c.t.copy(), expression=c.s.copy()), c),
            types=NUMERIC,
        ),
        Aggregate(
            "max",
            lambda i: filtered(exp.Max(this=i.value.copy()), adds(i)),
            lambda c: exp.func("GREATEST", c.t.copy(), c.s.copy()),
        ),
        Aggregate(
            "min",
            lambda i: filtered(exp.Min(this=i.value.copy()), adds(i)),
            lambda c: exp.func("LEAST", c.t.copy(), c.s.copy()),
        ),
        Aggregate(
            "last_value",
            lambda i: _latest(i, non_null=False),
            lambda c: exp.If(this=c.wins.copy(), true=c.s.copy(), false=c.t.copy()),
            counts_nulls=True,
            picks="last",
            version=_latest_version(False),
        ),
        Aggregate(
            "last_non_null_value",
            lambda i: _latest(i, non_null=True),
            lambda c: exp.If(
                this=exp.or_(c.t.copy().is_(exp.null()), c.wins.copy()),
                true=c.s.copy(),
                false=c.t.copy(),
            ),
            picks="last",
            version=_latest_version(True),
        ),
        Aggregate(
            "first_value",
            lambda i: _earliest(i, non_null=False),
            lambda c: exp.If(
                this=exp.or_(c.t.copy().is_(exp.null()), c.older.copy()),
                true=c.s.copy(),
                false=c.t.copy(),
            ),
            counts_nulls=True,
            picks="first",
            version=_earliest_version(False),
        ),
        Aggregate(
            "first_non_null_value",
            lambda i: _earliest(i, non_null=True),
            lambda c: exp.If(
                this=exp.or_(c.t.copy().is_(exp.null()), c.older.copy()),
                true=c.s.copy(),
                false=c.t.copy(),
            ),
            picks="first",
            version=_earliest_version(True),
        ),
        Aggregate(
            "listagg",
            gather.listagg_fold,
            gather.listagg_combine,
            types=Accepts.of("STRING", "VARCHAR", "CHAR"),
        ),
        Aggregate(
            "bool_and",
            lambda i: filtered(exp.func("BOOL_AND", i.value.copy()), adds(i)),
            _bool(exp.And),
            types=Accepts.of("BOOLEAN"),
        ),
        Aggregate(
            "bool_or",
            lambda i: filtered(exp.func("BOOL_OR", i.value.copy()), adds(i)),
            _bool(exp.Or),
            types=Accepts.of("BOOLEAN"),
        ),
        Aggregate(
            "collect",
            gather.collect_fold,
            gather.collect_combine,
            types=Accepts.of("ARRAY"),
            ops=gather.ordered_ops,
        ),
        Aggregate(
            "merge_map",
            gather.merge_map_fold,
            gather.merge_map_combine,
            types=Accepts.of("MAP"),
            ops=gather.ordered_ops,
        ),
    )
}
if REGISTRY.keys() != FUNCTIONS.keys():  # pragma: no cover - a function added on one side only
    raise AssertionError(
        f"aggregates {sorted(REGISTRY.keys() ^ FUNCTIONS.keys())} not on both sides"
    )
