"""Tests for lakewide.state.changelog_producer: which commits' changes a changelog table owes."""

from __future__ import annotations

from lakewide.compiler.plans.steps import PRODUCES
from lakewide.state.changelog_producer import missing_changes, range_covered
from lakewide.state.offsets import CHANGELOG_OF, MARK, OFFSETS, Snapshot, TableMeta

OFFS = {OFFSETS: "{}"}


def history(*snapshots: tuple[int, str, dict[str, str]]) -> TableMeta:
    """A linear history: each snapshot's parent is the one before it."""
    chain, parent = {}, None
    for sid, operation, summary in snapshots:
        chain[sid] = Snapshot(sid, parent, operation, summary)
        parent = sid
    return TableMeta(parent, chain)


def changelog(*covered: int) -> TableMeta:
    return history(*((100 + c, "append", {CHANGELOG_OF: str(c)}) for c in covered))


MODEL = history(
    (1, "append", OFFS),  # bootstrap
    (2, "overwrite", {**OFFS, PRODUCES: "lookup"}),
    (3, "append", {**OFFS, MARK: "offsets"}),  # a run that merged nothing
    (4, "replace", {}),  # a compaction
    (5, "overwrite", {**OFFS, PRODUCES: "lookup"}),
)


def test_marks_and_compactions_owe_no_changes() -> None:
    assert range_covered(MODEL, {2, 5}, 1, 5)
    assert not range_covered(MODEL, {2}, 1, 5)  # 5's changes are missing
    assert range_covered(MODEL, {2}, 1, 4)


def test_missing_changes_look_past_a_mark() -> None:
    assert missing_changes(MODEL, changelog(2, 5)) == []
    assert missing_changes(MODEL, changelog(2)) == [(4, 5)]
    # a stopped run left 2 without changes; a later run marked its offsets: 2 is still due
    marked = history(*[(s.id, s.operation, s.summary) for s in MODEL.snapshots.values()][:3])
    assert missing_changes(marked, changelog()) == [(1, 2)]
