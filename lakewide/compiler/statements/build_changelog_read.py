"""Rule: a source branch fed from its upstream's changelog (Iceberg's, or a lakewide model's own).

``create_changelog_view`` gives every changed row of the upstream (carry-over rows of
copy-on-write rewrites removed) with ``_change_type`` INSERT or DELETE and ``_change_ordinal``
(the commit's position in the range). lakewide projects them through the branch to the model's
columns and feeds them to the merge engine as row kinds:

* a DELETE of a model key that the same commit adds again is an update (``UPDATE_BEFORE``);
* within a commit, retracts come before adds (the fold's arrival order);
* each engine decides what it can take (``retract_policy``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sqlglot import exp

from lakewide.compiler.folds.fold_per_key import reduce_per_key
from lakewide.compiler.folds.fold_rows import Rows, kinds_in
from lakewide.compiler.model.number_rows import ROW_MAKING
from lakewide.compiler.model.ordering import ROW_COLUMN
from lakewide.compiler.model.wide_model import ADD_KINDS, DELETE_KINDS, Branch, WideModel
from lakewide.compiler.statements.build_merge import build_merge
from lakewide.project.config.model_config import POLICY_CHOICES
from lakewide.vocabulary.errors import ModelRunError

CHANGE_TYPE, CHANGE_ORDINAL = "_change_type", "_change_ordinal"
KIND, RAW_KIND = "__lw_change_type", "__lw_raw_change_type"
ORDINAL = "__lw_change_ordinal"


def reread_safe(model: WideModel) -> bool:
    """Whether reading a source's rows a second time leaves the table unchanged."""
    return all(model.aggregate(c).idempotent for c in model.aggregated)


@dataclass(frozen=True)
class ChangelogMerge:
    """The incremental step of a branch reading its upstream's changelog."""

    batch: exp.Select  # pre-reduced batch (staged as the branch's batch view)
    statement: exp.Merge
    deletes: exp.Select  # COUNT(*) of model-level deletes in the read
    refuse_deletes: bool  # partial_update without a delete policy


def refolds_exactly(model: WideModel) -> bool:
    """Whether folding the sources' current rows gives the rows incremental runs keep, so a
    run may re-fold instead of reading changes: every change reaches the engine with its old
    image and is taken back (deduplicate; aggregation whose every function retracts). Not
    first_row, ``ignore_delete``/``ignore_update_before``, ``ignore_retract`` or a function
    that cannot retract (they keep what a source no longer has), nor partial_update (a NULL
    never overwrites, and a delete policy removes or keeps columns other sources gave)."""
    engine = model.engine
    if not engine.takes_retracts or engine.needs_delete_policy:
        return False
    if model.deletes.ignore_delete or model.deletes.ignore_update_before:
        return False
    return all(model.aggregate(c).retracts for c in model.aggregated)


#: SQL a retract row's NULLed columns could change the rows of: generators add or drop rows,
#: aggregates and windows read other rows, a function sqlglot does not know may be either
_ROW_SHAPING = (*ROW_MAKING, exp.AggFunc, exp.Window, exp.Anonymous)


def retract_columns(model: WideModel, branch: Branch) -> tuple[str, ...] | None:
    """The columns of ``branch``'s driving table a changelog read must keep in its retract
    rows (old images); the others may be read as NULL. None: every column.

    Where the engine takes of a retract row no more than its key and its order (first_row and
    ``ignore_delete`` drop retracts; partial_update drops ``-U`` and removes, or refuses, on a
    ``-D``), the branch needs of it the columns its key and sequence fields are computed from
    and those its filters and joins read. Not where a retract's values are folded (aggregation,
    deduplicate, sequence groups), the source carries its own row kinds, a delta join reads
    the branch's changes, or the branch has SQL a NULL could change the rows of."""
    engine, deletes = model.engine, model.deletes
    drops = not engine.takes_retracts or deletes.ignore_delete
    if not (drops or (engine.needs_delete_policy and not model.groups)):
        return None
    if model.row_kind is not None or "delta" in model.joins.values():
        return None
    if any(branch.select.find_all(*_ROW_SHAPING)) or branch.select.find(exp.Star):
        return None
    wanted = [c for c in (*model.primary_key, *model.sequence) if c in branch.owned]
    narrowed = branch.projected(list(dict.fromkeys(wanted)))
    # every part of a name: ``payload.id`` may be a struct column's field, not a qualified one
    return tuple(sorted({p.name for c in narrowed.find_all(exp.Column) for p in c.parts}))


def _unretractable(model: WideModel) -> list[tuple[str, str]]:
    """(column, function) pairs whose aggregate cannot retract and does not ignore retracts."""
    return [
        (c, model.aggregate(c).name)
        for c in model.aggregated
        if model.aggregate(c).refuses_retracts
    ]


