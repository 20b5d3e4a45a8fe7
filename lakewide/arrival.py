"""Arrival order of an upstream's rows: one read per append snapshot, oldest first.

The fold orders ties by arrival, which lakewide numbers as the rows are read. One Iceberg read
over several appends plans the newest files first, so a key appended three times between two
runs would keep the *oldest* record on a sequence tie. Reading each append snapshot on its
own and concatenating the reads oldest first makes the row numbers follow commit order
(Spark's union keeps its children's partitions in order; rows of one commit keep their
position in its files).
"""

from __future__ import annotations

from dataclasses import dataclass

from lakewide.offsets import TableMeta

#: above this many append snapshots in one read, one plain read is planned instead (arrival
#: then follows Iceberg's file planning for ties between those commits; README)
MAX_READS = 64


@dataclass(frozen=True)
class Read:
    """One Iceberg read: the rows of ``snapshot`` (``after`` None) or appended after ``after``."""

    snapshot: int
    after: int | None = None


def arrival_reads(meta: TableMeta | None, snapshot: int, after: int | None) -> list[Read]:
    """The reads that give the rows of ``(after, snapshot]`` (``after`` None: every row at
    ``snapshot``) in commit order, or one plain read when the history does not allow it.

    Every snapshot between must be an ``append`` (what an incremental read takes anyway) and
    still be known; a bootstrap read also needs the whole history to be appends from the
    table's first snapshot.
    """
    plain = [Read(snapshot, after)]
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
    return [Read(s.id, s.parent) for s in chain]
