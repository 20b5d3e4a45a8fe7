"""Rule: the bootstrap of a wide model as one pre-fold per source, assembled per key.

The UNION ALL-with-NULLs model says which source owns which column; sent to Spark as written,
every branch carries every other source's NULL columns, so the statement and Spark's analysis
of it grow with sources x columns (quadratic in the width; benchmarks/width_plans.py). Here
each source is folded on its own over the columns it owns only (the fold a run gives one
source's batch: ``reduce_per_key`` with the source's index as its place), then the folds are
put together per key:

* the folds of the bootstrap and of a batch: by one shuffle of their rows grouped by key,
  one struct of its columns per source (``one_shuffle``; a batch also says per source
  whether it touched the key: ``touched``);
* a column one source owns: that source's folded value (and stored version);
* a column several sources own (or a sequence field, which every source carries): the
  greatest of the owners' ``STRUCT(version, value)`` (the version holds the record's sequence
  and source index, so the greatest is the last non-null record in (sequence, source,
  arrival) order, as the one fold of every source picks it; a source without the key or
  without a non-null value has a NULL version, the oldest);
* a column of a sequence group (``prefold_columns``): the value of the group's last record,
  taken from the fold of the source whose group sequence is the greatest;
* an aggregation column (``prefold_aggregates``): its one source's aggregate, or the
  combination of its sources' aggregates where the function allows one.

Statements then grow with the columns, not with their square. Used for partial_update and
aggregation without row kinds where every column can be put together so (partial_update with
row kinds too, where no delete removes a whole row: ``_kinds_apart``), and for
deduplicate and first_row (``prefold_rows``: the row of the source whose version wins)
(``prefolds``); other models keep the one fold of the union
(``build_bootstrap.bootstrap_query``), and so does the bootstrap of a table no wider than
``UNION_BOOTSTRAP_COLUMNS`` (``bootstraps_apart``).
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.folds.fold_per_key import reduce_per_key
from lakewide.compiler.folds.fold_rows import Rows
from lakewide.compiler.folds.one_shuffle import one_shuffle
from lakewide.compiler.folds.prefold_aggregates import (
    aggregate_helpers,
    aggregated,
    combinable,
    row_count,
)
from lakewide.compiler.folds.prefold_columns import (
    fold_name,
    greatest,
    group_apart,
    group_helpers,
    grouped,
    struct_field,
    typed,
)
from lakewide.compiler.folds.prefold_rows import rows_assembled
from lakewide.compiler.model import versions
from lakewide.compiler.model.wide_model import Branch, WideModel

KEYS = "__lw_keys"

#: The widest table (its stored columns, the key's included) whose bootstrap folds the union of
#: its branches although its sources could be folded apart: each branch carries every other
#: source's NULL columns, which a narrow table pays for less than for a fold and a shuffle per
#: source. benchmarks/fold_paths.py at 300,000 keys, warm bootstrap, JVM CPU (docs: Against
#: peers, *the 4-source bootstrap*): the union fold half the pre-folds' at 34 columns (8 x 4
#: and 16 x 2 + key + seq), even at 42 (10 x 4), 1.4x from 50 (12 x 4).
UNION_BOOTSTRAP_COLUMNS = 40


def prefolds(model: WideModel) -> bool:
    """Whether the model's sources can be folded apart: each source's fold over its own
    columns, put together per key (a batch's always are; the bootstrap's, above a width:
    ``bootstraps_apart``)."""
    if len(model.branches) < 2:
        return False
    if model.engine.picks_rows:  # row kinds included (prefold_rows)
        return True
    if model.row_kind is not None and not _kinds_apart(model):
        return False
    if model.engine.aggregates_values:
        return all(combinable(model, c) for c in model.aggregated)
    return (
        model.engine.updates_columns
        and all(model.group_of(c) is not None for c in model.aggregated)
        and all(group_apart(model, g) for g in model.groups)
    )


def bootstraps_apart(model: WideModel) -> bool:
    """Whether the bootstrap (and a restatement, its fold over some keys) is built from the
    per-source pre-folds: a model that ``prefolds`` wider than ``UNION_BOOTSTRAP_COLUMNS``."""
    return len(model.stored) > UNION_BOOTSTRAP_COLUMNS and prefolds(model)


def _kinds_apart(model: WideModel) -> bool:
    """partial_update with row kinds: a retract touches the columns of its own record's
    sources only (a sequence group's columns, each group fed apart) when no delete removes
    the whole row (``remove_record_on_delete``, a removing group: every source's columns)
    and the key universe comes from the folds (sequence groups: a fold drops ignored
    retracts before it groups its keys)."""
    return (
        model.engine.updates_columns
        and bool(model.groups)
        and not model.deletes.remove_record_on_delete
        and not any(g.removes_record for g in model.groups)
    )


def _columns(model: WideModel, branch: Branch) -> list[str]:
    return [c for c in model.stored if c in branch.owned]


def _kind(model: WideModel, branch: Branch) -> list[str]:
    """The row kind column, when the source carries one (deduplicate, first_row)."""
    return [model.row_kind] if model.row_kind is not None and model.row_kind in branch.owned else []


def source_fold(
    model: WideModel, branch: Branch, rows_of: exp.Select | None = None, *, into_empty: bool = True
) -> exp.Select:
    """The source's rows (``rows_of``: its owned columns, default as the model reads them)
    folded per key over the columns it owns (values and versions)."""
    columns = _columns(model, branch)
    rows = Rows(
        model,
        columns,
        with_branch=False,
        has_row_kind=bool(_kind(model, branch)),
        branch=branch.index,
        into_empty=into_empty,
    )
    carried = [*columns, *_kind(model, branch)]
    return reduce_per_key(
        rows, branch.projected(carried, numbered=True) if rows_of is None else rows_of
    )


def _picked(model: WideModel, column: str) -> list[exp.Expr]:
    """A value column (and its version) taken from its owners' folds."""
    owners = [fold_name(b) for b in model.owners(column)]
    version = model.versions.of(column)
    if len(owners) == 1:
        value = typed(model, column, exp.column(column, table=owners[0]))
        out = [exp.alias_(value, column)]
        if version is not None:
            out.append(exp.alias_(exp.column(version, table=owners[0]), version))
        return out
    assert version is not None  # a column of several owners stores its version
    pairs = [
        exp.Struct(
            expressions=[
                exp.alias_(exp.column(version, table=f), "v"),
                exp.alias_(exp.column(column, table=f), "c"),
            ]
        )
        for f in owners
    ]
    return [
        exp.alias_(
            typed(model, column, struct_field(greatest([p.copy() for p in pairs]), "c")), column
        ),
        exp.alias_(struct_field(greatest(pairs), "v"), version),
    ]


def _sequence(model: WideModel, field: str) -> exp.Expr:
    """A sequence field of the key's last record: the greatest sequence over the sources (a
    source without the key has NULL fields, the oldest)."""
    folds = [fold_name(b) for b in model.branches]
    if len(model.sequence) == 1:
        return exp.alias_(greatest([exp.column(field, table=f) for f in folds]), field)
    structs = [
        exp.Struct(
            expressions=[
                exp.alias_(exp.column(s, table=f), f"s{i}") for i, s in enumerate(model.sequence)
            ]
        )
        for f in folds
    ]
    return exp.alias_(struct_field(greatest(structs), f"s{model.sequence.index(field)}"), field)


def output_names(model: WideModel) -> list[str]:
    """The bootstrap fold's columns, in ``bootstrap_query``'s order: the table's columns
    (stored, then versions) when it stores versions or its fold has helper columns (sequence
    groups, aggregated columns), else the keys first."""
    table = model.table_columns
    if len(table) > len(model.stored) or model.groups or model.aggregated:
        return table
    return [*model.primary_key, *(c for c in model.stored if c not in model.primary_key)]


def assembled(
    model: WideModel, folds: dict[int, exp.Select], *, helpers: bool = False
) -> exp.Select:
    """The per-source ``folds`` (branch index -> :func:`source_fold`, reads bound) put
    together per key: the bootstrap's rows (``helpers``: a batch's, with the helper columns
    its MERGE reads, as the union's fold has them, and per source whether it touched the
    key)."""
    if model.engine.picks_rows:
        rows = rows_assembled(model, folds, helpers=helpers)
        return _with_touched(model, rows) if helpers else rows
    keys = model.primary_key
    projections: dict[str, exp.Expr] = {k: exp.column(k, table=KEYS) for k in keys}
    for column in model.stored:
        group = model.group_of(column)
        if column in model.sequence:
            projections[column] = _sequence(model, column)
        elif group is not None:
            projections[column] = grouped(model, group, column)
        elif model.engine.aggregates_values and column not in keys:
            projections.update((p.alias_or_name, p) for p in aggregated(model, column))
        elif column not in keys:
            projections.update((p.alias_or_name, p) for p in _picked(model, column))
    if model.versions.count:
        projections[versions.ROW_COUNT] = row_count(model)
    names = output_names(model)
    if helpers:
        engine = model.engine
        extra = aggregate_helpers(model) if engine.aggregates_values else group_helpers(model)
        projections.update((p.alias_or_name, p) for p in extra)
        names = [*names, *(p.alias_or_name for p in extra)]
    select = exp.select(*(projections[n] for n in names), copy=False)
    if helpers:
        select = _with_touched(model, select)
    read: dict[str, set[str]] = {}
    for node in select.find_all(exp.Column):
        read.setdefault(node.table, set()).add(node.name)
    for branch in model.branches:
        fold = folds[branch.index]
        # outputs nothing reads (a batch's helper counts, in the bootstrap) are not computed:
        # Spark computed them in a CTE read twice (8% of an aggregation bootstrap at 16 x 16)
        wanted = read.get(fold_name(branch), set()) | set(keys)
        fold.set("expressions", [e for e in fold.expressions if e.alias_or_name in wanted])
        select = select.with_(fold_name(branch), as_=fold, copy=False)
    # in one shuffle for every engine here, measured at 16 x 16, 200,000 keys
    # (benchmarks/logs.md), JVM CPU: partial_update with a sequence field's bootstrap SELECT
    # 134.2 / 143.5 s with the folds LEFT JOINed to the union of their keys, 67.9 / 60.9 s so
    # (the JOIN rebuild 86.5 / 67.1 s); a batch of 1% of the keys in every source, its Stage
    # 36.1 (aggregation) and 31.7 s (partial_update) joined, 15.3 and 13.6 s so
    return one_shuffle(model, select.from_(KEYS, copy=False), KEYS)


def touched(index: int) -> str:
    """Helper column of a batch: whether source ``index`` has a record of the key."""
    return f"__lw_in_{index}"


def _with_touched(model: WideModel, select: exp.Select) -> exp.Select:
    """``select`` (over the folds) with per source whether it touched the key."""
    for branch in model.branches:
        select.select(
            exp.alias_(present(model, branch), touched(branch.index)), append=True, copy=False
        )
    return select


def present(model: WideModel, branch: Branch) -> exp.Expr:
    """Whether the source's fold has the key (it touched it)."""
    return exp.column(model.primary_key[0], table=fold_name(branch)).is_(exp.null()).not_()


def prefolded_bootstrap(model: WideModel) -> exp.Select:
    """The bootstrap's fold of every source, built from per-source pre-folds."""
    return assembled(model, {b.index: source_fold(model, b) for b in model.branches})
