"""Rule: one column-scoped ``MERGE INTO`` per source branch."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler import partial_update
from lakewide.compiler.build_bootstrap import reduce_per_key
from lakewide.compiler.wide_model import Branch, WideModel

TARGET, SOURCE = "t", "s"


def batch_view(branch: Branch) -> str:
    """Name of the temporary view holding a branch's staged, pre-reduced batch."""
    return f"__lw_batch_{branch.index + 1}"


def build_batch(model: WideModel, branch: Branch) -> exp.Select:
    """The branch's new rows, pre-reduced to one row per key with the engine's semantics.

    The executor materializes it (a MERGE source must be deterministic and the arrival order
    used for ties is not), then MERGEs from the materialized view.
    """
    columns = [c for c in model.columns if c in branch.owned]
    return reduce_per_key(model, branch.projected(columns), columns, with_branch=False)


def build_merge(model: WideModel, branch: Branch) -> exp.Merge:
    """MERGE the branch's staged batch into only the columns the branch owns."""
    columns = [c for c in model.columns if c in branch.owned]
    on = exp.and_(*(exp.EQ(this=exp.column(k, table=TARGET), expression=exp.column(k, table=SOURCE))
                    for k in model.primary_key))
    updates = [exp.EQ(this=exp.column(c, table=TARGET),
                      expression=partial_update.merge_value(model, c, SOURCE, TARGET))
               for c in columns if c not in model.primary_key]
    insert = exp.Insert(this=exp.Tuple(expressions=[exp.column(c) for c in columns]),
                        expression=exp.Tuple(expressions=[exp.column(c, table=SOURCE)
                                                          for c in columns]))
    whens = []
    if updates:
        whens.append(exp.When(matched=True, source=False, then=exp.Update(expressions=updates)))
    whens.append(exp.When(matched=False, source=False, then=insert))
    return exp.Merge(this=model.node.relation.table(alias=TARGET), using=exp.table_(batch_view(branch), alias=SOURCE),
                     on=on, whens=exp.Whens(expressions=whens))
