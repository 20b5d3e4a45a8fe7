"""The per-source folds put together by one shuffle instead of an S-way join.

Each fold's rows become its keys and its own columns, UNION ALL, grouped by the key
(``build_prefolds.assembled`` uses it for every bootstrap and batch it assembles). A UNION
ALL needs one row type in every branch, so:

* with the folds' column types (``WideModel.fold_types``: Spark's, handed by a run that
  analysed the bootstrap for its contract), each branch is ``(k, i, STRUCT(p0, p1, ...))``:
  a slot per column of one type (a type's slots as many as the most columns of that type one
  fold has), each fold filling the slots of its own columns' types and leaving the others
  NULL; a source's column ``c`` is read as ``s.p<its slot>``.
  The row grows with the columns of one fold and their distinct types, not with the
  sources; a value sits in a slot of exactly its own type, so no value is cast. Grouped by
  the key, each row is collected once into a map from its source to its payload, and each
  source's payload is looked up once per key;
* without them (``lakewide compile``, which has no JVM), one ``STRUCT`` of its columns per
  source, NULL in the other sources' branches: S(S-1) NULLs, exact for every type, grouped
  by one ``FIRST`` per source.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from lakewide.compiler.folds.prefold_columns import fold_name
from lakewide.compiler.model.wide_model import WideModel

SOURCE = "__lw_src"
#: Spark's type of a ``COUNT`` (``LongType``), as the analysis' fields give types (JSON)
COUNT_TYPE = '"long"'
PAYLOAD = "__lw_payload"
#: per key, a map from each source's index to its payload (the typed rows grouped)
BY_SOURCE = "__lw_by_src"


def one_shuffle(model: WideModel, select: exp.Select, keys_alias: str) -> exp.Select:
    """``select`` (over the folds, read as ``f.c``, from ``keys_alias``) with the folds put
    together by one shuffle: each fold's rows as its keys and its columns
    (:func:`typed_rows`, else one ``STRUCT`` per source, NULL in the other sources' rows),
    UNION ALL, grouped by the key with each source's struct its one non-NULL value; a fold's
    column ``f.c`` is read as ``s.c``. Measured at 16 x 16, 20,000 keys
    (benchmarks/logs.md), JVM CPU of the bootstrap SELECT: aggregation 37.6-41.3 s with the
    joins, 14.7-15.8 s so (the JOIN rebuild 23.1 s); the S-way join of sorted folds is where
    the bootstrap's time went."""
    keys = model.primary_key
    names = {b.index: struct_name(b.index) for b in model.branches}
    outputs = {b.index: _outputs(select, fold_name(b)) for b in model.branches}
    typed = typed_rows(model, outputs, _counts(model, select))
    union: exp.Query | None = None
    for branch in model.branches:
        parts: list[exp.Expr] = [exp.column(k) for k in keys]
        if typed is not None:
            parts += typed[0][branch.index]
        else:
            struct = exp.Struct(
                expressions=[exp.alias_(exp.column(n), n) for n in outputs[branch.index]]
            )
            for other in model.branches:
                value = struct if other.index == branch.index else exp.Null()
                parts.append(exp.alias_(value, names[other.index]))
        row = exp.select(*parts, copy=False).from_(fold_name(branch), copy=False)
        union = row if union is None else exp.union(union, row, distinct=False, copy=False)
    assert union is not None
    rows = union.subquery("__lw_rows_of", copy=False)
    grouped = _by_source(model, rows) if typed is not None else _first_of_each(model, rows)
    by_fold = {fold_name(b): b.index for b in model.branches}
    for column in list(select.find_all(exp.Column)):
        if column.table in by_fold:
            index = by_fold[column.table]
            struct_of = exp.column(names[index], table=keys_alias)
            field = column.name if typed is None else typed[1][index][column.name]
            column.replace(exp.Dot(this=struct_of, expression=exp.to_identifier(field)))
    select.set("joins", None)
    select.set("from_", exp.From(this=grouped.subquery(keys_alias, copy=False)))
    return select


def _grouped(model: WideModel, rows: exp.Subquery, outputs: list[exp.Expr]) -> exp.Select:
    """``SELECT k, <outputs> FROM rows GROUP BY k`` (every primary-key column)."""
    keys = [exp.column(k) for k in model.primary_key]
    grouped = exp.select(*keys, *outputs, copy=False).from_(rows, copy=False)
    return grouped.group_by(*(k.copy() for k in keys), copy=False)


def _first_of_each(model: WideModel, rows: exp.Subquery) -> exp.Select:
    """Per key, each source's struct: the one non-NULL value of its column in ``rows``."""
    return _grouped(
        model,
        rows,
        [
            exp.alias_(exp.func("FIRST", exp.column(n), exp.true()), n)
            for n in (struct_name(b.index) for b in model.branches)
        ],
    )


def _by_source(model: WideModel, rows: exp.Subquery) -> exp.Select:
    """Per key, each source's payload: the typed rows collected into one map from the source's
    index to its payload, then each source's looked up once. Per key the work grows with the
    sources (one map entry per row, one lookup per source); a ``FIRST(IF(src = i, payload,
    NULL))`` per source fed every row to every source's aggregate, S x S per key. Measured
    (benchmarks/logs.md, the bootstrap alone, new JVM), JVM CPU: 64 x 16, 200,000 keys
    545-553 s with a ``FIRST`` per source, 436.6 s with the map; 16 x 16 106.5 and 105.9 s."""
    entry = exp.Struct(expressions=[exp.column(SOURCE), exp.column(PAYLOAD)])
    collected = exp.func("MAP_FROM_ENTRIES", exp.func("COLLECT_LIST", entry))
    by_key = _grouped(model, rows, [exp.alias_(collected, BY_SOURCE)])
    looked_up = [
        exp.alias_(
            exp.Bracket(this=exp.column(BY_SOURCE), expressions=[exp.Literal.number(b.index)]),
            struct_name(b.index),
        )
        for b in model.branches
    ]
    keys = [exp.column(k) for k in model.primary_key]
    return exp.select(*keys, *looked_up, copy=False).from_(
        by_key.subquery("__lw_by_key", copy=False), copy=False
    )


def _outputs(select: exp.Select, fold: str) -> list[str]:
    cte = next(c for c in select.args["with_"].expressions if c.alias == fold)
    return [e.alias_or_name for e in cte.this.expressions]


def _counts(model: WideModel, select: exp.Select) -> dict[int, dict[str, str]]:
    """Per source (branch index), its fold's outputs that are a ``COUNT`` (filtered or not)
    with Spark's type of a count: a batch's helper counts, which the bootstrap analysed for
    the folds' types does not compute."""
    ctes = {c.alias: c.this for c in select.args["with_"].expressions}
    out: dict[int, dict[str, str]] = {}
    for branch in model.branches:
        out[branch.index] = {}
        for e in ctes[fold_name(branch)].expressions:
            inner = e.unalias()
            if isinstance(inner, exp.Filter):
                inner = inner.this
            if isinstance(inner, exp.Count):
                out[branch.index][e.alias_or_name] = COUNT_TYPE
    return out


Slots = tuple[dict[int, list[exp.Expr]], dict[int, dict[str, str]]]


def typed_rows(
    model: WideModel, outputs: dict[int, list[str]], counts: Mapping[int, Mapping[str, str]]
) -> Slots | None:
    """Per source (branch index), its branch's projections after the keys (its index as
    ``__lw_src``, then ``__lw_payload``: a ``STRUCT`` of every slot, its column of the slot's
    type, else NULL) and which slot each of its columns sits in; None unless
    ``model.fold_types`` (with ``counts``, the types of its helper counts) has the type of
    every column of every fold. Measured (64 x 16,
    benchmarks/logs.md): the slots as top-level columns, each source's struct rebuilt from
    them in the grouping, planned slower than one payload struct read by slot."""
    types = {i: {**counts.get(i, {}), **model.fold_types.get(i, {})} for i in outputs}
    if not all(set(outputs[i]) <= set(types[i]) for i in outputs):
        return None
    of_type: dict[str, list[str]] = {}  # a type -> its slots, in order
    count = 0
    placed: dict[int, dict[str, str]] = {}
    for index, columns in outputs.items():
        used: dict[str, int] = {}
        placed[index] = {}
        for column in columns:
            kind = types[index][column]
            n = used[kind] = used.get(kind, -1) + 1
            mine = of_type.setdefault(kind, [])
            if n == len(mine):
                mine.append(f"__lw_p{count}")
                count += 1
            placed[index][column] = mine[n]
    rows: dict[int, list[exp.Expr]] = {}
    for index in outputs:
        filled = {slot: column for column, slot in placed[index].items()}
        payload = exp.Struct(
            expressions=[
                exp.alias_(exp.column(filled[s]) if s in filled else exp.Null(), s)
                for s in (f"__lw_p{n}" for n in range(count))
            ]
        )
        rows[index] = [
            exp.alias_(exp.Literal.number(index), SOURCE),
            exp.alias_(payload, PAYLOAD),
        ]
    return rows, placed


def struct_name(index: int) -> str:
    """The column holding source ``index``'s fold (a ``STRUCT`` of its columns) per key."""
    return f"__lw_s{index}"


def with_fold_structs(model: WideModel, query: exp.Expr, keys_alias: str) -> exp.Select | None:
    """The bootstrap ``query``, put together by :func:`one_shuffle` without the folds'
    types, with each source's fold struct as one more output column (``struct_name``):
    analysed for the table's types, it gives the folds' types too (:func:`fold_types_of`);
    None for any other query."""
    if model.fold_types or not isinstance(query, exp.Select):
        return None
    keys = query.args.get("from_")
    if keys is None or not isinstance(keys.this, exp.Subquery) or keys.this.alias != keys_alias:
        return None
    grouped = keys.this.this
    wanted = {struct_name(b.index) for b in model.branches}
    if not isinstance(grouped, exp.Select) or not wanted <= set(grouped.named_selects):
        return None
    probe = query.copy()
    probe.set("order", None)
    structs = [exp.column(struct_name(b.index), table=keys_alias) for b in model.branches]
    return probe.select(*structs, append=True, copy=False)


def fold_types_of(
    model: WideModel, fields: Mapping[str, Mapping[str, str]]
) -> dict[int, dict[str, str]]:
    """Per source, its fold's column types from the analysed :func:`with_fold_structs`
    (``fields``: output column -> its struct's field -> Spark type); empty when a source's
    is missing."""
    out = {b.index: dict(fields.get(struct_name(b.index), {})) for b in model.branches}
    return out if all(out.values()) else {}
