"""The changes of a merge-on-read upstream, read by row position.

Iceberg 1.10's changelog scan refuses delete files, and a full re-read cannot see a deleted
row. Data files never change, so between a commit ``b`` and its parent ``a`` (compactions
skipped, lakewide.state.upstream_changes) a row changed exactly when:

* it is live at ``b`` in a data file ``a`` did not have: an INSERT (new rows, new images);
* it is marked ``_deleted`` at ``b`` (Iceberg's metadata column: hidden by a position delete,
  a deletion vector or an equality delete) in a data file ``a`` had, and was not deleted at
  ``a`` already: a DELETE carrying its old image;
* it was live at ``a`` in a data file ``b`` no longer has (a copy-on-write rewrite inside the
  range): a DELETE, its rewritten copy an INSERT; where the table keeps row lineage (format
  3) and ``b`` deleted nothing in place, only the rows ``b`` changed, told from those it
  carried over by lineage (lakewide.spark.lineage_changes).

The view has the columns of Iceberg's changelog view (``_change_type``, ``_change_ordinal``:
the commit's position in the range, ``_commit_snapshot_id``), so the branch's changelog plan
reads it unchanged: an update's old and new images share their commit's ordinal, and commits
keep their order. Per commit it reads the table at ``b`` once (the branch's columns; a
filter, no shuffle), the data-file lists of both snapshots from the ``files`` metadata table,
and the positions deleted at ``a`` only where ``a`` has delete files.
"""

from __future__ import annotations

from typing import Any

from lakewide.project.nodes import Relation
from lakewide.spark.lineage_changes import ROW_ID, UPDATED, Counts, lineage_parts
from lakewide.spark.lineage_changes import column as _column
from lakewide.spark.procedures import changelog_view_call
from lakewide.spark.staged_scan import StagedScans
from lakewide.state.offsets import TableMeta
from lakewide.state.upstream_changes import (
    data_commits,
    deletes_added,
    equality_deletes_added,
    has_deletes,
    lineage_kept,
)

FILE, POS, DELETED = "__lw_file", "__lw_pos", "__lw_deleted"
CHANGE_TYPE, ORDINAL, COMMIT = "_change_type", "_change_ordinal", "_commit_snapshot_id"
#: the columns a commit's read keeps: of its new rows, of its old images (unpaired)
Reads = tuple[list[str], list[str]]


def types_of(frame: Any) -> dict[str, Any]:
    """``frame``'s columns and their Spark types."""
    return {field.name: field.dataType for field in frame.schema.fields}


def _changes_of(
    frame: Any, columns: list[str], kind: str, ordinal: int, commit: int, types: dict[str, Any]
) -> Any:
    """``frame``'s ``columns`` as changelog rows of one kind and commit: those it has, the
    others NULLs of their type in ``types`` (column -> Spark type)."""
    from pyspark.sql import functions as f

    have = set(frame.columns)
    return frame.select(
        *[_column(c) if c in have else f.lit(None).cast(types[c]).alias(c) for c in columns],
        f.lit(kind).alias(CHANGE_TYPE),
        f.lit(ordinal).alias(ORDINAL),
        f.lit(commit).cast("bigint").alias(COMMIT),
    )


def _lineage(frame: Any, columns: list[str], *extra: str) -> Any:
    """``frame``'s ``columns`` (those it has) and its rows' ``_row_id`` and ``extra``
    metadata columns."""
    chosen = [c for c in columns if c in frame.columns]
    return frame.select(*[_column(c) for c in [*chosen, ROW_ID, *extra]])


def _counts(meta: TableMeta, a: int, b: int, new: list[Any]) -> Counts | None:
    """Commit ``b``'s row counts from its summary and its new files' scan tasks (``new``),
    where the parent ``a`` has no delete files (its removed files' rows are all live)."""
    summary = meta.snapshots[b].summary if b in meta.snapshots else {}
    firsts = [task.file().firstRowId() for task in new]
    known = "deleted-records" in summary and "added-records" in summary
    if not known or has_deletes(meta, a) or None in firsts:
        return None
    fresh = min((int(first) for first in firsts), default=2**63 - 1)
    return Counts(int(summary["deleted-records"]), int(summary["added-records"]), fresh)


