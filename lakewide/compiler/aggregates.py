"""Aggregate functions of the aggregation engine (Paimon's names), one small unit each.

A function says how to fold one batch of a key (an aggregate over the batch's rows) and how to
combine the stored value ``t`` with the folded one ``s``. Adding a function is one entry in
``REGISTRY``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from sqlglot import exp



@dataclass(frozen=True)
class Accepts:
    """The column types a function takes, as sqlglot type classes (``DECIMAL`` takes
    ``DECIMAL(10, 2)``; ``INTERVAL DAY`` is no ``INT``), with Spark's names for messages."""

    names: tuple[str, ...]
    types: frozenset[exp.DataType.Type]

    @classmethod
    def of(cls, *names: str) -> Accepts:
        """The type classes Spark calls ``names``."""
        return cls(names, frozenset(exp.DataType.build(n, dialect="spark").this for n in names))

    def admits(self, declared: exp.DataType) -> bool:
        """Whether a declared type is one of the accepted classes."""
        return declared.this in self.types


NUMERIC = Accepts.of("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL")


@dataclass(frozen=True)
class FoldInput:
    """What a fold may use: the column, the retract predicate and the record order."""

    value: exp.Expression
    retract: exp.Expression | None  # None: this column sees no retracts
    order: exp.Expression
    options: dict[str, Any]
    keep: exp.Expression | None = None  # rows outside it take no part (ignored retracts, ...)

    def where(self, *conditions: exp.Expression) -> exp.Expression | None:
        """``keep`` AND the given conditions (None when there are none)."""
        parts = [c.copy() for c in conditions] + ([self.keep.copy()] if self.keep else [])
        return exp.and_(*parts) if parts else None


@dataclass(frozen=True)
class Combine:
    """What a combine may use: stored ``t``, folded ``s``, helpers and ordering predicates."""

    t: exp.Expression
    s: exp.Expression
    ops: exp.Expression | None  # collect / merge_map with retracts: the batch's ordered records
    wins: exp.Expression  # incoming sequence >= stored
    older: exp.Expression  # incoming sequence < stored
    options: dict[str, Any]


@dataclass(frozen=True)
class Aggregate:
    """One registered function."""

    name: str
    fold: Callable[[FoldInput], exp.Expression]
    combine: Callable[[Combine], exp.Expression]
    retracts: bool = False
    types: Accepts | None = None  # accepted column types (None: any)
    counts_nulls: bool = False  # the fold has a value even when every input is NULL
    ops: Callable[[FoldInput], exp.Expression] | None = None  # order-dependent retraction
    options: tuple[str, ...] = field(default_factory=tuple)
    picks: str | None = None  # 'last' / 'first': the value is one record's, chosen by order
    # with ``picks``: the version (record place) of the record the fold picks
    version: Callable[[FoldInput, exp.Expression], exp.Expression] | None = None

    @property
    def idempotent(self) -> bool:
        """Folding the same records a second time leaves the value as it was (a source read
        again in full is harmless): every function but the accumulating ones."""
        return self.name not in ACCUMULATING


def _not_null(value: exp.Expression) -> exp.Expression:
    return value.copy().is_(exp.null()).not_()


def _adds(inp: FoldInput) -> exp.Expression:
    """Filter condition: kept, non-null, non-retract inputs."""
    if inp.retract is None:
        return inp.where(_not_null(inp.value))
    return inp.where(_not_null(inp.value), exp.not_(inp.retract.copy()))


def _present(inp: FoldInput) -> exp.Expression:
    """Filter condition: kept, non-null inputs (adds and retracts)."""
    return inp.where(_not_null(inp.value))


def _filtered(agg: exp.Expression, cond: exp.Expression | None) -> exp.Expression:
    return agg if cond is None else exp.Filter(this=agg, expression=exp.Where(this=cond))


