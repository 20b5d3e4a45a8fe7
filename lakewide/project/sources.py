"""Sources declared in ``models/**/*.yml`` (dbt style) and resolved by ``source()``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from lakewide.project.config.specs import Strict, checked
from lakewide.project.nodes import Relation
from lakewide.project.text_files import load_yaml, read_utf8
from lakewide.vocabulary.errors import ConfigError


class SourceTable(Strict):
    """One ``tables:`` entry of a source (dbt's keys lakewide reads or keeps as docs)."""

    name: str
    identifier: str | None = None  # the table's name in the catalog (default: name)
    description: str | None = None
    columns: list[Any] = []  # docs, and lakewide.union_sources' column lists
    meta: dict[str, Any] = {}
    tags: list[str] = []


class SourceEntry(Strict):
    """One ``sources:`` entry: a namespace of upstream tables."""

    name: str
    schema_: str | None = Field(None, alias="schema")  # the namespace (default: name)
    catalog: str | None = None  # default: the profile's catalog
    description: str | None = None
    tables: list[SourceTable] = []
    meta: dict[str, Any] = {}
    tags: list[str] = []


@dataclass(frozen=True)
class Source:
    """One declared upstream table."""

    source_name: str
    table_name: str
    relation: Relation
    path: Path
    # the YAML's ``columns:`` entries as written (read by ``lakewide.union_sources``)
    columns: tuple[Any, ...] = field(default=(), compare=False)


#: the top-level keys of a models/*.yml properties file
TOP_LEVEL_KEYS = ("version", "sources", "models", "unit_tests")


def _entries(value: Any, what: str, path: Path) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) and "name" in v for v in value):
        raise ConfigError(
            f"'{what}' must be a list of mappings each with a 'name'", path=path, key=what
        )
    return value


def load_sources(yml_files: list[Path], catalog: str) -> dict[tuple[str, str], Source]:
    """Every ``sources:`` entry of the given YAML files, keyed by (source, table)."""
    found: dict[tuple[str, str], Source] = {}
    for path in yml_files:
        try:
            data = load_yaml(read_utf8(path)) or {}
        except yaml.YAMLError as err:
            raise ConfigError(f"invalid YAML: {err}", path=path) from None
        if not isinstance(data, dict):
            raise ConfigError(
                f"expected a mapping at the top level with any of {', '.join(TOP_LEVEL_KEYS)} "
                f"(e.g. `models:` followed by a list of models), found {type(data).__name__}",
                path=path,
            )
        for index, raw in enumerate(_entries(data.get("sources"), "sources", path)):
            entry = checked(
                SourceEntry,
                {**raw, "tables": raw.get("tables") or []},
                key=f"sources[{index}]",
                path=path,
            )
            for table in entry.tables:
                found[(entry.name, table.name)] = Source(
                    entry.name,
                    table.name,
                    Relation(
                        entry.catalog or catalog,
                        entry.schema_ or entry.name,
                        table.identifier or table.name,
                    ),
                    path,
                    tuple(table.columns),
                )
    return found
