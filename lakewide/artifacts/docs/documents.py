"""The docs' data, named as dbt names it: ``manifest.json`` (models, sources, config, compiled
SQL, the DAG, each column's owning source and lineage) and ``catalog.json`` (column types)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from lakewide import __version__
from lakewide.artifacts.docs.column_types import (
    UNKNOWN,
    TableTypes,
    add_to_schema,
    model_types,
    stored_types,
)
from lakewide.artifacts.docs.key_columns import merge_roles, owners_of
from lakewide.artifacts.docs.properties import Described, model_properties, source_properties
from lakewide.compiler import analyze
from lakewide.compiler.plans.upstream import compile_in
from lakewide.compiler.queries.column_lineage import ColumnLineage, ColumnRef, model_lineage
from lakewide.project.graph import topological_order
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.state.metadata import MetadataReader
from lakewide.vocabulary.errors import LakewideError


@dataclass
class Documents:
    """The two JSON documents of a docs site."""

    manifest: dict[str, Any]
    catalog: dict[str, Any]


def model_id(manifest: Manifest, name: str) -> str:
    """dbt's unique id of a model: ``model.<project>.<name>``."""
    return f"model.{manifest.project.name}.{name}"


def source_id(manifest: Manifest, source: str, table: str) -> str:
    """dbt's unique id of a source table: ``source.<project>.<source>.<table>``."""
    return f"source.{manifest.project.name}.{source}.{table}"


def _metadata(manifest: Manifest, kind: str) -> dict[str, Any]:
    return {
        "dbt_schema_version": f"lakewide/{kind}/v1",
        "lakewide_version": __version__,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "project_name": manifest.project.name,
        "catalog": manifest.output.catalog,
        "catalog_type": manifest.output.catalog_type,
        "namespace": manifest.output.namespace,
    }


def _table_entry(
    unique_id: str, relation: Relation, types: TableTypes, columns: list[str]
) -> dict[str, Any]:
    """One catalog.json entry: the table's columns in order with type and where it comes from."""
    shown = columns + [c for c in types.columns if c not in columns]
    entry_columns = {}
    for index, name in enumerate(shown, start=1):
        found, origin = types.type_of(name)
        entry_columns[name] = {
            "name": name,
            "index": index,
            "type": found or None,
            "type_origin": origin,
            "comment": types.comments.get(name),
        }
    return {
        "unique_id": unique_id,
        "metadata": {
            "type": "table",
            "database": relation.catalog,
            "schema": relation.namespace,
            "name": relation.name,
        },
        "exists": types.exists,
        "problem": types.problem,
        "columns": entry_columns,
        "stats": {},
    }


def _refs(refs: list[ColumnRef], ids: dict[str, str]) -> list[dict[str, Any]]:
    return [{"table": r.table, "column": r.column, "unique_id": ids.get(r.table)} for r in refs]


def _compiled(manifest: Manifest, node: ModelNode) -> tuple[dict[str, str], str | None]:
    """The statements as ``lakewide compile`` writes them (without the plans), or the error."""
    try:
        compiled = compile_in(manifest, node)
        return compiled.files(in_place=True), None
    except LakewideError as err:
        return {}, str(err)


