"""Key-table runs: pin upstream snapshots, read only new rows, commit data with its offsets.

Every commit of a key table carries the whole consumed-offset vector (one entry per source
branch) in its snapshot summary, so a crash at any point resumes exactly where the last commit
left off: a replayed batch is never merged twice, a lost one is read again.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Callable

from sqlglot import exp

from lakewide import faults
from lakewide.changelog import changelog_merge, refuse_deletes
from lakewide.changelog_producer import ChangelogProducer, covered, produces_changelog, \
    range_covered, register_changes
from lakewide.compiler import CompiledModel, SourceMerge
from lakewide.compiler.build_bootstrap import tagged_branch
from lakewide.compiler.build_changes import changelog_relation
from lakewide.compiler.build_merge import build_combined_batch, keys_touched, narrow_merge
from lakewide.compiler.rewrite import driving_table, relation_key, replace_tables
from lakewide.compiler.validate import check_probed_types, type_probes
from lakewide.definition import definition_digest, refuse_changed_models
from lakewide.engine.adapter import SparkAdapter
from lakewide.errors import ModelRunError
from lakewide.manifest import Manifest
from lakewide.nodes import ModelNode, Relation
from lakewide.offsets import commit_properties, last_offsets, offset_key
from lakewide.read_plan import ReadPlan, choose_read

CONFLICT_MARKERS = ("CommitFailedException", "ValidationException", "conflicting")
ATTEMPTS = 3


@dataclass
class SourceRange:
    """What one source branch read in one run."""

    branch: int
    relation: str
    start: int | None
    end: int | None
    mode: str  # none | incremental | changelog | lineage | full (lakewide.read_plan)
    keys: int = 0
    reason: str = ""


@dataclass(eq=False)  # compared by identity
class BranchRead:
    """A source branch with new rows in this run: its registered read and merge step."""

    merge: SourceMerge
    key: str  # offsets key
    end: int  # pinned snapshot read up to
    views: dict[str, str]  # relation -> view, this branch's read bound
    range: SourceRange
    mode: str


@dataclass
class KeyTableOutcome:
    plan: str
    ranges: list[SourceRange] = field(default_factory=list)
    commits: list[int] = field(default_factory=list)
    rejected: int = 0
    statements: int = 0


def upstream_relations(manifest: Manifest, node: ModelNode) -> dict[str, Relation]:
    """Every source and model the node reads, by relation key."""
    found = [manifest.sources[s].relation for s in node.sources]
    found += [manifest.models[r].relation for r in node.refs]
    return {relation_key(r): r for r in found if r.catalog}


def _model_at(manifest: Manifest, relation: Relation) -> ModelNode | None:
    """The project's model whose table is ``relation`` (None for a source)."""
    key = relation_key(relation)
    return next((m for m in manifest.models.values() if relation_key(m.relation) == key), None)


