"""Reads of chosen data files of an Iceberg table: a staged scan.

A ``WHERE _file = ...`` predicate is not pushed into Iceberg's Spark scan (every data file is
still read), so to read only the files one commit added lakewide plans the table's scan at that
snapshot through Iceberg's Java API, keeps the tasks of the chosen files and stages them with
``ScanTaskSetManager`` (the mechanism of Iceberg's own rewrite procedures); Spark then reads
exactly those tasks, each with the delete files that apply to it at that snapshot
(``spark.read.format("iceberg").option("scan-task-set-id", ...)``).
"""

from __future__ import annotations

import uuid
from typing import Any

from lakewide.project.nodes import Relation


class StagedScans:
    """Mixin of lakewide.spark.adapter.SparkAdapter: data files of a snapshot, read alone."""

    spark: Any
    _staged: list[tuple[Any, str]]

    def _iceberg_table(self, relation: Relation) -> Any: ...  # table_metadata.TableMetadata

    def _file_tasks(self, relation: Relation, snapshot: int) -> tuple[Any, dict[str, Any]]:
        """The Java table and its scan tasks at ``snapshot`` by data file location (one task
        per file: ``planFiles`` does not split them)."""
        table = self._iceberg_table(relation)
        tasks: dict[str, Any] = {}
        found = table.newScan().useSnapshot(snapshot).planFiles()
        try:
            iterator = found.iterator()
            while iterator.hasNext():
                task = iterator.next()
                tasks[str(task.file().location())] = task
        finally:
            found.close()
        return table, tasks

    def read_files(
        self, relation: Relation, planned: tuple[Any, dict[str, Any]], files: set[str]
    ) -> Any:
        """The rows of ``files`` that are live at the snapshot of ``planned`` (its table and
        tasks, ``_file_tasks``), in the table's current schema, reading no other file."""
        table, tasks = planned
        chosen = self.spark.sparkContext._jvm.java.util.ArrayList()
        for location in sorted(files):
            chosen.add(tasks[location])
        set_id = f"lakewide-{uuid.uuid4()}"
        manager = self.spark.sparkContext._jvm.org.apache.iceberg.spark.ScanTaskSetManager
        manager.get().stageTasks(table, set_id, chosen)
        self._staged = [*getattr(self, "_staged", []), (table, set_id)]
        return (
            self.spark.read.format("iceberg").option("scan-task-set-id", set_id).load(str(relation))
        )

    def unstage(self) -> None:
        """Forget the task sets staged so far (once their reads are materialized)."""
        manager = self.spark.sparkContext._jvm.org.apache.iceberg.spark.ScanTaskSetManager
        for table, set_id in getattr(self, "_staged", []):
            manager.get().removeTasks(table, set_id)
        self._staged = []
