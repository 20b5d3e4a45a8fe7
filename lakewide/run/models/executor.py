"""Run compiled models in DAG order on the Spark adapter, one result per model."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import asdict

from lakewide.compiler import CompiledModel, join_type_error
from lakewide.compiler.plans.upstream import compile_in
from lakewide.project.graph import topological_order
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode
from lakewide.run.models.branch_run import prepare_branch
from lakewide.run.models.branch_stage import staged
from lakewide.run.models.key_table_run import KeyTableRun
from lakewide.run.models.outcomes import ModelResult
from lakewide.run.models.scheduler import schedule
from lakewide.run.models.snapshot_run import SnapshotRun
from lakewide.run.schema.schema_check import check_schemas
from lakewide.run.schema.schema_steps import ModelSchema
from lakewide.spark.adapter import SparkAdapter
from lakewide.state.definition import definition_changed
from lakewide.state.lease import Leases, NoLeases
from lakewide.state.offsets import last_offsets, table_offsets
from lakewide.vocabulary.errors import CommitConflict, CommitUnknown, LakewideError, ModelRunError
from lakewide.vocabulary.events import emit, running

#: plans of one model a run makes when other writers keep committing to its table
ATTEMPTS = 3


def _run_replanning(
    adapter: SparkAdapter,
    manifest: Manifest,
    compiled: CompiledModel,
    full_refresh: bool,
    run_id: str,
    leases: Leases,
    restate: str | None = None,
) -> ModelResult:
    """Run one model under its lease; after a commit conflict (another writer committed
    first) or a commit the catalog did not confirm (its offsets show whether it landed), plan
    it again from the catalog's fresh metadata, up to ATTEMPTS times."""
    relation = compiled.node.relation
    tables = [relation] if compiled.plans is None else list(compiled.plans.tables.values())
    unknown = ""  # the last commit the catalog did not confirm
    with leases.hold(str(relation)):
        for attempt in range(1, ATTEMPTS + 1):
            for table in tables:  # plan from what the catalog holds now
                adapter.forget(table)
            try:
                result = _run_one(
                    adapter, manifest, compiled, full_refresh, run_id, leases, restate
                )
                if unknown and not result.message:  # said: a catalog that failed once
                    result.message = f"planned again after: {unknown}"
                return result
            except CommitUnknown as err:
                unknown = err.message
                if attempt == ATTEMPTS:
                    raise ModelRunError(
                        f"{err.message} (each of {ATTEMPTS} plans of this run); the commits "
                        "made are kept with their offsets. Run again to continue"
                    ) from err
            except CommitConflict as err:
                if attempt == ATTEMPTS:
                    raise CommitConflict(
                        f"another writer committed to {relation} during each of {ATTEMPTS} "
                        f"plans of this run (last: {err.message}); the commits made are kept "
                        "with their offsets. Run again to continue"
                    ) from err
            except ModelRunError as err:  # a join key Spark cannot compare: name the join
                named = join_type_error(compiled.node, compiled.bootstrap, err)
                if named is None:
                    raise
                raise named from err
    raise AssertionError("unreachable")


def _run_one(
    adapter: SparkAdapter,
    manifest: Manifest,
    compiled: CompiledModel,
    full_refresh: bool,
    run_id: str,
    leases: Leases,
    restate: str | None = None,
) -> ModelResult:
    node = compiled.node
    result = ModelResult(node.name, "success", plan=compiled.kind)
    if compiled.kind.is_view:  # a catalog view lost to another writer: replaced again
        adapter.commit(compiled.bootstrap, {})
        result.statements = 1
        return result
    adapter.ensure_namespace(node.relation)
    runs = SnapshotRun if compiled.kind.keeps_versions else KeyTableRun
    run = runs(adapter, manifest, compiled, run_id, before_commit=leases.check)
    written = run.written()
    if adapter.output.branch is None:
        return _run_model(adapter, compiled, run, result, full_refresh, restate)
    prepare_branch(adapter, node.name, written)
    if len(written) == 1:
        return _run_model(adapter, compiled, run, result, full_refresh, restate)
    with staged(adapter, *written):  # the model's table, its changelog table
        return _run_model(adapter, compiled, run, result, full_refresh, restate)


def _run_model(
    adapter: SparkAdapter,
    compiled: CompiledModel,
    run: KeyTableRun | SnapshotRun,
    result: ModelResult,
    full_refresh: bool,
    restate: str | None,
) -> ModelResult:
    node = compiled.node
    if compiled.kind.rebuilt_each_run:
        # skipped when the upstream snapshots are those of the last build and the model's
        # definition is the one that build stored
        meta = adapter.table_meta(node.relation)
        if (
            meta is not None
            and last_offsets(meta) == table_offsets(run.pinned)
            and not definition_changed(node, meta)
        ):
            result.plan, result.message = "skipped", "upstream unchanged"
            return result
        outcome = run.rebuild()
        result.statements, result.commits = outcome.statements, outcome.commits
    else:
        if full_refresh or not adapter.table_exists(node.relation):
            outcome = run.bootstrap(replace=full_refresh)
        elif restate is not None:
            outcome = run.restate(restate)
        else:
            outcome = run.incremental()
        result.plan, result.statements = outcome.plan, outcome.statements
        result.commits, result.rejected = outcome.commits, outcome.rejected
        result.ranges = [asdict(r) for r in outcome.ranges]
        result.refresh = outcome.refresh
        if outcome.refresh:  # what the run did and why (lakewide.run.models.refresh_choice)
            result.message = outcome.refresh
        result.rows_read = sum(r.keys for r in outcome.ranges)
        if outcome.rejected:
            result.message = f"rejected {outcome.rejected} row(s) with a NULL primary key"
        if outcome.schema:
            result.message = "; ".join(filter(None, [result.message, *outcome.schema]))
        if outcome.restated is not None:
            result.restated, result.removed = outcome.restated, outcome.removed
            restated = f"restated {outcome.restated} keys ({outcome.removed} deleted)"
            result.message = "; ".join(filter(None, [restated, result.message]))
        elif restate is not None:
            result.message = "; ".join(
                filter(None, ["no table to restate: built from every source", result.message])
            )
    result.rows = live_rows(adapter.snapshot_summary(node.relation))
    return result


