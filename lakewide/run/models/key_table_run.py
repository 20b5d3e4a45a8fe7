"""Key-table runs: pin upstream snapshots, read only new rows, commit data with its offsets.

The statements come from the model's compiled run plans (``lakewide.compiler.plans.steps``); a run
only decides from metadata which plan to take, binds its parameters and runs its steps. Every commit
of a key table carries the whole consumed-offset vector (one entry per source branch) in its
snapshot summary, so a crash at any point resumes exactly where the last commit left off: a replayed
batch is never merged twice, a lost one is read again.

Several writers: every commit first checks that the table is still at the snapshot the run
planned from (and that a changelog append is not there yet); when another writer got there
first, CommitConflict makes the executor plan the whole model again from fresh metadata
(``lakewide.run.models.executor``), under the model's lease where the catalog has one
(``lakewide.state.lease``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from lakewide.compiler import CompiledModel
from lakewide.compiler.plans import steps as p
from lakewide.compiler.trees import placeholders
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.run.models.branch_run import overwriting
from lakewide.run.models.delta_join_run import delta_offsets, run_delta_joins
from lakewide.run.models.fold_types import (
    typed_combined,
    typed_model,
    typed_plans,
    with_fold_structs,
)
from lakewide.run.models.outcomes import KeyTableOutcome, SourceRange
from lakewide.run.models.read_modes import ReadPlan, choose_read
from lakewide.run.models.refresh_choice import PlannedRead, choose_refresh
from lakewide.run.models.step_runner import StepRunner
from lakewide.run.schema.contract_inputs import model_digest
from lakewide.run.schema.schema_steps import (
    ModelSchema,
    SchemaChangeRefused,
    apply_changes,
    migrate_changelog,
    model_schema,
    record_contract,
    write_contract,
)
from lakewide.spark.adapter import SparkAdapter
from lakewide.state.changelog_producer import covered, missing_changes, range_covered
from lakewide.state.definition import definition_digest, refuse_changed_models
from lakewide.state.offsets import (
    CHANGELOG_OF,
    MARK,
    MODEL,
    RUN_ID,
    Snapshot,
    TableMeta,
    branch_offsets,
    commit_properties,
    last_offsets,
    offset_key,
    table_offsets,
)
from lakewide.vocabulary import faults
from lakewide.vocabulary.errors import CommitConflict, ModelRunError


@dataclass(eq=False)  # compared by identity
class BranchRead:
    """A source branch with new rows in this run: its plan and how it reads them."""

    plan: p.BranchPlan
    key: str  # offsets key
    end: int  # pinned snapshot read up to
    read: ReadPlan
    range: SourceRange


class KeyTableRun:
    """One run of one table or key table, from its compiled plans."""

    def __init__(
        self,
        adapter: SparkAdapter,
        manifest: Manifest,
        compiled: CompiledModel,
        run_id: str,
        before_commit: Callable[[], None] = lambda: None,
    ) -> None:
        """``before_commit`` runs before every commit (the lease check, lakewide.state.lease)."""
        plans = compiled.plans
        assert plans is not None, "views have no run plan"
        self.adapter, self.manifest, self.plans, self.run_id = adapter, manifest, plans, run_id
        self.compiled = compiled
        self.name, self.engine = compiled.node.name, str(compiled.node.config.merge_engine)
        self.relation = plans.relation
        self.definition = definition_digest(compiled.node)
        # each upstream's snapshots, read once: they pin it and plan its reads
        self.metas = {
            read.table: adapter.table_meta(plans.tables[read.table]) for read in plans.pins
        }
        self.pinned = {
            key: None if meta is None else meta.current for key, meta in self.metas.items()
        }
        self.params: placeholders.Params = {
            read.at: self.pinned[read.table] for read in plans.pins if read.at is not None
        }
        self.steps = StepRunner(adapter, plans, self.metas, self._commit)
        self.head: int | None = None  # the target's snapshot before this run's next commit
        self.planned = False  # incremental: every commit must find the table still at head
        self.pins_ordered = False  # the pinned views registered in commit order (pin_all)
        self.before_commit = before_commit
        self.progress: dict[str, int | None] = {}
        self.recorded: dict[str, int | None] | None = None  # the offsets of this run's last commit
        self.outcome = KeyTableOutcome("")
        self.schema: ModelSchema | None = None  # incremental: the contract it planned with

    def written(self) -> list[Relation]:
        """The tables this model's runs write: its own and its changelog table, if it keeps one."""
        changelog = self.plans.changelog_table
        return [self.relation] + ([] if changelog is None else [self.plans.tables[changelog]])

    # ------------------------------------------------------------------ commits
    def _commit(
        self, step: p.Commit, statement: exp.Expression, params: placeholders.Params
    ) -> None:
        self.before_commit()
        if step.changelog:
            self._check_changes_due(step, int(params["snapshot"]))
            self.adapter.commit(
                statement,
                {CHANGELOG_OF: str(params["snapshot"]), RUN_ID: self.run_id, MODEL: self.name},
            )
            faults.checkpoint("after-changelog")
            self.outcome.statements += 1
            return
        self._commit_offsets(
            lambda offsets: self.adapter.commit(statement, {**offsets, **step.properties}),
            params,
            statement=True,
        )

    def _mark(self) -> None:
        """Record the advanced offsets in a snapshot that changes no row: the changes read
        gave nothing to merge (rows with a NULL key, changes of columns the model does not
        read), and without it the model would stay behind its upstreams, planned again and
        again and left out of consistent tags."""
        self.before_commit()
        self._commit_offsets(
            lambda offsets: self.adapter.mark(self.relation, {**offsets, MARK: "offsets"}),
            {},
            statement=False,
        )

    def _record_offsets(self, consumed: dict[str, int | None]) -> None:
        """Mark the offsets this run advanced past those of its last commit (or, without one,
        past ``consumed``): the changes it read gave no row to merge."""
        recorded = consumed if self.recorded is None else self.recorded
        if any(end != recorded.get(key) for key, end in self.progress.items()):
            self._mark()

    def _commit_offsets(
        self,
        write: Callable[[dict[str, str]], None],
        params: placeholders.Params,
        *,
        statement: bool,
    ) -> None:
        """Commit to the model's table with this run's offsets: ``write`` commits, given the
        summary properties; the head is checked before and after (``statement``: a statement
        of the run, counted)."""
        faults.checkpoint("before-commit")
        self._check_head()
        write(commit_properties(self.progress, self.run_id, self.name, self.definition))
        faults.checkpoint("after-commit")
        if statement:
            self.outcome.statements += 1
        self._committed(params)

    def _committed(self, params: placeholders.Params) -> None:
        """After a commit: the new head, checked to descend from the one this run planned."""
        meta = self.adapter.table_meta(self.relation)
        current = None if meta is None else meta.current
        params["parent"], params["snapshot"] = self.head, None
        if current is not None and current != self.head:
            assert meta is not None
            self._check_parent(meta.snapshots.get(current))
            self.head = params["snapshot"] = current
            self.outcome.commits.append(current)
            self.recorded = dict(self.progress)

    def _check_head(self) -> None:
        """CommitConflict when another writer committed to the table since this run read the
        offsets it planned from (incremental plans; a bootstrap's CREATE fails by itself when
        the table appeared, a rebuild replaces the table whole)."""
        if not self.planned:
            return
        current = self.adapter.current_snapshot(self.relation)
        if current != self.head:
            raise CommitConflict(
                f"table {self.relation} moved to snapshot {current} after this run planned "
                f"from snapshot {self.head}: another writer committed"
            )

    def _check_parent(self, snapshot: Snapshot | None) -> None:
        """A commit that landed on another writer's commit made between the check and the
        commit (possible only without a lease): said, never silent."""
        if not self.planned or snapshot is None or snapshot.parent == self.head:
            return
        raise ModelRunError(
            f"table {self.relation}: another writer committed snapshot {snapshot.parent} "
            f"while this run committed {snapshot.id} (planned from {self.head}); the table "
            "may hold a batch twice. Writers outside lakewide's lease must not write "
            "lakewide's tables; rebuild it with --full-refresh"
        )

    def _check_changes_due(self, step: p.Commit, snapshot: int) -> None:
        """CommitConflict when the changes of model snapshot ``snapshot`` are in the changelog
        table already (another writer completed them)."""
        relation = self.plans.tables[step.table]
        self.adapter.forget(relation)
        if snapshot in covered(self.adapter.table_meta(relation)):
            raise CommitConflict(
                f"the changes of {self.relation} snapshot {snapshot} are in {relation} "
                "already: another writer wrote them"
            )

    def run_steps(self, steps: list[p.Step], **values: int | None) -> placeholders.Params:
        """Run plan steps with the run's parameters and ``values``; their results."""
        return self._run(steps, **values)

    def _run(self, steps: list[p.Step], **values: int | None) -> placeholders.Params:
        params = self.steps.run(steps, {**self.params, **values})
        self.outcome.rejected += int(params.pop("rejected", 0) or 0)
        return params

    def pin_all(self, ordered: bool = True) -> None:
        """Every upstream table as a view at its pinned snapshot (lookups, bootstrap); then
        the aggregated columns whose type the model does not declare are checked against the
        types the upstreams give them (analysis only, nothing read or written).

        ``ordered``: each view's rows in commit order (a fold over the pinned views numbers
        them by arrival: bootstrap, re-fold, restate, delta joins), which plans the files of
        every upstream; else plain snapshot reads, for an incremental run, whose folds read
        each changed source through a view of its own and the pinned views only as lookups
        (joined, never numbered) and for the contract's analysis. ``order_pins`` registers
        them in commit order before a plan that folds them."""
        self.steps.pin(self.plans.pins, self.params, ordered)
        self.pins_ordered = ordered
        self.steps.run(list(self.plans.checks), dict(self.params))

    def order_pins(self) -> None:
        """The pinned views in commit order, where ``pin_all`` read them plainly."""
        if not self.pins_ordered:
            self.steps.pin(self.plans.pins, self.params, True)
            self.pins_ordered = True

    # ------------------------------------------------------------------ new tables
    def rebuild(self) -> KeyTableOutcome:
        """A table model: ``CREATE OR REPLACE TABLE ... AS`` over the pinned snapshots."""
        self.outcome = KeyTableOutcome("table")
        self.progress = table_offsets(self.pinned)
        self.pin_all()
        on_branch = self.adapter.output.branch is not None
        self._run(overwriting(self.plans.bootstrap) if on_branch else self.plans.bootstrap)
        return self.outcome

    def bootstrap(self, replace: bool) -> KeyTableOutcome:
        """Fold every source at its pinned snapshot into a new table (one atomic commit)."""
        self.outcome = KeyTableOutcome("full-refresh" if replace else "bootstrap")
        self.pin_all()
        self.progress = branch_offsets(
            ((b.index, b.driver) for b in self.plans.branches), self.pinned
        ) | delta_offsets(self.plans, self.pinned)
        self.outcome.ranges = [
            SourceRange(
                b.index,
                b.driver,
                None,
                self.pinned.get(b.driver),
                "full",
                reason="bootstrap: every row at the pinned snapshot",
            )
            for b in self.plans.branches
            if b.driver
        ]
        schema = self._schema(stored=False)
        plans = typed_plans(self.compiled, schema)
        self._run(plans.full_refresh if replace else plans.bootstrap)
        if schema is not None:
            write_contract(self.adapter, schema)
        return self.outcome

    def _schema(self, stored: bool = True, meta: TableMeta | None = None) -> ModelSchema | None:
        """The model's contract (types from Spark's analysis of the bootstrap query over the
        pinned upstreams) and, with ``stored``, the plan from the table's stored one
        (``meta``: the table's metadata, read already)."""
        model = self.compiled.model
        if model is None:
            return None
        commit = next(s for s in self.plans.bootstrap if isinstance(s, p.Commit))
        query = commit.statement.expression
        assert isinstance(query, exp.Expression)
        query = with_fold_structs(model, query) or query  # the folds' types too
        digest = model_digest(self.adapter, self.compiled, self.metas, self.definition)
        if not stored:
            return model_schema(
                self.adapter,
                model,
                query,
                "",
                stored=False,
                digest=digest,
                definition=self.definition,
            )
        return model_schema(
            self.adapter,
            model,
            query,
            self.manifest.project.relative(model.node.path),
            meta=meta,
            digest=digest,
            definition=self.definition,
        )

    # ------------------------------------------------------------------ incremental
    def incremental(self) -> KeyTableOutcome:
        """MERGE the rows changed since the consumed offsets: one MERGE (one target scan, one
        commit) for every source read by appends or a full re-read, and one for every source
        read as changes (old and new images), where the engine refuses none of them (else
        each such source merges on its own); or, where lakewide.run.models.refresh_choice says so,
        one re-fold of every source."""
        self.outcome = outcome = KeyTableOutcome("incremental")
        meta = self.adapter.table_meta(self.relation)
        self.pin_all(ordered=False)
        schema = self.schema = self._schema(meta=meta)
        assert schema is not None
        if schema.plan is None:  # a table built before contracts: its digest must match
            refuse_changed_models(self.manifest, [self.name], lambda _: meta)
        elif schema.plan.refusals:
            raise SchemaChangeRefused([schema])
        self.head = None if meta is None else meta.current
        self.planned = True
        apply_changes(self.adapter, schema)  # metadata only: the head stays
        changelog = self.plans.changelog_table
        if changelog is not None and self.compiled.model is not None:
            migrate_changelog(
                self.adapter, schema, self.plans.tables[changelog], self.compiled.model.columns
            )
        self.complete_changelog(meta)  # in the new columns: a column added reads as NULL
        consumed: dict[str, int | None] = dict(last_offsets(meta) or {})
        self.progress = dict(consumed)
        plan = schema.plan
        if plan is not None and plan.changed:
            outcome.schema = list(plan.notes)
        reads: list[BranchRead] = []
        for branch in self.plans.branches:
            driver = branch.driver
            if driver is None or driver not in self.pinned:
                raise ModelRunError(
                    f"branch {branch.index + 1} reads no declared source or "
                    "model; use source() or ref() so lakewide can track it"
                )
            key = offset_key(branch.index, driver)
            start, end = consumed.get(key), self.pinned[driver]
            (
                self.params[placeholders.start(branch.index)],
                self.params[placeholders.end(branch.index)],
            ) = start, end
            rereads = plan is not None and branch.index in plan.reread and end is not None
            self.params[placeholders.rereading(branch.index)] = rereads
            read = self._plan(branch, start, end, key in consumed, schema.stored is not None)
            if plan is not None and branch.index in plan.reread and end is not None:
                read = ReadPlan(
                    "full",
                    f"new column(s) {', '.join(plan.reread[branch.index])}: re-read in full "
                    f"(harmless for merge_engine='{self.engine}')",
                )
            source_range = SourceRange(
                branch.index, driver, start, end, read.mode, reason=read.reason
            )
            outcome.ranges.append(source_range)
            if read.mode == "none":
                self.progress[key] = end
                continue
            assert end is not None
            if read.changes and branch.changelog is None:
                raise ModelRunError(branch.changelog_refusal or "no changelog plan")
            reads.append(BranchRead(branch, key, end, read, source_range))
        refresh = choose_refresh(
            self.compiled.node.config.refresh_mode,
            self.plans.refold_exact,
            [
                PlannedRead(r.plan.driver or "", r.range.start, r.end, r.read.mode, r.read.lossy)
                for r in reads
            ],
            self.metas,
            self.pinned,
            meta,
        )
        outcome.refresh = refresh.reason
        if refresh.refolds:
            return self._refold(refresh.reason, schema)
        refused = next((r.read.refusal for r in reads if r.read.refusal), None)
        if refused is not None:
            raise ModelRunError(refused)
        together = [r for r in reads if not r.read.changes]
        changing = [r for r in reads if r.read.changes]
        combined = combined_changes = None
        if len(together) > 1 or len(changing) > 1:
            # their batch puts the folds together typed (one_shuffle)
            combined, combined_changes = typed_combined(self.compiled, schema)
        if len(together) < 2 or combined is None:
            together = []
        if len(changing) < 2 or combined_changes is None:
            changing = []
        if together:
            self._merge_together(together, combined, "empty")
        if changing:
            self._merge_together(changing, combined_changes, "no_changes")
        for branch_read in reads:
            if branch_read in together or branch_read in changing:
                continue
            self.progress[branch_read.key] = branch_read.end
            self._merge_alone(branch_read)
        run_delta_joins(self, consumed)  # after the facts: dimension changes re-derive rows
        self._record_offsets(consumed)
        record_contract(self.adapter, schema)  # after the data: a stopped run plans again
        return outcome

    def restate(self, predicate: str) -> KeyTableOutcome:
        """``run --restate``: first the incremental step (the table reaches the pinned
        snapshots, its offsets advanced exactly once), then the keys ``predicate`` matches
        folded again from every record of every source at those same snapshots and MERGEd in
        one commit carrying the same offsets: the keys outside the predicate, already at the
        pinned snapshots, lose and repeat no batch."""
        self.compiled.restate_plan(predicate)  # a bad predicate fails before anything runs
        outcome = self.incremental()
        # the restated keys' folds put together typed, as the bootstrap's (one_shuffle)
        steps = typed_model(self.compiled, self.schema).restate_plan(predicate)
        self.order_pins()  # the restated keys are folded from the pinned views
        params = self._run(steps)
        outcome.plan = "restate"
        outcome.restated = int(params.get("restated") or 0)
        outcome.removed = int(params.get("removed") or 0)
        return outcome

    def _refold(self, reason: str, schema: ModelSchema) -> KeyTableOutcome:
        """Fold every source at its pinned snapshot again, overwriting the table in its own
        history: one commit carrying every branch's pinned offset
        (lakewide.run.models.refresh_choice says when)."""
        outcome = self.outcome
        outcome.plan = "refold"
        self.progress = branch_offsets(
            ((b.index, b.driver) for b in self.plans.branches), self.pinned
        ) | delta_offsets(self.plans, self.pinned)
        for source_range in outcome.ranges:
            source_range.mode, source_range.reason = "full", f"re-fold: {reason}"
        self.order_pins()
        self._run(typed_plans(self.compiled, schema).refold)
        record_contract(self.adapter, schema)
        return outcome

    def complete_changelog(self, meta: TableMeta | None) -> None:
        """Write the changes of the commits whose changelog append is still due (a stopped
        run, or ``lakewide maintain``'s retention and TTL deletes), oldest first."""
        changelog = self.plans.changelog_table
        if self.plans.recover is None or changelog is None:
            return
        for parent, snapshot in missing_changes(
            meta, self.adapter.table_meta(self.plans.tables[changelog])
        ):
            self._run(self.plans.recover, parent=parent, snapshot=snapshot)

    def _merge_together(
        self, reads: list[BranchRead], steps: list[p.Step] | None, absent: str
    ) -> None:
        """Fold the rows of several sources per key together and MERGE them at once with
        ``steps`` (``combined``: new rows; ``combined_changes``: changes with old and new
        images); the sources not in ``reads`` read as ``absent`` (no rows)."""
        chosen = {r.plan.index: r for r in reads}
        registering: list[p.Step] = []
        for branch in self.plans.branches:
            read = chosen.get(branch.index)
            registering += branch.reads[read.read.reads if read else absent]
        self._run(registering)
        for read in reads:
            self.progress[read.key] = read.end
        params = self._run(steps or [])
        for read in reads:
            read.range.keys = int(params.get(f"keys_{read.plan.index + 1}") or 0)

    def _merge_alone(self, read: BranchRead) -> None:
        """One source's new rows, merged into the columns it owns."""
        branch = read.plan
        merge = branch.changelog if read.read.changes else branch.merge
        assert merge is not None
        self._run(branch.reads[read.read.reads])
        params = self._run(merge)
        read.range.keys = int(params.get("staged") or 0)

    def _plan(
        self,
        branch: p.BranchPlan,
        start: int | None,
        end: int | None,
        consumed: bool,
        contract: bool = False,
    ) -> ReadPlan:
        """``contract``: the table has a stored contract, so a branch the offsets do not name
        was never merged (a source new to the model)."""
        driver = branch.driver
        assert driver is not None
        produced = None
        if branch.changes_table is not None:
            changes_table = branch.changes_table

            def produced(low: int, high: int) -> bool:
                meta = self.metas[driver]
                changes = covered(self.adapter.table_meta(self.plans.tables[changes_table]))
                return meta is not None and range_covered(meta, changes, low, high)

        return choose_read(
            branch,
            self.engine,
            driver,
            start,
            end,
            consumed=consumed,
            meta=lambda: self.metas[driver],
            produced=produced,
            first=contract and not consumed,
        )
