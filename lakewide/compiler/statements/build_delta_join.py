"""Rule: the statements of a ``delta`` join (incremental view maintenance of a join).

A run re-derives, after merging the new fact rows, the model keys whose dimension-fed columns
may no longer be what a rebuild gives:

1. the keys of fact rows joined to changed dimension keys (``changed_keys``: old and new
   images of the dimension's changes; ``dimension_affected``), when the dimension changed;
2. the keys of the run's changed fact rows, before and after the change (``facts_affected``:
   both images of the fact table's changelog), when the fact table had updates or deletes:
   a retraction merged with the *current* dimension takes away a value other than the one
   its row added, the key a moved or deleted row left is re-derived by no remaining row, and
   partial_update never lets a NULL (a missing dimension row) overwrite a value;
3. every key (``rederived_facts`` without a filter), when either side's changes cannot be
   read.

It reads *every* fact row of those keys at the driving table's pinned snapshot and folds the
branch over them with the engine's rule (``rederive_batch``): exactly what a rebuild computes
for the dimension-fed columns, which this branch alone owns (``delta_join``), NULL where the
dimension row went; then replaces those columns (and their stored versions and counts) of
the matched keys (``rederive_merge``); nothing else of the row changes.

Recomputing the whole fold of the affected keys, never re-applying rows, keeps every engine's
result exact, sums included.
"""

from __future__ import annotations

import dataclasses

from sqlglot import exp

from lakewide.compiler.folds.fold_rows import S, T
from lakewide.compiler.model.delta_join import DeltaJoin
from lakewide.compiler.model.versions import non_null_name
from lakewide.compiler.model.wide_model import WideModel
from lakewide.compiler.statements.build_merge import build_batch, keys_match, merge_source
from lakewide.compiler.trees.rewrite import driving_table, replace_tables

SMALL = "__lw_small"  # alias of the broadcast side of a semi join


def keys_view(join: DeltaJoin, number: int) -> str:
    """The temporary view of the changed join-key values of delta join ``number``."""
    return f"__lw_dkeys_{join.branch.index + 1}_{number}"


def changes_view(join: DeltaJoin, number: int) -> str:
    """The temporary view of the dimension's changed rows read for delta join ``number``."""
    return f"__lw_dchanges_{join.branch.index + 1}_{number}"


def batch_view(join: DeltaJoin, number: int) -> str:
    """The staged re-derived batch of delta join ``number``."""
    return f"__lw_rederived_{join.branch.index + 1}_{number}"


def changed_keys(join: DeltaJoin, changes: str) -> exp.Select:
    """The distinct dimension key values among the changed rows (every image they carry)."""
    return exp.select(*(exp.column(k) for k in join.keys)).from_(changes).distinct()


def _columns(model: WideModel, join: DeltaJoin) -> list[str]:
    wanted = {*model.primary_key, *model.sequence, *join.columns}
    return [c for c in model.stored if c in wanted]


def facts_view(join: DeltaJoin, number: int) -> str:
    """The temporary view of the fact rows derived again for delta join ``number``."""
    return f"__lw_dfacts_{join.branch.index + 1}_{number}"


def _semi_join(
    driver: str, alias: str, left: list[exp.Expr], right: exp.Expr, names: list[str]
) -> exp.Select:
    """``SELECT <alias>.* FROM driver AS alias LEFT SEMI JOIN right ON left = right.names``,
    the small right side broadcast (planning-time broadcasts are off: the MERGE pruning
    settings, ``lakewide.spark.runtime``)."""
    on = exp.and_(
        *(exp.EQ(this=v.copy(), expression=exp.column(n, table=SMALL)) for v, n in zip(left, names))
    )
    return (
        exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier(alias)))
        .from_(exp.table_(driver, alias=alias))
        .join(right, on=on, join_type="LEFT SEMI")
        .hint(exp.Anonymous(this="BROADCAST", expressions=[exp.to_identifier(SMALL)]))
    )


def dimension_affected(model: WideModel, join: DeltaJoin, driver: str, keys: str) -> exp.Select:
    """The model keys of the driving table's rows (view ``driver``) joined to a changed
    dimension key of view ``keys``."""
    key_values = [join.branch.owned[k] for k in model.primary_key]
    hit = _semi_join(
        driver, join.driver_alias, list(join.fact), exp.table_(keys, alias=SMALL), list(join.keys)
    )
    return hit.select(
        *(exp.alias_(v.copy(), k) for v, k in zip(key_values, model.primary_key)), append=False
    ).distinct()


def facts_affected(model: WideModel, join: DeltaJoin, changed: str) -> exp.Select:
    """The model keys of the run's changed fact rows (view ``changed``: the branch's read,
    both images of a changelog): where a fact row was and where it is now."""
    key_values = [join.branch.owned[k] for k in model.primary_key]
    return (
        exp.select(*(exp.alias_(v.copy(), k) for v, k in zip(key_values, model.primary_key)))
        .from_(exp.table_(changed, alias=join.driver_alias))
        .distinct()
    )


def rederived_facts(
    model: WideModel, join: DeltaJoin, driver: str, affected: exp.Query | None
) -> exp.Select:
    """The rows of the driving table (read through view ``driver``) to derive again: every
    row of a model key in ``affected`` (``dimension_affected``, ``facts_affected`` or their
    union; every row when None). The filter is on the driving table alone, before any join."""
    alias = join.driver_alias
    if affected is None:
        return exp.select(exp.Star()).from_(exp.table_(driver, alias=alias))
    key_values = [join.branch.owned[k] for k in model.primary_key]
    return _semi_join(driver, alias, key_values, affected.subquery(SMALL), list(model.primary_key))


def rederive_batch(
    model: WideModel, join: DeltaJoin, views: dict[str, str], facts: str
) -> exp.Select:
    """The branch over the fact rows of view ``facts`` (``rederived_facts``), folded per key.

    ``views``: relation key -> the view to read it through (the pinned snapshots).
    """
    branch = join.branch
    driver = driving_table(branch.select)
    assert driver is not None
    derived = dataclasses.replace(
        branch,
        select=replace_tables(branch.select, {**views, driver: facts}),
        owned={c: branch.owned[c] for c in _columns(model, join)},
    )
    return build_batch(model, derived)


def rederive_merge(model: WideModel, join: DeltaJoin, batch: str) -> exp.Merge:
    """Replace the dimension-fed columns of the re-derived keys, with their versions and
    their counts of non-null inputs (a later retraction of a sum must find the rebuilt
    count)."""
    sets = []
    for column in join.columns:
        hidden = [model.versions.of(column)]
        hidden += [non_null_name(column)] if column in model.versions.non_null else []
        for name in (column, *(h for h in hidden if h)):
            sets.append(
                exp.EQ(this=exp.column(name, table=T), expression=exp.column(name, table=S))
            )
    return exp.Merge(
        this=model.node.relation.table(alias=T),
        using=merge_source(model, batch),
        on=keys_match(model),
        whens=exp.Whens(
            expressions=[exp.When(matched=True, source=False, then=exp.Update(expressions=sets))]
        ),
    )
