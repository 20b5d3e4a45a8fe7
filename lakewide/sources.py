"""Sources declared in ``models/**/*.yml`` (dbt style) and resolved by ``source()``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lakewide.errors import ConfigError
from lakewide.nodes import Relation


@dataclass(frozen=True)
class Source:
    """One declared upstream table."""

    source_name: str
    table_name: str
    relation: Relation
    path: Path


def _entries(value: Any, what: str, path: Path) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) and "name" in v for v in value):
        raise ConfigError(f"'{what}' must be a list of mappings each with a 'name'", path=path,
                          key=what)
    return value


def load_sources(yml_files: list[Path], catalog: str) -> dict[tuple[str, str], Source]:
    """Every ``sources:`` entry of the given YAML files, keyed by (source, table)."""
    found: dict[tuple[str, str], Source] = {}
    for path in yml_files:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as err:
            raise ConfigError(f"invalid YAML: {err}", path=path) from None
        for entry in _entries(data.get("sources"), "sources", path):
            name = str(entry["name"])
            namespace = str(entry.get("schema", name))
            source_catalog = str(entry.get("catalog", catalog))
            for table in _entries(entry.get("tables"), f"sources.{name}.tables", path):
                table_name = str(table["name"])
                identifier = str(table.get("identifier", table_name))
                found[(name, table_name)] = Source(
                    name, table_name, Relation(source_catalog, namespace, identifier), path)
    return found