class PositionChanges(StagedScans):
    """Mixin of lakewide.spark.adapter.SparkAdapter: merge-on-read changes as a view."""

    spark: Any

    def active(self) -> Any: ...  # lakewide.spark.session.Session

    def sql(self, statement: Any) -> Any: ...  # lakewide.spark.session.Session

    def sequence_number(self, relation: Relation, snapshot: int) -> int:  # table_metadata
        raise NotImplementedError

    def _at(self, relation: Relation, snapshot: int, table: str = "") -> Any:
        from lakewide.spark.time_travel import at_version

        reader = at_version(self.spark, self.spark.read.format("iceberg"), str(snapshot))
        with self.active():
            return reader.load(str(relation) + table)

    def _marked(
        self, relation: Relation, snapshot: int, columns: list[str], lineage: bool = False
    ) -> Any:
        """The table at ``snapshot``: those of ``columns`` it has, each row's data file and
        position, whether a delete hides it, and with ``lineage`` its row lineage."""
        from pyspark.sql import functions as f

        frame = self._at(relation, snapshot)
        return frame.select(
            *[_column(c) for c in columns if c in frame.columns],
            f.col("_file").alias(FILE),
            f.col("_pos").alias(POS),
            f.col("_deleted").alias(DELETED),
            *([f.col(ROW_ID), f.col(UPDATED)] if lineage else []),
        )

    def _paired(self, meta: TableMeta, b: int, removed: list[str]) -> bool:
        """Whether commit ``b`` rewrote files of a table keeping row lineage and deleted no
        row in place: its changed rows are told from those it carried over by lineage."""
        return bool(removed) and lineage_kept(meta) and not deletes_added(meta, b)

    def _lineage_or_changelog(
        self,
        relation: Relation,
        commit: tuple[int, int],
        frames: tuple[Any, Any],
        columns: list[str],
        ids: bool | None = None,
        counts: Counts | None = None,
    ) -> list[tuple[Any, str]]:
        """Commit ``b``'s changes (``commit``: ``(a, b)``; ``frames``: the rows of the files
        it added and removed) paired by row lineage (lakewide.spark.lineage_changes), or where
        a removed row has no id, read through Iceberg's changelog of that commit."""
        from pyspark.sql import functions as f

        a, b = commit
        sequence = self.sequence_number(relation, b)
        parts = lineage_parts(*frames, sequence, columns, ids, counts)
        if parts is not None:
            return parts
        view = f"lakewide_commit_changes_{b}".replace("-", "_")
        self.sql(changelog_view_call(view, relation, a, b))
        frame = self.spark.table(view).localCheckpoint(eager=True)
        return [(frame.where(f.col(CHANGE_TYPE) == kind), kind) for kind in ("INSERT", "DELETE")]

    def register_no_changes(self, view: str, relation: Relation, snapshot: int | None) -> None:
        """Temporary view with the columns of a changelog view of ``relation`` and no rows
        (a source without changes next to sources read as changes)."""
        frame = (
            self._at(relation, snapshot)
            if snapshot is not None
            else self.spark.table(str(relation))
        )
        empty = _changes_of(frame.limit(0), list(frame.columns), "INSERT", 0, 0, types_of(frame))
        empty.createOrReplaceTempView(view)

    def _files_between(
        self, relation: Relation, a: int, b: int
    ) -> tuple[tuple[Any, dict[str, Any]], list[str], list[str]]:
        """The table's scan planned at ``b`` (``_file_tasks``), and the data files commit ``b``
        added and removed against ``a``."""
        from lakewide.spark.connect import is_remote

        if is_remote(self.spark):  # no scan planning over Connect: the data files listed
            files = [set(self._data_files(relation, s)) for s in (a, b)]
            return (None, {}), sorted(files[1] - files[0]), sorted(files[0] - files[1])
        planned = self._file_tasks(relation, b)
        before, now = set(self._file_tasks(relation, a)[1]), set(planned[1])
        return planned, sorted(now - before), sorted(before - now)

    def _data_files(self, relation: Relation, snapshot: int) -> list[str]:
        """The data files of ``relation`` at ``snapshot`` (its ``data_files`` metadata table)."""
        frame = self._at(relation, snapshot, ".data_files").select("file_path")
        return [str(row[0]) for row in frame.collect()]

    def _marked_parts(
        self, relation: Relation, meta: TableMeta, a: int, b: int, reads: Reads
    ) -> list[tuple[Any, str]]:
        """Commit ``b``'s changed rows read by marking: the rows its deletes hide, from the
        table at ``b`` read whole with Iceberg's ``_deleted`` column (the only read that sees
        equality deletes); its new rows from the files it added alone (a staged scan, their
        own deletes applied), or over Spark Connect, where no file is staged, from the same
        marked table. ``reads``: the columns of the new rows and of the old images (unpaired)."""
        from pyspark.sql import functions as f

        columns, old = reads
        planned, new, removed = self._files_between(relation, a, b)
        is_new = f.col(FILE).isin(new) if new else f.lit(False)
        if self._paired(meta, b, removed):
            at_b = self._marked(relation, b, columns, lineage=True)
            added = at_b.where(~f.col(DELETED) & is_new)
            at_a = self._marked(relation, a, columns, lineage=True)
            gone = at_a.where(~f.col(DELETED) & f.col(FILE).isin(removed))
            return self._lineage_or_changelog(relation, (a, b), (added, gone), columns)
        if planned[0] is not None and new:  # not the whole table again for a few new rows
            added = self.read_files(relation, planned, set(new))
        else:
            added = self._marked(relation, b, columns).where(~f.col(DELETED) & is_new)
        gone = self._marked(relation, b, old).where(f.col(DELETED) & ~is_new)
        if has_deletes(meta, a):
            earlier = self._marked(relation, a, []).where(f.col(DELETED))
            gone = gone.join(earlier.select(FILE, POS), [FILE, POS], "left_anti")
        parts = [(added, "INSERT"), (gone, "DELETE")]
        if removed:
            at_a = self._marked(relation, a, old)
            parts.append((at_a.where(~f.col(DELETED) & f.col(FILE).isin(removed)), "DELETE"))
        return parts

    def _deleted_positions(self, relation: Relation, meta: TableMeta, a: int, b: int) -> Any:
        """``(file, position)`` of the rows commit ``b`` deleted by position (position delete
        files, deletion vectors): those listed at ``b`` and not at ``a``, since deletion vectors
        are cumulative per data file."""
        listed = self._at(relation, b, ".position_deletes").select(
            _column("file_path").alias(FILE), _column("pos").alias(POS)
        )
        if has_deletes(meta, a):  # not needed for the rows (hidden at ``a``): a smaller broadcast
            earlier = self._at(relation, a, ".position_deletes").select(
                _column("file_path").alias(FILE), _column("pos").alias(POS)
            )
            listed = listed.exceptAll(earlier)
        return listed

    def _positional_parts(
        self, relation: Relation, meta: TableMeta, a: int, b: int, reads: Reads
    ) -> list[tuple[Any, str]]:
        """Commit ``b``'s changed rows read from what it wrote: the data files it added
        (alone, a staged scan) and the old images of the rows it deleted, read at ``a`` by
        position (or of whole files it removed). ``reads``: as ``_marked_parts``."""
        from pyspark.sql import functions as f

        columns, old = reads
        planned, new, removed = self._files_between(relation, a, b)
        if self._paired(meta, b, removed):
            added = self.read_files(relation, planned, set(new)) if new else None
            if added is None:  # a commit that only removed files
                added = self._at(relation, b).limit(0)
            before = self._file_tasks(relation, a)
            ids = all(before[1][path].file().firstRowId() is not None for path in removed)
            gone = self.read_files(relation, before, set(removed))
            frames = (_lineage(added, columns, UPDATED), _lineage(gone, columns))
            counts = _counts(meta, a, b, [planned[1][path] for path in new])
            return self._lineage_or_changelog(relation, (a, b), frames, columns, ids, counts)
        parts = []
        if new:
            parts.append((self.read_files(relation, planned, set(new)), "INSERT"))
        wanted = f.lit(False) if not removed else f.col(FILE).isin(removed)
        at_a = self._at(relation, a)
        at_a = at_a.select(
            *[_column(c) for c in old if c in at_a.columns],
            f.col("_file").alias(FILE),
            f.col("_pos").alias(POS),
        )
        if deletes_added(meta, b):
            hits = self._deleted_positions(relation, meta, a, b).withColumn(DELETED, f.lit(True))
            at_a = at_a.join(f.broadcast(hits), [FILE, POS], "left")
            wanted = wanted | f.col(DELETED).isNotNull()
        elif not removed:
            return parts
        parts.append((at_a.where(wanted), "DELETE"))
        return parts

    def position_changes(
        self,
        relation: Relation,
        meta: TableMeta,
        after: int,
        up_to: int,
        retracts: tuple[str, ...] | None = None,
    ) -> Any:
        """The changes of ``relation`` after snapshot ``after`` up to ``up_to`` as a DataFrame
        with the columns of Iceberg's changelog view: per commit, read from the files it wrote
        (lakewide.spark.staged_scan) where it wrote no equality deletes, else by marking
        (always over Spark Connect, where files cannot be staged). ``retracts``: the columns
        the old images read by position or marking need (the others NULL); None: every
        column. Rows paired by lineage keep every column (their old and new images are
        compared)."""
        from lakewide.spark.connect import is_remote

        table = self._at(relation, up_to)
        columns = list(table.columns)
        types = types_of(table)
        wanted = None if retracts is None else {c.lower() for c in retracts}
        old = columns if wanted is None else [c for c in columns if c.lower() in wanted]
        frame = None
        remote = is_remote(self.spark)
        for ordinal, (a, b) in enumerate(data_commits(meta, after, up_to)):
            marking = remote or equality_deletes_added(meta, b)
            read = self._marked_parts if marking else self._positional_parts
            for part, kind in read(relation, meta, a, b, (columns, old)):
                rows = _changes_of(part, columns, kind, ordinal, b, types)
                frame = rows if frame is None else frame.unionByName(rows)
        if frame is None:  # nothing but compactions: no change
            frame = _changes_of(table.limit(0), columns, "INSERT", 0, up_to, types)
        return frame
