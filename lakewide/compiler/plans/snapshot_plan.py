"""Rule: every plan a run of a ``snapshot`` model can take, as steps
(``lakewide.compiler.plans.steps``).

A new table is one CTAS over the input at its pinned snapshot. An existing one reads the
input's rows since the consumed snapshot: ``incremental`` (only appends: the appended rows,
each a candidate version) or ``full`` (anything else, or nothing consumed: every row at the
pinned snapshot; only then are keys that left the input seen as hard deletes); then it stages
the versions to write and MERGEs them (``compiler/snapshot``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from lakewide.compiler.model.snapshot_model import SnapshotModel
from lakewide.compiler.plans import steps as p
from lakewide.compiler.plans.run_plan import PlanContext, new_view, pin_view, temporary_view
from lakewide.compiler.plans.show_plan import plan_text
from lakewide.compiler.statements import snapshot as s
from lakewide.compiler.trees import placeholders
from lakewide.compiler.trees.rewrite import replace_tables

READ_MODES = ("incremental", "full")
DUPLICATES = (
    "{count} key(s) of the snapshot's input hold several rows with the same "
    "unique_key and updated_at (dbt: unique_key must identify one row); fix the input or "
    "the model's unique_key"
)


@dataclass(frozen=True)
class SnapshotPlans(p.ModelPlans):
    """A snapshot's plans: ``reads`` registers the input's rows per read mode (the branch view),
    ``merges`` stages and commits the versions for that mode."""

    driver: str = ""
    reads: dict[str, list[p.Step]] = field(default_factory=dict)
    merges: dict[str, list[p.Step]] = field(default_factory=dict)


def _no_other_plan(name: str) -> list[p.Step] | None:
    """A snapshot is never rebuilt (``--full-refresh`` runs it incrementally, as dbt does),
    re-folded or merged from several sources at once."""
    return None if name.startswith("combined") else []


def _checks(snap: SnapshotModel, query: exp.Select) -> list[p.Step]:
    return [
        p.Query(s.rejected_count(query, snap), ("rejected",)),
        p.Query(s.duplicate_count(query, snap), ("duplicates",)),
        p.Refuse("duplicates", DUPLICATES),
    ]


def build_snapshot_plans(
    snap: SnapshotModel, context: PlanContext, write_order: exp.Command | None
) -> SnapshotPlans:
    """The plans of one snapshot model in its project ``context``."""
    node = snap.node
    self_key = node.relation.key
    pins = [
        p.Read(pin_view(n), key, "snapshot", at=f"pin_{n + 1}")
        for n, key in enumerate(context.upstream)
    ]
    pinned = {read.table: read.view for read in pins}
    tables = {**context.upstream, self_key: node.relation}
    pinned_query = replace_tables(snap.query, pinned)
    create = s.bootstrap(snap, pinned_query)
    bootstrap = [*_checks(snap, pinned_query), p.Commit(self_key, create)]
    if write_order is not None:
        bootstrap.append(p.Run(write_order))
    view = new_view(0)
    start, end = placeholders.start(0), placeholders.end(0)
    reads: dict[str, list[p.Step]] = {
        "incremental": [p.Read(view, snap.driver, "appends", at=end, after=start)],
        "full": [p.Read(view, snap.driver, "snapshot", at=end)],
    }
    query = replace_tables(snap.query, {**pinned, snap.driver: view})
    merges = {
        mode: [
            *_checks(snap, query),
            p.Read(s.TARGET, self_key, "snapshot"),
            p.Stage(
                s.HISTORY,
                s.history(snap, query, stored=True, full=mode == "full"),
                "staged",
                checkpoint="before-stage",
            ),
            p.Commit(self_key, s.merge(snap), when="staged"),
        ]
        for mode in READ_MODES
    }
    return SnapshotPlans(
        node.relation,
        tables,
        pins,
        [],
        bootstrap,
        _no_other_plan,
        driver=snap.driver,
        reads=reads,
        merges=merges,
    )


def snapshot_files(
    snap: SnapshotModel, to_sql: Callable[[exp.Expr], str], plans: SnapshotPlans | None = None
) -> dict[str, str]:
    """``compile``'s view of a snapshot's runs: per read mode, the staged versions and the
    MERGE over the model's own tables; with ``plans``, each mode's plan step by step."""
    out = {}
    for mode in READ_MODES:
        staged = s.history(snap, snap.query, stored=True, full=mode == "full")
        out[f"merge_{mode}.sql"] = to_sql(temporary_view(s.HISTORY, staged)) + to_sql(s.merge(snap))
        if plans is not None:
            steps = [*plans.reads[mode], *plans.merges[mode]]
            out[f"plans/incremental_read_{mode}.sql"] = plan_text(steps, to_sql)
    return out
