"""A primary-key model seen as the compiler needs it: columns, keys and source branches."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.compiler.aggregates.aggregates import REGISTRY, Aggregate
from lakewide.compiler.aggregates.column_aggregates import (
    ColumnAggregate,
    column_aggregate,
    default_aggregate,
)
from lakewide.compiler.model.number_rows import number_rows
from lakewide.compiler.model.ordering import ROW_COLUMN
from lakewide.compiler.model.owned_columns import model_columns, owned_by_name, owned_columns
from lakewide.compiler.model.split_union import Where, split_union
from lakewide.compiler.model.temporal_join import rewrite_temporal_joins
from lakewide.compiler.model.versions import Versions, resolve
from lakewide.compiler.trees.copying import copy_without
from lakewide.project.by_name import named, narrow, positional
from lakewide.project.config.engines.base import Engine
from lakewide.project.config.model_config import KeyTableConfig, SequenceGroup
from lakewide.project.nodes import ModelNode
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError

ADD_KINDS = ("+I", "+U", "INSERT", "UPDATE_AFTER")
RETRACT_KINDS = ("-U", "-D", "UPDATE_BEFORE", "DELETE")
DELETE_KINDS = ("-D", "DELETE")
UPDATE_BEFORE_KINDS = ("-U", "UPDATE_BEFORE")


@dataclass(frozen=True)
class Branch:
    """One UNION ALL branch: a source writing only the columns it owns."""

    index: int
    name: str
    select: exp.Select  # as written: every column in order, or (narrow) the ones it names
    owned: dict[str, exp.Expr]
    # a narrow branch (``UNION ALL BY NAME``, lakewide.project.by_name): per model column, in
    # order, the NULL it stands for where the branch does not name the column (None: its
    # select lists every column)
    nulls: Mapping[str, Callable[[], exp.Expr]] | None = None

    @functools.cached_property
    def named(self) -> dict[str, exp.Expr]:
        """A narrow branch's projections by the column each names."""
        return named(self.select)

    def projection(self, column: str, index: int) -> exp.Expr:
        """The projection of model column ``column`` (the model's ``index``-th) as the
        positional UNION ALL has it (a narrow branch builds the NULL it does not name)."""
        if self.nulls is None:
            written: exp.Expr = self.select.expressions[index]
            return written
        found = self.named.get(column)
        return found if found is not None else self.nulls[column]()

    @functools.cached_property
    def projections(self) -> list[exp.Expr]:
        """Every projection of the branch in model column order, as the positional UNION ALL
        has them (built once for a narrow branch: sources x columns nodes, asked only by
        plans that send them)."""
        if self.nulls is None:
            return self.select.expressions
        return [self.projection(c, i) for i, c in enumerate(self.nulls)]

    def projected(self, columns: list[str], *, numbered: bool = False) -> exp.Select:
        """The branch's SELECT narrowed to ``columns`` (owned ones), aliased to model names;
        ``numbered``: with its rows' arrival as ``__lw_row``
        (lakewide.compiler.model.number_rows)."""
        select = copy_without(self.select, "expressions")
        select.set(
            "expressions",
            [exp.alias_(self.owned[c].copy(), c, quoted=None, copy=False) for c in columns],
        )
        if numbered:  # judged on every projection of the branch (a window, an aggregate)
            arrival = number_rows(select, self.select.expressions)
            select.select(exp.alias_(arrival, ROW_COLUMN, copy=False), append=True, copy=False)
        return select

    def on_owned(self, condition: exp.Expr) -> exp.Expr:
        """``condition`` on model columns as the branch computes them (its own expressions)."""

        def own(node: exp.Expr) -> exp.Expr:
            if isinstance(node, exp.Column) and not node.table and node.name in self.owned:
                return exp.paren(self.owned[node.name].copy(), copy=False)
            return node

        return condition.copy().transform(own, copy=False)


