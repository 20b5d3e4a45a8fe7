"""Consumed offsets: which upstream snapshot each source branch of a model has been read up to.

The offsets travel inside the target's Iceberg commits (snapshot summary properties), so data
and progress commit atomically. Resume = walk back from the current snapshot to the last commit
that carries them (maintenance commits carry none).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from lakewide import __version__

OFFSETS = "lakewide.offsets"
RUN_ID = "lakewide.run-id"
VERSION = "lakewide.version"
MODEL = "lakewide.model"
DEFINITION = "lakewide.definition"  # see lakewide/state/definition.py
CHANGELOG_OF = "lakewide.changelog-of"  # on a changelog append: the model snapshot it covers
MARK = "lakewide.mark"  # "offsets": a snapshot without data, the run's offsets only
#: the branch of a table model's offsets: it reads every upstream whole, not per source branch
WHOLE_MODEL = -1


@dataclass(frozen=True)
class Snapshot:
    """One Iceberg snapshot as lakewide needs it."""

    id: int
    parent: int | None
    operation: str
    summary: dict[str, str] = field(default_factory=dict)
    timestamp_ms: int = 0
    sequence_number: int | None = None  # the data sequence number Iceberg assigned to it
    schema_id: int | None = None  # the table schema it was written with; None: not said


@dataclass(frozen=True)
class TableColumn:
    """A column of a table's current schema: its name, Iceberg type and comment."""

    name: str
    type: str
    doc: str | None = None


@dataclass(frozen=True)
class TableMeta:
    """A table's current snapshot and its snapshots by id."""

    current: int | None
    snapshots: dict[int, Snapshot]
    format_version: int | None = None  # None where the reader did not say
    columns: tuple[TableColumn, ...] | None = None  # current schema; None: the reader did not say
    tags: dict[str, int] = field(default_factory=dict)  # Iceberg tag name -> snapshot id
    properties: dict[str, str] | None = None  # table properties; None: the reader did not say
    branches: dict[str, int] = field(default_factory=dict)  # Iceberg branch name -> head
    schema_id: int | None = None  # the current schema's id (of ``columns``); None: not said

    def ancestors(self, start: int | None = None) -> Iterator[Snapshot]:
        """Snapshots from ``start`` (default: current) back through their parents."""
        snapshot_id = self.current if start is None else start
        while snapshot_id is not None and snapshot_id in self.snapshots:
            snapshot = self.snapshots[snapshot_id]
            yield snapshot
            snapshot_id = snapshot.parent


def offset_key(branch: int, relation: str) -> str:
    """Key of one source branch in the offsets vector: ``<branch>:<relation>``."""
    return f"{branch}:{relation}"


def offset_relation(key: str) -> str:
    """The upstream relation an offsets key names (the inverse of ``offset_key``'s second part)."""
    return key.split(":", 1)[1]


def table_offsets(snapshots: Mapping[str, int | None]) -> dict[str, int | None]:
    """A table model's offsets vector: every upstream relation at its snapshot in ``snapshots``."""
    return {offset_key(WHOLE_MODEL, relation): snapshot for relation, snapshot in snapshots.items()}


def branch_offsets(
    drivers: Iterable[tuple[int, str | None]], snapshots: Mapping[str, int | None]
) -> dict[str, int | None]:
    """A key model's offsets vector: each ``(branch, driving relation)`` at the relation's
    snapshot in ``snapshots`` (None when it has none); branches with no driving relation have
    no entry."""
    return {
        offset_key(branch, driver): snapshots.get(driver) for branch, driver in drivers if driver
    }


def last_commit(meta: TableMeta | None) -> Snapshot | None:
    """The newest ancestor of the current snapshot written by lakewide."""
    if meta is None:
        return None
    return next((s for s in meta.ancestors() if OFFSETS in s.summary), None)


def is_mark(snapshot: Snapshot) -> bool:
    """Whether lakewide committed ``snapshot`` only to record offsets (no row changed: the
    changes a run consumed gave nothing to merge)."""
    return MARK in snapshot.summary


def snapshot_offsets(snapshot: Snapshot) -> dict[str, int | None] | None:
    """The offsets vector a lakewide commit carries; None for a snapshot lakewide did not write."""
    stored = snapshot.summary.get(OFFSETS)
    return None if stored is None else json.loads(stored)


def last_offsets(meta: TableMeta | None) -> dict[str, int | None] | None:
    """The offsets vector of the last lakewide commit, or None when there is none."""
    snapshot = last_commit(meta)
    return None if snapshot is None else snapshot_offsets(snapshot)


def appends_only(meta: TableMeta, start: int, end: int) -> bool | None:
    """Whether every snapshot after ``start`` up to ``end`` is an append.

    None when ``start`` is not an ancestor of ``end`` (the table was replaced or rolled back).
    """
    for snapshot in meta.ancestors(end):
        if snapshot.id == start:
            return True
        if snapshot.operation != "append":
            return False
    return None


def rewrites_only(meta: TableMeta, start: int, end: int) -> bool:
    """Whether every snapshot after ``start`` up to ``end`` only rewrote files (``replace``:
    compactions, ``maintain``'s rewrites), so the data at ``end`` is the data at ``start``."""
    for snapshot in meta.ancestors(end):
        if snapshot.id == start:
            return True
        if snapshot.operation != "replace":
            return False
    return False


def commit_properties(
    offsets: dict[str, int | None], run_id: str, model: str, definition: str | None = None
) -> dict[str, str]:
    """Snapshot summary properties of a lakewide commit (``definition``: the model's digest)."""
    properties = {
        OFFSETS: json.dumps(offsets, sort_keys=True),
        RUN_ID: run_id,
        VERSION: __version__,
        MODEL: model,
    }
    if definition is not None:
        properties[DEFINITION] = definition
    return properties
