"""A compiled model: every statement and run plan of one model, and ``compile_model`` that
builds it from a model node."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

from sqlglot import exp

from lakewide.compiler.model.delta_join import DeltaJoin, delta_joins
from lakewide.compiler.model.layout import create_table_as, write_ordered_by
from lakewide.compiler.model.snapshot_model import SnapshotModel, analyze_snapshot
from lakewide.compiler.model.wide_model import WideModel, analyze, parse_model_sql
from lakewide.compiler.plans.run_plan import (
    PlanContext,
    build_combined_plans,
    build_restate_plan,
    build_run_plans,
)
from lakewide.compiler.plans.show_plan import plan_files
from lakewide.compiler.plans.snapshot_plan import (
    SnapshotPlans,
    build_snapshot_plans,
    snapshot_files,
)
from lakewide.compiler.plans.source_merge import SourceMerge
from lakewide.compiler.plans.steps import ModelPlans, Step
from lakewide.compiler.plans.summary import summary
from lakewide.compiler.plans.validate import validate
from lakewide.compiler.statements import build_changes
from lakewide.compiler.statements.build_bootstrap import (
    branch_keys,
    build_bootstrap,
    check_layout,
    null_key_count,
)
from lakewide.compiler.statements.build_merge import (
    COMBINED_VIEW,
    batch_view,
    build_batch,
    build_combined_merge,
    build_merge,
    combined_batch,
    key_bounds,
)
from lakewide.compiler.statements.build_restate import parse_restate, refuse_kind
from lakewide.compiler.statements.snapshot import bootstrap as snapshot_bootstrap
from lakewide.compiler.trees.collection import collection_paused
from lakewide.project.config.kinds import ModelKind
from lakewide.project.nodes import ModelNode
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import CompileError


@dataclass
class CompiledModel:
    """Every statement a model can run, by plan."""

    node: ModelNode
    kind: ModelKind
    statement: exp.Expression | None = None  # a view's, table's or snapshot's one statement
    model: WideModel | None = None  # key tables: the analyzed model the plans come from
    write_order: exp.Command | None = None  # ALTER TABLE ... WRITE ORDERED BY, after a create
    context: PlanContext = field(default_factory=PlanContext)
    snapshot: SnapshotModel | None = None  # snapshot models: the analyzed query
    deltas: list[DeltaJoin] = field(default_factory=list)  # the model's ``delta`` joins

    # a key table's statements are built on first use: ``compile`` shows its summary
    @cached_property
    def bootstrap(self) -> exp.Expression:
        """The statement creating the table (key tables: the fold of every source)."""
        if self.model is None:
            assert self.statement is not None
            return self.statement
        return build_bootstrap(self.model)

    @cached_property
    def merges(self) -> list[SourceMerge]:
        """Key tables: per source, its batch and the MERGE of the columns it owns."""
        model = self.model
        if model is None:
            return []
        return [
            SourceMerge(
                b.index,
                b.name,
                batch_view(b),
                build_batch(model, b),
                build_merge(model, b),
                null_key_count(model, b.projected(model.primary_key)),
                key_bounds(model, b) if model.merge_filter else None,
            )
            for b in model.branches
        ]

    @cached_property
    def plans(self) -> ModelPlans | None:
        """Every plan a run of this table or key table can take (None for views)."""
        if self.kind.is_view:
            return None
        if self.snapshot is not None:
            return build_snapshot_plans(self.snapshot, self.context, self.write_order)
        return build_run_plans(self, self.context)

    @cached_property
    def combined_plans(self) -> tuple[list[Step] | None, list[Step] | None]:
        """``plans.combined`` and ``plans.combined_changes`` built alone (key tables)."""
        return build_combined_plans(self, self.context)

    # ``compile`` writes neither of the next two: they are built on first use (a run needs them)
    @cached_property
    def full_refresh(self) -> exp.Expression | None:
        """Key tables: the bootstrap as ``CREATE OR REPLACE TABLE``."""
        if self.model is None:
            return None
        statement = self.bootstrap.copy()
        statement.set("replace", True)
        return statement

    @cached_property
    def combined(self) -> SourceMerge | None:
        """Key tables of several sources: the one MERGE a run makes when more than one source
        has new rows (its batch shown over every source; a run folds those with new rows)."""
        if self.model is None or len(self.model.branches) < 2:
            return None
        return SourceMerge(
            -1,
            "all",
            COMBINED_VIEW,
            combined_batch(self.model),
            build_combined_merge(self.model),
            bounds=key_bounds(self.model, None) if self.model.merge_filter else None,
        )

    def restate_predicate(self, text: str) -> exp.Expr:
        """The ``run --restate`` predicate, checked against this model (UsageError, exit 2,
        for a model that is no key table or a predicate it does not accept)."""
        if self.model is None:
            raise refuse_kind(self.node.name, self.kind)
        return parse_restate(self.model, text)

    def restate_plan(self, text: str) -> list[Step]:
        """The steps of ``run --restate text`` (lakewide.compiler.statements.build_restate)."""
        return build_restate_plan(self, self.context, self.restate_predicate(text))

    @cached_property
    def null_keys(self) -> exp.Select | None:
        """Key tables: count of the rows the bootstrap rejects for a NULL key."""
        if self.model is None:
            return None
        return null_key_count(self.model, branch_keys(self.model))

    def files(
        self, *, in_place: bool = False, changelog: bool | None = None, plans: bool = False
    ) -> dict[str, str]:
        """File name -> SQL text, as written under ``target/compiled/<model>/``.

        ``changelog``: the model produces its changelog (``changelog.sql``: what follows each
        MERGE commit, shown for the combined batch's keys; default: as the context says).
        ``plans``: also every run plan, step by step (``plans/*.sql``).

        ``in_place=True`` prints the statements and plans themselves rather than copies (the
        copies were a sixth of ``compile``'s time); the generator may rewrite what it prints,
        so only a caller that drops this object afterwards may ask for it.
        """
        copy = not in_place
        changelog = self.context.produces if changelog is None else changelog
        # the plans share trees with the statements: printed first. In place too: a tree the
        # generator rewrote prints the same again (tests/compiler/test_print_in_place.py)
        printer = (lambda tree: to_sql(tree, copy=False)) if in_place else to_sql
        shown_plans = plan_files(self.plans, printer) if plans and self.plans is not None else {}
        first = "bootstrap.sql" if self.kind.is_key_table else f"{self.kind}.sql"
        out = {
            first: to_sql(self.bootstrap, copy=copy)
            + (to_sql(self.write_order, copy=copy) if self.write_order is not None else "")
        }
        for merge in self.merges:
            out[f"merge_{merge.branch + 1:02d}_{merge.name}.sql"] = to_sql(
                merge.staging(copy=copy), copy=False
            ) + to_sql(merge.statement, copy=copy)
        if self.combined is not None:  # several sources with new rows: one MERGE for all
            out["merge_all.sql"] = to_sql(self.combined.staging(copy=copy), copy=False) + to_sql(
                self.combined.statement, copy=copy
            )
        if changelog and self.model is not None:
            keys = self.combined.batch_view if self.combined else self.merges[0].batch_view
            out["changelog.sql"] = "".join(
                to_sql(s, copy=False) for s in build_changes.statements(self.model, keys)
            )
        if self.snapshot is not None:
            shown = self.plans if plans and isinstance(self.plans, SnapshotPlans) else None
            out.update(snapshot_files(self.snapshot, to_sql, shown))
        out.update(shown_plans)
        return out

    def shown(self, *, all_plans: bool = False) -> dict[str, str]:
        """What ``lakewide compile`` writes under ``target/compiled/<model>/``: a key table's
        ``summary.md`` (its next run, how each source's columns merge), another model's
        statements; ``all_plans``: also every statement and run plan (``plans/*.sql``), as a
        run executes them. The object is dropped afterwards (the plans print in place)."""
        with collection_paused():
            if self.model is None:
                return self.files(in_place=True, plans=all_plans)
            shown = {"summary.md": summary(self.model, self.context, len(self.deltas))}
            if self.deltas and not all_plans:
                assert self.plans is not None  # its delta joins' errors, as a run would raise
            if all_plans:
                shown.update(self.files(in_place=True, plans=True))
            return shown


def _query(node: ModelNode) -> exp.Query:
    query = parse_model_sql(node)
    if not isinstance(query, exp.Query):
        raise CompileError(
            f"a model is a SELECT query, found {query.key.upper()}", path=node.path, model=node.name
        )
    return query


def compile_model(node: ModelNode, context: PlanContext | None = None) -> CompiledModel:
    """Compile one model into its bootstrap statement and, for key tables, per-source MERGEs;
    ``context`` (its upstream tables, who produces a changelog) is what its run plans need."""
    context = context or PlanContext()
    kind = node.config.kind
    if kind.is_view:
        view = exp.Create(
            this=node.relation.table(), kind="VIEW", replace=True, expression=_query(node)
        )
        if not node.relation.catalog:
            view.set("properties", exp.Properties(expressions=[exp.TemporaryProperty()]))
        return CompiledModel(node, kind, view)
    if kind.keeps_versions:
        snap = analyze_snapshot(node, _query(node))
        return CompiledModel(
            node,
            kind,
            snapshot_bootstrap(snap, snap.query),
            write_order=write_ordered_by(node),
            context=context,
            snapshot=snap,
        )
    if kind.rebuilt_each_run or kind.appends:
        if kind.appends:
            raise CompileError(
                "materialized='incremental' (append-only log tables) is not "
                "supported yet; use 'table', 'view' or a merge_engine",
                path=node.path,
                model=node.name,
                key="materialized",
            )
        return CompiledModel(
            node,
            kind,
            create_table_as(node, _query(node), replace=True),
            write_order=write_ordered_by(node),
            context=context,
        )
    model = analyze(node)
    if context.fold_types:
        model = dataclasses.replace(model, fold_types=context.fold_types)
    validate(model)
    check_layout(model)  # what building the bootstrap would refuse, checked without it
    return CompiledModel(
        node,
        kind,
        model=model,
        write_order=write_ordered_by(node),
        context=context,
        deltas=delta_joins(model),
    )