def retract_policy(model: WideModel, driver: str) -> tuple[bool, bool]:
    """``(drop_retracts, refuse_deletes)`` for a changelog read of ``driver``.

    first_row and ignore_delete drop retracts; partial_update without a delete policy merges
    updated rows like new ones (their before-images dropped) and refuses deletes; aggregates
    that cannot retract drop retracts only where re-reading is harmless, else it is an error.
    """
    if not model.engine.takes_retracts or model.deletes.ignore_delete:
        return True, False
    if model.engine.needs_delete_policy and not (
        model.deletes.remove_record_on_delete or model.groups
    ):
        return True, True
    stuck = _unretractable(model)
    if not stuck:
        return False, False
    if reread_safe(model):
        return True, False
    column, name = stuck[0]
    raise ModelRunError(
        f"source {driver} updated or deleted rows (read through its Iceberg changelog) and "
        f"{name} on column '{column}' cannot retract the old values; set "
        f"aggregates={{'{column}': {{'function': '{name}', 'ignore_retract': true}}}} or "
        "ignore_delete=true (old values stay counted), keep that source append-only, or run "
        "with --full-refresh",
        model=model.node.name,
    )


def refused_deletes(driver: str, start: str, end: str) -> str:
    """The run-time twin of the compiler's "deletes without a policy" rule, as a message
    formatted at run time with ``{count}`` and the parameters ``start`` and ``end`` name."""
    return (
        f"source {driver} deleted {{count}} row(s) between snapshots {{{start}}} and "
        f"{{{end}}} (read through its changelog); partial_update cannot take deletes "
        f"without a policy; {_escaped(POLICY_CHOICES)}; or run with --full-refresh"
    )


def _escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _qualifier(branch: Branch) -> str | None:
    source = branch.select.args.get("from_")
    table = source.this if source is not None else None
    if isinstance(table, exp.Table):
        return table.alias or table.name
    return None


def _source(model: WideModel, branch: Branch, carried: list[str]) -> exp.Select:
    """The branch's changelog rows as model columns plus KIND and their arrival."""
    return changes_source(model, branch, branch.projected(carried, numbered=True), carried)


def changes_source(
    model: WideModel, branch: Branch, inner: exp.Select, carried: list[str]
) -> exp.Select:
    """``inner`` (the branch's SELECT over its changelog view, giving ``carried`` and each
    row's number as read, ``__lw_row``) plus KIND and the arrival the fold orders ties by
    (``__lw_row``: the change's commit, retracts before adds, then the number): a DELETE of a
    key the same commit adds again is an UPDATE_BEFORE."""
    qualifier = _qualifier(branch)
    inner.select(
        exp.alias_(exp.column(CHANGE_TYPE, table=qualifier), RAW_KIND),
        exp.alias_(exp.column(CHANGE_ORDINAL, table=qualifier), ORDINAL),
        copy=False,
    )
    is_add = exp.Case(
        ifs=[exp.If(this=kinds_in(RAW_KIND, ADD_KINDS), true=exp.Literal.number(1))],
        default=exp.Literal.number(0),
    )
    readded = exp.Window(
        this=exp.Max(this=is_add.copy()),
        partition_by=[*(exp.column(k) for k in model.primary_key), exp.column(ORDINAL)],
    )
    kind = exp.Case(
        ifs=[
            exp.If(
                this=exp.and_(
                    kinds_in(RAW_KIND, DELETE_KINDS),
                    exp.EQ(this=readded, expression=exp.Literal.number(1)),
                ),
                true=exp.Literal.string("UPDATE_BEFORE"),
            )
        ],
        default=exp.column(RAW_KIND),
    )
    order = exp.Add(
        this=exp.Mul(this=exp.column(ORDINAL), expression=exp.Literal.number(2)), expression=is_add
    )
    arrival = exp.Struct(expressions=[order, exp.column(ROW_COLUMN)])
    return exp.select(
        *(exp.column(c) for c in carried), exp.alias_(kind, KIND), exp.alias_(arrival, ROW_COLUMN)
    ).from_(inner.subquery("c"))


def changelog_merge(model: WideModel, branch: Branch, driver: str) -> ChangelogMerge:
    """The branch's batch and MERGE over a changelog view replacing its driving table."""
    drop, refuse = retract_policy(model, driver)
    derived_branch = dataclasses.replace(branch, owned={**branch.owned, KIND: exp.column(KIND)})
    deletes = dataclasses.replace(model.deletes, ignore_delete=model.deletes.ignore_delete or drop)
    derived = dataclasses.replace(
        model,
        row_kind=KIND,
        deletes=deletes,
        columns=[*model.columns, KIND],
        branches=[derived_branch],
    )
    columns = [c for c in derived.stored if c in branch.owned]
    rows = Rows(derived, columns, with_branch=False, has_row_kind=True, branch=branch.index)
    source = _source(model, branch, [c for c in model.columns if c in columns])
    delete_count = (
        exp.select(exp.Count(this=exp.Star()))
        .from_(source.subquery("d"))
        .where(kinds_in(KIND, DELETE_KINDS))
    )
    return ChangelogMerge(
        reduce_per_key(rows, source.copy()),
        build_merge(derived, derived_branch),
        delete_count,
        refuse,
    )