class KeyTableRun:
    """One run of one key table."""

    def __init__(self, adapter: SparkAdapter, manifest: Manifest, compiled: CompiledModel,
                 run_id: str) -> None:
        self.adapter, self.compiled, self.run_id = adapter, compiled, run_id
        self.node = compiled.node
        self.model = compiled.model
        self.manifest = manifest
        self.definition = definition_digest(self.node)
        self.upstream = upstream_relations(manifest, self.node)
        # each upstream's snapshots, read once: they pin it and plan its reads
        self.metas = {key: adapter.table_meta(rel) for key, rel in self.upstream.items()}
        self.pinned = {key: None if meta is None else meta.current
                       for key, meta in self.metas.items()}
        self.views: dict[str, str] = {}
        self.producer = ChangelogProducer(adapter, self.model, run_id) \
            if self.model is not None and produces_changelog(manifest, self.node) else None
        self.produced = {rel_key: changelog_relation(rel) for rel_key, rel in self.upstream.items()
                         if (up := _model_at(manifest, rel)) is not None
                         and produces_changelog(manifest, up)}
        self.head: int | None = None  # the target's snapshot before this run's next commit

    def pin_all(self) -> None:
        """Every upstream table as a view at its pinned snapshot (lookups, bootstrap); then
        the aggregated columns whose type the model does not declare are checked against the
        types the upstreams give them (analysis only, nothing read or written)."""
        for index, (key, relation) in enumerate(self.upstream.items()):
            snapshot = self.pinned[key]
            if snapshot is not None:
                view = f"__lw_pin_{index}"
                self.adapter.register_read(view, relation, snapshot, meta=self.metas[key])
                self.views[key] = view
        if self.model is None:  # a table model: nothing is aggregated
            return
        for probe in type_probes(self.model):
            check_probed_types(self.model,
                               self.adapter.column_types(replace_tables(probe, self.views)))

    def _properties(self, progress: dict[str, int | None]) -> dict[str, str]:
        return commit_properties(progress, self.run_id, self.node.name, self.definition)

    def commit(self, statement: exp.Expression, progress: dict[str, int | None],
               extra: dict[str, str] | None = None) -> int | None:
        """Commit ``statement`` with the offsets; the new snapshot, None when none was made."""
        faults.checkpoint("before-commit")
        self.adapter.commit(statement, {**self._properties(progress), **(extra or {})})
        faults.checkpoint("after-commit")
        meta = self.adapter.table_meta(self.node.relation)
        current = None if meta is None else meta.current
        if current is None or current == self.head:
            return None
        self.head = current
        return current

    def _branch_keys(self) -> list[str | None]:
        assert self.model is not None
        return [driving_table(b.select) for b in self.model.branches]

    def bootstrap(self, replace: bool) -> KeyTableOutcome:
        """Fold every source at its pinned snapshot into a new table (one atomic commit)."""
        self.pin_all()
        drivers = self._branch_keys()
        progress = {offset_key(i, d): self.pinned.get(d) for i, d in enumerate(drivers) if d}
        statement = self.compiled.full_refresh if replace else self.compiled.bootstrap
        assert statement is not None and self.compiled.null_keys is not None
        outcome = KeyTableOutcome("full-refresh" if replace else "bootstrap")
        outcome.rejected = self._count(replace_tables(self.compiled.null_keys, self.views))
        outcome.ranges = [SourceRange(i, d, None, self.pinned.get(d), "full",
                                      reason="bootstrap: every row at the pinned snapshot")
                          for i, d in enumerate(drivers) if d]
        snapshot = self.commit(replace_tables(statement, self.views), progress)
        outcome.statements = 1
        if snapshot:
            outcome.commits.append(snapshot)
            if self.producer is not None:
                self.producer.reset(snapshot)
                outcome.statements += 1
        if self.compiled.write_order is not None:  # metadata only: no snapshot, no offsets
            self.adapter.sql(self.compiled.write_order)
            outcome.statements += 1
        return outcome

    def _count(self, query: exp.Expression) -> int:
        _, rows = self.adapter.rows(query)
        return int(rows[0][0])

    def incremental(self) -> KeyTableOutcome:
        """MERGE the rows changed since the consumed offsets: one MERGE (one target scan, one
        commit) for every source read by appends, lineage or a full re-read; a source read
        through its upstream's changelog merges on its own."""
        outcome = KeyTableOutcome("incremental")
        meta = self.adapter.table_meta(self.node.relation)
        refuse_changed_models(self.manifest, [self.node.name], lambda _: meta)
        self.head = None if meta is None else meta.current
        if self.producer is not None:
            self.producer.recover(meta)
        consumed: dict[str, int | None] = dict(last_offsets(meta) or {})
        progress = dict(consumed)
        self.pin_all()
        assert self.model is not None
        reads: list[BranchRead] = []
        for merge, driver in zip(self.compiled.merges, self._branch_keys()):
            if driver is None or driver not in self.upstream:
                raise ModelRunError(f"branch {merge.branch + 1} reads no declared source or "
                                    "model; use source() or ref() so lakewide can track it",
                                    model=self.node.name)
            key = offset_key(merge.branch, driver)
            start, end = consumed.get(key), self.pinned[driver]
            plan = self._plan(merge.branch, driver, start, end, key in consumed)
            source_range = SourceRange(merge.branch, driver, start, end, plan.mode,
                                       reason=plan.reason)
            outcome.ranges.append(source_range)
            if plan.mode == "none":
                progress[key] = end
                continue
            assert end is not None
            view = f"__lw_new_{merge.branch + 1}"
            views = {**self.views, driver: view}
            step = self._register(merge, plan, driver, view, views, start, end)
            reads.append(BranchRead(step, key, end, views, source_range, plan.mode))
        together = [r for r in reads if r.mode != "changelog"]
        if len(together) < 2 or self.compiled.combined is None:
            together = []
        for read in together:
            progress[read.key] = read.end
        if together:
            self._retrying(functools.partial(self._merge_together, together, progress, outcome))
        for read in reads:
            if read in together:
                continue
            progress[read.key] = read.end
            self._retrying(functools.partial(self._merge_branch, read.merge, read.views,
                                             progress, outcome, read.range))
        return outcome

    def _retrying(self, step: Callable[[], None]) -> None:
        """Run a staging + MERGE step, again on a fresh table state after a commit conflict."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                step()
                return
            except ModelRunError as err:
                if attempt == ATTEMPTS or not any(m in str(err) for m in CONFLICT_MARKERS):
                    raise
                self.adapter.refresh(self.node.relation)

    def _merge_together(self, reads: list[BranchRead], progress: dict[str, int | None],
                        outcome: KeyTableOutcome) -> None:
        """Fold the new rows of several sources per key together and MERGE them at once."""
        combined = self.compiled.combined
        assert combined is not None and self.model is not None
        for read in reads:
            assert read.merge.null_keys is not None
            outcome.rejected += self._count(replace_tables(read.merge.null_keys, read.views))
        tagged = {r.merge.branch: replace_tables(
            tagged_branch(self.model, self.model.branches[r.merge.branch]), r.views)
            for r in reads}
        faults.checkpoint("before-stage")
        staged = self.adapter.stage(combined.batch_view,
                                    build_combined_batch(self.model, tagged))
        counts = [0] * len(reads)
        if staged:
            _, [row] = self.adapter.rows(keys_touched([r.merge.branch for r in reads]))
            counts = [int(c) for c in row]
        for read, keys in zip(reads, counts):
            read.range.keys = keys
        if staged:
            self._commit_merge(combined, progress, outcome)

    def _commit_merge(self, merge: SourceMerge, progress: dict[str, int | None],
                      outcome: KeyTableOutcome) -> None:
        statement = merge.statement
        if merge.bounds is not None and self.model is not None:
            _, [(low, high)] = self.adapter.rows(merge.bounds)
            statement = narrow_merge(self.model, statement, low, high)
        parent = self.head
        extra = None if self.producer is None else self.producer.merge_properties
        snapshot = self.commit(statement, progress, extra)
        outcome.statements += 1
        if snapshot:
            outcome.commits.append(snapshot)
            if self.producer is not None:
                self.producer.after_merge(snapshot, parent, merge.batch_view)
                outcome.statements += 1

    def _plan(self, branch: int, driver: str, start: int | None, end: int | None,
              consumed: bool) -> ReadPlan:
        assert self.model is not None
        relation = self.upstream[driver]
        produced = None
        if driver in self.produced:
            def produced(low: int, high: int) -> bool:
                meta = self.metas[driver]
                changes = covered(self.adapter.table_meta(self.produced[driver]))
                return meta is not None and range_covered(meta, changes, low, high)
        return choose_read(self.model, self.model.branches[branch], driver, start, end,
                           consumed=consumed, meta=lambda: self.metas[driver],
                           format_version=lambda: self.adapter.format_version(relation),
                           produced=produced)

    def _register(self, merge: SourceMerge, plan: ReadPlan, driver: str, view: str,
                  views: dict[str, str], start: int | None, end: int) -> SourceMerge:
        """Register the branch's read as ``view``; the step that merges it."""
        relation = self.upstream[driver]
        if plan.mode == "changelog":
            assert self.model is not None and start is not None
            change = changelog_merge(self.model, self.model.branches[merge.branch], driver)
            if plan.produced:
                register_changes(self.adapter, view, relation, start, end)
            else:
                self.adapter.register_changelog(view, relation, start, end)
            if change.refuse_deletes:
                deleted = self._count(replace_tables(change.deletes, views))
                if deleted:
                    refuse_deletes(self.model, driver, deleted, start, end)
            return dataclasses.replace(merge, batch=change.batch, statement=change.statement)
        if plan.mode == "lineage":
            assert start is not None
            sequence = self.adapter.sequence_number(relation, start)
            self.adapter.register_read(view, relation, end, newer_than_sequence=sequence)
        else:
            self.adapter.register_read(view, relation, end,
                                       start if plan.mode == "incremental" else None,
                                       meta=self.metas[driver])
        return merge

    def _merge_branch(self, merge: SourceMerge, views: dict[str, str],
                      progress: dict[str, int | None], outcome: KeyTableOutcome,
                      source_range: SourceRange) -> None:
        assert merge.null_keys is not None
        outcome.rejected += self._count(replace_tables(merge.null_keys, views))
        faults.checkpoint("before-stage")
        source_range.keys = self.adapter.stage(merge.batch_view,
                                               replace_tables(merge.batch, views))
        if source_range.keys:
            self._commit_merge(merge, progress, outcome)