@dataclass(frozen=True)
class Group:
    """A sequence group of the model (``config.SequenceGroup``): its place and whether a
    delete through it removes the row."""

    index: int
    spec: SequenceGroup
    removes_record: bool = False  # a delete through the group removes the row

    @property
    def sequence(self) -> list[str]:
        """The group's sequence fields, in order."""
        return self.spec.sequence

    @property
    def columns(self) -> list[str]:
        """The columns the group guards."""
        return self.spec.columns

    @property
    def name(self) -> str:
        """The group's name, as ``remove_record_on_sequence_group`` gives it."""
        return self.spec.name

    @property
    def all_columns(self) -> list[str]:
        """The guarded columns, then the sequence fields."""
        return self.spec.all_columns


@dataclass(frozen=True)
class DeletePolicy:
    """What the model does with retract rows (``-U``/``-D``) besides folding them."""

    ignore_delete: bool = False  # drop every retract row
    ignore_update_before: bool = False  # drop ``-U`` rows
    remove_record_on_delete: bool = False  # a ``-D`` removes the whole row


@dataclass(frozen=True)
class WideModel:
    """A merge-engine model as every plan builder and rule needs it, resolved once from its
    SQL and config: builders read this, never the node's config."""

    node: ModelNode  # where the model comes from (name, file, relation)
    engine: Engine  # the merge engine's traits (its module owns its rules)
    columns: list[str]
    primary_key: list[str]
    sequence: list[str]
    branches: list[Branch]
    groups: list[Group] = field(default_factory=list)
    row_kind: str | None = None
    deletes: DeletePolicy = field(default_factory=DeletePolicy)
    # every column an aggregate function may fold: those ``aggregates`` names, then the
    # defaulted ones (aggregation: every value column; partial_update: group columns)
    aggregates: dict[str, ColumnAggregate] = field(default_factory=dict)
    default_function: Aggregate | None = None  # ``default_aggregate``, when set
    declared: dict[str, exp.DataType] = field(default_factory=dict)  # types given by CAST
    merge_filter: bool = False
    versions: Versions = field(default_factory=Versions)
    joins: dict[str, str] = field(default_factory=dict)  # joined relation -> lookup | delta
    # per source (branch index), the Spark type of each column of its bootstrap fold, where
    # a run analysed them (lakewide.compiler.folds.one_shuffle); empty at compile time
    fold_types: Mapping[int, Mapping[str, str]] = field(default_factory=dict)

    def owners(self, column: str) -> list[Branch]:
        """The branches (sources) that own ``column``, in branch order."""
        return self._owners.get(column, [])

    @functools.cached_property
    def _owners(self) -> dict[str, list[Branch]]:
        """Column -> its owning branches, found once per model (not once per column and
        builder: that is sources x columns each time)."""
        out: dict[str, list[Branch]] = {}
        for branch in self.branches:
            for column in branch.owned:
                out.setdefault(column, []).append(branch)
        return out

    def null_types(self, column: str) -> list[exp.DataType]:
        """The distinct types of the typed NULLs (``CAST(NULL AS T)``) that the branches not
        owning ``column`` write for it, first seen first in branch order."""
        return self._null_types.get(column, [])

    @functools.cached_property
    def _null_types(self) -> dict[str, list[exp.DataType]]:
        """Found once per model: a narrow branch's NULLs are looked at once per column (the
        first narrow branch not naming it), not built for every branch and column."""
        seen: dict[str, dict[str, tuple[int, exp.DataType]]] = {}

        def note(column: str, index: int, projection: exp.Expr) -> None:
            node = projection.this if isinstance(projection, exp.Alias) else projection
            if isinstance(node, (exp.Cast, exp.TryCast)):
                found = seen.setdefault(column, {})
                key = node.to.sql()
                if key not in found or found[key][0] > index:
                    found[key] = (index, node.to)

        naming: dict[str, set[int]] = {}
        narrow: list[Branch] = [b for b in self.branches if b.nulls is not None]
        for branch in self.branches:
            pairs = (
                zip(self.columns, branch.select.expressions)
                if branch.nulls is None
                else branch.named.items()
            )
            for column, projection in pairs:
                if branch.nulls is not None:
                    naming.setdefault(column, set()).add(branch.index)
                if column not in branch.owned:
                    note(column, branch.index, projection)
        for column in self.columns if narrow else []:
            names = naming.get(column, set())
            first = next((b for b in narrow if b.index not in names), None)
            maker = first.nulls.get(column) if first is not None and first.nulls else None
            if first is not None and maker is not None:
                note(column, first.index, maker())
        return {
            column: [t for _, t in sorted(found.values(), key=lambda pair: pair[0])]
            for column, found in seen.items()
        }

    @property
    def stored(self) -> list[str]:
        """The model's columns in the target table: every model column but the row kind."""
        return [c for c in self.columns if c != self.row_kind]

    @property
    def table_columns(self) -> list[str]:
        """Every column of the target table: the stored ones, then their hidden versions."""
        return self.stored + self.versions.stored(self.stored)

    @functools.cached_property
    def aggregated(self) -> list[str]:
        """The stored columns an aggregate function folds (none for deduplicate and
        first_row; partial_update: those ``aggregates`` names and aggregated group columns).
        Found once per model (asked once per column)."""
        if self.engine.aggregates_values:
            fixed = {*self.primary_key, *self.sequence}
            return [c for c in self.stored if c not in fixed]
        if self.engine.takes_aggregates:
            return [c for c in self.stored if c in self.aggregates]
        return []

    def aggregate(self, column: str) -> ColumnAggregate:
        """The aggregate function folding ``column`` (default: last_non_null_value)."""
        found = self.aggregates.get(column)
        return found if found is not None else default_aggregate(column)

    def group_aggregated(self, column: str) -> bool:
        """partial_update: whether a sequence group's column is folded by an aggregate function
        (its own in ``aggregates``, else ``default_aggregate``, as Paimon applies it)."""
        group = self.group_of(column)
        return (
            self.engine.takes_groups
            and group is not None
            and column in group.columns
            and column in self.aggregates
        )

    def group_of(self, column: str) -> Group | None:
        """The sequence group guarding or sequencing ``column``, if any."""
        return self._group_of.get(column)

    @functools.cached_property
    def _group_of(self) -> dict[str, Group]:
        """Column -> the first group naming it (found once per model, not per column)."""
        out: dict[str, Group] = {}
        for group in self.groups:
            for column in group.all_columns:
                out.setdefault(column, group)
        return out


