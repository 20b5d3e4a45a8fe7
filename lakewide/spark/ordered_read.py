"""Reads in commit order: a table's rows numbered as their commits arrived (lakewide.state.arrival).

Iceberg plans the data files of the read (the whole table at a snapshot, or the files appended
after one), lakewide orders them oldest commit first (their data sequence numbers) and hands
them back to Iceberg's Spark source as a staged task set (``ScanTaskSetManager``, what
Iceberg's own rewrite procedures use) read with ``lookback`` 1, so that the scan's partitions
follow that order: one scan, each file read once, no shuffle. The files' delete files are
applied as in any read.

Iceberg 1.10 reads a staged task set through the ``scan-task-set-id`` read option; its Spark 4
runtimes (Iceberg >= 1.11) ignore that option, so the read would silently be the whole table:
there the table is registered under the task set's id in ``SparkTableCache`` and the id is
loaded as the path, as Iceberg's rewrite runners do (lakewide.spark.time_travel).
"""

from __future__ import annotations

from typing import Any

from lakewide.project.nodes import Relation
from lakewide.spark.file_nulls import FileNulls
from lakewide.spark.staged_scan import load_staged
from lakewide.spark.table_metadata import MetadataReads
from lakewide.spark.time_travel import at_version
from lakewide.state.arrival import FilePart, SnapshotRead, commit_order


class OrderedReads(MetadataReads):
    """Reads of a table whose row order is commit order."""

    def ordered_read(
        self, relation: Relation, snapshot: int, after: int | None, stats: tuple[str, ...] = ()
    ) -> tuple[Any, FileNulls] | None:
        """The rows of ``relation`` at ``snapshot`` (``after`` None) or appended after
        ``after`` up to ``snapshot``, as a DataFrame in commit order, with the files read
        (their NULL counts of the ``stats`` columns: lakewide.spark.file_nulls); None for a
        table of format version 1 (no sequence numbers), or whose schema changed since ``snapshot``
        (a staged scan reads the current schema, a snapshot read its own): the caller then
        reads by snapshot. None too over Spark Connect, where Iceberg's scan planning (the
        Java API) is out of reach."""
        if self.remote:
            return None
        table = self._iceberg_table(relation)
        if int(table.operations().current().formatVersion()) < 2:
            return None
        if table.snapshot(snapshot) is None:  # committed since Spark loaded the table
            table.refresh()
        schema = table.snapshot(snapshot).schemaId()
        if schema is None or int(schema) != int(table.schema().schemaId()):
            return None
        scan = (
            table.newScan().useSnapshot(snapshot)
            if after is None
            else table.newIncrementalAppendScan().fromSnapshotExclusive(after).toSnapshot(snapshot)
        )
        jvm = self.spark._jvm
        fields = {c.lower(): table.schema().caseInsensitiveFindField(c) for c in stats}
        ids = {c: int(f.fieldId()) for c, f in fields.items() if f is not None}
        if ids:
            kept = jvm.java.util.ArrayList()
            for found in fields.values():
                if found is not None:
                    kept.add(found.name())
            scan = scan.includeColumnStats(kept)
        planned = jvm.org.apache.iceberg.relocated.com.google.common.collect.Lists.newArrayList(
            scan.planFiles()
        )
        tasks = list(planned)
        files = FileNulls(ids, tuple(task.file() for task in tasks))
        if not tasks:  # no data file: no rows (Iceberg stages no empty task set)
            return self._read(relation, SnapshotRead(snapshot, after)), files
        parts = []
        for task in tasks:
            file = task.file()
            parts.append(
                FilePart(int(file.dataSequenceNumber()), str(file.location()), task.start())
            )
        ordered = jvm.java.util.ArrayList()
        for i in commit_order(parts):
            ordered.add(tasks[i])
        # one id per read: staging the same read again replaces an equal list
        task_set = f"lakewide-arrival-{snapshot}-{after}"
        # a planning lookback of 1 keeps the staged order (bins are filled one after another)
        reader = self.spark.read.format("iceberg").option("lookback", "1")
        with self.active():
            return load_staged(self.spark, relation, table, task_set, ordered, reader), files

    def _read(self, relation: Relation, read: SnapshotRead) -> Any:
        reader = self.spark.read.format("iceberg")
        if read.after is None:
            reader = at_version(self.spark, reader, str(read.snapshot))
        else:
            reader = reader.option("start-snapshot-id", str(read.after)).option(
                "end-snapshot-id", str(read.snapshot)
            )
        with self.active():
            return reader.load(str(relation))
