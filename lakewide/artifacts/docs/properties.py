"""What the docs show beside the SQL: descriptions and data tests.

Model properties have one owner, ``lakewide.project.model_properties`` (the ``models:`` entries of
``models/**/*.yml``, parsed once by the manifest); the data tests shown are the manifest's
``DataTest``s, the ones ``lakewide test`` runs. ``source_properties`` reads ``sources:`` entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakewide.compiler.queries.data_test_queries import failing_rows
from lakewide.project.data_tests import DataTest
from lakewide.project.manifest import Manifest
from lakewide.project.sources import SourceEntry
from lakewide.project.text_files import load_yaml
from lakewide.vocabulary.dialect import to_sql


@dataclass
class Described:
    """A model's or source table's documentation: description, column descriptions, tests."""

    description: str | None = None
    columns: dict[str, str] = field(default_factory=dict)  # column -> description
    # each test as shown: {"name", "test", "column", "severity", "implied", "compiled_code"}
    tests: list[dict[str, Any]] = field(default_factory=list)


def _shown(test: DataTest) -> dict[str, Any]:
    return {
        "name": test.name,
        "test": test.test,
        "column": test.column,
        "severity": test.config.severity,
        "implied": test.implied,
        "compiled_code": to_sql(failing_rows(test.spec)),
    }


def model_properties(manifest: Manifest, model: str) -> Described:
    """A model's description (``config(description=...)`` in its file, else its YAML entry's),
    its YAML column descriptions and the data tests on it: declared on it, implied by its
    primary key, and singular tests reading it."""
    node = manifest.models[model]
    props = manifest.properties.get(model)
    description = node.config.description or (props.description if props else "") or None
    columns = {
        name: column.description
        for name, column in (props.columns.items() if props else ())
        if column.description
    }
    tests = [
        _shown(t)
        for t in manifest.data_tests.values()
        if t.model == model or (t.model is None and model in t.depends_on)
    ]
    return Described(description, columns, tests)


def source_properties(manifest: Manifest) -> dict[tuple[str, str], Described]:
    """Each source table's description and column descriptions, as its ``sources:`` entry
    in ``models/*.yml`` gives them (a table's own description, else its source's)."""
    out: dict[tuple[str, str], Described] = {}
    for path in sorted({s.path for s in manifest.sources.values()}):
        data = load_yaml(path.read_text(encoding="utf-8")) or {}
        for raw in data.get("sources") or []:
            entry = SourceEntry.model_validate({**raw, "tables": raw.get("tables") or []})
            for table in entry.tables:
                columns = {
                    str(c["name"]): str(c["description"])
                    for c in table.columns
                    if isinstance(c, dict) and c.get("name") and c.get("description")
                }
                out[(entry.name, table.name)] = Described(
                    table.description or entry.description, columns
                )
    return out
