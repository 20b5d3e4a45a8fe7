"""A model that keeps a changelog table, run on a branch: its commits staged on a side branch.

A key table with a key table downstream commits each MERGE to its table, then appends the
MERGE's changes to its changelog table: two Iceberg commits on two tables, which Iceberg cannot
make atomic. On main, a run stopped between the two is completed by the next run. On a branch,
whose point is to be published whole, the model's table must never be ahead of its changelog
table, whatever stops the run. So during the model's run on branch ``NAME``, its table is read
and written on a side branch ``NAME__lw_stage`` made at ``NAME``'s head (the session's line for
that table, lakewide.spark.session), while its changelog table is written on ``NAME``. After
the run, failed or not, ``NAME`` of the model's table moves forward to the newest staged commit
whose changes, and those of every commit before it, are in the changelog table (``settle``),
and the side branch is dropped. A run killed after a changelog append and before that move
leaves the changelog table ahead (never the model's table); the next run on the branch, and
``publish``, settle first.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from lakewide.compiler.plans.steps import PRODUCES
from lakewide.project.branch_name import stage_branch
from lakewide.project.nodes import Relation
from lakewide.state.changelog_producer import covered
from lakewide.state.offsets import is_mark
from lakewide.vocabulary.errors import LakewideError

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


def settle(adapter: SparkAdapter, relation: Relation, changelog: Relation) -> int | None:
    """Move the output's branch of ``relation`` forward along its staging side branch to the
    newest commit whose changes (and those of every staged commit before it) ``changelog``
    holds; the snapshot moved to, or None when nothing moved."""
    branch = adapter.output.branch
    assert branch is not None, "only runs on a branch stage their commits"
    adapter.forget(relation)
    meta = adapter.table_meta(relation)
    if meta is None:
        return None
    staged, head = meta.branches.get(stage_branch(branch)), meta.branches.get(branch)
    if staged is None or head is None or staged == head:
        return None
    lineage = []
    for snapshot in meta.ancestors(staged):
        if snapshot.id == head:
            break
        lineage.append(snapshot)
    else:  # the side branch does not continue the branch: nothing of it was settled on
        return None
    adapter.forget(changelog)
    done = covered(adapter.table_meta(changelog))
    target = head
    for snapshot in reversed(lineage):
        if PRODUCES in snapshot.summary and not is_mark(snapshot) and snapshot.id not in done:
            break
        target = snapshot.id
    if target == head:
        return None
    adapter.place_branch(relation, branch, target)
    return target


@contextmanager
def staged(adapter: SparkAdapter, relation: Relation, changelog: Relation) -> Iterator[None]:
    """Run the body with ``relation`` on its staging side branch (see the module): settled
    first (a run stopped before), then again after the body, failed or not."""
    branch = adapter.output.branch
    assert branch is not None, "only runs on a branch stage their commits"
    settle(adapter, relation, changelog)
    meta = adapter.table_meta(relation)
    assert meta is not None and meta.current is not None, "the branch was made at a snapshot"
    stage = stage_branch(branch)
    adapter.place_branch(relation, stage, meta.current)
    adapter.lines[relation] = stage
    failed = True
    try:
        yield
        failed = False
    finally:
        del adapter.lines[relation]
        try:
            settle(adapter, relation, changelog)
            adapter.drop_branch(relation, stage)
        except LakewideError:
            if not failed:
                raise  # else the body's error is the one to report; the next run settles
