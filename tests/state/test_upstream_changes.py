"""How an upstream's changes are read, from snapshot summaries alone (no JVM)."""

from __future__ import annotations

from lakewide.state.offsets import Snapshot, TableMeta
from lakewide.state.upstream_changes import data_commits, delete_files_after, has_deletes


def history(operations: str, deletes: str = "") -> TableMeta:
    """Snapshots 1..N in a line, ``operations`` one letter each (a: append, o: overwrite,
    r: replace); the snapshots numbered in ``deletes`` hold delete files."""
    names = {"a": "append", "o": "overwrite", "r": "replace", "d": "delete"}
    snapshots = {
        i: Snapshot(
            i,
            i - 1 if i > 1 else None,
            names[op],
            {"total-delete-files": "1" if str(i) in deletes else "0"},
        )
        for i, op in enumerate(operations, start=1)
    }
    return TableMeta(len(operations), snapshots)


def test_each_commit_is_read_against_its_parent_and_compactions_are_skipped() -> None:
    meta = history("aoorroaro")
    assert data_commits(meta, 1, 9) == [(1, 2), (2, 3), (5, 6), (6, 7), (8, 9)]
    assert data_commits(meta, 3, 5) == []  # nothing but compactions: no change
    assert data_commits(meta, 5, 6) == [(5, 6)]


def test_delete_files_of_a_compaction_do_not_make_a_range_merge_on_read() -> None:
    assert delete_files_after(history("aoo", deletes="3"), 1, 3)
    assert not delete_files_after(history("aor", deletes="3"), 1, 3)
    assert not delete_files_after(history("aoo", deletes="1"), 1, 3)  # before the range
    assert has_deletes(history("ao", deletes="2"), 2) and not has_deletes(history("ao"), 2)