def _coalesce_pair(both: exp.Expression, c: Combine) -> exp.Expression:
    """``f(t, s)`` with NULL meaning no value: COALESCE(f(t, s), t, s)."""
    return exp.func("COALESCE", both, c.t.copy(), c.s.copy())


def _signed(inp: FoldInput, negate: Callable[[exp.Expression], exp.Expression]) -> exp.Expression:
    value = inp.value.copy()
    if inp.retract is None:
        return value
    return exp.If(this=inp.retract.copy(), true=negate(value.copy()), false=value)


def _ordered_values(inp: FoldInput, cond: exp.Expression,
                    value: exp.Expression | None = None) -> exp.Expression:
    """``value`` (default: the column) of the records satisfying ``cond``, in record order."""
    value = inp.value.copy() if value is None else value
    pairs = exp.Struct(expressions=[exp.alias_(inp.order.copy(), "o"), exp.alias_(value, "v")])
    collected = _filtered(exp.func("COLLECT_LIST", pairs), cond)
    left, right = exp.column("o", table="l"), exp.column("o", table="r")
    compare = exp.Case(ifs=[exp.If(this=exp.LT(this=left, expression=right),
                                   true=exp.Literal.number(-1)),
                            exp.If(this=exp.GT(this=left.copy(), expression=right.copy()),
                                   true=exp.Literal.number(1))],
                       default=exp.Literal.number(0))
    by_order = exp.Lambda(this=compare, expressions=[exp.to_identifier("l"), exp.to_identifier("r")])
    return exp.func("TRANSFORM", exp.func("ARRAY_SORT", collected, by_order),
                    exp.Lambda(this=exp.column("v", table="x"), expressions=[exp.to_identifier("x")]))


def _latest(inp: FoldInput, non_null: bool) -> exp.Expression:
    value = inp.value.copy()
    if inp.retract is not None:
        value = exp.If(this=inp.retract.copy(), true=exp.null(), false=value)
    agg = exp.ArgMax(this=value, expression=inp.order.copy())
    return _filtered(agg, _present(inp) if non_null else inp.where())


def _earliest(inp: FoldInput, non_null: bool) -> exp.Expression:
    agg = exp.ArgMin(this=inp.value.copy(), expression=inp.order.copy())
    return _filtered(agg, _adds(inp) if non_null else inp.where())


def _latest_version(non_null: bool) -> Callable[[FoldInput, exp.Expression], exp.Expression]:
    """The version of the record ``_latest`` picks (same rows, greatest place)."""
    return lambda inp, v: _filtered(exp.Max(this=v), _present(inp) if non_null else inp.where())


def _earliest_version(non_null: bool) -> Callable[[FoldInput, exp.Expression], exp.Expression]:
    """The version of the record ``_earliest`` picks (same rows, smallest place)."""
    return lambda inp, v: _filtered(exp.Min(this=v), _adds(inp) if non_null else inp.where())


def _none_if_empty(inputs: exp.Expression, value: exp.Expression) -> exp.Expression:
    """NULL when no input took part (NULL means "no value"), else ``value``."""
    empty = exp.EQ(this=exp.func("SIZE", inputs.copy()), expression=exp.Literal.number(0))
    return exp.If(this=empty, true=exp.null(), false=value)


def _delimiter(options: dict[str, Any]) -> exp.Expression:
    return exp.Literal.string(str(options.get("delimiter", ",")))


def _listagg_fold(inp: FoldInput) -> exp.Expression:
    values = _ordered_values(inp, _adds(inp))
    if inp.options.get("distinct"):
        values = _distinct_tokens(values, _delimiter(inp.options))
    return _none_if_empty(values, exp.func("ARRAY_JOIN", values.copy(), _delimiter(inp.options)))


