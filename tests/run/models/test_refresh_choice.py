"""The AUTO refresh choice: read the sources' changes or fold every source again, from
snapshot summaries (no JVM)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from lakewide.compiler.statements.build_changelog_read import refolds_exactly
from lakewide.run.models.refresh_choice import PlannedRead, choose_refresh
from lakewide.state.offsets import Snapshot, TableMeta
from lakewide.state.read_cost import CHANGELOG_FACTOR, WRITE_FACTOR, read_bytes
from tests.run.test_read_plan import model

MIB = 2**20


def table(*commits: tuple[str, int, int, int]) -> TableMeta:
    """Snapshots 1..N, each ``(operation, added bytes, removed bytes, total bytes after)``."""
    snapshots = {
        i: Snapshot(
            i,
            i - 1 if i > 1 else None,
            op,
            {
                "added-files-size": str(added),
                "removed-files-size": str(removed),
                "total-files-size": str(total),
            },
        )
        for i, (op, added, removed, total) in enumerate(commits, start=1)
    }
    return TableMeta(len(commits), snapshots)


# a 100 MiB source: bootstrapped, then a copy-on-write MERGE rewriting every file for 1% of
# its keys, then a compaction (skipped), then one rewriting a tenth of it
SOURCE = table(
    ("append", 100 * MIB, 0, 100 * MIB),
    ("overwrite", 100 * MIB, 100 * MIB, 100 * MIB),
    ("replace", 100 * MIB, 100 * MIB, 100 * MIB),
    ("overwrite", 10 * MIB, 10 * MIB, 100 * MIB),
)


def test_what_each_read_mode_costs_from_the_summaries() -> None:
    assert read_bytes(SOURCE, "none", 1, 4) == 0
    assert read_bytes(SOURCE, "full", 1, 4) == 100 * MIB
    assert read_bytes(SOURCE, "changelog", 1, 4) == CHANGELOG_FACTOR * 220 * MIB
    assert read_bytes(SOURCE, "changelog", 3, 4) == CHANGELOG_FACTOR * 20 * MIB
    assert read_bytes(SOURCE, "positions", 1, 4) == 200 * MIB  # one scan per data commit
    # format 3, copy-on-write: each commit's files once, paired by row lineage (no shuffle)
    lineage = dataclasses.replace(SOURCE, format_version=3)
    assert read_bytes(lineage, "positions", 1, 4) == 220 * MIB
    appended = table(("append", 100 * MIB, 0, 100 * MIB), ("append", 3 * MIB, 0, 103 * MIB))
    assert read_bytes(appended, "incremental", 1, 2) == 3 * MIB


def _choose(mode: str, exact: bool, start: int, read: str, target: int = 50 * MIB) -> Any:
    reads = [PlannedRead("src", start, 4, read)]
    target_meta = table(("append", target, 0, target))
    return choose_refresh(mode, exact, reads, {"src": SOURCE}, {"src": 4}, target_meta)


def test_auto_refolds_where_the_changes_cost_more_than_the_fold() -> None:
    # every file rewritten twice: 2 x 220 MiB + the target's 50 MiB against 100 + 2 x 50 MiB
    refresh = _choose("auto", True, 1, "changelog")
    assert refresh.refolds and "490.0 MiB" in refresh.reason and "200.0 MiB" in refresh.reason
    assert refresh.reason.startswith("rebuilt from every source: it reads ~200.0 MiB")
    assert WRITE_FACTOR == 2
    # a tenth rewritten: 2 x 20 + 50 against 200: the changes
    assert not _choose("auto", True, 3, "changelog").refolds
    # a small table: the re-fold would save less than MIN_SAVING (64 MiB)
    small = table(("append", MIB, 0, MIB), ("overwrite", MIB, MIB, MIB))
    reads = [PlannedRead("src", 1, 2, "changelog")]
    assert not choose_refresh("auto", True, reads, {"src": small}, {"src": 2}, small).refolds


def test_auto_never_refolds_a_model_whose_refold_would_differ() -> None:
    refresh = _choose("auto", False, 1, "changelog")
    assert not refresh.refolds and "only with refresh_mode='full'" in refresh.reason
    assert refresh.reason.startswith("read only what changed")


def test_forced_modes_and_appends() -> None:
    assert _choose("full", False, 3, "incremental").refolds
    assert not _choose("incremental", True, 1, "changelog").refolds
    assert _choose("auto", True, 3, "incremental").reason == ""  # nothing to weigh
    nothing = choose_refresh("full", True, [], {"src": SOURCE}, {"src": 4}, SOURCE)
    assert not nothing.refolds and nothing.reason == ""  # no source has anything new


@pytest.mark.parametrize(
    "config, exact",
    [
        ({"merge_engine": "deduplicate"}, True),
        ({"merge_engine": "deduplicate", "ignore_delete": True}, False),
        ({"merge_engine": "aggregation", "aggregates": {"n": "sum", "v": "last_value"}}, True),
        ({"merge_engine": "aggregation", "aggregates": {"n": "max"}}, False),
        (
            {
                "merge_engine": "aggregation",
                "aggregates": {"n": {"function": "sum", "ignore_retract": True}},
            },
            False,
        ),
        ({"merge_engine": "first_row"}, False),
        ({"merge_engine": "partial_update", "remove_record_on_delete": True}, False),
    ],
)
def test_which_engines_refold_to_the_same_rows(config: dict[str, Any], exact: bool) -> None:
    assert refolds_exactly(model(config)) is exact
