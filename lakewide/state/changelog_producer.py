"""A key table's own changelog (``changelog_producer='lookup'``): which commits it covers.

Every MERGE commit of a producing model is followed by one append to ``<model>__changelog``
whose Iceberg commit names the MERGE's snapshot (``lakewide.changelog-of``); the statements
are the model's compiled plans (``lakewide.compiler.plans.run_plan``). A run that stopped between
the two is completed by the next run before it merges anything (``missing_changes``). A downstream
``ref()`` reads the appended changes (cheap append reads) instead of Iceberg's changelog scan,
which refuses merge-on-read tables; it uses them only when every data commit in its range is
covered (``range_covered``), else it falls back to the other read modes.
"""

from __future__ import annotations

from lakewide.compiler.plans.steps import PRODUCES
from lakewide.state.offsets import CHANGELOG_OF, OFFSETS, TableMeta, is_mark


def covered(meta: TableMeta | None) -> set[int]:
    """The model snapshots whose changes a changelog table holds."""
    if meta is None:
        return set()
    return {
        int(s.summary[CHANGELOG_OF]) for s in meta.snapshots.values() if CHANGELOG_OF in s.summary
    }


def range_covered(meta: TableMeta, changes: set[int], start: int, end: int) -> bool:
    """Whether every data commit after ``start`` up to ``end`` has its changes written
    (compactions, ``replace``, and offset marks change no row and need none)."""
    for snapshot in meta.ancestors(end):
        if snapshot.id == start:
            return True
        if snapshot.operation != "replace" and not is_mark(snapshot) and snapshot.id not in changes:
            return False
    return False


def missing_changes(meta: TableMeta | None, changelog: TableMeta | None) -> list[tuple[int, int]]:
    """``(parent, snapshot)`` of the MERGE commits, oldest first, whose changes a stopped run
    left unwritten (a bootstrap starts an empty changelog: nothing before it is due)."""
    if meta is None:
        return []
    done = covered(changelog)
    missing = []
    for snapshot in meta.ancestors():
        if is_mark(snapshot):  # no row changed: no changes due
            continue
        if PRODUCES in snapshot.summary:
            if snapshot.id in done:
                break
            missing.append(snapshot)
        elif OFFSETS in snapshot.summary:
            break
    return [(s.parent, s.id) for s in reversed(missing) if s.parent is not None]
