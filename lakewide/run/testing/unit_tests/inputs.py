"""The columns of a unit test's input tables: declared in YAML (``data_type`` of a source's or
a model's ``columns:``, dbt style), given in the rows, or read by the model's SQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlglot
import yaml
from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.project.text_files import load_yaml
from lakewide.vocabulary.dialect import DIALECT

Declared = dict[str, dict[str, str]]  # input label -> column -> Spark type


def declared_types(manifest: Manifest) -> Declared:
    """``data_type`` of the columns declared for sources (``source('a', 'b')``, read from the
    project's model YAML files) and models (``ref('m')``, the manifest's model properties)."""
    found: Declared = {}
    for folder in manifest.project.model_paths:
        if not folder.is_dir():
            continue
        for path in sorted([*folder.rglob("*.yml"), *folder.rglob("*.yaml")]):
            data = _yaml(path)
            for source in _list(data.get("sources")):
                for table in _list(source.get("tables")):
                    label = f"source('{source.get('name')}', '{table.get('name')}')"
                    found.setdefault(label, {}).update(_typed(table.get("columns")))
    for name, props in manifest.properties.items():
        typed = {c.name: c.data_type for c in props.columns.values() if c.data_type}
        if typed:
            found[f"ref('{name}')"] = typed
    return found


def _yaml(path: Path) -> dict[str, Any]:
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        return {}  # reported by whoever reads the file's own keys
    return data if isinstance(data, dict) else {}


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _typed(columns: Any) -> dict[str, str]:
    return {
        str(c["name"]): str(c["data_type"])
        for c in _list(columns)
        if c.get("name") is not None and c.get("data_type")
    }


def read_columns(sql: str, relation: Relation) -> list[str]:
    """Columns the model's SQL reads from ``relation``: qualified by its name or alias, or
    unqualified in a SELECT whose only table it is (first seen first)."""
    try:
        tree = sqlglot.parse_one(sql, read=DIALECT)
    except ParseError:
        return []
    found: dict[str, None] = {}
    for select in tree.find_all(exp.Select):
        tables = _tables(select)
        names = {alias for alias, table in tables.items() if _same(table, relation)}
        if not names:
            continue
        for column in _own_columns(select):
            qualifier = column.table.lower()
            if (qualifier and qualifier in names) or (not qualifier and len(tables) == 1):
                found.setdefault(column.name)
    return list(found)


def _tables(select: exp.Select) -> dict[str, exp.Table]:
    """The tables a SELECT reads directly (FROM and JOINs), by alias or name."""
    sources = []
    clause = select.args.get("from_")
    if clause is not None:
        sources.append(clause.this)
    sources += [join.this for join in select.args.get("joins") or []]
    found = {}
    for source in sources:
        if isinstance(source, exp.Table):
            found[(source.alias_or_name or source.name).lower()] = source
        elif isinstance(source, exp.Subquery):
            found[source.alias_or_name.lower()] = exp.Table()  # not a table: matches nothing
    return found


def _own_columns(select: exp.Select) -> list[exp.Column]:
    """Columns of the SELECT itself, not of the queries nested in it."""
    return [
        c
        for c in select.find_all(exp.Column)
        if c.find_ancestor(exp.Select) is select and not isinstance(c.this, exp.Star)
    ]


def _same(table: exp.Table, relation: Relation) -> bool:
    parts = [table.catalog, table.db, table.name]
    wanted = [relation.catalog, relation.namespace, relation.name]
    return [p.lower() for p in parts] == [w.lower() for w in wanted]
