"""A primary-key model seen as the compiler needs it: columns, keys and source branches."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.compiler.owned_columns import model_columns, owned_columns
from lakewide.compiler.split_union import split_union
from lakewide.compiler.trees import copy_without
from lakewide.compiler.versions import Versions, resolve
from lakewide.errors import CompileError
from lakewide.nodes import ModelNode

DIALECT = "spark"
ADD_KINDS = ("+I", "+U", "INSERT", "UPDATE_AFTER")
RETRACT_KINDS = ("-U", "-D", "UPDATE_BEFORE", "DELETE")
DELETE_KINDS = ("-D", "DELETE")
UPDATE_BEFORE_KINDS = ("-U", "UPDATE_BEFORE")


@dataclass(frozen=True)
class Branch:
    """One UNION ALL branch: a source writing only the columns it owns."""

    index: int
    name: str
    select: exp.Select
    owned: dict[str, exp.Expression]

    def projected(self, columns: list[str]) -> exp.Select:
        """The branch's SELECT narrowed to ``columns`` (owned ones), aliased to model names."""
        select = copy_without(self.select, "expressions")
        select.set("expressions", [exp.alias_(self.owned[c].copy(), c, quoted=None, copy=False)
                                   for c in columns])
        return select


@dataclass(frozen=True)
class Group:
    """A sequence group: its own sequence field(s) guarding some columns."""

    index: int
    sequence: list[str]
    columns: list[str]

    @property
    def all_columns(self) -> list[str]:
        return [*self.columns, *self.sequence]


@dataclass(frozen=True)
class WideModel:
    """The parts of a merge-engine model every plan builder needs."""

    node: ModelNode
    columns: list[str]
    primary_key: list[str]
    sequence: list[str]
    branches: list[Branch]
    groups: list[Group] = field(default_factory=list)
    versions: Versions = field(default_factory=Versions)

    @property
    def engine(self) -> str:
        return str(self.node.config.merge_engine)

    @property
    def row_kind(self) -> str | None:
        return self.node.config.row_kind_column

    @property
    def stored(self) -> list[str]:
        """The model's columns in the target table: every model column but the row kind."""
        return [c for c in self.columns if c != self.row_kind]

    @property
    def table_columns(self) -> list[str]:
        """Every column of the target table: the stored ones, then their hidden versions."""
        return self.stored + self.versions.stored(self.stored)

    def group_aggregated(self, column: str) -> bool:
        """partial_update: whether a sequence group's column is folded by an aggregate function
        (its own in ``aggregates``, else ``default_aggregate``, as Paimon applies it)."""
        group = self.group_of(column)
        config = self.node.config
        return (self.engine == "partial_update" and group is not None
                and column in group.columns
                and (column in config.aggregates or config.default_aggregate is not None))

    def group_of(self, column: str) -> Group | None:
        """The sequence group guarding or sequencing ``column``, if any."""
        for group in self.groups:
            if column in group.all_columns:
                return group
        return None


def parse_model_sql(node: ModelNode) -> exp.Expression:
    """Parse a rendered model into one sqlglot tree, with the file named on failure."""
    try:
        statements = [s for s in sqlglot.parse(node.sql, read=DIALECT) if s is not None]
    except ParseError as err:
        detail = err.errors[0] if err.errors else {}
        raise CompileError(f"SQL does not parse: {detail.get('description', err)}",
                           path=node.path, line=detail.get("line"), model=node.name) from None
    if len(statements) != 1:
        raise CompileError(f"a model is one SELECT statement, found {len(statements)} statements",
                           path=node.path, model=node.name)
    return statements[0]


def _branch_name(select: exp.Select, index: int) -> str:
    table = select.find(exp.Table)
    return table.name if table is not None and table.name else f"branch_{index + 1}"


def analyze(node: ModelNode) -> WideModel:
    """Split a merge-engine model into branches and check keys against its columns."""
    where = {"model": node.name, "path": node.path}
    query = parse_model_sql(node)
    branches = split_union(query, **where)
    columns = model_columns(branches[0], **where)
    config = node.config
    for key, names in (("primary_key", config.primary_key),
                       ("sequence_field", config.sequence_field)):
        for name in names:
            if name not in columns:
                raise CompileError(f"{key} column '{name}' is not a column of the model "
                                   f"(columns: {', '.join(columns)})", key=key, **where)
    built: list[Branch] = []
    for index, select in enumerate(branches):
        owned = owned_columns(select, columns, index=index, **where)
        for key, names in (("primary_key", config.primary_key),
                           ("sequence_field", config.sequence_field)):
            missing = [n for n in names if n not in owned]
            if missing:
                raise CompileError(
                    f"UNION ALL branch {index + 1} ({_branch_name(select, index)}) does not "
                    f"provide {key} column(s) {', '.join(missing)}; every source must give "
                    f"the full {key}", key=key, **where)
        built.append(Branch(index, _branch_name(select, index), select, owned))
    groups = [Group(i, [f.strip() for f in seq.split(",") if f.strip()], list(cols))
              for i, (seq, cols) in enumerate(config.sequence_groups.items())]
    model = WideModel(node, columns, list(config.primary_key), list(config.sequence_field), built,
                      groups)
    return dataclasses.replace(model, versions=resolve(model))
