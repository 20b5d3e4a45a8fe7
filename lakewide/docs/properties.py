"""What the docs show beside the SQL: descriptions and data tests of a model.

The docs ask a ``PropertiesOf`` (model name -> ModelProperties) so that descriptions and tests
parsed from ``models/*.yml`` can be shown by passing another provider; ``from_config`` reads
what ``config(description=...)`` gives; ``source_properties`` what ``sources:`` entries say.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from lakewide.manifest import Manifest
from lakewide.sources import SourceEntry


@dataclass
class ModelProperties:
    """A model's documentation: its description, its columns' and its data tests."""

    description: str | None = None
    columns: dict[str, str] = field(default_factory=dict)  # column -> description
    # each test as shown: {"name", "column" (optional), "severity", "compiled_code" (optional)}
    tests: list[dict[str, Any]] = field(default_factory=list)


PropertiesOf = Callable[[str], ModelProperties]


def from_config(manifest: Manifest) -> PropertiesOf:
    """Descriptions from each model's ``config(description=...)``; no tests."""

    def properties(model: str) -> ModelProperties:
        node = manifest.models.get(model)
        return ModelProperties(node.config.description if node is not None else None)

    return properties


def source_properties(manifest: Manifest) -> dict[tuple[str, str], ModelProperties]:
    """Each source table's description and column descriptions, as its ``sources:`` entry
    in ``models/*.yml`` gives them (a table's own description, else its source's)."""
    out: dict[tuple[str, str], ModelProperties] = {}
    for path in sorted({s.path for s in manifest.sources.values()}):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for raw in data.get("sources") or []:
            entry = SourceEntry.model_validate({**raw, "tables": raw.get("tables") or []})
            for table in entry.tables:
                columns = {
                    str(c["name"]): str(c["description"])
                    for c in table.columns
                    if isinstance(c, dict) and c.get("name") and c.get("description")
                }
                out[(entry.name, table.name)] = ModelProperties(
                    table.description or entry.description, columns
                )
    return out
