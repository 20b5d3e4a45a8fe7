"""CSV seeds: which files, which table, which column type overrides."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from lakewide.errors import ConfigError
from lakewide.nodes import Relation
from lakewide.profiles import Output
from lakewide.project import Project


@dataclass(frozen=True)
class Seed:
    """One CSV file and the Iceberg table it becomes."""

    path: Path
    relation: Relation
    column_types: dict[str, str] = field(default_factory=dict)


def find_seeds(project: Project, output: Output) -> list[Seed]:
    """``seeds/*.csv``; optional ``seeds/*.yml`` entries give ``column_types`` per seed."""
    types: dict[str, dict[str, str]] = {}
    csvs: list[Path] = []
    for folder in project.seed_paths:
        if not folder.is_dir():
            continue
        csvs.extend(sorted(folder.rglob("*.csv")))
        for yml in sorted(folder.rglob("*.yml")):
            try:
                data = yaml.safe_load(yml.read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as err:
                raise ConfigError(f"invalid YAML: {err}", path=yml) from None
            for entry in data.get("seeds") or []:
                if not isinstance(entry, dict) or "name" not in entry:
                    raise ConfigError("each seeds entry needs a 'name'", path=yml, key="seeds")
                types[str(entry["name"])] = {str(k): str(v) for k, v in
                                             (entry.get("column_types") or {}).items()}
    namespace = project.seed_schema or output.namespace
    return [Seed(p, Relation(output.catalog, namespace, p.stem), types.get(p.stem, {}))
            for p in csvs]