def _distinct_tokens(values: exp.Expression, delimiter: exp.Expression) -> exp.Expression:
    """listagg ``distinct`` within a batch as across runs: the values' delimiter-split tokens,
    blank ones skipped (Paimon 2.0), first occurrences kept."""
    x, token = exp.to_identifier("x"), exp.to_identifier("tok")
    # sqlglot's SPLIT splits on a literal (it quotes the delimiter for Spark's regex)
    split = exp.func("TRANSFORM", values, exp.Lambda(
        this=exp.func("SPLIT", exp.column("x"), delimiter), expressions=[x]))
    blank = exp.EQ(this=exp.func("TRIM", exp.column("tok")), expression=exp.Literal.string(""))
    kept = exp.func("FILTER", exp.func("FLATTEN", split),
                    exp.Lambda(this=exp.not_(blank), expressions=[token]))
    return exp.func("ARRAY_DISTINCT", kept)


def _listagg_combine(c: Combine) -> exp.Expression:
    delim = _delimiter(c.options)
    later = exp.func("CONCAT", c.t.copy(), delim, c.s.copy())
    earlier = exp.func("CONCAT", c.s.copy(), delim.copy(), c.t.copy())
    both: exp.Expression = exp.If(this=c.older.copy(), true=earlier, false=later)
    if c.options.get("distinct"):
        # sqlglot's SPLIT splits on a literal (it quotes the delimiter for Spark's regex)
        parts = exp.func("ARRAY_DISTINCT", exp.func("SPLIT", both, delim.copy()))
        both = exp.func("ARRAY_JOIN", parts, delim.copy())
    return _coalesce_pair(both, c)


def _bool(op: type[exp.Binary]) -> Callable[[Combine], exp.Expression]:
    return lambda c: _coalesce_pair(op(this=c.t.copy(), expression=c.s.copy()), c)


def _collect_fold(inp: FoldInput) -> exp.Expression:
    if inp.retract is not None:
        return _collect_replay(_ops(inp), None, inp.options)
    arrays = _ordered_values(inp, _adds(inp))
    flat = exp.func("FLATTEN", arrays)
    if inp.options.get("distinct"):
        flat = exp.func("ARRAY_DISTINCT", flat)
    return _none_if_empty(arrays, flat)


def _ops(inp: FoldInput) -> exp.Expression:
    """The batch's non-null adds and retracts in record order, as ``STRUCT(r, v)`` elements."""
    assert inp.retract is not None
    op = exp.Struct(expressions=[exp.alias_(inp.retract.copy(), "r"),
                                 exp.alias_(inp.value.copy(), "v")])
    return _ordered_values(inp, _present(inp), op)


Step = Callable[[exp.Expression, exp.Expression], exp.Expression]


def _replay(ops: exp.Expression, start: exp.Expression | None, add: Step, remove: Step,
            distinct: bool = False) -> exp.Expression:
    """Apply ``ops`` one by one to ``start`` (None: "no value"), as Paimon applies records.

    ``add(acc, value)`` and ``remove(acc, value)`` are one record's step; a NULL ``acc`` makes
    Spark's array/map functions NULL, so adding to "no value" is ``COALESCE(add, value)`` and
    retracting from "no value" stays "no value". ``distinct`` keeps first occurrences of an
    array after each add, as Paimon's distinct collect."""
    acc, value = exp.column("acc"), exp.column("v", table="op")
    added: exp.Expression = exp.func("COALESCE", add(acc, value), value.copy())
    if distinct:
        added = exp.func("ARRAY_DISTINCT", added)
    body = exp.If(this=exp.column("r", table="op"), true=remove(acc.copy(), value.copy()),
                  false=added)
    # the start typed as the records' values, nullable elements included (IF is lazy: ops[0]
    # is never read): Spark's AGGREGATE keeps the start's type, and a start whose elements
    # cannot be NULL would turn an added NULL element into a wrong value
    first = exp.Bracket(this=ops.copy(), expressions=[exp.Literal.number(0)])
    start = exp.If(this=exp.false(), true=exp.Dot(this=first, expression=exp.to_identifier("v")),
                   false=exp.null() if start is None else start)
    return exp.func("AGGREGATE", ops, start, exp.Lambda(
        this=body, expressions=[exp.to_identifier("acc"), exp.to_identifier("op")]))


