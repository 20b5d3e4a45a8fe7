"""Rule: one column-scoped ``MERGE INTO`` per source branch."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler import partial_update
from lakewide.compiler.build_bootstrap import reduce_per_key
from lakewide.compiler.wide_model import Branch, WideModel

TARGET, SOURCE = "t", "s"


def build_merge(model: WideModel, branch: Branch) -> exp.Merge:
    """MERGE the branch's batch, pre-reduced to one row per key, into only its own columns."""
    columns = [c for c in model.columns if c in branch.owned]
    batch = reduce_per_key(model, branch.projected(columns), columns, with_branch=False)
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
    return exp.Merge(this=model.node.relation.table(alias=TARGET), using=batch.subquery(SOURCE),
                     on=on, whens=exp.Whens(expressions=whens))
