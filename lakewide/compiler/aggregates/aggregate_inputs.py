"""What an aggregate function's fold and combine take, and the filter helpers they share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

from sqlglot import exp

from lakewide.vocabulary.dialect import DIALECT


@dataclass(frozen=True)
class Accepts:
    """The column types a function takes, as sqlglot type classes (``DECIMAL`` takes
    ``DECIMAL(10, 2)``; ``INTERVAL DAY`` is no ``INT``), with Spark's names for messages."""

    names: tuple[str, ...]
    types: frozenset[exp.DType]  # exp.DataType.Type is this enum

    @classmethod
    def of(cls, *names: str) -> Accepts:
        """The type classes Spark calls ``names``."""
        return cls(names, frozenset(exp.DataType.build(n, dialect=DIALECT).this for n in names))

    def admits(self, declared: exp.DataType) -> bool:
        """Whether a declared type is one of the accepted classes."""
        return declared.this in self.types


NUMERIC = Accepts.of("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL")


@dataclass(frozen=True)
class FoldInput:
    """What a fold may use: the column, the retract predicate and the record order."""

    value: exp.Expr
    retract: exp.Expr | None  # None: this column sees no retracts
    order: exp.Expr
    options: dict[str, Any]
    keep: exp.Expr | None = None  # rows outside it take no part (ignored retracts, ...)

    @overload
    def where(self) -> exp.Expr | None: ...

    @overload
    def where(self, first: exp.Expr, /, *conditions: exp.Expr) -> exp.Expr: ...

    def where(self, *conditions: exp.Expr) -> exp.Expr | None:
        """``keep`` AND the given conditions (None when there are none)."""
        parts = [c.copy() for c in conditions] + ([self.keep.copy()] if self.keep else [])
        return exp.and_(*parts) if parts else None


@dataclass(frozen=True)
class Combine:
    """What a combine may use: stored ``t``, folded ``s``, helpers and ordering predicates."""

    t: exp.Expr
    s: exp.Expr
    ops: exp.Expr | None  # collect / merge_map with retracts: the batch's ordered records
    wins: exp.Expr  # incoming sequence >= stored
    older: exp.Expr  # incoming sequence < stored
    options: dict[str, Any]


def not_null(value: exp.Expr) -> exp.Expr:
    """``value IS NOT NULL`` (on a copy)."""
    return value.copy().is_(exp.null()).not_()


def adds(inp: FoldInput) -> exp.Expr:
    """Filter condition: kept, non-null, non-retract inputs."""
    if inp.retract is None:
        return inp.where(not_null(inp.value))
    return inp.where(not_null(inp.value), exp.not_(inp.retract.copy()))


def present(inp: FoldInput) -> exp.Expr:
    """Filter condition: kept, non-null inputs (adds and retracts)."""
    return inp.where(not_null(inp.value))


def filtered(agg: exp.Expr, cond: exp.Expr | None) -> exp.Expr:
    """``agg FILTER (WHERE cond)``, or ``agg`` when there is no condition."""
    return agg if cond is None else exp.Filter(this=agg, expression=exp.Where(this=cond))


def coalesce_pair(both: exp.Expr, c: Combine) -> exp.Expr:
    """``f(t, s)`` with NULL meaning no value: COALESCE(f(t, s), t, s)."""
    return exp.func("COALESCE", both, c.t.copy(), c.s.copy())


def ordered_values(inp: FoldInput, cond: exp.Expr, value: exp.Expr | None = None) -> exp.Expr:
    """``value`` (default: the column) of the records satisfying ``cond``, in record order."""
    value = inp.value.copy() if value is None else value
    pairs = exp.Struct(expressions=[exp.alias_(inp.order.copy(), "o"), exp.alias_(value, "v")])
    collected = filtered(exp.func("COLLECT_LIST", pairs), cond)
    left, right = exp.column("o", table="l"), exp.column("o", table="r")
    compare = exp.Case(
        ifs=[
            exp.If(this=exp.LT(this=left, expression=right), true=exp.Literal.number(-1)),
            exp.If(
                this=exp.GT(this=left.copy(), expression=right.copy()), true=exp.Literal.number(1)
            ),
        ],
        default=exp.Literal.number(0),
    )
    by_order = exp.Lambda(
        this=compare, expressions=[exp.to_identifier("l"), exp.to_identifier("r")]
    )
    return exp.func(
        "TRANSFORM",
        exp.func("ARRAY_SORT", collected, by_order),
        exp.Lambda(this=exp.column("v", table="x"), expressions=[exp.to_identifier("x")]),
    )


def none_if_empty(inputs: exp.Expr, value: exp.Expr) -> exp.Expr:
    """NULL when no input took part (NULL means "no value"), else ``value``."""
    empty = exp.EQ(this=exp.func("SIZE", inputs.copy()), expression=exp.Literal.number(0))
    return exp.If(this=empty, true=exp.null(), false=value)