def _collect_replay(ops: exp.Expression, start: exp.Expression | None,
                    options: dict[str, Any]) -> exp.Expression:
    return _replay(ops, start, lambda acc, value: exp.func("CONCAT", acc, value), _remove_first,
                   distinct=bool(options.get("distinct")))


def _remove_first(acc: exp.Expression, removed: exp.Expression) -> exp.Expression:
    """``acc`` without, per retracted element, its first occurrence (a multiset difference)."""
    def count(values: exp.Expression) -> exp.Expression:
        same = exp.NullSafeEQ(this=exp.column("y"), expression=exp.column("x"))
        return exp.func("SIZE", exp.func("FILTER", values, exp.Lambda(
            this=same, expressions=[exp.to_identifier("y")])))
    upto = exp.func("SLICE", acc.copy(), exp.Literal.number(1),
                    exp.Add(this=exp.column("i"), expression=exp.Literal.number(1)))
    keep = exp.GT(this=count(upto), expression=count(removed))
    return exp.func("FILTER", acc, exp.Lambda(
        this=keep, expressions=[exp.to_identifier("x"), exp.to_identifier("i")]))


def _collect_combine(c: Combine) -> exp.Expression:
    if c.ops is not None:
        return _collect_replay(c.ops.copy(), c.t.copy(), c.options)
    empty = exp.func("ARRAY")
    stored = exp.func("COALESCE", c.t.copy(), empty)
    both: exp.Expression = exp.func("CONCAT", stored, exp.func("COALESCE", c.s.copy(), empty.copy()))
    return exp.func("ARRAY_DISTINCT", both) if c.options.get("distinct") else both


def _map_put(acc: exp.Expression, value: exp.Expression) -> exp.Expression:
    """``acc`` with ``value``'s entries (its keys replace ``acc``'s)."""
    return exp.func("MAP_CONCAT", _drop_keys(acc, exp.func("MAP_KEYS", value.copy())), value)


def _map_merge(maps: exp.Expression) -> exp.Expression:
    """Fold an array of maps left to right, later keys replacing earlier ones."""
    acc, m = exp.to_identifier("acc"), exp.to_identifier("m")
    step = exp.Lambda(this=_map_put(exp.column("acc"), exp.column("m")), expressions=[acc, m])
    first = exp.Bracket(this=maps.copy(), expressions=[exp.Literal.number(0)])
    start = exp.func("MAP_FILTER", first, exp.Lambda(
        this=exp.false(), expressions=[exp.to_identifier("k"), exp.to_identifier("v")]))
    return exp.func("AGGREGATE", maps, start, step)


def _map_replay(ops: exp.Expression, start: exp.Expression | None) -> exp.Expression:
    def remove(acc: exp.Expression, value: exp.Expression) -> exp.Expression:
        return _drop_keys(acc, exp.func("MAP_KEYS", value))
    return _replay(ops, start, _map_put, remove)


def _merge_map_fold(inp: FoldInput) -> exp.Expression:
    if inp.retract is not None:
        return _map_replay(_ops(inp), None)
    maps = _ordered_values(inp, _adds(inp))
    return _none_if_empty(maps, _map_merge(maps.copy()))


def _drop_keys(mapping: exp.Expression, keys: exp.Expression) -> exp.Expression:
    """``mapping`` without the entries whose key is in ``keys``."""
    return exp.func("MAP_FILTER", mapping, exp.Lambda(
        this=exp.not_(exp.func("ARRAY_CONTAINS", keys, exp.column("k"))),
        expressions=[exp.to_identifier("k"), exp.to_identifier("v")]))


def _merge_map_combine(c: Combine) -> exp.Expression:
    if c.ops is not None:
        return _map_replay(c.ops.copy(), c.t.copy())
    both = _map_merge(exp.func("ARRAY", c.t.copy(), c.s.copy()))
    return exp.func("COALESCE", both, c.t.copy(), c.s.copy())


