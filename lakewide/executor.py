"""Run compiled models in DAG order on an engine adapter, one result per model."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from sqlglot import exp

from lakewide.compiler import CompiledModel, compile_model
from lakewide.engine.adapter import SparkAdapter
from lakewide.errors import LakewideError
from lakewide.manifest import Manifest


@dataclass
class ModelResult:
    """What happened to one model in one run."""

    name: str
    status: str  # success | error | skipped
    plan: str = ""  # bootstrap | full-refresh | incremental | view | table
    statements: int = 0
    rows: int | None = None
    seconds: float = 0.0
    message: str = ""
    rejected: int = 0  # rows dropped for a NULL primary key
    details: dict[str, str] = field(default_factory=dict)


def _count(adapter: SparkAdapter, query: exp.Select | None) -> int:
    if query is None:
        return 0
    _, rows = adapter.rows(query)
    return int(rows[0][0])


def _run_one(adapter: SparkAdapter, compiled: CompiledModel, full_refresh: bool) -> ModelResult:
    node = compiled.node
    result = ModelResult(node.name, "success", plan=compiled.kind)
    rejected = 0
    if compiled.kind != "view":
        adapter.ensure_namespace(node.relation)
    if compiled.kind in ("view", "table"):
        adapter.sql(compiled.bootstrap)
        result.statements = 1
    elif full_refresh or not adapter.table_exists(node.relation):
        result.plan = "full-refresh" if full_refresh else "bootstrap"
        rejected = _count(adapter, compiled.null_keys)
        adapter.sql(compiled.full_refresh if full_refresh else compiled.bootstrap)
        result.statements = 1
    else:
        result.plan = "incremental"
        for merge in compiled.merges:
            rejected += _count(adapter, merge.null_keys)
            staged = adapter.stage(merge.batch_view, merge.batch)
            result.details[merge.name] = f"{staged} keys"
            if staged:
                adapter.sql(merge.statement)
                result.statements += 1
    if compiled.kind == "primary_key":
        result.rejected = rejected
        if rejected:
            result.message = f"rejected {rejected} row(s) with a NULL primary key"
    if compiled.kind != "view":
        total = adapter.snapshot_summary(node.relation).get("total-records")
        result.rows = int(total) if total is not None else None
    return result


@dataclass
class SeedResult:
    """One CSV seed loaded into its table."""

    name: str
    relation: str
    rows: int
    seconds: float


def load_seeds(manifest: Manifest, adapter: SparkAdapter,
               on_result: Callable[[SeedResult], None] | None = None) -> list[SeedResult]:
    """Replace every seed table with its CSV's rows."""
    from lakewide.seeds import find_seeds

    results = []
    for seed in find_seeds(manifest.project, manifest.output):
        started = time.perf_counter()
        rows = adapter.load_csv(seed.path, seed.relation, seed.column_types)
        result = SeedResult(seed.path.stem, str(seed.relation), rows,
                            time.perf_counter() - started)
        results.append(result)
        if on_result:
            on_result(result)
    return results


def run_models(manifest: Manifest, names: list[str], adapter: SparkAdapter, *,
               full_refresh: bool = False,
               on_result: Callable[[ModelResult], None] | None = None) -> list[ModelResult]:
    """Run ``names`` (already in DAG order); a failed model skips everything downstream."""
    results: list[ModelResult] = []
    failed: set[str] = set()
    views_needed = _upstream_session_views(manifest, names)
    for name in [*views_needed, *names]:
        node = manifest.models[name]
        started = time.perf_counter()
        blocked = [r for r in node.refs if r in failed]
        if blocked:
            failed.add(name)
            result = ModelResult(name, "skipped", message=f"upstream {blocked[0]} failed")
        else:
            try:
                result = _run_one(adapter, compile_model(node), full_refresh)
            except LakewideError as err:
                failed.add(name)
                err.model = err.model or name
                result = ModelResult(name, "error", message=str(err))
        result.seconds = time.perf_counter() - started
        if name in views_needed:
            continue
        results.append(result)
        if on_result:
            on_result(result)
    return results


def _upstream_session_views(manifest: Manifest, names: list[str]) -> list[str]:
    """Session-only views (hadoop catalog) that selected models read but did not select."""
    from lakewide.graph import topological_order

    needed: set[str] = set()
    stack = [r for n in names for r in manifest.models[n].refs]
    while stack:
        name = stack.pop()
        node = manifest.models[name]
        if name in needed or node.relation.catalog or name in names:
            continue
        needed.add(name)
        stack.extend(node.refs)
    return [n for n in topological_order(manifest.models) if n in needed]
