"""Rule: an aggregation model's columns in the assembled per-source pre-folds
(``build_prefolds``): each source aggregates its own records of the columns it owns, and a
column several sources feed combines their aggregates where the function allows it.

* ``max``, ``min``, ``bool_or``, ``bool_and``: the greatest (least) of the sources' values;
  NULL ("no value") sources take no part (``GREATEST``/``LEAST`` skip NULLs);
* ``sum`` of a column declared integral or floating: the sum of the sources' non-NULL sums
  (NULL when none has one); a DECIMAL sum would widen once more per source, so another
  type, or an undeclared one, keeps the union's fold;
* ``last_value``, ``last_non_null_value`` / ``first_value``, ``first_non_null_value``: the
  value of the source whose picked record's stored version (sequence, source index) is the
  greatest / least (a column of several sources stores its version);
* helper counts (inputs, non-NULL inputs, upstream rows per key): the sums of the sources'.

``product`` (a DOUBLE whose rounding follows the order of its factors), ``listagg``,
``collect`` and ``merge_map`` (their elements follow record order across sources) of several
sources keep the union's fold (:func:`combinable` is False).
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.folds.fold_rows import helper
from lakewide.compiler.folds.prefold_columns import fold_name, greatest, struct_field, summed, typed
from lakewide.compiler.model import versions
from lakewide.compiler.model.wide_model import WideModel

#: functions of several sources combined by the greatest / least of their values
EXTREMES = {"max": "GREATEST", "bool_or": "GREATEST", "min": "LEAST", "bool_and": "LEAST"}
SUMMABLE = {
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
    exp.DataType.Type.FLOAT,
    exp.DataType.Type.DOUBLE,
}


def combinable(model: WideModel, column: str) -> bool:
    """Whether the column's per-source aggregates combine into the union's (one source's
    always do)."""
    owners = len(model.owners(column))
    if owners <= 1:
        return owners == 1
    aggregate = model.aggregate(column)
    if aggregate.function.picks is not None:
        return model.versions.of(column) is not None
    if aggregate.name == "sum":
        declared = model.declared.get(column)
        return declared is not None and declared.this in SUMMABLE
    return aggregate.name in EXTREMES


def _values(model: WideModel, column: str, name: str) -> list[exp.Expr]:
    """``name`` of the folds of the sources owning ``column``."""
    return [exp.column(name, table=fold_name(b)) for b in model.owners(column)]


def _picked(model: WideModel, column: str, version: str) -> tuple[exp.Expr, exp.Expr]:
    """The value and version of the source whose record the function picks."""
    first = model.aggregate(column).function.picks == "first"
    pairs = []
    for b in model.owners(column):
        fold = fold_name(b)
        pair: exp.Expr = exp.Struct(
            expressions=[
                exp.alias_(exp.column(version, table=fold), "v"),
                exp.alias_(exp.column(column, table=fold), "c"),
            ]
        )
        if first:  # a source without the column's record: no pair (LEAST skips NULLs)
            absent = exp.column(version, table=fold).is_(exp.null())
            pair = exp.If(this=absent, true=exp.null(), false=pair)
        pairs.append(pair)
    pick = exp.func("LEAST", *pairs) if first and len(pairs) > 1 else greatest(pairs)
    return struct_field(pick.copy(), "c"), struct_field(pick, "v")


def aggregated(model: WideModel, column: str) -> list[exp.Expr]:
    """The aggregated column and its stored companions (version, non-NULL input count), aliased."""
    owners = model.owners(column)
    version = model.versions.of(column)
    aggregate = model.aggregate(column)
    if len(owners) == 1:
        fold = fold_name(owners[0])
        value: exp.Expr = exp.column(column, table=fold)
        stamp: exp.Expr | None = None if version is None else exp.column(version, table=fold)
    elif aggregate.function.picks is not None:
        assert version is not None
        value, stamp = _picked(model, column, version)
    elif aggregate.name == "sum":
        parts = _values(model, column, column)
        none = exp.func("COALESCE", *parts).is_(exp.null())
        value, stamp = exp.If(this=none, true=exp.null(), false=summed(parts)), None
    else:
        value, stamp = exp.func(EXTREMES[aggregate.name], *_values(model, column, column)), None
    out = [exp.alias_(typed(model, column, value), column, copy=False)]
    if version is not None:
        assert stamp is not None
        out.append(exp.alias_(stamp, version, copy=False))
    if column in model.versions.non_null:
        out.append(_count(model, column, versions.non_null_name(column)))
    return out


def _count(model: WideModel, column: str, name: str) -> exp.Expr:
    return exp.alias_(summed(_values(model, column, name)), name, copy=False)


def row_count(model: WideModel) -> exp.Expr:
    """How many upstream rows the key aggregates: the sum of the sources' counts."""
    every = [exp.column(versions.ROW_COUNT, table=fold_name(b)) for b in model.branches]
    return exp.alias_(summed(every), versions.ROW_COUNT, copy=False)


def aggregate_helpers(model: WideModel) -> list[exp.Expr]:
    """Per aggregated column how many inputs the batch folded: the helper columns of the
    union's fold a MERGE reads."""
    return [_count(model, c, helper(f"n_{c}")) for c in model.aggregated]