class _DocsBuilder:
    def __init__(self, manifest: Manifest, reader: MetadataReader | None) -> None:
        self.manifest = manifest
        self.reader = reader
        self.schema: dict[str, Any] = {}
        self.ids = {
            s.relation.key: source_id(manifest, s.source_name, s.table_name)
            for s in manifest.sources.values()
        }
        self.ids.update(
            {n.relation.key: model_id(manifest, n.name) for n in manifest.models.values()}
        )
        # every model, session views too: a ref() to one is followed into its query
        self.models_sql = {n.relation.key: n.sql for n in manifest.models.values()}

    def sources(self) -> tuple[dict[str, Any], dict[str, Any]]:
        nodes: dict[str, Any] = {}
        catalog: dict[str, Any] = {}
        described = source_properties(self.manifest)
        for (source_name, table_name), source in sorted(self.manifest.sources.items()):
            props = described.get((source_name, table_name))
            unique_id = source_id(self.manifest, source_name, table_name)
            types = stored_types(self.reader, source.relation)
            add_to_schema(self.schema, source.relation, types)
            catalog[unique_id] = _table_entry(unique_id, source.relation, types, [])
            nodes[unique_id] = {
                "unique_id": unique_id,
                "resource_type": "source",
                "source_name": source_name,
                "name": table_name,
                "relation_name": str(source.relation),
                "original_file_path": self.manifest.project.relative(source.path),
                "description": props.description if props else None,
                "columns": {
                    c: {"name": c, "description": props.columns.get(c) if props else None}
                    for c in [*types.columns, *(props.columns if props else {})]
                },
            }
        return nodes, catalog

    def model(self, node: ModelNode) -> tuple[dict[str, Any], dict[str, Any]]:
        unique_id = model_id(self.manifest, node.name)
        files, compile_error = _compiled(self.manifest, node)
        problems = [compile_error] if compile_error else []
        try:
            lineage = model_lineage(node, self.models_sql, self.schema)
        except LakewideError as err:
            lineage, problems = {}, [*problems, str(err)]
        owners: dict[str, list[Any]] = {}
        roles: dict[str, str] = {}
        model = None
        if node.config.kind.is_key_table and compile_error is None:
            model = analyze(node)
            owners, roles = owners_of(model, self.ids), merge_roles(model)
        types = model_types(node, self.reader, self.schema, model)
        columns = list(lineage) or list(owners) or list(types.columns)
        add_to_schema(self.schema, node.relation, types, columns)
        props = model_properties(self.manifest, node.name)
        # a column the YAML describes but the query does not give is shown too (as dbt does)
        shown = columns + [c for c in props.columns if c not in columns]
        config = node.config
        entry = {
            "unique_id": unique_id,
            "resource_type": "model",
            "name": node.name,
            "original_file_path": self.manifest.project.relative(node.path),
            "relation_name": str(node.relation),
            "description": props.description,
            "tags": list(node.tags),
            "materialized": config.kind,
            "merge_engine": getattr(config, "merge_engine", None),
            "config": config.model_dump(mode="json", exclude_defaults=True),
            "depends_on": {
                "nodes": [source_id(self.manifest, *s) for s in node.sources]
                + [model_id(self.manifest, r) for r in node.refs]
            },
            "raw_code": node.raw_sql,
            "compiled_code": node.sql,
            "compiled_files": files,
            "problems": problems,
            "tests": props.tests,
            "columns": {
                name: {
                    **self._column(name, lineage.get(name), owners.get(name), types, props),
                    "merge": roles.get(name),
                }
                for name in shown
            },
        }
        return entry, _table_entry(unique_id, node.relation, types, columns)

    def _column(
        self,
        name: str,
        lineage: ColumnLineage | None,
        owners: list[Any] | None,
        types: TableTypes,
        props: Described,
    ) -> dict[str, Any]:
        found, origin = types.type_of(name)
        return {
            "name": name,
            "description": props.columns.get(name),
            "data_type": found or None,
            "type_origin": origin if found else UNKNOWN,
            "owners": owners,
            "lineage": None
            if lineage is None
            else {
                "direct": _refs(lineage.direct, self.ids),
                "sources": _refs(lineage.sources, self.ids),
                "unresolved": lineage.unresolved,
            },
        }


def _feeds(nodes: dict[str, Any], tables: dict[str, Any]) -> None:
    """On each source and model: which model columns each of its columns feeds (``feeds``),
    the columns lineage found added to a source whose table was not read."""
    for uid, node in nodes.items():
        for column in node["columns"].values():
            for ref in (column["lineage"] or {}).get("direct", []):
                upstream = tables.get(ref["unique_id"]) or nodes.get(ref["unique_id"])
                if upstream is None:
                    continue
                entry = upstream["columns"].setdefault(ref["column"], {"name": ref["column"]})
                entry.setdefault("feeds", []).append({"unique_id": uid, "column": column["name"]})


def build_documents(manifest: Manifest, reader: MetadataReader | None) -> Documents:
    """manifest.json and catalog.json of the project (no JVM: metadata through ``reader``)."""
    builder = _DocsBuilder(manifest, reader)
    sources, source_catalog = builder.sources()
    nodes: dict[str, Any] = {}
    model_catalog: dict[str, Any] = {}
    for name in topological_order(manifest.models):  # upstream first: their types feed later
        nodes[model_id(manifest, name)], model_catalog[model_id(manifest, name)] = builder.model(
            manifest.models[name]
        )
    _feeds(nodes, sources)
    parent_map = {uid: node["depends_on"]["nodes"] for uid, node in nodes.items()}
    child_map: dict[str, list[str]] = {uid: [] for uid in [*sources, *nodes]}
    for child, parents in parent_map.items():
        for parent in parents:
            child_map.setdefault(parent, []).append(child)
    document = {
        "metadata": _metadata(manifest, "manifest"),
        "nodes": nodes,
        "sources": sources,
        "parent_map": {**{uid: [] for uid in sources}, **parent_map},
        "child_map": child_map,
    }
    catalog = {
        "metadata": _metadata(manifest, "catalog"),
        "nodes": model_catalog,
        "sources": source_catalog,
        "errors": None,
    }
    return Documents(document, catalog)
