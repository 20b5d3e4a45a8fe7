"""``target/manifest.json``: the parsed project as dbt's manifest shapes it (nodes, sources,
parent and child maps), written by every command that parses the project.

Each model node carries its config, refs, sources, the checksum of its file and of its compiled
statements (``compiled_checksum``; null with ``compile_error`` when it does not compile) and
the digest of its definition as stored with its commits (lakewide.definition).
"""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path
from typing import Any

from lakewide import __version__
from lakewide.errors import LakewideError
from lakewide.manifest import Manifest
from lakewide.nodes import ModelNode


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _compiled(manifest: Manifest, node: ModelNode) -> dict[str, Any]:
    from lakewide.definition import definition_digest
    from lakewide.upstream import compile_in

    try:
        files = compile_in(manifest, node).files(in_place=True)
        digest = definition_digest(node)
    except LakewideError as err:
        return {"compiled_checksum": None, "compile_error": str(err)}
    text = "\n".join(f"-- {name}\n{files[name]}" for name in sorted(files))
    return {
        "compiled_checksum": {"name": "sha256", "checksum": _sha256(text)},
        "definition_digest": digest,
    }


def manifest_document(manifest: Manifest, invocation_id: str = "") -> dict[str, Any]:
    """The manifest as a JSON-ready mapping."""
    project = manifest.project
    model_id = {name: f"model.{project.name}.{name}" for name in manifest.models}
    source_id = {key: f"source.{project.name}.{key[0]}.{key[1]}" for key in manifest.sources}
    nodes: dict[str, Any] = {}
    for name, node in manifest.models.items():
        parents = [model_id[r] for r in node.refs if r in model_id]
        parents += [source_id[s] for s in node.sources if s in source_id]
        nodes[model_id[name]] = {
            "unique_id": model_id[name],
            "resource_type": "model",
            "name": name,
            "original_file_path": project.relative(node.path),
            "relation_name": str(node.relation),
            "database": node.relation.catalog,
            "schema": node.relation.namespace,
            "alias": node.relation.name,
            "materialized": node.config.kind,
            "config": node.config.model_dump(mode="json", exclude_defaults=True),
            "tags": node.tags,
            "refs": [{"name": r} for r in node.refs],
            "sources": [list(s) for s in node.sources],
            "depends_on": {"nodes": parents},
            "checksum": {"name": "sha256", "checksum": _sha256(node.raw_sql)},
            **_compiled(manifest, node),
        }
    sources = {
        source_id[key]: {
            "unique_id": source_id[key],
            "resource_type": "source",
            "source_name": source.source_name,
            "name": source.table_name,
            "relation_name": str(source.relation),
            "original_file_path": project.relative(source.path),
        }
        for key, source in manifest.sources.items()
    }
    parent_map = {uid: node["depends_on"]["nodes"] for uid, node in nodes.items()}
    child_map: dict[str, list[str]] = {uid: [] for uid in [*nodes, *sources]}
    for uid, parents in parent_map.items():
        for parent in parents:
            child_map.setdefault(parent, []).append(uid)
    return {
        "metadata": {
            "lakewide_version": __version__,
            "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "invocation_id": invocation_id,
            "project_name": project.name,
            "catalog": manifest.output.catalog,
            "namespace": manifest.output.namespace,
        },
        "nodes": nodes,
        "sources": sources,
        "parent_map": parent_map,
        "child_map": child_map,
    }


def write_manifest_json(manifest: Manifest, invocation_id: str = "") -> Path:
    """Write ``target/manifest.json`` (replaced atomically)."""
    path = manifest.project.target_path / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    document = manifest_document(manifest, invocation_id)
    tmp.write_text(json.dumps(document, indent=2, default=str), encoding="utf-8")
    tmp.replace(path)
    return path
