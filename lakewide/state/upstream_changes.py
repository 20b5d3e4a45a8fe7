"""How the changes of an upstream between two snapshots can be read: its write mode, from
snapshot summaries alone.

* copy-on-write (overwrite/delete snapshots without delete files): Iceberg's changelog scan;
  of a format-3 table: the files each commit wrote, its rows found by row lineage
  (lakewide.spark.lineage_changes);
* merge-on-read (position deletes, deletion vectors, equality deletes): Iceberg 1.10's
  changelog scan refuses delete files, so lakewide reads the changes by row position
  (lakewide.spark.position_changes), one commit at a time; compactions (``replace``
  snapshots) rewrite files without changing rows and are skipped.
"""

from __future__ import annotations

from lakewide.state.offsets import TableMeta


def _count(summary: dict[str, str], key: str) -> int:
    return int(summary.get(key, "0") or 0)


def delete_files_after(meta: TableMeta, start: int, end: int) -> bool:
    """Whether a snapshot after ``start`` up to ``end`` holds delete files (merge-on-read).

    Iceberg 1.10's changelog scan refuses those ("Delete files are currently not supported in
    changelog scans"); it skips ``replace`` snapshots (compactions) altogether.
    """
    for snapshot in meta.ancestors(end):
        if snapshot.id == start:
            return False
        if snapshot.operation != "replace" and _count(snapshot.summary, "total-delete-files") > 0:
            return True
    return False


def lineage_kept(meta: TableMeta) -> bool:
    """Whether the table keeps row lineage (format 3: every row's ``_row_id`` and the sequence
    number of the commit that last wrote it), so a copy-on-write commit's changed rows can be
    told from the rows it carried over without pairing them."""
    return (meta.format_version or 0) >= 3


def reads_by_position(meta: TableMeta, start: int, end: int) -> bool:
    """Whether the changes after ``start`` up to ``end`` are read from the files each commit
    wrote (lakewide.spark.position_changes) rather than through Iceberg's changelog scan:
    where delete files came in (which that scan refuses) or the table keeps row lineage."""
    return lineage_kept(meta) or delete_files_after(meta, start, end)


def data_commits(meta: TableMeta, start: int, end: int) -> list[tuple[int, int]]:
    """``(parent, snapshot)`` of every snapshot after ``start`` up to ``end`` that may change
    rows, oldest first: a compaction (``replace``) rewrites files without changing a row, so
    it is skipped, and each other commit is read against its parent (one changelog ordinal
    each, as Iceberg's changelog numbers them)."""
    found: list[tuple[int, int]] = []
    for snapshot in meta.ancestors(end):
        if snapshot.id == start:
            break
        if snapshot.operation != "replace":
            assert snapshot.parent is not None, "a snapshot after another has a parent"
            found.append((snapshot.parent, snapshot.id))
    return found[::-1]


def has_deletes(meta: TableMeta, snapshot: int) -> bool:
    """Whether the table at ``snapshot`` has delete files (rows hidden by them)."""
    found = meta.snapshots.get(snapshot)
    return found is None or _count(found.summary, "total-delete-files") > 0


def _added(meta: TableMeta, snapshot: int, keys: tuple[str, ...]) -> bool:
    found = meta.snapshots.get(snapshot)
    return found is None or any(_count(found.summary, key) > 0 for key in keys)


def deletes_added(meta: TableMeta, snapshot: int) -> bool:
    """Whether ``snapshot`` added delete files or deletion vectors (rows deleted in place);
    True where its summary is unknown."""
    return _added(meta, snapshot, ("added-delete-files", "added-dvs", "added-position-deletes"))


def equality_deletes_added(meta: TableMeta, snapshot: int) -> bool:
    """Whether ``snapshot`` added equality delete files (rows deleted by key, which only a
    read of the whole table can find); True where its summary is unknown."""
    return _added(meta, snapshot, ("added-equality-delete-files", "added-equality-deletes"))
