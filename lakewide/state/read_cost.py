"""What an incremental run's reads cost against folding every source again, estimated from
snapshot summaries alone (no file is opened): the bytes each path reads or writes.

* ``incremental`` (appends): the files the range added;
* ``changelog`` (Iceberg's, copy-on-write): the files each commit removed and added, read
  and then shuffled whole to pair carry-over rows: twice their bytes;
* ``positions`` (merge-on-read): the table at each data commit of the range, once; a
  copy-on-write commit of a table keeping row lineage (format 3): the files it removed and
  added, once each (no shuffle of their rows);
* ``full``: the table at the range's end;
* the MERGE of the changes scans the target once; the re-fold reads every upstream table
  once and writes the target anew, which costs about twice its bytes (the fold's shuffle and
  the write).

The constants are rough ratios, checked against lakewide's CDC benchmark
(benchmarks/cdc_mirrors.py; docs/how-to/cdc-sources.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lakewide.state.offsets import TableMeta
from lakewide.state.upstream_changes import data_commits, deletes_added, lineage_kept

#: a changelog read pairs the rows of the files it reads through a shuffle of all of them
CHANGELOG_FACTOR = 2
#: writing the whole target (the fold's shuffle, the files) against scanning it
WRITE_FACTOR = 2
#: a re-fold must save at least this much to be taken: below it both paths take seconds,
#: and reading the changes keeps a downstream's changes narrow
MIN_SAVING = 64 * 2**20


def _size(meta: TableMeta, snapshot: int | None, key: str = "total-files-size") -> int:
    found = meta.snapshots.get(snapshot) if snapshot is not None else None
    return 0 if found is None else int(found.summary.get(key, "0") or 0)


def table_bytes(meta: TableMeta | None, snapshot: int | None = None) -> int:
    """The bytes of the table's files (data and delete files) at ``snapshot`` (default: its
    current one)."""
    if meta is None:
        return 0
    return _size(meta, meta.current if snapshot is None else snapshot)


def read_bytes(meta: TableMeta | None, mode: str, start: int | None, end: int | None) -> int:
    """The bytes a branch reading its upstream in ``mode`` after ``start`` up to ``end`` reads."""
    if meta is None or end is None or mode == "none":
        return 0
    if mode == "full" or start is None:
        return table_bytes(meta, end)
    commits = data_commits(meta, start, end)
    if mode == "positions":
        return sum(
            _files(meta, snapshot)
            if lineage_kept(meta) and not deletes_added(meta, snapshot)
            else table_bytes(meta, snapshot)
            for _, snapshot in commits
        )
    changed = sum(_files(meta, snapshot) for _, snapshot in commits)
    return CHANGELOG_FACTOR * changed if mode == "changelog" else changed


def _files(meta: TableMeta, snapshot: int) -> int:
    """The bytes of the data files ``snapshot`` added and removed."""
    return _size(meta, snapshot, "added-files-size") + _size(meta, snapshot, "removed-files-size")


@dataclass(frozen=True)
class Estimate:
    """The two paths' bytes, and which one is cheaper."""

    incremental: int
    refold: int

    @property
    def refold_cheaper(self) -> bool:
        """The re-fold costs less, by at least MIN_SAVING (read at call time)."""
        return self.incremental - self.refold >= max(MIN_SAVING, 1)

    def describe(self, refolded: bool) -> str:
        """What the run did and what the other path would have cost, in a user's words."""
        changes, rebuild = f"~{_mib(self.incremental)}", f"~{_mib(self.refold)}"
        if refolded:
            return (
                f"rebuilt from every source: it reads {rebuild}, less than reading what "
                f"changed ({changes})"
            )
        return f"read only what changed ({changes}; rebuilding from every source: {rebuild})"


def estimate(reads: Iterable[int], upstreams: Iterable[int], target: int) -> Estimate:
    """``reads``: each branch's read bytes; ``upstreams``: each upstream table's bytes at its
    pinned snapshot; ``target``: the model's table's bytes."""
    return Estimate(sum(reads) + target, sum(upstreams) + WRITE_FACTOR * target)


def _mib(size: int) -> str:
    """A size in MiB, or in KiB below a tenth of one (a small table is not ``0.0 MiB``)."""
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 / 10 else f"{size / 2**10:.0f} KiB"
