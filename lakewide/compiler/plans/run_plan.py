"""Rule: every plan a run of a model can take, as ordered steps with named parameters.

Upstream tables are read through temporary views that the plan itself registers: ``__lw_pin_<n>``
(upstream ``n`` at its pinned snapshot, for bootstraps and lookups) and ``__lw_new_<b>`` (branch
``b``'s new rows, read in the mode the run chooses from metadata:
``lakewide.run.models.read_modes``). The trees name those views and ``:param`` placeholders; the
executor binds values and runs the steps (``lakewide.compiler.plans.steps``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlglot import exp

from lakewide.compiler.model.delta_join import DeltaJoin
from lakewide.compiler.model.wide_model import Branch, WideModel
from lakewide.compiler.plans import steps as p
from lakewide.compiler.plans.source_merge import SourceMerge
from lakewide.compiler.plans.validate import type_probes, typed_aggregates
from lakewide.compiler.statements import build_changes
from lakewide.compiler.statements.build_bootstrap import (
    branch_keys,
    build_refold,
    key_columns,
    null_key_count,
)
from lakewide.compiler.statements.build_changelog_read import (
    changelog_merge,
    refolds_exactly,
    refused_deletes,
    reread_safe,
    retract_columns,
)
from lakewide.compiler.statements.build_combined_changes import combined_changes
from lakewide.compiler.statements.build_delta_join import (
    batch_view,
    changed_keys,
    changes_view,
    dimension_affected,
    facts_affected,
    facts_view,
    keys_view,
    rederive_batch,
    rederive_merge,
    rederived_facts,
)
from lakewide.compiler.statements.build_merge import (
    COMBINED_VIEW,
    build_combined_batch,
    keys_touched,
    narrow_merge,
)
from lakewide.compiler.statements.build_restate import (
    RESTATE_VIEW,
    keys_only,
    restate_bounds,
    restate_fold,
    restate_merge,
    restate_rows,
    restated_counts,
)
from lakewide.compiler.trees import placeholders
from lakewide.compiler.trees.rewrite import driving_table, replace_tables
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary.errors import CompileError, ModelRunError


class PlannedModel(Protocol):
    """What the run plans are built from: a compiled model's statements
    (``lakewide.compiler.plans.compiled.CompiledModel``, which builds its plans here)."""

    node: ModelNode
    model: WideModel | None
    write_order: exp.Command | None
    deltas: list[DeltaJoin]

    @property
    def bootstrap(self) -> exp.Expression: ...

    @property
    def merges(self) -> list[SourceMerge]: ...

    @property
    def full_refresh(self) -> exp.Expression | None: ...

    @property
    def combined(self) -> SourceMerge | None: ...


@dataclass(frozen=True)
class PlanContext:
    """What the plans need from the project around a model: its upstream tables by relation
    key, those of them that are lakewide models producing their changelog, and whether the
    model produces its own; ``fold_types``: the Spark types of its bootstrap folds' columns
    where a run analysed them (``WideModel.fold_types``)."""

    upstream: dict[str, Relation] = field(default_factory=dict)
    producing: frozenset[str] = frozenset()
    produces: bool = False
    fold_types: Mapping[int, Mapping[str, str]] = field(default_factory=dict)


def pin_view(index: int) -> str:
    return f"__lw_pin_{index + 1}"


def new_view(branch: int) -> str:
    return f"__lw_new_{branch + 1}"


def temporary_view(view: str, query: exp.Expr) -> exp.Create:
    create = exp.Create(this=exp.table_(view), kind="VIEW", replace=True, expression=query)
    create.set("properties", exp.Properties(expressions=[exp.TemporaryProperty()]))
    return create


def driven_keys(
    model: WideModel, columns: dict[int, tuple[str, ...] | None]
) -> dict[str, tuple[str, ...]]:
    """Upstream table -> its columns that are a branch's primary key as they are
    (``columns``: ``key_columns`` per branch): the NULL counts its reads' files keep for the
    NULL-key count."""
    keys: dict[str, tuple[str, ...]] = {}
    for branch in model.branches:
        driver, own = driving_table(branch.select), columns[branch.index]
        if own is not None and driver is not None:
            keys[driver] = tuple(dict.fromkeys((*keys.get(driver, ()), *own)))
    return keys


class _PlanBuilder:
    """The plans of one compiled model in one context."""

    def __init__(self, compiled: PlannedModel, context: PlanContext) -> None:
        self.compiled, self.context = compiled, context
        self.node = compiled.node
        self.self_key = self.node.relation.key
        model = compiled.model
        # per branch, its key's columns of its driving table (the NULL-key count's statistics)
        self.key_columns = (
            {b.index: key_columns(model, b) for b in model.branches} if model is not None else {}
        )
        keys = driven_keys(model, self.key_columns) if model is not None else {}
        self.pins = [
            p.Read(pin_view(n), key, "snapshot", at=f"pin_{n + 1}", stats=keys.get(key, ()))
            for n, key in enumerate(context.upstream)
        ]
        self.pinned = {read.table: read.view for read in self.pins}
        self.tables = {**context.upstream, self.self_key: self.node.relation}
        if context.produces:
            self.changelog_key = build_changes.changelog_relation(self.node.relation).key
            self.tables[self.changelog_key] = build_changes.changelog_relation(self.node.relation)

    def pinned_keys(self, model: WideModel) -> exp.Query:
        """Every branch's key columns read at the pinned snapshots (the null-key count)."""
        return branch_keys(model, lambda _, q: replace_tables(q, self.pinned))

    def read_keys(self, model: WideModel) -> exp.Query:
        """Every branch's key columns as this run reads them (the null-key count)."""
        return branch_keys(model, lambda b, q: replace_tables(q, self.views(b)))

    def null_keys(
        self,
        count: exp.Expression,
        branches: list[Branch],
        views: Callable[[Branch], dict[str, str]],
    ) -> p.Query:
        """The step counting NULL keys (``count``, over ``branches`` read through ``views``),
        which the reads' file statistics answer without Spark where every key is a column
        of its branch's driving table (``key_columns``)."""
        pairs: list[tuple[str, str]] = []
        for branch in branches:
            columns = self.key_columns[branch.index]
            view = views(branch).get(driving_table(branch.select) or "")
            if columns is None or view is None:
                return p.Query(count, ("rejected",))
            pairs += [(view, column) for column in columns]
        return p.Query(count, ("rejected",), nulls=tuple(pairs))

    # ------------------------------------------------------------------ new tables
    def bootstrap(self, statement: exp.Expression) -> list[p.Step]:
        steps: list[p.Step] = []
        model = self.compiled.model
        if model is not None:
            count = null_key_count(model, self.pinned_keys(model))
            steps.append(self.null_keys(count, model.branches, lambda _: self.pinned))
        steps.append(p.Commit(self.self_key, replace_tables(statement, self.pinned)))
        if model is not None and self.context.produces:  # a new history: an empty changelog
            steps += [
                p.Read(
                    build_changes.AFTER, self.self_key, "version", at="snapshot", when="snapshot"
                ),
                p.Run(
                    build_changes.create(model, self.node.relation, replace=True), when="snapshot"
                ),
            ]
        if self.compiled.write_order is not None:  # metadata only: no snapshot, no offsets
            steps.append(p.Run(self.compiled.write_order))
        return steps

    def refold(self, model: WideModel) -> list[p.Step]:
        """The bootstrap's fold overwriting the table in its own history, with the offsets;
        then, for a model keeping its changelog, the changes of every key."""
        steps: list[p.Step] = [
            self.null_keys(
                null_key_count(model, self.pinned_keys(model)),
                model.branches,
                lambda _: self.pinned,
            ),
            p.Commit(self.self_key, replace_tables(build_refold(model), self.pinned)),
        ]
        if self.context.produces:
            steps += self.changes(None, when="snapshot")
        return steps

    def restate(self, model: WideModel, predicate: exp.Expr) -> list[p.Step]:
        """The keys ``predicate`` matches folded again from every source at its pinned
        snapshot and MERGEd in one commit (``build_restate``); then, for a model keeping its
        changelog, the changes of those keys."""
        # a predicate on the key filters each branch's rows before they are numbered and
        # joined (a filter does not pass the numbering: lakewide.compiler.model.number_rows)
        where = predicate if keys_only(model, predicate) else None
        rows = replace_tables(
            restate_rows(model, restate_fold(model, where), predicate), self.pinned
        )
        columns = rows.named_selects[:-1]  # the fold's columns; the last is GONE
        statement = restate_merge(model, columns)
        narrowed = narrow_merge(
            model, statement, placeholders.param("low"), placeholders.param("high")
        )
        marker = {p.PRODUCES: "lookup"} if self.context.produces else {}
        steps: list[p.Step] = [
            p.Stage(RESTATE_VIEW, rows, "staged", checkpoint="before-stage"),
            p.Query(restated_counts(), ("restated", "removed"), when="staged"),
            p.Commit(
                self.self_key,
                statement,
                narrowed,
                restate_bounds(model),
                properties=marker,
                when="staged",
            ),
        ]
        if self.context.produces:
            steps += self.changes(RESTATE_VIEW, when="snapshot")
        return steps

    def checks(self) -> list[p.CheckTypes]:
        model = self.compiled.model
        if model is None:
            return []
        functions = typed_aggregates(model)
        return [
            p.CheckTypes(
                replace_tables(probe, self.pinned), functions, str(self.node.path), self.node.name
            )
            for probe in type_probes(model)
        ]

    # ------------------------------------------------------------------ incremental
    def views(self, branch: Branch) -> dict[str, str]:
        driver = driving_table(branch.select)
        return {**self.pinned, driver: new_view(branch.index)} if driver else dict(self.pinned)

    def reads(self, branch: Branch, driver: str) -> dict[str, list[p.Step]]:
        b, view = branch.index, new_view(branch.index)
        start, end = placeholders.start(b), placeholders.end(b)
        model = self.compiled.model
        retracts = retract_columns(model, branch) if model is not None else None
        stats = self.key_columns.get(b) or ()
        reads: dict[str, list[p.Step]] = {
            "incremental": [p.Read(view, driver, "appends", at=end, after=start, stats=stats)],
            "full": [p.Read(view, driver, "snapshot", at=end, stats=stats)],
            "changelog": [p.Read(view, driver, "changes", at=end, after=start, retracts=retracts)],
            "empty": [p.Read(view, driver, "empty", at=end)],
            "no_changes": [p.Read(view, driver, "no_changes", at=end)],
        }
        if driver in self.context.producing:
            changes = build_changes.changelog_relation(self.context.upstream[driver])
            self.tables[changes.key] = changes
            low, high = f"low_{b + 1}", f"high_{b + 1}"
            read = build_changes.read(self.context.upstream[driver], low=low, high=high)
            reads["produced"] = [
                p.Sequence(driver, start, low),
                p.Sequence(driver, end, high),
                p.Run(temporary_view(view, read)),
            ]
        return reads

    def commit(self, statement: exp.Merge, merge: SourceMerge, keys_view: str) -> list[p.Step]:
        """The MERGE commit of a staged batch, then (producing models) its changes."""
        model = self.compiled.model
        assert model is not None
        narrowed = None
        if merge.bounds is not None:
            narrowed = narrow_merge(
                model, statement, placeholders.param("low"), placeholders.param("high")
            )
        marker = {p.PRODUCES: "lookup"} if self.context.produces else {}
        steps: list[p.Step] = [
            p.Commit(
                self.self_key, statement, narrowed, merge.bounds, properties=marker, when="staged"
            )
        ]
        if self.context.produces:
            steps += self.changes(keys_view, when="snapshot")
        return steps

    def changes(self, keys_view: str | None, when: str | None) -> list[p.Step]:
        """Append the changes between the target at ``:parent`` and at ``:snapshot`` (for the
        keys of ``keys_view``; every key when None) to the changelog table."""
        model = self.compiled.model
        assert model is not None
        relation = self.node.relation
        return [
            p.Read(
                build_changes.BEFORE,
                self.self_key,
                "version",
                at="parent",
                when=when,
                checkpoint="before-changelog",
            ),
            p.Read(build_changes.AFTER, self.self_key, "version", at="snapshot", when=when),
            p.Run(build_changes.create(model, relation, replace=False), when=when),
            p.Stage(build_changes.DIFF, build_changes.diff(model, keys_view), "changes", when=when),
            p.Sequence(self.self_key, "snapshot", "ordinal", when=when),
            p.Commit(self.changelog_key, build_changes.append(relation), changelog=True, when=when),
        ]

    def branch(self, branch: Branch, merge: SourceMerge) -> p.BranchPlan:
        model = self.compiled.model
        assert model is not None and merge.null_keys is not None
        driver = driving_table(branch.select)
        views = self.views(branch)
        alone: list[p.Step] = [
            self.null_keys(replace_tables(merge.null_keys, views), [branch], lambda _: views),
            p.Stage(
                merge.batch_view,
                replace_tables(merge.batch, views),
                "staged",
                checkpoint="before-stage",
            ),
            *self.commit(merge.statement, merge, merge.batch_view),
        ]
        changelog: list[p.Step] | None = None
        refusal = None
        if driver is not None:
            try:
                change = changelog_merge(model, branch, driver)
            except ModelRunError as err:
                refusal = err.message
            else:
                changelog = [p.Query(replace_tables(merge.null_keys, views), ("rejected",))]
                if change.refuse_deletes:
                    changelog += [
                        p.Query(replace_tables(change.deletes, views), ("deleted",)),
                        p.Refuse(
                            "deleted",
                            refused_deletes(
                                driver,
                                placeholders.start(branch.index),
                                placeholders.end(branch.index),
                            ),
                        ),
                    ]
                changelog += [
                    p.Stage(
                        merge.batch_view,
                        replace_tables(change.batch, views),
                        "staged",
                        checkpoint="before-stage",
                    ),
                    *self.commit(change.statement, merge, merge.batch_view),
                ]
        return p.BranchPlan(
            branch.index,
            branch.name,
            driver,
            new_view(branch.index),
            self.reads(branch, driver) if driver else {},
            alone,
            changelog,
            refusal,
            reread_safe(model),
            model.row_kind is not None and model.row_kind in branch.owned,
            build_changes.changelog_relation(self.context.upstream[driver]).key
            if driver in self.context.producing
            else None,
        )

    def combined(self, model: WideModel) -> list[p.Step] | None:
        combined = self.compiled.combined
        if combined is None:
            return None
        indexes = [b.index for b in model.branches]
        return [
            self.null_keys(
                null_key_count(model, self.read_keys(model)),
                model.branches,
                self.views,
            ),
            p.Stage(
                COMBINED_VIEW,
                build_combined_batch(model, lambda b, q: replace_tables(q, self.views(b))),
                "staged",
                checkpoint="before-stage",
            ),
            p.Query(keys_touched(indexes), tuple(f"keys_{i + 1}" for i in indexes), when="staged"),
            *self.commit(combined.statement, combined, COMBINED_VIEW),
        ]

    def combined_changes(self, model: WideModel) -> list[p.Step] | None:
        """Every branch's changelog rows folded together and MERGEd at once."""
        change = combined_changes(model, lambda b, query: replace_tables(query, self.views(b)))
        if change is None or self.compiled.combined is None:
            return None
        indexes = [b.index for b in model.branches]
        return [
            self.null_keys(
                null_key_count(model, self.read_keys(model)),
                model.branches,
                self.views,
            ),
            p.Stage(COMBINED_VIEW, change.batch, "staged", checkpoint="before-stage"),
            p.Query(keys_touched(indexes), tuple(f"keys_{i + 1}" for i in indexes), when="staged"),
            *self.commit(change.statement, self.compiled.combined, COMBINED_VIEW),
        ]

    def delta_join(self, join: DeltaJoin, number: int) -> p.DeltaJoinPlan:
        """Read the dimension's changed keys, fold the fact rows of the keys joined to them
        (and of the run's changed fact rows) again and replace the columns the dimension feeds
        (``build_delta_join``)."""
        model = self.compiled.model
        assert model is not None
        pin = next((r.at for r in self.pins if r.table == join.table), None)
        driver = driving_table(join.branch.select)
        if pin is None or driver not in self.pinned:
            raise CompileError(
                f"the delta join '{join.name}' needs its dimension and the driving table read "
                "through ref() or source(), so lakewide can track their snapshots",
                path=self.node.path,
                model=self.node.name,
                key=f"joins.{join.name}",
            )
        b = join.branch.index
        start = f"dim_start_{b + 1}_{number}"
        changes, keys = changes_view(join, number), keys_view(join, number)
        batch = batch_view(join, number)
        facts = facts_view(join, number)
        fact_rows = self.pinned[driver]
        key_view = p.Run(temporary_view(keys, changed_keys(join, changes)))
        reads: dict[str, list[p.Step]] = {
            "incremental": [p.Read(changes, join.table, "appends", at=pin, after=start), key_view],
            "changelog": [p.Read(changes, join.table, "changes", at=pin, after=start), key_view],
            "full": [],
        }
        by_dimension = dimension_affected(model, join, fact_rows, keys)
        by_facts = facts_affected(model, join, new_view(b))
        affected: dict[str, exp.Query | None] = {
            "dimension": by_dimension,
            "facts": by_facts,
            "both": exp.union(by_dimension.copy(), by_facts.copy(), distinct=True),
            "full": None,
        }
        derived: dict[str, list[p.Step]] = {
            which: [p.Run(temporary_view(facts, rederived_facts(model, join, fact_rows, chosen)))]
            for which, chosen in affected.items()
        }
        marker = {p.PRODUCES: "lookup"} if self.context.produces else {}
        rederive: list[p.Step] = [
            p.Stage(
                batch,
                rederive_batch(model, join, self.pinned, facts),
                "rederived",
                checkpoint="before-stage",
            ),
            p.Commit(
                self.self_key,
                rederive_merge(model, join, batch),
                properties=marker,
                when="rederived",
            ),
        ]
        if self.context.produces:
            rederive += self.changes(batch, when="snapshot")
        return p.DeltaJoinPlan(b, join.name, join.table, start, pin, reads, derived, rederive)

    def _full_refresh(self) -> exp.Expression:
        compiled = self.compiled
        statement = compiled.full_refresh if compiled.model is not None else compiled.bootstrap
        assert statement is not None
        return statement

    def build(self) -> p.ModelPlans:
        compiled, model = self.compiled, self.compiled.model
        branches = (
            []
            if model is None
            else [self.branch(b, m) for b, m in zip(model.branches, compiled.merges)]
        )
        produces = model is not None and self.context.produces
        later: dict[str, Callable[[], Any]] = {
            "full_refresh": lambda: self.bootstrap(self._full_refresh()),
            "combined": lambda: None if model is None else self.combined(model),
            "combined_changes": lambda: None if model is None else self.combined_changes(model),
            "refold": lambda: [] if model is None else self.refold(model),
        }
        return p.ModelPlans(
            self.node.relation,
            self.tables,
            self.pins,
            self.checks(),
            self.bootstrap(compiled.bootstrap),
            lambda name: later[name](),
            branches=branches,
            recover=self.changes(None, when=None) if produces else None,
            changelog_table=self.changelog_key if produces else None,
            delta_joins=[self.delta_join(j, n + 1) for n, j in enumerate(compiled.deltas)],
            refold_exact=model is not None and refolds_exactly(model),
        )


def build_run_plans(compiled: PlannedModel, context: PlanContext) -> p.ModelPlans:
    """Every plan of a table or key table (views have one statement and no plan)."""
    return _PlanBuilder(compiled, context).build()


def build_combined_plans(
    compiled: PlannedModel, context: PlanContext
) -> tuple[list[p.Step] | None, list[p.Step] | None]:
    """The plans of the combined batch alone, of appended rows and of changelog reads (what
    ``build_run_plans`` puts in ``combined`` and ``combined_changes``), without building
    every other plan: a run compiled again with the folds' types needs only these."""
    model = compiled.model
    if model is None:
        return None, None
    builder = _PlanBuilder(compiled, context)
    return builder.combined(model), builder.combined_changes(model)


def build_restate_plan(
    compiled: PlannedModel, context: PlanContext, predicate: exp.Expr
) -> list[p.Step]:
    """The steps of ``run --restate``: the keys ``predicate`` (``build_restate.parse_restate``)
    matches, folded again from every source at the pinned snapshots, in one MERGE commit."""
    assert compiled.model is not None, "only key tables restate"
    return _PlanBuilder(compiled, context).restate(compiled.model, predicate)
