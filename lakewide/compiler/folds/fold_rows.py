"""The rows a merge engine folds per key: one source's batch, or every source for the bootstrap.

``Rows`` says which stored columns they carry and which predicates apply (retracts, deletes,
record order); the fold and MERGE rules (``build_folds``, ``build_whens``) take it. The
contract is docs/concepts/merge-engines.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import overload

from sqlglot import exp

from lakewide.compiler.aggregates.aggregate_inputs import filtered
from lakewide.compiler.model import versions
from lakewide.compiler.model.ordering import BRANCH_COLUMN, POSITION_COLUMN, ordering
from lakewide.compiler.model.wide_model import (
    DELETE_KINDS,
    RETRACT_KINDS,
    UPDATE_BEFORE_KINDS,
    Group,
    WideModel,
)

T, S = "t", "s"
LAST_DELETE = "__lw_last_delete"


def helper(name: str) -> str:
    """Name of a helper column of a folded batch (never stored)."""
    return f"__lw_{name}"


def kinds_in(column: str, kinds: tuple[str, ...]) -> exp.Expr:
    """Whether ``column`` holds one of the row kinds ``kinds`` (NULL counts as no)."""
    test = exp.In(this=exp.column(column), expressions=[exp.Literal.string(k) for k in kinds])
    return exp.func("COALESCE", test, exp.false())


def case(condition: exp.Expr, then: exp.Expr, otherwise: exp.Expr) -> exp.Case:
    """``CASE WHEN condition THEN then ELSE otherwise END``."""
    return exp.Case(ifs=[exp.If(this=condition, true=then)], default=otherwise)


def any_not_null(fields: list[str], table: str | None = None) -> exp.Expr:
    """Whether any of ``fields`` is not NULL."""
    return exp.or_(*(exp.column(f, table=table).is_(exp.null()).not_() for f in fields))


def count_where(where: exp.Expr | None) -> exp.Expr:
    """``COUNT(*)`` of the rows satisfying ``where`` (every row when None)."""
    return filtered(exp.Count(this=exp.Star()), where)


def positive(name: str) -> exp.Expr:
    """``s.<name> > 0`` for a helper count of the folded batch."""
    return exp.GT(this=exp.column(name, table=S), expression=exp.Literal.number(0))


@dataclass
class Rows:
    """The rows being folded: which stored columns they carry and what predicates apply."""

    model: WideModel
    columns: list[str]  # stored columns present in the rows, model order (key included)
    with_branch: bool
    has_row_kind: bool
    branch: int | None = None  # one source's batch: its branch index (versions name it)
    into_empty: bool = False  # the bootstrap: folded into an empty table (no MERGE)

    @property
    def retracts(self) -> bool:
        """Whether retract rows reach the folds (ignore_delete and first_row drop them)."""
        return (
            self.has_row_kind
            and not self.model.deletes.ignore_delete
            and self.model.engine.takes_retracts
        )

    @property
    def removes_on_delete(self) -> bool:
        return self.retracts and self.model.deletes.remove_record_on_delete

    def retract(self) -> exp.Expr:
        assert self.model.row_kind
        return kinds_in(self.model.row_kind, RETRACT_KINDS)

    def is_delete(self) -> exp.Expr:
        assert self.model.row_kind
        return kinds_in(self.model.row_kind, DELETE_KINDS)

    def version_of(self, column: str) -> exp.Expr:
        """What ``column``'s stored version holds for a record: its place, or just its sequence
        value for a plain version."""
        if column in self.model.versions.plain:
            return exp.column(self.model.sequence[0])
        return self.version()

    def version(self) -> exp.Struct:
        """A record's place without its arrival: what a versioned column stores."""
        source = (
            exp.column(BRANCH_COLUMN)
            if self.with_branch
            else exp.Literal.number(self.branch if self.branch is not None else 0)
        )
        return versions.version_struct(self.model.sequence, source)

    def order(self, fields: list[str] | None = None) -> exp.Expr:
        """The records' order: their position in the fold's sort (``reduce_per_key``) for the
        model's sequence fields; the ordering STRUCT for a sequence group's own fields."""
        if fields is None or fields == self.model.sequence:
            return exp.column(POSITION_COLUMN)
        return ordering(fields, with_branch=self.with_branch)

    def prefilter(self) -> exp.Expr | None:
        """Rows dropped before folding: ignored retracts; ``-U`` under remove_record_on_delete
        or ignore_update_before."""
        if self.has_row_kind and not self.retracts:
            return exp.not_(self.retract())
        if self.removes_on_delete:
            return exp.not_(exp.and_(self.retract(), exp.not_(self.is_delete())))
        if self.retracts and self.model.deletes.ignore_update_before:
            assert self.model.row_kind
            return exp.not_(kinds_in(self.model.row_kind, UPDATE_BEFORE_KINDS))
        return None

    def removing_groups(self) -> list[Group]:
        """The ``remove_record_on_sequence_group`` groups whose retracts reach this fold."""
        if not self.retracts:
            return []
        return [
            g
            for g in self.model.groups
            if g.sequence and g.removes_record and any(c in self.columns for c in g.all_columns)
        ]

    def windows(self) -> list[list[exp.Expr]]:
        """Extra per-row columns computed with window functions before the fold, in layers
        (a layer may use the columns of the layers before it)."""
        keys = [exp.column(k) for k in self.model.primary_key]
        if self.removes_on_delete:
            last = exp.Window(
                this=exp.Max(
                    this=exp.If(this=self.is_delete(), true=self.order(), false=exp.null())
                ),
                partition_by=keys,
            )
            return [[exp.alias_(last, LAST_DELETE)]]
        removing = self.removing_groups()
        if not removing:
            return []
        # a -D of a removing group removes the row when its group sequence is >= that of
        # every record before it (in record order); the fold keeps the rows after the last one
        removes = exp.or_(*(self._removes(g) for g in removing))
        last = exp.Window(
            this=exp.Max(this=exp.If(this=removes, true=self.order(), false=exp.null())),
            partition_by=keys,
        )
        return [
            [exp.alias_(self._before(g), helper(f"gmax_{g.index}")) for g in removing],
            [exp.alias_(last, LAST_DELETE)],
        ]

    def _group_sequence(self, group: Group) -> exp.Expr:
        """The group's sequence as one comparable value: NULL when the record is not in it."""
        fields = exp.Struct(expressions=[exp.column(f) for f in group.sequence])
        return exp.If(this=any_not_null(group.sequence), true=fields, false=exp.null())

    def _before(self, group: Group) -> exp.Window:
        """The greatest group sequence among the key's records before this one."""
        frame = exp.WindowSpec(
            kind="ROWS",
            start="UNBOUNDED",
            start_side="PRECEDING",
            end=exp.Literal.number(1),
            end_side="PRECEDING",
        )
        return exp.Window(
            this=exp.Max(this=self._group_sequence(group)),
            partition_by=[exp.column(k) for k in self.model.primary_key],
            order=exp.Order(expressions=[exp.Ordered(this=self.order(), nulls_first=True)]),
            spec=frame,
        )

    def _removes(self, group: Group) -> exp.Expr:
        """Whether the record is a -D of ``group`` that removes the row (see ``windows``)."""
        before = exp.column(helper(f"gmax_{group.index}"))
        return exp.and_(
            self.is_delete(),
            any_not_null(group.sequence),
            exp.or_(
                before.is_(exp.null()),
                exp.GTE(this=self._group_sequence(group), expression=before.copy()),
            ),
        )

    def removes_rows(self) -> bool:
        """Whether a delete in the rows drops the records before it from the fold."""
        return self.removes_on_delete or bool(self.removing_groups())

    def live(self) -> exp.Expr | None:
        """Rows after the key's last removing delete (remove_record_on_delete, or a group's
        under remove_record_on_sequence_group), else every row."""
        if not self.removes_rows():
            return None
        return exp.or_(
            exp.column(LAST_DELETE).is_(exp.null()),
            exp.GT(this=self.order(), expression=exp.column(LAST_DELETE)),
        )

    def aggregate_retracts(self, column: str) -> bool:
        """Whether retract rows reach ``column``'s aggregate (``ignore_retract`` drops them,
        for every function, as Paimon's ``fields.<col>.ignore-retract``)."""
        return self.retracts and self.model.aggregate(column).retracts

    def values(self) -> list[str]:
        """Stored non-key columns present in the rows."""
        return [c for c in self.columns if c not in self.model.primary_key]


@overload
def and_all(first: exp.Expr, /, *parts: exp.Expr | None) -> exp.Expr: ...


@overload
def and_all(*parts: exp.Expr | None) -> exp.Expr | None: ...


def and_all(*parts: exp.Expr | None) -> exp.Expr | None:
    """The AND of the given conditions (None ones skipped; None when none is left)."""
    present = [p for p in parts if p is not None]
    return exp.and_(*present) if present else None
