"""Arrival order of an upstream's rows: the commits that added them, oldest first.

The fold orders ties by arrival, which lakewide numbers as the rows are read. One plain
Iceberg read plans the newest files first, so a key appended three times would keep the
*oldest* record on a sequence tie. lakewide therefore reads a table (format version 2 and
later) in commit order, whatever its history (replace, overwrite, MERGE, expired snapshots):
the data files Iceberg plans, ordered by the data sequence number of the commit that added
each, then by path and offset (rows of one commit in its files' order), read as one Spark
scan whose partitions keep that order (lakewide.spark.ordered_read). A format-version-1 table
has no sequence numbers: it is read one append snapshot at a time, oldest first, where its
history allows it (``arrival_reads``), else in one plain read.
"""

from __future__ import annotations

from dataclasses import dataclass

from lakewide.state.offsets import TableMeta

#: above this many append snapshots in one read, one plain read is planned instead (arrival
#: then follows Iceberg's file planning for ties between those commits;
#: docs/concepts/arrival-order.md)
MAX_READS = 64


@dataclass(frozen=True)
class FilePart:
    """One planned piece of a data file: the data sequence number of the commit that added
    the file, its path and the piece's byte offset."""

    sequence: int
    path: str
    start: int


def commit_order(parts: list[FilePart]) -> list[int]:
    """The indices of ``parts`` in arrival order: oldest commit first, then path and offset.

    A row rewritten into a new file (copy-on-write update or delete, compaction) arrives with
    that file's commit: the file's sequence number is all Iceberg keeps per file.
    """
    return sorted(
        range(len(parts)), key=lambda i: (parts[i].sequence, parts[i].path, parts[i].start)
    )


@dataclass(frozen=True)
class SnapshotRead:
    """One Iceberg read: the rows of ``snapshot`` (``after`` None) or appended after ``after``."""

    snapshot: int
    after: int | None = None


def arrival_reads(meta: TableMeta | None, snapshot: int, after: int | None) -> list[SnapshotRead]:
    """Format version 1: the reads that give the rows of ``(after, snapshot]`` (``after``
    None: every row at ``snapshot``) in commit order, or one plain read when the history does
    not allow it.

    Every snapshot between must be an ``append`` (what an incremental read takes anyway) and
    still be known; a bootstrap read also needs the whole history to be appends from the
    table's first snapshot.
    """
    plain = [SnapshotRead(snapshot, after)]
    if meta is None:
        return plain
    chain = []
    current: int | None = snapshot
    while current is not None and current != after:
        found = meta.snapshots.get(current)
        if found is None or found.operation != "append":
            return plain
        chain.append(found)
        current = found.parent
    if current != after or len(chain) <= 1 or len(chain) > MAX_READS:
        return plain
    chain.reverse()
    return [SnapshotRead(s.id, s.parent) for s in chain]
