"""Rule: one column-scoped ``MERGE INTO`` per source branch."""

from __future__ import annotations

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
    return engines.Rows(model, columns, with_branch=False, has_row_kind=has_kind)


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
