"""Arrival order of an upstream's rows: which Iceberg reads a run makes (no JVM)."""

from __future__ import annotations

from lakewide.state.arrival import MAX_READS, FilePart, SnapshotRead, arrival_reads, commit_order
from lakewide.state.offsets import Snapshot, TableMeta


def history(*operations: str) -> TableMeta:
    """Snapshots 1..n, each the parent of the next, with the given operations."""
    snapshots = {
        i: Snapshot(i, i - 1 if i > 1 else None, op) for i, op in enumerate(operations, start=1)
    }
    return TableMeta(len(operations), snapshots)


def test_one_read_per_append_oldest_first() -> None:
    meta = history("append", "append", "append", "append")
    assert arrival_reads(meta, 4, 1) == [SnapshotRead(2, 1), SnapshotRead(3, 2), SnapshotRead(4, 3)]


def test_a_single_append_is_one_plain_read() -> None:
    assert arrival_reads(history("append", "append"), 2, 1) == [SnapshotRead(2, 1)]


def test_bootstrap_reads_the_whole_append_history_in_commit_order() -> None:
    meta = history("append", "append", "append")
    assert arrival_reads(meta, 3, None) == [
        SnapshotRead(1, None),
        SnapshotRead(2, 1),
        SnapshotRead(3, 2),
    ]


def test_history_with_other_operations_is_one_plain_read() -> None:
    meta = history("append", "overwrite", "append")
    assert arrival_reads(meta, 3, None) == [SnapshotRead(3, None)]
    assert arrival_reads(meta, 3, 1) == [SnapshotRead(3, 1)]
    assert arrival_reads(meta, 3, 2) == [SnapshotRead(3, 2)]


def test_expired_or_unknown_snapshots_fall_back_to_one_read() -> None:
    meta = history("append", "append", "append")
    del meta.snapshots[2]
    assert arrival_reads(meta, 3, 1) == [SnapshotRead(3, 1)]
    assert arrival_reads(None, 3, 1) == [SnapshotRead(3, 1)]


def test_too_many_appends_are_one_read() -> None:
    meta = history(*["append"] * (MAX_READS + 2))
    assert arrival_reads(meta, MAX_READS + 2, 1) == [SnapshotRead(MAX_READS + 2, 1)]
    assert len(arrival_reads(meta, MAX_READS + 1, 1)) == MAX_READS


def test_commit_order_is_sequence_number_then_path_then_offset() -> None:
    parts = [
        FilePart(4, "data/b.parquet", 0),
        FilePart(2, "data/z.parquet", 0),
        FilePart(4, "data/a.parquet", 100),
        FilePart(4, "data/a.parquet", 0),
        FilePart(3, "data/0.parquet", 0),
    ]
    assert commit_order(parts) == [1, 4, 3, 2, 0]
