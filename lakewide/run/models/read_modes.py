"""How one source branch reads its upstream in an incremental run: the read mode, and why.

Modes (``SourceRange.mode`` in ``target/run_results.json``):

* ``none``: nothing new (no snapshot, or the consumed one is still current);
* ``incremental``: only appends since the consumed snapshot (Iceberg incremental append read);
* ``changelog``: an upstream model's own changelog table (``changelog_producer``), when it
  covers every data commit of the range; else overwrite/delete snapshots without delete files
  (copy-on-write updates and deletes): Iceberg's changelog; both fed to the engine as row kinds;
* ``positions``: an upstream with delete files after the consumed snapshot (merge-on-read:
  position deletes, deletion vectors, equality deletes), which Iceberg's changelog scan
  refuses, or one that keeps row lineage (format 3; copy-on-write commits paired by
  ``_row_id``): its changes read from the files each commit wrote
  (lakewide.spark.position_changes), fed to the engine like a changelog;
* ``full``: every row at the pinned snapshot: a source nothing was consumed from yet, or a
  fallback where re-reading is harmless for the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lakewide.compiler.plans.steps import BranchPlan
from lakewide.state.offsets import TableMeta, appends_only
from lakewide.state.upstream_changes import delete_files_after, reads_by_position


@dataclass(frozen=True)
class ReadPlan:
    """How a branch reads its upstream this run."""

    mode: str  # none | incremental | changelog | positions | full
    reason: str
    produced: bool = False  # changelog: read from the upstream model's changelog table
    # a full re-read where the changes cannot be read: rows the upstream lost stay merged;
    # a re-fold of the model is exact where one keeps the same rows
    # (lakewide.run.models.refresh_choice)
    lossy: bool = False
    refusal: str | None = None  # why the re-read is wrong for the engine: refused unless re-folded

    @property
    def reads(self) -> str:
        """The key of the branch's compiled read steps (``BranchPlan.reads``)."""
        if self.produced:
            return "produced"
        return "changelog" if self.changes else self.mode

    @property
    def changes(self) -> bool:
        """Whether the branch reads row changes (old and new images) through its changelog
        plan, rather than new rows merged like appends."""
        return self.mode in CHANGES


#: read modes that give old and new row images (``_change_type``)
CHANGES = ("changelog", "positions")


def _fallback(branch: BranchPlan, engine: str, driver: str, why: str, fix: str) -> ReadPlan:
    """A full re-read where the changes cannot be read: the model is re-folded instead where
    that keeps the same rows; else re-read where folding rows again is harmless (rows the
    upstream lost stay), else refused with ``fix``."""
    if branch.reread_safe:
        return ReadPlan(
            "full",
            f"{why}: re-read in full (rows it no longer has stay merged: a re-fold or "
            "--full-refresh drops them)",
            lossy=True,
        )
    return ReadPlan(
        "full",
        f"{why}: re-folded",
        lossy=True,
        refusal=(
            f"source {driver} {why}; re-reading all its rows would double-count in "
            f"merge_engine='{engine}'. {fix}, or run with --full-refresh to rebuild from "
            "scratch"
        ),
    )


def choose_read(
    branch: BranchPlan,
    engine: str,
    driver: str,
    start: int | None,
    end: int | None,
    *,
    consumed: bool,
    meta: Callable[[], TableMeta | None],
    produced: Callable[[int, int], bool] | None = None,
    first: bool = False,
) -> ReadPlan:
    """The read mode of ``branch`` over its upstream ``driver`` from ``start`` to ``end``.

    ``consumed``: the last commit's offsets name this branch (``start`` None then means the
    upstream had no snapshot yet: nothing was consumed, its whole history is new).
    ``produced``: for an upstream model with a changelog table, whether that table holds the
    changes of every data commit after ``start`` up to ``end``.
    ``first``: the table's contract knows the branch as a source none of whose rows were
    merged yet (a source added to the model, lakewide.run.schema.schema_steps): its whole history is
    new. Where no read gives the right table, the plan carries the refusal saying what to change
    (``refusal``), raised unless the run re-folds the model.
    """
    if end is None:
        return ReadPlan("none", "the upstream has no snapshot yet")
    if consumed and start == end:
        return ReadPlan("none", "no new snapshot")
    if consumed and start is None:
        return ReadPlan(
            "full", "nothing consumed yet (the upstream was empty): its whole history is new"
        )
    if start is None and first:
        return ReadPlan("full", "a source new to the model: its whole history")
    if start is None:
        return _fallback(
            branch,
            engine,
            driver,
            "has no consumed offset for it (a branch added since the last run)",
            "Keep the model's branches as they were",
        )
    upstream = meta()
    if upstream is None or all(s.id != start for s in upstream.ancestors(end)):
        return _fallback(
            branch,
            engine,
            driver,
            f"no longer descends from snapshot {start} (replaced, rolled back or expired)",
            "Keep that source's history",
        )
    if appends_only(upstream, start, end):
        return ReadPlan("incremental", "appends only")
    if branch.change_log:
        return _fallback(
            branch,
            engine,
            driver,
            "changed by more than appends (overwrite, delete or "
            "replace) and is itself a change log (row_kind_column)",
            "Keep that source append-only",
        )
    if produced is not None and produced(start, end):
        return ReadPlan(
            "changelog",
            "the upstream model's own changelog table (changelog_producer)",
            produced=True,
        )
    if not reads_by_position(upstream, start, end):
        return ReadPlan(
            "changelog", "overwrite/delete snapshots without delete files: Iceberg changelog"
        )
    if not delete_files_after(upstream, start, end):  # read by position for its row lineage
        return ReadPlan(
            "positions",
            "copy-on-write (format 3): each commit's new data files, its changed rows told "
            "from the rows it carried over by row lineage",
        )
    return ReadPlan(
        "positions",
        "delete files (merge-on-read): each commit's new data files, and the rows its "
        "deletes newly hide read by position (equality deletes: the table marked _deleted)",
    )