def live_rows(summary: dict[str, str]) -> int | None:
    """The rows a reader sees, from a snapshot summary: data rows minus position deletes
    (merge-on-read); None when unknown (no count, or equality deletes, which lakewide never
    writes)."""
    try:
        total = int(summary["total-records"])
        deleted = int(summary.get("total-position-deletes", "0"))
        if int(summary.get("total-equality-deletes", "0")):
            return None
    except (KeyError, ValueError):
        return None
    return total - deleted


def run_models(
    manifest: Manifest,
    names: list[str],
    adapter: SparkAdapter,
    *,
    full_refresh: bool = False,
    run_id: str | None = None,
    on_result: Callable[[ModelResult], None] | None = None,
    leases: Leases | None = None,
    after_model: Callable[[ModelResult], bool | str | None] | None = None,
    threads: int = 1,
    fail_fast: bool = False,
    before_model: Callable[[str, SparkAdapter], str | None] | None = None,
    on_schema: Callable[[ModelSchema], None] | None = None,
    dry_run: bool = False,
    restate: str | None = None,
) -> list[ModelResult]:
    """Run ``names`` (already in DAG order); a failed model skips everything downstream,
    ``fail_fast`` everything not started yet. ``threads`` > 1 runs models with no ref path
    between them concurrently, each on its own session of the one SparkContext
    (``SparkAdapter.isolated``: its own temporary views), so their statements never meet.
    ``leases``: the catalog's per-model leases (lakewide.state.lease; default none).
    ``after_model`` is called after each successful model (e.g. its data tests); True, or the
    reason to give, skips the model's downstream models as if it had failed.
    ``before_model(name, adapter)`` runs before each model, on the adapter the model runs on
    (e.g. its unit tests); a reason returned skips the model and its downstream models.

    Unless ``full_refresh``, first plans the schema changes of every selected key table
    (lakewide.run.schema.schema_steps; each changed one is passed to ``on_schema``) and refuses
    (SchemaChangeRefused / DefinitionChangedError, nothing run) a change only a rebuild makes
    right. ``dry_run``: only that; nothing is run. ``restate``: the predicate of
    ``run --restate`` (every selected model is a key table; ``KeyTableRun.restate``).
    """
    run_id = run_id or uuid.uuid4().hex
    if not full_refresh:
        check_schemas(manifest, names, adapter, on_schema or (lambda _: None))
    if dry_run:
        return []
    views_needed = _upstream_session_views(manifest, names)
    order = [*views_needed, *names]
    stopped_before: set[str] = set()  # models before_model skipped

    def work(name: str) -> ModelResult:
        node = manifest.models[name]
        started = time.perf_counter()
        runner = adapter
        with running(name):
            emit("NodeStart", f"START {name}", node_info=_node_info(node, "started"))
            try:
                if threads > 1:
                    runner = adapter.isolated()
                    for view in _upstream_session_views(manifest, [name], selected=True):
                        runner.sql(compile_in(manifest, manifest.models[view]).bootstrap)
                why = None if before_model is None else before_model(name, runner)
                started = time.perf_counter()
                if why is not None:
                    stopped_before.add(name)
                    result = ModelResult(name, "skipped", message=why)
                else:
                    result = _run_replanning(
                        runner,
                        manifest,
                        compile_in(manifest, node),
                        full_refresh,
                        run_id,
                        leases or NoLeases(),
                        restate,
                    )
            except LakewideError as err:
                err.model = err.model or name
                result = ModelResult(name, "error", message=str(err))
            result.seconds = time.perf_counter() - started
            emit(
                "NodeFinished",
                f"{result.status.upper()} {name} in {result.seconds:.2f}s",
                "error" if result.status == "error" else "info",
                node_info=_node_info(node, result.status),
            )
        return result

    def done(result: ModelResult) -> bool | str | None:
        if result.name in views_needed:
            return False
        if on_result:
            on_result(result)
        if result.name in stopped_before:
            return f"{result.message} on upstream {result.name}"
        return after_model is not None and result.status == "success" and after_model(result)

    outcomes = schedule(
        order,
        {name: manifest.models[name].refs for name in order},
        work,
        lambda name, why: ModelResult(name, "skipped", message=why),
        done,
        threads=threads,
        fail_fast=fail_fast,
    )
    return [outcomes[name] for name in names]


def _node_info(node: ModelNode, status: str) -> dict[str, str]:
    return {
        "node_status": status,
        "materialized": node.config.kind,
        "relation_name": str(node.relation),
        "node_path": str(node.path),
    }


def _upstream_session_views(
    manifest: Manifest, names: list[str], selected: bool = False
) -> list[str]:
    """Session-only views (hadoop catalog) the models ``names`` read, directly or through each
    other, in run order; unless ``selected``, only those not among ``names``."""

    needed: set[str] = set()
    stack = [r for n in names for r in manifest.models[n].refs]
    while stack:
        name = stack.pop()
        node = manifest.models[name]
        if name in needed or node.relation.catalog or (name in names and not selected):
            continue
        needed.add(name)
        stack.extend(node.refs)
    return [n for n in topological_order(manifest.models) if n in needed]
