"""The rendered, parsed form of a model: what the compiler consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from sqlglot import exp

from lakewide.project.config.model_config import ModelConfig
from lakewide.vocabulary.dialect import DIALECT


@dataclass(frozen=True)
class Relation:
    """A table name: catalog.namespace.name (catalog and namespace empty for session views)."""

    catalog: str
    namespace: str
    name: str

    def table(self, alias: str | None = None) -> exp.Table:
        """The relation as a sqlglot table (identifiers quoted when needed)."""
        return exp.table_(
            self.name, db=self.namespace or None, catalog=self.catalog or None, alias=alias
        )

    def metadata_table(self, name: str) -> exp.Table:
        """An Iceberg metadata table of this relation, e.g. ``snapshots`` or ``history``."""
        table = self.table()
        table.set("this", exp.Dot(this=table.this, expression=exp.to_identifier(name)))
        return table

    @cached_property
    def key(self) -> str:
        """Case-insensitive dotted name, as ``compiler.trees.rewrite.table_key`` computes it from
        SQL: the one key by which lakewide matches a relation to the tables a model's SQL names."""
        return ".".join(p for p in (self.catalog, self.namespace, self.name) if p).lower()

    @cached_property
    def _text(self) -> str:
        parts = [p for p in (self.catalog, self.namespace, self.name) if p]
        if all(exp.SAFE_IDENTIFIER_RE.match(p) for p in parts):
            # what sqlglot prints for names needing no quotes, without a generator per name
            # (thousands of relations per project parse)
            return ".".join(parts)
        return self.table().sql(DIALECT)

    def __str__(self) -> str:  # rendering asks for it at every source() and ref()
        return self._text


@dataclass
class ModelNode:
    """One model after rendering: its SQL text, its config and what it depends on."""

    name: str
    path: Path
    raw_sql: str
    sql: str
    config: ModelConfig
    relation: Relation
    refs: list[str] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)
    config_line: int | None = None
    # relation key -> (valid_from, valid_to, is_deleted or None) of the project's snapshot
    # models: what a temporal join (FOR SYSTEM_TIME AS OF) reads
    snapshots: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)

    @property
    def tags(self) -> list[str]:
        return self.config.tags
