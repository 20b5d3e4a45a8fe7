"""Whether an incremental run reads its sources' changes or folds every source again: the
model's ``refresh_mode`` (``auto``, ``incremental``, ``full``; Snowflake dynamic tables' AUTO
refresh mode) and, for ``auto``, the estimate of both from snapshot summaries
(lakewide.state.read_cost). Results and offsets are the same either way: ``auto`` re-folds
only a model whose re-fold keeps the rows its incremental runs keep (``refold_exact``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lakewide.state.offsets import TableMeta
from lakewide.state.read_cost import estimate, read_bytes, table_bytes


@dataclass(frozen=True)
class Refresh:
    """The path a run takes (``incremental`` or ``refold``) and why (empty where no source
    changed by more than appends: nothing to weigh)."""

    path: str
    reason: str

    @property
    def refolds(self) -> bool:
        return self.path == "refold"


@dataclass(frozen=True)
class PlannedRead:
    """One source branch's planned read: its upstream and range, and the read mode."""

    table: str
    start: int | None
    end: int | None
    mode: str
    lossy: bool = False  # a full re-read standing in for changes it cannot read


def choose_refresh(
    mode: str,
    exact: bool,
    reads: Sequence[PlannedRead],
    metas: Mapping[str, TableMeta | None],
    pinned: Mapping[str, int | None],
    target: TableMeta | None,
) -> Refresh:
    """The path of a run whose branches plan ``reads`` (``mode``: the model's refresh_mode;
    ``exact``: its re-fold keeps the same rows; ``metas``/``pinned``: every upstream's
    snapshots and pinned snapshot; ``target``: the model's table)."""
    if not reads:
        return Refresh("incremental", "")  # no source has anything new
    if mode == "full":
        return Refresh("refold", "rebuilt from every source, as refresh_mode='full' asks")
    if mode == "incremental":
        return Refresh("incremental", "read only what changed, as refresh_mode='incremental' asks")
    changed = [r for r in reads if r.mode not in ("none", "incremental")]
    if not changed:
        return Refresh("incremental", "")  # appends are the cheapest read there is
    cost = estimate(
        (read_bytes(metas.get(r.table), r.mode, r.start, r.end) for r in reads),
        (table_bytes(metas.get(t), pinned.get(t)) for t in metas),
        table_bytes(target),
    )
    lost = [r.table for r in reads if r.lossy]
    if lost and exact:
        return Refresh(
            "refold",
            f"rebuilt from every source: what changed in {', '.join(lost)} can no longer be "
            "read (reading the table whole instead would keep rows it has since lost)",
        )
    if not exact:
        return Refresh(
            "incremental",
            f"{cost.describe(refolded=False)}; with this merge engine a rebuild could give "
            "other rows, so it happens only with refresh_mode='full'",
        )
    return Refresh(
        "refold" if cost.refold_cheaper else "incremental", cost.describe(cost.refold_cheaper)
    )