def parse_model_sql(node: ModelNode, *, widen: bool = True) -> exp.Expr:
    """Parse a rendered model into one sqlglot tree, with the file named on failure;
    ``widen``: a narrow model (``UNION ALL BY NAME``) as the positional UNION ALL it stands
    for (otherwise its branches are checked and left as written: linear in the columns)."""
    try:
        statements = [s for s in sqlglot.parse(node.sql, read=DIALECT) if s is not None]
    except ParseError as err:
        detail = err.errors[0] if err.errors else {}
        raise CompileError(
            f"SQL does not parse: {detail.get('description', err)}",
            path=node.path,
            line=detail.get("line"),
            model=node.name,
        ) from None
    if len(statements) != 1:
        raise CompileError(
            f"a model is one SELECT statement, found {len(statements)} statements",
            path=node.path,
            model=node.name,
        )
    query = rewrite_temporal_joins(statements[0], node.snapshots, node)
    if widen:
        return positional(query, node.path, node.name)
    narrow(query, node.path, node.name)  # checked, left as written
    return query


def _branch_name(select: exp.Select, index: int) -> str:
    from_ = select.args.get("from_")  # not a walk through every projection first
    table = (from_ or select).find(exp.Table)
    return table.name if table is not None and table.name else f"branch_{index + 1}"