def _sum_combine(c: Combine) -> exp.Expression:
    return _coalesce_pair(exp.Add(this=c.t.copy(), expression=c.s.copy()), c)


def _product_fold(inp: FoldInput) -> exp.Expression:
    factors = _signed(inp, lambda v: exp.Div(this=exp.Literal.number(1), expression=v))
    collected = _filtered(exp.func("COLLECT_LIST", factors), _present(inp))
    one = exp.Cast(this=exp.Literal.number(1), to=exp.DataType.build("DOUBLE"))
    step = exp.Lambda(this=exp.Mul(this=exp.column("a"), expression=exp.column("x")),
                      expressions=[exp.to_identifier("a"), exp.to_identifier("x")])
    product = exp.func("AGGREGATE", collected, one, step)
    return _none_if_empty(collected, product)


REGISTRY: dict[str, Aggregate] = {a.name: a for a in (
    Aggregate("sum", lambda i: _filtered(exp.func("SUM", _signed(i, lambda v: exp.Neg(this=v))), _present(i)),
              _sum_combine, retracts=True, types=NUMERIC),
    Aggregate("product", _product_fold,
              lambda c: _coalesce_pair(exp.Mul(this=c.t.copy(), expression=c.s.copy()), c),
              retracts=True, types=NUMERIC),
    Aggregate("max", lambda i: _filtered(exp.Max(this=i.value.copy()), _adds(i)),
              lambda c: exp.func("GREATEST", c.t.copy(), c.s.copy())),
    Aggregate("min", lambda i: _filtered(exp.Min(this=i.value.copy()), _adds(i)),
              lambda c: exp.func("LEAST", c.t.copy(), c.s.copy())),
    Aggregate("last_value", lambda i: _latest(i, non_null=False),
              lambda c: exp.If(this=c.wins.copy(), true=c.s.copy(), false=c.t.copy()),
              retracts=True, counts_nulls=True, picks="last", version=_latest_version(False)),
    Aggregate("last_non_null_value", lambda i: _latest(i, non_null=True),
              lambda c: exp.If(this=exp.or_(c.t.copy().is_(exp.null()), c.wins.copy()),
                               true=c.s.copy(), false=c.t.copy()),
              retracts=True, picks="last", version=_latest_version(True)),
    Aggregate("first_value", lambda i: _earliest(i, non_null=False),
              lambda c: exp.If(this=exp.or_(c.t.copy().is_(exp.null()), c.older.copy()),
                               true=c.s.copy(), false=c.t.copy()),
              counts_nulls=True, picks="first", version=_earliest_version(False)),
    Aggregate("first_non_null_value", lambda i: _earliest(i, non_null=True),
              lambda c: exp.If(this=exp.or_(c.t.copy().is_(exp.null()), c.older.copy()),
                               true=c.s.copy(), false=c.t.copy()),
              picks="first", version=_earliest_version(True)),
    Aggregate("listagg", _listagg_fold, _listagg_combine, types=Accepts.of("STRING", "VARCHAR", "CHAR"),
              options=("delimiter", "distinct")),
    Aggregate("bool_and", lambda i: _filtered(exp.func("BOOL_AND", i.value.copy()), _adds(i)),
              _bool(exp.And), types=Accepts.of("BOOLEAN")),
    Aggregate("bool_or", lambda i: _filtered(exp.func("BOOL_OR", i.value.copy()), _adds(i)),
              _bool(exp.Or), types=Accepts.of("BOOLEAN")),
    Aggregate("collect", _collect_fold, _collect_combine, retracts=True, types=Accepts.of("ARRAY"),
              ops=_ops, options=("distinct",)),
    Aggregate("merge_map", _merge_map_fold, _merge_map_combine, retracts=True, types=Accepts.of("MAP"),
              ops=_ops),
)}

ACCUMULATING = ("sum", "product", "listagg", "collect")
COMMON_OPTIONS = ("function", "ignore_retract")
