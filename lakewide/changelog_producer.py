"""A key table's own changelog (``changelog_producer='lookup'``), written exactly once.

Every MERGE commit of a producing model is followed by one append to ``<model>__changelog``
whose Iceberg commit names the MERGE's snapshot (``lakewide.changelog-of``). A run that
stopped between the two is completed by the next run before it merges anything: the missing
changes are the difference of the committed snapshot and its parent, over every key. A
downstream ``ref()`` reads the appended changes (cheap append reads) instead of Iceberg's
changelog scan, which refuses merge-on-read tables; it uses them only when every data commit
in its range is covered, else it falls back to the other read modes.
"""

from __future__ import annotations

from sqlglot import exp

from lakewide import faults
from lakewide.compiler import build_changes
from lakewide.compiler.wide_model import WideModel
from lakewide.engine.adapter import SparkAdapter
from lakewide.manifest import Manifest
from lakewide.nodes import ModelNode, Relation
from lakewide.offsets import MODEL, OFFSETS, RUN_ID, TableMeta

CHANGELOG_OF = "lakewide.changelog-of"
PRODUCES = "lakewide.changelog"  # on a producing model's MERGE commits: its changes are due


def produces_changelog(manifest: Manifest, node: ModelNode) -> bool:
    """Whether a key table keeps its changelog (``build_changes.produces_changelog``)."""
    return build_changes.produces_changelog(node, manifest.models.values())


def covered(meta: TableMeta | None) -> set[int]:
    """The model snapshots whose changes a changelog table holds."""
    if meta is None:
        return set()
    return {int(s.summary[CHANGELOG_OF]) for s in meta.snapshots.values() if CHANGELOG_OF in s.summary}


def range_covered(meta: TableMeta, changes: set[int], start: int, end: int) -> bool:
    """Whether every data commit after ``start`` up to ``end`` has its changes written
    (compactions, ``replace``, change no row and need none)."""
    for snapshot in meta.ancestors(end):
        if snapshot.id == start:
            return True
        if snapshot.operation != "replace" and snapshot.id not in changes:
            return False
    return False


def _temporary_view(view: str, query: exp.Expression) -> exp.Create:
    create = exp.Create(this=exp.table_(view), kind="VIEW", replace=True, expression=query)
    create.set("properties", exp.Properties(expressions=[exp.TemporaryProperty()]))
    return create


def register_changes(adapter: SparkAdapter, view: str, relation: Relation, start: int,
                     end: int) -> None:
    """``view``: the changes ``relation`` produced after snapshot ``start`` up to ``end``."""
    low, high = (adapter.sequence_number(relation, s) for s in (start, end))
    query = build_changes.bind(build_changes.read(relation), {"low": low, "high": high})
    adapter.sql(_temporary_view(view, query))


class ChangelogProducer:
    """Writes one model's changelog as its run commits."""

    def __init__(self, adapter: SparkAdapter, model: WideModel, run_id: str) -> None:
        self.adapter, self.model, self.run_id = adapter, model, run_id
        self.relation = model.node.relation
        self.table = build_changes.changelog_relation(self.relation)

    @property
    def merge_properties(self) -> dict[str, str]:
        """Properties a MERGE commit of this model carries besides its offsets."""
        return {PRODUCES: "lookup"}

    def reset(self, snapshot: int) -> None:
        """After a bootstrap or full refresh: an empty changelog (a downstream model reads the
        new table in full: it does not descend from what it consumed)."""
        self._read(build_changes.AFTER, snapshot)
        self.adapter.sql(build_changes.create(self.model, self.relation, replace=True))

    def recover(self, meta: TableMeta | None) -> None:
        """Write the changes of MERGE commits that a stopped run left without them."""
        if meta is None:
            return
        done = covered(self.adapter.table_meta(self.table))
        missing = []
        for snapshot in meta.ancestors():
            if PRODUCES in snapshot.summary:
                if snapshot.id in done:
                    break
                missing.append(snapshot)
            elif OFFSETS in snapshot.summary:
                break  # a bootstrap: its changelog starts empty
        for snapshot in reversed(missing):
            if snapshot.parent is not None:
                self._append(snapshot.parent, snapshot.id, None)

    def after_merge(self, snapshot: int, parent: int | None, keys_view: str) -> None:
        """The changes of the MERGE commit ``snapshot`` for the keys of ``keys_view``."""
        if parent is None:
            return
        faults.checkpoint("before-changelog")
        self._append(parent, snapshot, keys_view)

    def _read(self, view: str, snapshot: int) -> None:
        """The target at ``snapshot`` (row order does not matter: no snapshot list needed)."""
        self.adapter.register_read(view, self.relation, snapshot, meta=TableMeta(None, {}))

    def _append(self, parent: int, snapshot: int, keys_view: str | None) -> None:
        self._read(build_changes.BEFORE, parent)
        self._read(build_changes.AFTER, snapshot)
        self.adapter.sql(build_changes.create(self.model, self.relation, replace=False))
        self.adapter.stage(build_changes.DIFF, build_changes.diff(self.model, keys_view))
        ordinal = self.adapter.sequence_number(self.relation, snapshot)
        statement = build_changes.bind(build_changes.append(self.relation),
                                       {"ordinal": ordinal, "snapshot": snapshot})
        self.adapter.commit(statement, {CHANGELOG_OF: str(snapshot), RUN_ID: self.run_id,
                                        MODEL: self.model.node.name})
