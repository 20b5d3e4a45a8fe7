"""Delta joins in a run: the dimension's changes since the branch's stored dimension offset
re-derive the fact rows joined to them (``lakewide.compiler.statements.build_delta_join``).

A dimension's offset is stored like a source's (``<branch>:<dimension>`` in the commit's
offsets vector) and advances with the re-derivation's commit, so a run stopped before that
commit derives the same keys again next time (replacing columns by a fold of the current rows
is idempotent).
"""

from __future__ import annotations

from typing import Protocol

from lakewide.compiler.plans import steps as p
from lakewide.compiler.trees import placeholders
from lakewide.run.models.outcomes import KeyTableOutcome, SourceRange
from lakewide.run.models.read_modes import CHANGES
from lakewide.state.offsets import TableMeta, appends_only, offset_key
from lakewide.state.upstream_changes import delete_files_after


class FactsRun(Protocol):
    """What a delta join's re-derivation reads and records of its model's run
    (``lakewide.run.models.key_table_run.KeyTableRun``, which calls it after the facts)."""

    plans: p.ModelPlans
    metas: dict[str, TableMeta | None]
    pinned: dict[str, int | None]
    progress: dict[str, int | None]
    outcome: KeyTableOutcome

    def run_steps(self, steps: list[p.Step], **values: int | None) -> placeholders.Params: ...

    def order_pins(self) -> None: ...


def delta_offsets(plans: p.ModelPlans, pinned: dict[str, int | None]) -> dict[str, int | None]:
    """Each delta join's dimension at its pinned snapshot (what a bootstrap has joined)."""
    return {offset_key(j.branch, j.table): pinned.get(j.table) for j in plans.delta_joins}


def choose_dimension_read(
    meta: TableMeta | None, start: int | None, end: int | None, consumed: bool
) -> tuple[str, str]:
    """``(mode, reason)``: how the dimension's changes after ``start`` up to ``end`` are read.

    ``incremental`` (appends: new images), ``changelog`` (Iceberg's changelog: old and new
    images), ``full`` (every fact row is derived again: no consumed offset, a replaced
    history, or delete files that Iceberg's changelog cannot read), ``none``.
    """
    if end is None:
        return "none", "the dimension has no snapshot yet"
    if consumed and start == end:
        return "none", "the dimension has no new snapshot"
    if start is None:
        return "full", "no dimension offset stored yet: every fact row derived again"
    if meta is None or all(s.id != start for s in meta.ancestors(end)):
        return "full", f"the dimension no longer descends from snapshot {start}: all derived again"
    if appends_only(meta, start, end):
        return "incremental", "dimension appends: the fact rows of the new keys derived again"
    if delete_files_after(meta, start, end):
        return "changelog", (
            "dimension delete files (merge-on-read): its changes by row position, the fact "
            "rows of changed keys derived again"
        )
    return "changelog", "dimension changelog: the fact rows of changed keys derived again"


#: fact read modes that change or remove rows already merged (``lakewide.run.models.read_modes``)
FACT_CHANGES = CHANGES


def derived_keys(dimension: str, facts: str) -> str | None:
    """Which fact rows a delta join derives again, from how this run read the dimension and
    the driving table (``DeltaJoinPlan.derived``; None: none).

    Dimension changes re-derive the keys joined to them; fact updates and deletes re-derive
    the keys of both images (a retraction merged with the current dimension, a key a row
    left, a NULL partial_update would not write); a read of either side in ``full`` every key.
    Appended fact rows need nothing: they were joined with the pinned dimension.
    """
    if "full" in (dimension, facts):
        return "full"
    by_dimension, by_facts = dimension != "none", facts in FACT_CHANGES
    if by_dimension and by_facts:
        return "both"
    return "dimension" if by_dimension else "facts" if by_facts else None


def run_delta_joins(run: FactsRun, consumed: dict[str, int | None]) -> None:
    """Re-derive, per delta join whose dimension moved or whose driving table changed rows,
    the fact rows of the affected keys (one commit each, carrying the dimension offset)."""
    for join in run.plans.delta_joins:
        key = offset_key(join.branch, join.table)
        start, end = consumed.get(key), run.pinned.get(join.table)
        mode, reason = choose_dimension_read(run.metas.get(join.table), start, end, key in consumed)
        driver = next(b.driver for b in run.plans.branches if b.index == join.branch)
        facts = next(
            (r.mode for r in run.outcome.ranges if (r.branch, r.relation) == (join.branch, driver)),
            "none",
        )
        which = derived_keys(mode, facts)
        if facts in FACT_CHANGES:
            reason += (
                f"; fact updates or deletes ({facts}): their keys before and after derived again"
            )
        elif facts == "full":
            reason += "; the fact table read in full: every key derived again"
        source_range = SourceRange(
            join.branch, join.table, start, end, mode, reason=f"delta join '{join.name}': {reason}"
        )
        run.outcome.ranges.append(source_range)
        run.progress[key] = end
        if which is None:
            continue
        # a re-derived row counts as upstream rows, even in a run re-reading its source: the
        # re-read parameter is bound false for the batch (an aggregation's row count)
        steps = [*join.reads.get(mode, []), *join.derived[which], *join.rederive]
        values = {join.start: start, placeholders.rereading(join.branch): False}
        run.order_pins()  # the fact rows are folded again from the pinned views
        params = run.run_steps(steps, **values)
        source_range.keys = int(params.get("rederived") or 0)
