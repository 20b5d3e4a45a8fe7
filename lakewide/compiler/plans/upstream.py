"""What a model reads, as the run plans need it: upstream tables and who produces a changelog."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from lakewide.compiler.model.delta_join import delta_joins
from lakewide.compiler.model.snapshot_model import analyze_snapshot
from lakewide.compiler.model.wide_model import analyze, parse_model_sql
from lakewide.compiler.plans.compiled import CompiledModel, compile_model
from lakewide.compiler.plans.run_plan import PlanContext
from lakewide.compiler.statements.build_changes import produces_changelog as _produces
from lakewide.compiler.trees.rewrite import driving_table
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.project.user_cache import cache_folder, code_digest, write_entry


def upstream_relations(manifest: Manifest, node: ModelNode) -> dict[str, Relation]:
    """Every source and model the node reads (catalog tables), by relation key."""
    found = [manifest.sources[s].relation for s in node.sources]
    found += [manifest.models[r].relation for r in node.refs]
    return {r.key: r for r in found if r.catalog}


def branch_drivers(node: ModelNode) -> list[tuple[int, str | None]]:
    """A key table's (or snapshot's) ``(branch, driving relation key)`` pairs, as its offsets
    vector names them: a ``delta`` join's dimension is a driver of its branch too; a snapshot
    reads one input, as branch 0.

    Finding them parses the whole model (a quarter of a second at 1,000 columns), which a run
    with nothing new would pay for every model: they are kept in the user's cache, named by a
    digest of everything they are found from (the rendered SQL, the config, the snapshot
    models a temporal join reads) and of lakewide's code. A model that does not analyze is
    never kept: its error is raised again."""
    key = hashlib.sha256(
        json.dumps(
            [
                code_digest(),
                node.config.kind,
                node.sql,
                node.snapshots,
                node.config.model_dump(mode="json"),
            ],
            sort_keys=True,
            default=str,
        ).encode()
    ).hexdigest()
    stored = cache_folder("drivers") / f"{key}.json"
    try:
        kept = [(int(branch), driver) for branch, driver in json.loads(stored.read_bytes())]
        if all(driver is None or isinstance(driver, str) for _, driver in kept):
            return kept
    except (OSError, ValueError, TypeError):
        pass  # not kept yet (or unreadable): found again
    drivers = _drivers(node)
    write_entry(stored, json.dumps(drivers).encode())
    return drivers


def _drivers(node: ModelNode) -> list[tuple[int, str | None]]:
    if node.config.kind.keeps_versions:
        return [(0, analyze_snapshot(node, parse_model_sql(node)).driver)]
    model = analyze(node)
    drivers = [(b.index, driving_table(b.select)) for b in model.branches]
    return drivers + [(j.branch.index, j.table) for j in delta_joins(model)]  # dimensions, too


# the models reading each model through ref(), of the last manifest asked about
_readers: dict[str, Any] = {}


def _reading(manifest: Manifest, name: str) -> list[ModelNode]:
    if _readers.get("manifest") is not manifest:  # once per project: not once per model
        index: dict[str, list[ModelNode]] = {}
        for model in manifest.models.values():
            for ref in model.refs:
                index.setdefault(ref, []).append(model)
        _readers.clear()
        _readers.update(manifest=manifest, index=index)
    readers: list[ModelNode] = _readers["index"].get(name, [])
    return readers


def produces_changelog(manifest: Manifest, node: ModelNode) -> bool:
    """Whether a key table keeps its changelog (``changelog_producer``, or read by a key
    table through ``ref()``)."""
    return _produces(node, _reading(manifest, node.name))


def plan_context(manifest: Manifest, node: ModelNode) -> PlanContext:
    upstream = upstream_relations(manifest, node)
    producing = frozenset(
        manifest.models[r].relation.key
        for r in node.refs
        if produces_changelog(manifest, manifest.models[r])
    )
    return PlanContext(upstream, producing & set(upstream), produces_changelog(manifest, node))


def compile_in(manifest: Manifest, node: ModelNode) -> CompiledModel:
    """The model compiled with what its run plans need from the project."""
    return compile_model(node, plan_context(manifest, node))
