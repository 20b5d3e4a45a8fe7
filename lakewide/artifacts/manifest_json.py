"""``target/manifest.json``: the parsed project as dbt's manifest shapes it (nodes, sources,
parent and child maps), written by every command that parses the project.

Each model node carries its config, refs, sources, the checksum of its file and of what
``compile`` writes for it by default (``compiled_checksum``: a key table's ``summary.md``,
another model's statements; null with ``compile_error`` when it does not compile) and the
digest of its definition as stored with its commits (lakewide.definition).

Compiling every model for its checksum would make every command's cost grow with the project
(seconds per hundred models), so each node also stores ``compiled_fingerprint``: a digest of
everything its statements are made from (the rendered SQL, the whole config, relation, refs,
sources, the plan context from the models around it) and of lakewide's own code. A node whose
fingerprint is the one in the previous ``manifest.json``, or one ``compile`` just printed,
keeps that checksum without compiling again.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path
from typing import Any

from lakewide import __version__
from lakewide.artifacts.seed_state import SEEDS_RECORDED, seed_nodes
from lakewide.artifacts.state_compare import STATE_VERSION, state_digests
from lakewide.compiler.plans.upstream import compile_in, plan_context
from lakewide.project.data_tests import DataTest
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode
from lakewide.project.user_cache import code_digest
from lakewide.state.definition import definition_digest
from lakewide.vocabulary.errors import LakewideError


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# fingerprint -> the node's compiled fields, as ``compile`` printed them in this process
_printed: dict[str, dict[str, Any]] = {}


# the fingerprints of the last manifest asked about (compile and manifest.json both ask)
_known: dict[str, Any] = {}


def compiled_fingerprint(manifest: Manifest, node: ModelNode) -> str:
    """Digest of everything ``compile_in(manifest, node)`` is made from."""
    if _known.get("manifest") is not manifest:
        _known.clear()
        _known.update(manifest=manifest, nodes={})
    nodes: dict[str, tuple[ModelNode, str]] = _known["nodes"]
    if node.name in nodes and nodes[node.name][0] is node:
        return nodes[node.name][1]
    fingerprint = _fingerprint(manifest, node)
    nodes[node.name] = (node, fingerprint)
    return fingerprint


def _fingerprint(manifest: Manifest, node: ModelNode) -> str:
    context = plan_context(manifest, node)
    inputs = {
        "code": code_digest(),
        "name": node.name,
        "path": str(node.path),
        "raw_sql": node.raw_sql,
        "sql": node.sql,
        "config": node.config.model_dump(mode="json"),
        "config_line": node.config_line,
        "relation": str(node.relation),
        "refs": node.refs,
        "sources": node.sources,
        "snapshots": node.snapshots,
        "upstream": {k: str(v) for k, v in context.upstream.items()},
        "producing": sorted(context.producing),
        "produces": context.produces,
    }
    return _sha256(json.dumps(inputs, sort_keys=True, default=str))


def compiled_checksum(files: dict[str, str]) -> dict[str, str]:
    """The checksum of what ``compile`` writes for a model by default (``CompiledModel.shown``):
    a key table's ``summary.md``, another model's statements (run plans, ``plans/``, left out)."""
    default = ["summary.md"] if "summary.md" in files else files
    names = sorted(n for n in default if not n.startswith("plans/"))
    text = "\n".join(f"-- {name}\n{files[name]}" for name in names)
    return {"name": "sha256", "checksum": _sha256(text)}


def tests_fingerprint(tests: list[DataTest]) -> str:
    """Digest of what the data tests' failing-rows queries are made from (their parts as
    trees, and lakewide's code): ``compile`` prints them again only when it changed."""
    return _sha256("\n".join([code_digest(), *(f"{t.name} {t.spec!r}" for t in tests)]))


def remember_compiled(manifest: Manifest, node: ModelNode, checksum: dict[str, str]) -> None:
    """``compile`` printed ``node``'s statements (``compiled_checksum`` of its files): the
    manifest written after it reuses the checksum."""
    _printed[compiled_fingerprint(manifest, node)] = {"compiled_checksum": checksum}


