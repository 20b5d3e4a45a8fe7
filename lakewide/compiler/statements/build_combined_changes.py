"""Rule: several sources read as changes (old and new images) folded per key together and
MERGEd at once, as the combined batch folds several sources' appended rows
(lakewide.compiler.statements.build_merge): one target scan and one commit for every source whose
upstream was updated or deleted in place, instead of one per source.

Each branch's changelog rows get their row kinds as a lone branch's do
(lakewide.compiler.statements.build_changelog_read: a DELETE the same commit adds again is an
update, retracts before adds), then the fold takes them in (sequence, source, change order) order,
the bootstrap's order. Where the engine would refuse a delete (partial_update without a
policy) or a function cannot retract, there is no combined plan: each source merges on its
own and says so there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from lakewide.compiler.folds.build_prefolds import assembled, prefolds, source_fold, touched
from lakewide.compiler.folds.fold_per_key import reduce_per_key
from lakewide.compiler.folds.fold_rows import Rows
from lakewide.compiler.model.ordering import BRANCH_COLUMN
from lakewide.compiler.model.wide_model import Branch, WideModel
from lakewide.compiler.statements.build_bootstrap import owned_branch, tagged_branch, union_all
from lakewide.compiler.statements.build_changelog_read import (
    KIND,
    changes_source,
    retract_policy,
)
from lakewide.compiler.statements.build_merge import build_combined_merge
from lakewide.vocabulary.errors import ModelRunError


@dataclass(frozen=True)
class CombinedChanges:
    """The combined changes step: its batch (staged as COMBINED_VIEW) and MERGE."""

    batch: exp.Select
    statement: exp.Merge


def _changes(
    model: WideModel, branch: Branch, bind: Callable[[Branch, exp.Select], exp.Select]
) -> exp.Select:
    """The branch's changelog rows as every model column (NULL where it owns none), its
    position, KIND and arrival."""
    inner = bind(branch, tagged_branch(model, branch))
    carried = [*model.columns, BRANCH_COLUMN]
    return changes_source(model, branch, inner, carried)


def _prefolded(
    model: WideModel,
    derived: WideModel,
    bind: Callable[[Branch, exp.Select], exp.Select],
) -> exp.Select:
    """The batch from per-source pre-folds of each branch's changelog rows over the columns
    it owns (``build_prefolds``), with per source whether it touched the key."""
    folds = {}
    for branch, kinded in zip(model.branches, derived.branches):
        inner = bind(branch, owned_branch(model, branch))
        carried = [c for c in model.stored if c in branch.owned]
        changes = changes_source(model, branch, inner, carried)
        folds[branch.index] = source_fold(derived, kinded, changes, into_empty=False)
    return assembled(derived, folds, helpers=True)


def combined_changes(
    model: WideModel, bind: Callable[[Branch, exp.Select], exp.Select] = lambda _, q: q
) -> CombinedChanges | None:
    """The batch and MERGE folding every branch's changelog rows together (a branch with no
    changes this run reads an empty changelog view; ``bind`` puts each branch's views in);
    None where a source must merge alone."""
    if model.row_kind is not None or len(model.branches) < 2:
        return None
    try:
        drop, refuse = retract_policy(model, "")
    except ModelRunError:
        return None
    if refuse:
        return None
    branches = [
        dataclasses.replace(b, owned={**b.owned, KIND: exp.column(KIND)}) for b in model.branches
    ]
    deletes = dataclasses.replace(model.deletes, ignore_delete=model.deletes.ignore_delete or drop)
    derived = dataclasses.replace(
        model, row_kind=KIND, deletes=deletes, columns=[*model.columns, KIND], branches=branches
    )
    if prefolds(derived):  # deduplicate, first_row: each source folded on its own
        return CombinedChanges(_prefolded(model, derived, bind), build_combined_merge(derived))
    rows = Rows(derived, derived.stored, with_branch=True, has_row_kind=True)
    source = union_all([_changes(model, b, bind) for b in model.branches])
    batch = reduce_per_key(rows, source)
    for branch in model.branches:
        mine = exp.EQ(this=exp.column(BRANCH_COLUMN), expression=exp.Literal.number(branch.index))
        batch.select(
            exp.alias_(exp.func("BOOL_OR", mine), touched(branch.index)), append=True, copy=False
        )
    return CombinedChanges(batch, build_combined_merge(derived))
