"""Runs of ``snapshot`` models: the input's changes since the consumed snapshot become versions.

The plans come from ``compiler/snapshot_plan``; this only picks one from metadata: a new table
is bootstrapped; an existing one reads its input by appends when only appends happened since
the consumed snapshot, else whole (``full``: keys that left the input are hard deletes).
Like dbt, ``--full-refresh`` does not rebuild a snapshot (its history would be lost): the run
is an ordinary incremental one. Commits carry the offsets vector as every lakewide commit does.
"""

from __future__ import annotations

from typing import cast

from lakewide.compiler.plans.snapshot_plan import SnapshotPlans
from lakewide.compiler.trees import placeholders
from lakewide.run.models.key_table_run import KeyTableRun
from lakewide.run.models.outcomes import KeyTableOutcome, SourceRange
from lakewide.state.definition import definition_changed
from lakewide.state.offsets import TableMeta, appends_only, last_offsets, offset_key
from lakewide.vocabulary.errors import ModelRunError


class SnapshotRun(KeyTableRun):
    """One run of one snapshot model."""

    @property
    def snapshot_plans(self) -> SnapshotPlans:
        return cast(SnapshotPlans, self.plans)

    def bootstrap(self, replace: bool) -> KeyTableOutcome:
        """A new snapshot table from every input row; an existing one is never replaced."""
        if replace and self.adapter.table_exists(self.relation):
            return self.incremental()
        plans = self.snapshot_plans
        self.outcome = KeyTableOutcome("bootstrap")
        self.pin_all()
        end = self.pinned.get(plans.driver)
        self.progress = {offset_key(0, plans.driver): end}
        reason = "bootstrap: every row at the pinned snapshot"
        self.outcome.ranges = [SourceRange(0, plans.driver, None, end, "full", reason=reason)]
        self._run(plans.bootstrap)
        return self.outcome

    def incremental(self) -> KeyTableOutcome:
        """The input's rows since the consumed snapshot, merged as versions."""
        plans = self.snapshot_plans
        self.outcome = outcome = KeyTableOutcome("incremental")
        meta = self.adapter.table_meta(self.relation)
        node = self.manifest.models[self.name]
        if definition_changed(node, meta):
            raise ModelRunError(
                f"snapshot {self.name}: its SQL or config differs from the definition its table "
                f"{self.relation} was built from. A snapshot keeps history that its input no "
                "longer holds, so it is never rebuilt (not even by --full-refresh); restore the "
                f"definition, or drop the table (DROP TABLE {self.relation}) to start a new "
                "history"
            )
        self.head = None if meta is None else meta.current
        self.planned = True
        consumed = dict(last_offsets(meta) or {})
        self.pin_all()
        key = offset_key(0, plans.driver)
        start, end = consumed.get(key), self.pinned.get(plans.driver)
        mode, reason = self._mode(start, end, key in consumed)
        outcome.ranges.append(SourceRange(0, plans.driver, start, end, mode, reason=reason))
        self.progress = {key: end}
        if mode == "none":
            return outcome
        self.params[placeholders.start(0)], self.params[placeholders.end(0)] = start, end
        self._run(plans.reads[mode])
        params = self._run(plans.merges[mode])
        outcome.ranges[0].keys = int(params.get("staged") or 0)
        self._record_offsets(consumed)  # no new version: the run still records how far it read
        return outcome

    def _mode(self, start: int | None, end: int | None, consumed: bool) -> tuple[str, str]:
        if end is None:
            return "none", "the input has no snapshot yet"
        if consumed and start == end:
            return "none", "no new snapshot"
        upstream: TableMeta | None = self.metas.get(self.snapshot_plans.driver)
        if start is not None and upstream is not None and appends_only(upstream, start, end):
            return "incremental", "appends only: each appended row is a candidate version"
        return "full", "changed by more than appends (or nothing consumed): every row read"
