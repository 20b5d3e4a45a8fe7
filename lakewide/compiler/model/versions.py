"""Rule: the stored versions that make a table independent of how its records were split into runs.

A record's place in the contract's order is ``(sequence fields, source, arrival)``. A folded
batch knows the places of its own records, but the stored row does not remember which record
set each column, so a record that arrives in a later run than a record it sorts *after* would
be judged by the row-level sequence alone. Every column whose value is picked by record order
(partial_update columns, the aggregates ``last_value``, ``last_non_null_value``,
``first_value``, ``first_non_null_value``) therefore stores, next to its value, the version of
the record that set it: ``__lw_v_<column> STRUCT<s0.., b>`` (its sequence fields and source
index; arrival needs no storing, a later run always arrives later). deduplicate and first_row
pick whole rows and store one row version ``__lw_v``.

Versions are stored only where they change a result: a model with a sequence field, or a
column with several owning sources (the source index orders their records), or first_value
(whose stored NULL may be a first record's value). Rows keep no version of a deleted row, so
records older than a delete that arrive after it come back (see docs/concepts/run-boundaries.md).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlglot import exp

from lakewide.compiler.aggregates.column_aggregates import ColumnAggregate
from lakewide.project.config.engines.base import Engine


class _OwningBranch(Protocol):
    @property
    def owned(self) -> Collection[str]: ...


class VersionedModel(Protocol):
    """What the versions are resolved from: the analyzed model
    (``lakewide.compiler.model.wide_model.WideModel``, which resolves its versions here)."""

    @property
    def engine(self) -> Engine: ...
    @property
    def primary_key(self) -> Sequence[str]: ...
    @property
    def sequence(self) -> Sequence[str]: ...
    @property
    def row_kind(self) -> str | None: ...
    @property
    def branches(self) -> Sequence[_OwningBranch]: ...
    @property
    def stored(self) -> list[str]: ...
    def aggregate(self, column: str) -> ColumnAggregate: ...
    def group_of(self, column: str) -> object | None: ...
    def owners(self, column: str) -> Sequence[_OwningBranch]: ...


PREFIX = "__lw_v_"
ROW_VERSION = "__lw_v"
ROW_COUNT = "__lw_rows"
NON_NULL_PREFIX = "__lw_nn_"
BRANCH_FIELD = "b"
# functions whose retraction leaves a value (0, 1) where no input remains
NULLABLE_BY_RETRACT = ("sum", "product")


@dataclass(frozen=True)
class Versions:
    """Which stored columns carry a version, and whether rows carry one."""

    columns: tuple[str, ...] = ()  # value columns with a ``__lw_v_<column>`` version
    # of those, partial_update columns of one source and one sequence field: the version is
    # the bare sequence value (no source index to store; a NULL sequence is as old as "never
    # set", and the value's presence says whether the batch set it) - half the stored leaves
    plain: tuple[str, ...] = ()
    row: bool = False  # deduplicate / first_row: one ``__lw_v`` per row
    # aggregation over upstream rows (no row_kind_column of its own): how many upstream rows
    # a key aggregates, so that a key whose rows were all deleted upstream is removed, as a
    # rebuild would not have it
    count: bool = False
    # of those models, the sum/product columns that can see retracts: how many non-null
    # upstream values each holds (``__lw_nn_<column>``), so that a value whose every non-null
    # input was retracted is NULL, as a rebuild from the remaining rows would have it (not
    # 0 or 1, what subtracting or dividing leaves)
    non_null: tuple[str, ...] = ()

    def of(self, column: str) -> str | None:
        """The version column of ``column``, if it has one."""
        return version_name(column) if column in self.columns else None

    def stored(self, present: list[str]) -> list[str]:
        """Version columns of the value columns in ``present`` (plus the row version)."""
        out = [version_name(c) for c in present if c in self.columns]
        out += [non_null_name(c) for c in present if c in self.non_null]
        return out + ([ROW_VERSION] if self.row else []) + ([ROW_COUNT] if self.count else [])


def version_name(column: str) -> str:
    """Name of the hidden column holding ``column``'s version."""
    return f"{PREFIX}{column}"


def non_null_name(column: str) -> str:
    """Name of the hidden column counting ``column``'s non-null inputs."""
    return f"{NON_NULL_PREFIX}{column}"


def picks(model: VersionedModel, column: str) -> str | None:
    """``'last'`` / ``'first'`` when the column's value is one record's value chosen by order."""
    if model.engine.updates_columns:
        return "last"
    if model.engine.aggregates_values:
        return model.aggregate(column).function.picks
    return None


def resolve(model: VersionedModel) -> Versions:
    """The versions ``model`` stores (computed once, from the model's own branches)."""
    if model.engine.picks_rows:
        return Versions(row=len(model.branches) > 1)
    fixed = {*model.primary_key, *model.sequence, *([model.row_kind] if model.row_kind else [])}
    columns = []
    for column in model.stored:
        if column in fixed or model.group_of(column) is not None:
            continue
        pick = picks(model, column)
        if pick is None:
            continue
        owners = len(model.owners(column))
        first_value = (
            model.engine.aggregates_values and model.aggregate(column).name == "first_value"
        )
        if model.sequence or owners > 1 or first_value:
            columns.append(column)
    count = model.engine.aggregates_values and model.row_kind is None
    non_null = tuple(
        c
        for c in model.stored
        if count
        and c not in fixed
        and model.aggregate(c).name in NULLABLE_BY_RETRACT
        and model.aggregate(c).retracts
    )
    plain = tuple(
        c
        for c in columns
        if model.engine.updates_columns and len(model.sequence) == 1 and len(model.owners(c)) == 1
    )
    return Versions(columns=tuple(columns), count=count, plain=plain, non_null=non_null)


def version_struct(sequence: list[str], branch: exp.Expr) -> exp.Struct:
    """``STRUCT(seq AS s0, .., branch AS b)``: a record's place, without its arrival."""
    fields = [exp.alias_(exp.column(name), f"s{i}") for i, name in enumerate(sequence)]
    return exp.Struct(expressions=[*fields, exp.alias_(branch, BRANCH_FIELD)])


def newer_plain(column: str, name: str, incoming: str, stored: str) -> exp.Expr:
    """A plain version (the bare sequence value) takes the column: the batch set the column
    and the stored version is NULL (never set, or set by a NULL sequence: both oldest) or not
    greater."""
    present = exp.column(column, table=incoming).is_(exp.null()).not_(copy=False)
    old = exp.column(name, table=stored)
    compare = exp.func(
        "COALESCE",
        exp.GTE(this=exp.column(name, table=incoming), expression=old.copy()),
        exp.false(),
        copy=False,
    )
    return exp.and_(
        present, exp.Paren(this=exp.or_(old.is_(exp.null()), compare, copy=False)), copy=False
    )


def newer(name: str, incoming: str, stored: str, *, older: bool = False) -> exp.Expr:
    """The incoming version ``incoming.name`` takes the column: it exists and is >= the stored
    ``stored.name``. A stored NULL version means "never set". ``older`` turns the test into
    "strictly before" (first_* functions keep the first record; ties arrived later and lose).
    """

    def new() -> exp.Column:
        return exp.column(name, table=incoming)

    def old() -> exp.Column:
        return exp.column(name, table=stored)

    compare = (exp.LT if older else exp.GTE)(this=new(), expression=old())
    return exp.and_(
        new().is_(exp.null()).not_(copy=False),
        exp.Paren(this=exp.or_(old().is_(exp.null()), compare, copy=False)),
        copy=False,
    )
