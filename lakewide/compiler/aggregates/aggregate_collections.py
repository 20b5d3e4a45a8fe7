"""Aggregate functions gathering many values into one: listagg (a string), collect (an array)
and merge_map (a map); collect and merge_map retract by replaying a batch's records in order."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from lakewide.compiler.aggregates.aggregate_inputs import (
    Combine,
    FoldInput,
    adds,
    coalesce_pair,
    none_if_empty,
    ordered_values,
    present,
)


def _delimiter(options: dict[str, Any]) -> exp.Expr:
    return exp.Literal.string(str(options.get("delimiter", ",")))


# Paimon's FieldListaggAgg drops an input that StringUtils.isBlank calls blank (empty or only
# Character.isWhitespace characters); Java's \p{javaWhitespace} is that character class
_BLANK = "^\\p{javaWhitespace}*$"


def blank(value: exp.Expr) -> exp.Expr:
    """``value`` is empty or whitespace only, as Paimon's ``StringUtils.isBlank`` says."""
    return exp.RegexpLike(this=value.copy(), expression=exp.Literal.string(_BLANK))


def listagg_fold(inp: FoldInput) -> exp.Expr:
    """listagg over a batch: its non-null, non-blank values in record order, joined by the
    delimiter (a batch of only blank values gives no value, as in Paimon)."""
    values = ordered_values(inp, exp.and_(adds(inp), exp.not_(blank(inp.value))))
    if inp.options.get("distinct"):
        values = _distinct_tokens(values, _delimiter(inp.options))
    return none_if_empty(values, exp.func("ARRAY_JOIN", values.copy(), _delimiter(inp.options)))


def _distinct_tokens(values: exp.Expr, delimiter: exp.Expr) -> exp.Expr:
    """listagg ``distinct`` within a batch as across runs: the values' delimiter-split tokens,
    blank ones skipped (Paimon 2.0), first occurrences kept."""
    x, token = exp.to_identifier("x"), exp.to_identifier("tok")
    # sqlglot's SPLIT splits on a literal (it quotes the delimiter for Spark's regex)
    split = exp.func(
        "TRANSFORM",
        values,
        exp.Lambda(this=exp.func("SPLIT", exp.column("x"), delimiter), expressions=[x]),
    )
    kept = exp.func(
        "FILTER",
        exp.func("FLATTEN", split),
        exp.Lambda(this=exp.not_(blank(exp.column("tok"))), expressions=[token]),
    )
    return exp.func("ARRAY_DISTINCT", kept)


def listagg_combine(c: Combine) -> exp.Expr:
    """The stored string and the batch's, joined in record order; a blank stored string
    (written before blank inputs were dropped) counts as no value, as Paimon's accumulator."""
    stored = exp.If(this=blank(c.t), true=exp.null(), false=c.t.copy())
    c = dataclasses.replace(c, t=stored)
    delim = _delimiter(c.options)
    later = exp.func("CONCAT", c.t.copy(), delim, c.s.copy())
    earlier = exp.func("CONCAT", c.s.copy(), delim.copy(), c.t.copy())
    both: exp.Expr = exp.If(this=c.older.copy(), true=earlier, false=later)
    if c.options.get("distinct"):
        # sqlglot's SPLIT splits on a literal (it quotes the delimiter for Spark's regex)
        parts = exp.func("ARRAY_DISTINCT", exp.func("SPLIT", both, delim.copy()))
        both = exp.func("ARRAY_JOIN", parts, delim.copy())
    return coalesce_pair(both, c)


def collect_fold(inp: FoldInput) -> exp.Expr:
    """collect over a batch: its arrays concatenated in record order (retracts replayed)."""
    if inp.retract is not None:
        return _collect_replay(ordered_ops(inp), None, inp.options)
    arrays = ordered_values(inp, adds(inp))
    flat = exp.func("FLATTEN", arrays)
    if inp.options.get("distinct"):
        flat = exp.func("ARRAY_DISTINCT", flat)
    return none_if_empty(arrays, flat)


def ordered_ops(inp: FoldInput) -> exp.Expr:
    """The batch's non-null adds and retracts in record order, as ``STRUCT(r, v)`` elements."""
    assert inp.retract is not None
    op = exp.Struct(
        expressions=[exp.alias_(inp.retract.copy(), "r"), exp.alias_(inp.value.copy(), "v")]
    )
    return ordered_values(inp, present(inp), op)


EntryOp = Callable[[exp.Expr, exp.Expr], exp.Expr]