def unchanged(manifest: Manifest, names: list[str], out_root: Path) -> dict[str, dict[str, str]]:
    """The models of ``names`` whose fingerprint is the previous ``manifest.json``'s and whose
    folder under ``out_root`` still holds what ``compile`` wrote for it by default (its
    checksum): name -> checksum. ``compile`` writes nothing for these."""
    known = _previous(manifest)
    found: dict[str, dict[str, str]] = {}
    for name in names:
        fields = known.get(compiled_fingerprint(manifest, manifest.models[name]))
        folder = out_root / name
        if not fields or not fields.get("compiled_checksum") or not folder.is_dir():
            continue
        try:
            files = {f.name: f.read_text(encoding="utf-8") for f in folder.iterdir() if f.is_file()}
        except OSError:
            continue
        if (folder / "plans").exists() or compiled_checksum(files) != fields["compiled_checksum"]:
            continue  # edited by hand, or written with --all-plans: written again
        found[name] = fields["compiled_checksum"]
    return found


def compiled_before(manifest: Manifest) -> set[str]:
    """The models whose fingerprint is one the previous ``manifest.json`` holds with a
    checksum: they compiled then, from the same inputs, so they parse and compile now."""
    known = _previous(manifest)
    return {
        name
        for name, node in manifest.models.items()
        if known.get(compiled_fingerprint(manifest, node), {}).get("compiled_checksum")
    }


def _previous(manifest: Manifest) -> dict[str, dict[str, Any]]:
    """Fingerprint -> compiled fields of the nodes of the manifest.json there is (if any)."""
    try:
        document = json.loads(
            (manifest.project.target_path / "manifest.json").read_text(encoding="utf-8")
        )
        nodes = document["nodes"].values()
        return {  # a node that failed to compile stores no fingerprint
            n["compiled_fingerprint"]: {
                "compiled_checksum": n["compiled_checksum"],
                "definition_digest": n["definition_digest"],
                "state": n.get("state"),
            }
            for n in nodes
            if isinstance(n, dict) and n.get("compiled_fingerprint")
        }
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        return {}  # none yet, or not one this code wrote: every node compiles


def _compiled(
    manifest: Manifest, node: ModelNode, known: dict[str, dict[str, Any]]
) -> dict[str, Any]:

    try:
        fingerprint = compiled_fingerprint(manifest, node)
        fields = {**known.get(fingerprint, {}), **_printed.get(fingerprint, {})}
        if not fields.get("definition_digest"):  # it tokenizes the query: kept when known
            fields["definition_digest"] = definition_digest(node)
        if not fields.get("compiled_checksum"):
            fields["compiled_checksum"] = compiled_checksum(compile_in(manifest, node).shown())
    except LakewideError as err:
        return {"compiled_checksum": None, "compile_error": str(err)}
    return {**fields, "compiled_fingerprint": fingerprint}


def manifest_document(manifest: Manifest, invocation_id: str = "") -> dict[str, Any]:
    """The manifest as a JSON-ready mapping."""
    project = manifest.project
    model_id = {name: f"model.{project.name}.{name}" for name in manifest.models}
    source_id = {key: f"source.{project.name}.{key[0]}.{key[1]}" for key in manifest.sources}
    nodes: dict[str, Any] = {}
    known = _previous(manifest)
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
            **_compiled(manifest, node, known),
        }
        nodes[model_id[name]]["state"] = nodes[model_id[name]].pop("state", None) or (
            state_digests(manifest, node)
        )
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
    nodes.update(seed_nodes(manifest))
    parent_map = {uid: node["depends_on"]["nodes"] for uid, node in nodes.items()}
    child_map: dict[str, list[str]] = {uid: [] for uid in [*nodes, *sources]}
    for uid, parents in parent_map.items():
        for parent in parents:
            child_map.setdefault(parent, []).append(uid)
    return {
        "metadata": {
            "lakewide_version": __version__,
            "state_version": STATE_VERSION,
            SEEDS_RECORDED: True,
            "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "invocation_id": invocation_id,
            "project_name": project.name,
            "catalog": manifest.output.catalog,
            "namespace": manifest.output.namespace,
            "target_name": manifest.output.target_name,
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
    # compact, as dbt writes it: an indented dump is made by the pure-Python encoder (5x slower)
    text = json.dumps(document, separators=(",", ":"), default=str)
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
