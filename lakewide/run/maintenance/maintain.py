"""``lakewide maintain`` on Spark: each selected model's table, step by step (lakewide.maintenance).

Retention and TTL deletes commit with ``lakewide.maintenance`` in their snapshot summary; on a
model that keeps its changelog they also carry ``lakewide.changelog``, and the changes they made
(DELETE rows) are appended to ``<model>__changelog`` right after, with the same statements a run
uses to complete a changelog a stopped run left due. So a downstream model reading the table
incrementally gets those deletes as DELETE change rows. The procedures' commits (``replace``
snapshots: no row changes) carry nothing: runs walk past them to the last lakewide commit, and
incremental reads skip them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from lakewide.compiler.plans.steps import PRODUCES
from lakewide.compiler.plans.upstream import compile_in
from lakewide.project.manifest import Manifest
from lakewide.run.maintenance.maintenance_steps import (
    MaintenanceStep,
    TablePlan,
    expire_step,
    plan_table,
)
from lakewide.run.models.key_table_run import KeyTableRun
from lakewide.spark.adapter import SparkAdapter
from lakewide.state.offsets import MODEL, RUN_ID
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import ModelRunError

MAINTENANCE = "lakewide.maintenance"  # on a retention/TTL delete: which of the two


@dataclass
class StepResult:
    kind: str
    sql: str
    counts: dict[str, int] = field(default_factory=dict)
    snapshot: int | None = None  # the commit a retention/TTL delete made
    note: str = ""


@dataclass
class TableResult:
    model: str
    status: str  # success | error | skipped
    steps: list[StepResult] = field(default_factory=list)
    protected: dict[int, str] = field(default_factory=dict)
    message: str = ""


def _counts(columns: list[str], rows: list[tuple[object, ...]]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for row in rows:
        for column, value in zip(columns, row):
            if isinstance(value, int) and not isinstance(value, bool):
                totals[column] = totals.get(column, 0) + value
    return totals


class TableMaintenance:
    """The maintenance of one model's table on one adapter."""

    def __init__(self, adapter: SparkAdapter, manifest: Manifest, name: str) -> None:
        self.adapter, self.manifest, self.name = adapter, manifest, name
        self.node = manifest.models[name]
        self.run_id = uuid.uuid4().hex

    def run(self, plan: TablePlan, protected: dict[int, str]) -> TableResult:
        result = TableResult(self.name, "success", protected=protected)
        for step in plan.steps:
            if step.kind == "expire_snapshots":
                step, result.protected = self._fresh_expire(step)
            result.steps.append(self._step(plan, step))
        return result

    def _fresh_expire(self, planned: MaintenanceStep) -> tuple[MaintenanceStep, dict[int, str]]:
        """The expire step decided again from the metadata as the steps before left it."""
        meta = self.adapter.table_meta(self.node.relation)
        assert meta is not None
        step, protected = expire_step(
            self.manifest, self.node, meta, self.adapter.table_meta, datetime.now(timezone.utc)
        )
        return step or planned, protected

    def _step(self, plan: TablePlan, step: MaintenanceStep) -> StepResult:

        text = to_sql(step.statement, pretty=False)
        done = StepResult(step.kind, text)
        if step.probe is not None:
            _, rows = self.adapter.rows(step.probe)
            if not rows:
                done.note = "no row older than the bound: nothing deleted"
                return done
            self._delete(plan, step, done)
            return done
        columns, rows = self.adapter.rows(step.statement)
        done.counts = _counts(columns, rows)
        return done

    def _delete(self, plan: TablePlan, step: MaintenanceStep, done: StepResult) -> None:
        relation = self.node.relation
        before = self.adapter.current_snapshot(relation)
        properties = {MAINTENANCE: step.kind, RUN_ID: self.run_id, MODEL: self.name}
        if plan.produces:
            properties[PRODUCES] = "lookup"
        self.adapter.commit(step.statement, properties)
        meta = self.adapter.table_meta(relation)
        if meta is None or meta.current in (None, before):
            done.note = "no commit"
            return
        assert meta.current is not None
        snapshot = meta.snapshots[meta.current]
        done.snapshot = snapshot.id
        summary = snapshot.summary
        done.counts = {
            k: int(summary.get(k, "0") or 0)
            for k in ("deleted-data-files", "deleted-records", "added-data-files")
            + ("added-delete-files", "added-position-deletes")
        }
        if plan.produces:
            run = self._key_table_run()
            run.complete_changelog(meta)
        rewritten = done.counts["added-data-files"] + done.counts["added-delete-files"]
        if step.kind == "retention" and rewritten:
            raise ModelRunError(
                f"the retention DELETE on {relation} (snapshot {snapshot.id}) wrote "
                f"{rewritten} data/delete file(s): it did not drop whole partitions; its "
                "rows are deleted all the same. Check that the table is still partitioned "
                "as partition_by says"
            )

    def _key_table_run(self) -> KeyTableRun:
        compiled = compile_in(self.manifest, self.node)
        return KeyTableRun(self.adapter, self.manifest, compiled, self.run_id)


def maintain_models(
    manifest: Manifest,
    names: list[str],
    adapter: SparkAdapter,
    on_result: Callable[[TableResult], None] = lambda _: None,
) -> list[TableResult]:
    """Maintain each model's table in turn; a failing table is reported and the next one
    still maintained. Every table's steps are planned first, so a configuration error
    (ConfigError: a TTL column that is no time column, ...) stops before anything changed."""
    now = datetime.now(timezone.utc)
    plans = [plan_table(manifest, name, adapter.table_meta, now) for name in names]
    results = []
    for plan, protected in plans:
        if plan.skipped:
            result = TableResult(plan.model, "skipped", message=plan.skipped)
        else:
            try:
                result = TableMaintenance(adapter, manifest, plan.model).run(plan, protected)
            except ModelRunError as err:
                result = TableResult(plan.model, "error", message=str(err))
        results.append(result)
        on_result(result)
    return results