def _replay(
    ops: exp.Expr,
    start: exp.Expr | None,
    add: EntryOp,
    remove: EntryOp,
    distinct: bool = False,
) -> exp.Expr:
    """Apply ``ops`` one by one to ``start`` (None: "no value"), as Paimon applies records.

    ``add(acc, value)`` and ``remove(acc, value)`` are one record's step; a NULL ``acc`` makes
    Spark's array/map functions NULL, so adding to "no value" is ``COALESCE(add, value)`` and
    retracting from "no value" stays "no value". ``distinct`` keeps first occurrences of an
    array after each add, as Paimon's distinct collect."""
    acc, value = exp.column("acc"), exp.column("v", table="op")
    added: exp.Expr = exp.func("COALESCE", add(acc, value), value.copy())
    if distinct:
        added = exp.func("ARRAY_DISTINCT", added)
    body = exp.If(
        this=exp.column("r", table="op"), true=remove(acc.copy(), value.copy()), false=added
    )
    # the start typed as the records' values, nullable elements included (IF is lazy: ops[0]
    # is never read): Spark's AGGREGATE keeps the start's type, and a start whose elements
    # cannot be NULL would turn an added NULL element into a wrong value
    first = exp.Bracket(this=ops.copy(), expressions=[exp.Literal.number(0)])
    start = exp.If(
        this=exp.false(),
        true=exp.Dot(this=first, expression=exp.to_identifier("v")),
        false=exp.null() if start is None else start,
    )
    return exp.func(
        "AGGREGATE",
        ops,
        start,
        exp.Lambda(this=body, expressions=[exp.to_identifier("acc"), exp.to_identifier("op")]),
    )


def _collect_replay(ops: exp.Expr, start: exp.Expr | None, options: dict[str, Any]) -> exp.Expr:
    return _replay(
        ops,
        start,
        lambda acc, value: exp.func("CONCAT", acc, value),
        _remove_first,
        distinct=bool(options.get("distinct")),
    )


def _remove_first(acc: exp.Expr, removed: exp.Expr) -> exp.Expr:
    """``acc`` without, per retracted element, its first occurrence (a multiset difference)."""

    def count(values: exp.Expr) -> exp.Expr:
        same = exp.NullSafeEQ(this=exp.column("y"), expression=exp.column("x"))
        return exp.func(
            "SIZE",
            exp.func("FILTER", values, exp.Lambda(this=same, expressions=[exp.to_identifier("y")])),
        )

    upto = exp.func(
        "SLICE",
        acc.copy(),
        exp.Literal.number(1),
        exp.Add(this=exp.column("i"), expression=exp.Literal.number(1)),
    )
    keep = exp.GT(this=count(upto), expression=count(removed))
    return exp.func(
        "FILTER",
        acc,
        exp.Lambda(this=keep, expressions=[exp.to_identifier("x"), exp.to_identifier("i")]),
    )


def collect_combine(c: Combine) -> exp.Expr:
    """The stored array with the batch's appended (or the batch's records replayed on it)."""
    if c.ops is not None:
        return _collect_replay(c.ops.copy(), c.t.copy(), c.options)
    empty = exp.func("ARRAY")
    stored = exp.func("COALESCE", c.t.copy(), empty)
    both: exp.Expr = exp.func("CONCAT", stored, exp.func("COALESCE", c.s.copy(), empty.copy()))
    return exp.func("ARRAY_DISTINCT", both) if c.options.get("distinct") else both


def _map_put(acc: exp.Expr, value: exp.Expr) -> exp.Expr:
    """``acc`` with ``value``'s entries (its keys replace ``acc``'s)."""
    return exp.func("MAP_CONCAT", _drop_keys(acc, exp.func("MAP_KEYS", value.copy())), value)


def _map_merge(maps: exp.Expr) -> exp.Expr:
    """Fold an array of maps left to right, later keys replacing earlier ones."""
    acc, m = exp.to_identifier("acc"), exp.to_identifier("m")
    step = exp.Lambda(this=_map_put(exp.column("acc"), exp.column("m")), expressions=[acc, m])
    first = exp.Bracket(this=maps.copy(), expressions=[exp.Literal.number(0)])
    start = exp.func(
        "MAP_FILTER",
        first,
        exp.Lambda(this=exp.false(), expressions=[exp.to_identifier("k"), exp.to_identifier("v")]),
    )
    return exp.func("AGGREGATE", maps, start, step)


def _map_replay(ops: exp.Expr, start: exp.Expr | None) -> exp.Expr:
    def remove(acc: exp.Expr, value: exp.Expr) -> exp.Expr:
        return _drop_keys(acc, exp.func("MAP_KEYS", value))

    return _replay(ops, start, _map_put, remove)


def merge_map_fold(inp: FoldInput) -> exp.Expr:
    """merge_map over a batch: its maps merged in record order, later keys winning."""
    if inp.retract is not None:
        return _map_replay(ordered_ops(inp), None)
    maps = ordered_values(inp, adds(inp))
    return none_if_empty(maps, _map_merge(maps.copy()))


def _drop_keys(mapping: exp.Expr, keys: exp.Expr) -> exp.Expr:
    """``mapping`` without the entries whose key is in ``keys``."""
    return exp.func(
        "MAP_FILTER",
        mapping,
        exp.Lambda(
            this=exp.not_(exp.func("ARRAY_CONTAINS", keys, exp.column("k"))),
            expressions=[exp.to_identifier("k"), exp.to_identifier("v")],
        ),
    )


def merge_map_combine(c: Combine) -> exp.Expr:
    """The stored map with the batch's entries put (or the batch's records replayed on it)."""
    if c.ops is not None:
        return _map_replay(c.ops.copy(), c.t.copy())
    both = _map_merge(exp.func("ARRAY", c.t.copy(), c.s.copy()))
    return exp.func("COALESCE", both, c.t.copy(), c.s.copy())
