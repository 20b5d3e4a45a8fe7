"""Rule: one column-scoped ``MERGE INTO`` per source branch."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

from sqlglot import exp

from lakewide.compiler import engines
from lakewide.compiler.build_bootstrap import reduce_per_key
from lakewide.compiler.wide_model import Branch, WideModel


def batch_view(branch: Branch) -> str:
    """Name of the temporary view holding a branch's staged, pre-reduced batch."""
    return f"__lw_batch_{branch.index + 1}"


def _rows(model: WideModel, branch: Branch) -> engines.Rows:
    columns = [c for c in model.stored if c in branch.owned]
    has_kind = model.row_kind is not None and model.row_kind in branch.owned
    return engines.Rows(model, columns, with_branch=False, has_row_kind=has_kind,
                        branch=branch.index)


def build_batch(model: WideModel, branch: Branch) -> exp.Select:
    """The branch's new rows, pre-reduced to one row per key with the engine's semantics.

    The executor materializes it (a MERGE source must be deterministic and the arrival order
    used for ties is not), then MERGEs from the materialized view.
    """
    rows = _rows(model, branch)
    carried = rows.columns + ([model.row_kind] if rows.has_row_kind and model.row_kind else [])
    return reduce_per_key(rows, branch.projected([c for c in model.columns if c in carried]))


def build_merge(model: WideModel, branch: Branch) -> exp.Merge:
    """MERGE the branch's staged batch into only the columns the branch owns."""
    rows = _rows(model, branch)
    on = exp.and_(*(exp.EQ(this=exp.column(k, table=engines.T),
                           expression=exp.column(k, table=engines.S))
                    for k in model.primary_key))
    return exp.Merge(this=model.node.relation.table(alias=engines.T),
                     using=exp.table_(batch_view(branch), alias=engines.S),
                     on=on, whens=exp.Whens(expressions=engines.whens(rows)))


def key_bounds(model: WideModel, branch: Branch) -> exp.Select:
    """``SELECT MIN(k), MAX(k)`` of the staged batch's first primary-key column."""
    key = exp.column(model.primary_key[0])
    return exp.select(exp.Min(this=key), exp.Max(this=key.copy())).from_(batch_view(branch))


def _plain_bound(value: Any) -> bool:
    """Values whose SQL literal is exact: integers, strings, dates, decimals.

    Not timestamps (PySpark returns them in the Python process's time zone), not floats (NaN).
    """
    if isinstance(value, bool) or isinstance(value, datetime.datetime):
        return False
    return isinstance(value, (int, str, datetime.date, decimal.Decimal))


def narrow_merge(model: WideModel, statement: exp.Merge, low: Any, high: Any) -> exp.Merge:
    """The MERGE with ``t.k BETWEEN low AND high`` added to its ON clause (``merge_filter``).

    Every batch key lies in the range, so the result is unchanged; Iceberg can then skip the
    target's files whose key statistics lie outside it. Bounds of other types leave the
    statement as it is.
    """
    if not (_plain_bound(low) and _plain_bound(high)):
        return statement
    narrowed = statement.copy()
    column = exp.column(model.primary_key[0], table=engines.T)
    between = exp.Between(this=column, low=exp.convert(low), high=exp.convert(high))
    narrowed.set("on", exp.and_(narrowed.args["on"], between, copy=False))
    return narrowed