def _declared(columns: list[str], branches: list[Branch]) -> dict[str, exp.DataType]:
    """Per column, the type the first branch declaring one gives with ``CAST(... AS T)``."""
    out: dict[str, exp.DataType] = {}
    for index, column in enumerate(columns):
        for branch in branches:
            projection = branch.projection(column, index)
            value = projection.this if isinstance(projection, exp.Alias) else projection
            if isinstance(value, (exp.Cast, exp.TryCast)):
                out[column] = value.to
                break
    return out


def _groups(config: KeyTableConfig) -> list[Group]:
    removing = set(config.remove_record_on_sequence_group)
    return [Group(index, g, g.name in removing) for index, g in enumerate(config.sequence_groups)]


def _aggregates(
    config: KeyTableConfig, value_columns: list[str], groups: list[Group]
) -> tuple[dict[str, ColumnAggregate], Aggregate | None]:
    """The aggregates ``aggregates`` names, then the defaulted columns', and the default."""
    out = {
        column: column_aggregate(column, spec, configured=True)
        for column, spec in config.aggregates.items()
    }
    default = config.default_aggregate
    function = REGISTRY[default.function] if default is not None else None
    if config.engine.aggregates_values:
        defaulted = value_columns
    elif config.engine.takes_groups and default is not None:
        defaulted = [c for g in groups for c in g.columns]
    else:
        defaulted = []
    for column in defaulted:
        if column not in out:
            out[column] = (
                column_aggregate(column, default, configured=False)
                if default is not None
                else default_aggregate(column)
            )
    return out, function


def analyze(node: ModelNode) -> WideModel:
    """Split a merge-engine model into branches, check keys against its columns and resolve
    what its config means (groups, delete policy, each column's aggregate)."""
    where: Where = {"model": node.name, "path": node.path}
    query = parse_model_sql(node, widen=False)
    nulls = narrow(query, node.path, node.name)  # a narrow model: branches as written
    branches = split_union(query, **where)
    columns = model_columns(branches[0], **where)
    config = node.config
    assert isinstance(config, KeyTableConfig), "analyze takes merge-engine models"
    for label, key, names in (
        ("primary_key", "primary_key", config.primary_key),
        ("sequence_field", "sequence_field", config.sequence_field),
        ("ttl", "ttl.column", [config.ttl.column] if config.ttl else []),
    ):
        for name in names:
            if name not in columns:
                raise CompileError(
                    f"{label} column '{name}' is not a column of the model "
                    f"(columns: {', '.join(columns)})",
                    key=key,
                    **where,
                )
    built: list[Branch] = []
    for index, select in enumerate(branches):
        owned = (
            owned_columns(select, columns, index=index, **where)
            if nulls is None or index == 0
            else owned_by_name(named(select), columns)
        )
        for key, names in (
            ("primary_key", config.primary_key),
            ("sequence_field", config.sequence_field),
        ):
            missing = [n for n in names if n not in owned]
            if missing:
                raise CompileError(
                    f"UNION ALL branch {index + 1} ({_branch_name(select, index)}) does not "
                    f"provide {key} column(s) {', '.join(missing)}; every source must give "
                    f"the full {key}",
                    key=key,
                    **where,
                )
        narrowed = nulls if nulls is not None and index > 0 else None
        built.append(Branch(index, _branch_name(select, index), select, owned, narrowed))
    groups = _groups(config)
    fixed = {*config.primary_key, *config.sequence_field, config.row_kind_column}
    aggregates, default = _aggregates(config, [c for c in columns if c not in fixed], groups)
    model = WideModel(
        node,
        config.engine,
        columns,
        list(config.primary_key),
        list(config.sequence_field),
        built,
        groups,
        config.row_kind_column,
        DeletePolicy(
            config.ignore_delete, config.ignore_update_before, config.remove_record_on_delete
        ),
        aggregates,
        default,
        _declared(columns, built),
        config.merge_filter,
    )
    return dataclasses.replace(model, versions=resolve(model), joins=dict(config.joins))
