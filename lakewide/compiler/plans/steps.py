"""A model's compiled run plans: ordered steps of sqlglot trees with named parameters.

The compiler emits every plan a run can take (``lakewide.compiler.plans.run_plan``); the executor
binds the parameters (snapshot ids, sequence numbers, key bounds: ``:name`` placeholders in the
trees, or named fields of a step) and hands each step to the Spark adapter. It never builds SQL.

Parameters a run binds:

* ``pin_<n>``: the snapshot upstream table ``n`` is pinned at (``ModelPlans.pins``);
* ``start_<b>`` / ``end_<b>``: branch ``b``'s consumed snapshot and the one it reads up to;
* results of earlier steps (``Query.into``, ``Stage.into``, ``Sequence.into``), and after a
  commit ``parent`` and ``snapshot`` (the target before and after it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.project.nodes import Relation
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError

#: the snapshot property a plan's MERGE commit carries on a model that produces a changelog
#: (its changes are still to be appended; lakewide.state.changelog_producer)
PRODUCES = "lakewide.changelog"


@dataclass(frozen=True)
class Read:
    """Register temporary view ``view`` over table ``table`` (a relation key).

    ``kind``: ``snapshot`` (the table at ``at``; at the table's current state when ``at`` is
    unbound), ``appends`` (rows appended after ``after`` up to ``at``, oldest commit first),
    ``changes`` (the changelog after ``after`` up to ``at``: Iceberg's, or by row position
    where delete files came in, lakewide.spark.position_changes), ``empty`` (no rows, the
    table's columns) or ``no_changes`` (no rows, the columns of a changelog view).
    """

    view: str
    table: str
    kind: str
    at: str | None = None
    after: str | None = None
    when: str | None = None
    # crash-test point reached before the read (lakewide.vocabulary.faults)
    checkpoint: str | None = None
    # ``changes``: the columns its retract rows (old images) need, the others read as NULL;
    # None: every column (lakewide.compiler.statements.build_changelog_read.retract_columns)
    retracts: tuple[str, ...] | None = None
    # the columns whose NULL counts the read's files should carry (a read planned in commit
    # order; the NULL-key count: Query.nulls)
    stats: tuple[str, ...] = ()


@dataclass(frozen=True)
class Run:
    """Run a statement (a temporary view, DDL)."""

    statement: exp.Expression
    when: str | None = None


@dataclass(frozen=True)
class Query:
    """Read one row; its values become the results named ``into``. ``nulls``: for a count of
    NULL keys, the (view, column) pairs whose files' statistics answer it with 0 when none of
    them holds a NULL (lakewide.spark.file_nulls); the query runs otherwise."""

    query: exp.Expression
    into: tuple[str, ...]
    when: str | None = None
    nulls: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class Stage:
    """Materialize ``query`` as temporary view ``view``; its row count becomes ``into``."""

    view: str
    query: exp.Expression
    into: str
    when: str | None = None
    # crash-test point reached before staging (lakewide.vocabulary.faults)
    checkpoint: str | None = None


@dataclass(frozen=True)
class Sequence:
    """The data sequence number of snapshot ``of`` (a parameter) of ``table`` into ``into``."""

    table: str
    of: str
    into: str
    when: str | None = None


@dataclass(frozen=True)
class Refuse:
    """Fail the model when result ``result`` is above zero; ``message`` is formatted with the
    parameters (``{count}`` is the result)."""

    result: str
    message: str
    when: str | None = None


@dataclass(frozen=True)
class Commit:
    """Commit ``statement`` to ``table``: the model's table (carrying the offsets) or its
    changelog table (``changelog=True``: naming the model snapshot ``snapshot``).

    ``narrowed``/``bounds`` (``merge_filter``): ``bounds`` reads the staged batch's key range
    into ``low``/``high``; when both are exact literals, ``narrowed`` runs instead.
    """

    table: str
    statement: exp.Expression
    narrowed: exp.Expression | None = None
    bounds: exp.Expression | None = None
    changelog: bool = False
    properties: dict[str, str] = field(default_factory=dict)
    when: str | None = None


@dataclass(frozen=True)
class CheckTypes:
    """Aggregated columns whose type the model does not declare: Spark analyses
    ``probe`` (nothing is read) and each column's type must suit its function."""

    probe: exp.Expression
    functions: dict[str, tuple[str, tuple[str, ...]]]  # column -> (function, accepted types)
    path: str
    model: str
    when: str | None = None

    def check(self, types: dict[str, str]) -> None:
        """Raise CompileError naming the key and the CAST to add for a type that does not
        suit its aggregate (``sum`` over a string column would turn every value NULL)."""
        for column, found in types.items():
            if column not in self.functions:
                continue
            name, accepted = self.functions[column]
            if type_admitted(found, accepted):
                continue
            cast = accepted[0] if accepted[0] != "TINYINT" else "BIGINT"
            raise CompileError(
                f"{name} cannot aggregate column '{column}', which its source gives as "
                f"{found.upper()}; it takes {', '.join(accepted)}: cast the column in the model "
                f"(CAST({column} AS {cast})) or choose another function",
                path=self.path,
                model=self.model,
                key=f"aggregates.{column}",
            )


def type_admitted(found: str, accepted: tuple[str, ...]) -> bool:
    """Whether Spark's name of a type (``decimal(10,2)``, ``interval day``) is of one of the
    ``accepted`` types, compared as sqlglot type classes, never as text (``INTERVAL DAY`` is
    no ``INT``; ``DECIMAL`` takes every precision)."""
    try:
        kind = exp.DataType.build(found, dialect=DIALECT).this
    except (ParseError, ValueError):
        return False
    return any(kind == exp.DataType.build(name, dialect=DIALECT).this for name in accepted)


Step = Read | Run | Query | Stage | Sequence | Refuse | Commit | CheckTypes


@dataclass(frozen=True)
class BranchPlan:
    """How one source branch takes part in an incremental run.

    ``reads``: per read mode (``lakewide.run.models.read_modes``), the steps registering the
    branch's new rows as its view; ``merge``: its rows merged alone (the column-scoped MERGE of its
    own columns); ``changelog``: its changelog read merged as row kinds (``None`` with
    ``changelog_refusal`` when the engine cannot take it).
    """

    index: int
    name: str
    driver: str | None
    view: str
    reads: dict[str, list[Step]]
    merge: list[Step]
    changelog: list[Step] | None
    changelog_refusal: str | None
    reread_safe: bool  # reading its rows again leaves the table unchanged
    change_log: bool  # the branch gives the model's row_kind_column itself
    changes_table: str | None = None  # the upstream model's own changelog table, if any


@dataclass(frozen=True)
class DeltaJoinPlan:
    """A ``delta`` join of one source branch (``lakewide.compiler.statements.build_delta_join``).

    ``reads``: per read mode of the dimension (``incremental``, ``changelog``, ``full``), the
    steps registering its changed join keys; ``derived``: the steps registering the fact rows
    to derive again, by what is re-derived (``dimension``: the keys joined to changed
    dimension keys, ``facts``: the keys of the run's changed fact rows, ``both``, ``full``);
    ``rederive``: those rows folded again and their dimension-fed columns replaced (one
    commit). ``start``/``end`` name the parameters of the dimension's consumed and pinned
    snapshots.
    """

    branch: int
    name: str  # as the model's ``joins`` names it
    table: str  # the dimension's relation key
    start: str
    end: str
    reads: dict[str, list[Step]]
    derived: dict[str, list[Step]]
    rederive: list[Step]


@dataclass(frozen=True)
class ModelPlans:
    """Every plan a run of a table or key table can take.

    ``tables``: relation key -> relation of every table a step names; ``pins``: one Read per
    upstream table (bound to ``pin_<n>``), registered before any plan runs; ``checks``: run
    after the pins; ``bootstrap``/``full_refresh``: a new table from every source;
    ``branches`` and ``combined`` (several sources with new rows folded and merged at once):
    incremental; ``recover``: the changes of commits a stopped run left without them, into
    ``changelog_table`` (the relation key of the model's own changelog; None when it keeps none);
    ``combined_changes``: several sources read as changes (their ``changelog`` reads; the
    others' ``no_changes``) folded and merged at once;
    ``refold``: every source folded again into the table's own history (an overwrite carrying
    the offsets), which a run takes where reading the changes would cost more
    (``refold_exact``: the re-fold keeps the rows the incremental runs keep).

    ``full_refresh``, ``combined``, ``combined_changes`` and ``refold`` are built on first use
    (``build_later`` builds the one it is named): a run takes one plan of the lot, and each
    costs seconds of Python for a wide model.
    """

    relation: Relation
    tables: dict[str, Relation]
    pins: list[Read]
    checks: list[CheckTypes]
    bootstrap: list[Step]
    build_later: Callable[[str], Any] = field(repr=False, compare=False)
    branches: list[BranchPlan] = field(default_factory=list)
    recover: list[Step] | None = None
    changelog_table: str | None = None
    delta_joins: list[DeltaJoinPlan] = field(default_factory=list)
    refold_exact: bool = False

    @cached_property
    def full_refresh(self) -> list[Step]:
        """The bootstrap as ``CREATE OR REPLACE TABLE``."""
        steps: list[Step] = self.build_later("full_refresh")
        return steps

    @cached_property
    def combined(self) -> list[Step] | None:
        """Several sources' new rows folded and merged at once (None: no such plan)."""
        steps: list[Step] | None = self.build_later("combined")
        return steps

    @cached_property
    def combined_changes(self) -> list[Step] | None:
        """Several sources read as changes, folded and merged at once (None: no such plan)."""
        steps: list[Step] | None = self.build_later("combined_changes")
        return steps

    @cached_property
    def refold(self) -> list[Step]:
        """Every source folded again into the table's own history."""
        steps: list[Step] = self.build_later("refold")
        return steps
