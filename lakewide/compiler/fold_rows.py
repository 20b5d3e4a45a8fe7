"""The rows a merge engine folds per key: one source's batch, or every source for the bootstrap.

``Rows`` says which stored columns they carry and which predicates apply (retracts, deletes,
record order); the fold and MERGE rules (``build_folds``, ``build_whens``) take it. The
contract is the README's "Merge semantics".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import overload

from sqlglot import exp

from lakewide.compiler import versions
from lakewide.compiler.aggregate_inputs import filtered
from lakewide.compiler.ordering import BRANCH_COLUMN, POSITION_COLUMN, ordering
from lakewide.compiler.wide_model import DELETE_KINDS, RETRACT_KINDS, UPDATE_BEFORE_KINDS, WideModel

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

    @property
    def retracts(self) -> bool:
        """Whether retract rows reach the folds (ignore_delete and first_row drop them)."""
        return (
            self.has_row_kind
            and not self.model.deletes.ignore_delete
            and self.model.engine != "first_row"
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

    def window(self) -> list[exp.Expr]:
        """Extra per-row columns computed with window functions before the fold."""
        if not self.removes_on_delete:
            return []
        last = exp.Window(
            this=exp.Max(this=exp.If(this=self.is_delete(), true=self.order(), false=exp.null())),
            partition_by=[exp.column(k) for k in self.model.primary_key],
        )
        return [exp.alias_(last, LAST_DELETE)]

    def live(self) -> exp.Expr | None:
        """Rows after the key's last delete (remove_record_on_delete), else every row."""
        if not self.removes_on_delete:
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
