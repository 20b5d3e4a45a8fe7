"""Environments on Iceberg branches: which line of snapshots a run reads and writes.

A branch of a table is a named line of snapshots next to ``main`` (zero-copy: it starts at one
of main's snapshots). A run on branch ``NAME`` sees a table that has the branch at the branch's
head, and a table that does not at main's: its offsets, definition and contract (all carried in
snapshot summaries) are then those of the branch's lineage, so a branch run never moves main's.
``BranchReader`` is the one place that view is made for readers without Spark; the Spark side
asks ``on_branch`` too (lakewide.spark.table_metadata).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from lakewide.project.branch_name import MAIN
from lakewide.project.nodes import Relation
from lakewide.state.metadata import MetadataReader
from lakewide.state.offsets import TableMeta


def on_branch(meta: TableMeta | None, branch: str | None) -> TableMeta | None:
    """``meta`` as a run on ``branch`` sees it: current = the branch's head where the table
    has the branch, main's head elsewhere (and everywhere when ``branch`` is None)."""
    if meta is None or branch is None or branch not in meta.branches:
        return meta
    return dataclasses.replace(meta, current=meta.branches[branch])


#: the line a table is read on, when not the output's branch (a model's staging side branch)
Line = Callable[[Relation], "str | None"]


class BranchReader:
    """A metadata reader showing each table on ``branch`` where it has it (``on_branch``), or
    on the line ``line`` gives it (a model's staging side branch during its run)."""

    def __init__(self, inner: MetadataReader, branch: str, line: Line | None = None) -> None:
        self.inner = inner
        self.branch = branch
        self.line = line

    def table_meta(self, relation: Relation) -> TableMeta | None:
        """See MetadataReader.table_meta."""
        branch = self.branch if self.line is None else self.line(relation)
        return on_branch(self.inner.table_meta(relation), branch)


@dataclass(frozen=True)
class BranchState:
    """Where one table's branch stands against main."""

    head: int | None  # the branch's head; None: the table has no such branch
    main: int | None  # main's head
    ahead: int  # snapshots on the branch after main's head (0: nothing to publish)
    # main's head is an ancestor of the branch's head, or the branch is behind main (nothing to
    # publish): false when the two lines diverged
    forwardable: bool

    @property
    def behind(self) -> bool:
        """The branch is behind main's head with nothing to publish (all it held was published,
        and production ran on since): a run on it moves it to main's head."""
        return (
            self.head is not None
            and self.ahead == 0
            and self.forwardable
            and self.head != self.main
        )


def branch_state(meta: TableMeta, branch: str) -> BranchState:
    """How ``branch`` of a table stands against its main (from main's view, ``meta``)."""
    head = meta.branches.get(branch)
    main = meta.branches.get(MAIN, meta.current)
    if head is None:
        return BranchState(None, main, 0, False)
    ahead = 0
    for snapshot in meta.ancestors(head):
        if snapshot.id == main:
            return BranchState(head, main, ahead, True)
        ahead += 1
    if any(s.id == head for s in meta.ancestors(main)):
        return BranchState(head, main, 0, True)  # behind main: published, or never written
    return BranchState(head, main, ahead, main is None)


def made_at_main(meta: TableMeta | None, branch: str | None) -> bool:
    """Whether a run on ``branch`` starts the table's branch at main's head (the branch is
    missing, or behind main with nothing to publish: the run makes or moves it there,
    lakewide.spark.branches), so that the branch's own contract keys, if any are left, are
    stale: the run reads main's contract. False for main (``branch`` None) and a missing
    table."""
    if branch is None or meta is None:
        return False
    state = branch_state(meta, branch)
    return state.head is None or state.behind
