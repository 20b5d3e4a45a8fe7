"""The analyzed form of a ``snapshot`` model: its query checked against its config."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from lakewide.compiler.trees.rewrite import driving_table
from lakewide.project.config.snapshot import SnapshotConfig
from lakewide.project.nodes import ModelNode
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError


@dataclass(frozen=True)
class SnapshotModel:
    """A snapshot model's query and the names its statements use."""

    node: ModelNode
    spec: SnapshotConfig  # the model's snapshot config
    query: exp.Select
    columns: list[str]
    driver: str

    @property
    def key(self) -> list[str]:
        return self.spec.unique_key

    def meta(self, name: str) -> str:
        return self.spec.meta(name)

    @property
    def checked(self) -> list[str]:
        """The columns whose change makes a version (strategy='check')."""
        cols = self.spec.check_cols
        return [c for c in self.columns if c not in self.key] if cols == "all" else list(cols)

    @property
    def deletes(self) -> bool:
        return self.spec.hard_deletes != "ignore"

    @property
    def out_columns(self) -> list[str]:
        """The table's columns: the model's, then dbt's meta columns in dbt's order."""
        names = ["dbt_scd_id", "dbt_updated_at", "dbt_valid_from", "dbt_valid_to"]
        if self.spec.hard_deletes == "new_record":
            names.append("dbt_is_deleted")
        return [*self.columns, *(self.meta(n) for n in names)]


def _error(node: ModelNode, message: str, key: str | None = None) -> CompileError:
    return CompileError(message, path=node.path, model=node.name, key=key)


def analyze_snapshot(node: ModelNode, query: exp.Expr) -> SnapshotModel:
    """The snapshot's query checked: one SELECT naming its columns over one driving table,
    with ``unique_key``, ``updated_at`` and ``check_cols`` among them."""
    config = node.config
    assert isinstance(config, SnapshotConfig)
    if not isinstance(query, exp.Select):
        raise _error(node, "a snapshot model is one SELECT (no UNION, no set operation)")
    if query.args.get("with_"):
        raise _error(node, "a snapshot model's SELECT takes no WITH; read the CTE as a model")
    columns = []
    for projection in query.expressions:
        if isinstance(projection, exp.Star) or projection.find(exp.Star):
            raise _error(
                node,
                "a snapshot model names its columns (SELECT id, name, ...), not *: the "
                "history keeps exactly these columns",
            )
        if not projection.alias_or_name:
            raise _error(node, f"name the column {projection.sql(DIALECT)!r} (AS name)")
        columns.append(projection.alias_or_name)
    driver = driving_table(query)
    if driver is None:
        raise _error(node, "a snapshot reads a source() or ref() in its FROM clause")
    wanted = [("unique_key", c) for c in config.unique_key]
    if config.updated_at:
        wanted.append(("updated_at", config.updated_at))
    if config.check_cols != "all":
        wanted += [("check_cols", c) for c in config.check_cols]
    for key, column in wanted:
        if column not in columns:
            raise _error(
                node,
                f"{key} names {column!r}, not a column of the model: {', '.join(columns)}",
                key,
            )
    for name in config.snapshot_meta_column_names.values():
        if name in columns:
            raise _error(
                node,
                f"meta column name {name!r} is a column of the model",
                "snapshot_meta_column_names",
            )
    return SnapshotModel(node, config, query, columns, driver)
