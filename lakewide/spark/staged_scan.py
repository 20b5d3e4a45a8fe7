"""Reads of chosen data files of an Iceberg table: a staged scan.

A ``WHERE _file = ...`` predicate is not pushed into Iceberg's Spark scan (every data file is
still read), so to read only the files one commit added lakewide plans the table's scan at that
snapshot through Iceberg's Java API, keeps the tasks of the chosen files and stages them with
``ScanTaskSetManager`` (the mechanism of Iceberg's own rewrite procedures); Spark then reads
exactly those tasks, each with the delete files that apply to it at that snapshot
(``load_staged``: the ``scan-task-set-id`` read option on Iceberg 1.10, the task set's id
registered in ``SparkTableCache`` and loaded on the Spark 4 runtimes, lakewide.spark.time_travel).
"""

from __future__ import annotations

import uuid
from typing import Any

from lakewide.project.nodes import Relation
from lakewide.spark.time_travel import reads_staged_by_id, table_cache

#: Iceberg 1.10's Spark read option naming a staged task set
TASK_SET = "scan-task-set-id"


def load_staged(
    spark: Any, relation: Relation, table: Any, set_id: str, tasks: Any, reader: Any
) -> Any:
    """Stage ``tasks`` (a Java list of scan tasks of ``table``) as ``set_id`` and load them with
    ``reader`` (a DataFrameReader of format iceberg), the way the running runtime reads a
    staged task set (Iceberg >= 1.11 ignores ``scan-task-set-id``: it would read the whole
    table)."""
    spark._jvm.org.apache.iceberg.spark.ScanTaskSetManager.get().stageTasks(table, set_id, tasks)
    if reads_staged_by_id(spark):
        table_cache(spark).add(set_id, table)
        return reader.load(set_id)
    return reader.option(TASK_SET, set_id).load(str(relation))


class StagedScans:
    """Mixin of lakewide.spark.adapter.SparkAdapter: data files of a snapshot, read alone."""

    spark: Any
    _staged: list[tuple[Any, str]]
    _planned: dict[tuple[str, int], tuple[Any, dict[str, Any]]]

    def _iceberg_table(self, relation: Relation) -> Any: ...  # table_metadata.TableMetadata

    def _file_tasks(self, relation: Relation, snapshot: int) -> tuple[Any, dict[str, Any]]:
        """The Java table and its scan tasks at ``snapshot`` by data file location (one task
        per file: ``planFiles`` does not split them). A snapshot's files never change, so each
        is planned once until ``unstage`` (a commit's snapshot is the next commit's parent)."""
        planned: dict[tuple[str, int], tuple[Any, dict[str, Any]]] = getattr(self, "_planned", {})
        key = (str(relation), snapshot)
        if key not in planned:
            table = self._iceberg_table(relation)
            lists = self.spark._jvm.org.apache.iceberg.relocated.com.google.common.collect.Lists
            found = table.newScan().useSnapshot(snapshot).planFiles()
            try:
                tasks = {str(t.file().location()): t for t in lists.newArrayList(found)}
            finally:
                found.close()
            planned[key] = (table, tasks)
            self._planned = planned
        return planned[key]

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
        self._staged = [*getattr(self, "_staged", []), (table, set_id)]
        reader = self.spark.read.format("iceberg")
        return load_staged(self.spark, relation, table, set_id, chosen, reader)

    def unstage(self) -> None:
        """Forget the task sets staged so far (once their reads are materialized)."""
        if not getattr(self, "_staged", []):  # nothing staged (always so over Spark Connect)
            self._planned = {}
            return
        manager = self.spark._jvm.org.apache.iceberg.spark.ScanTaskSetManager
        by_id = reads_staged_by_id(self.spark)
        for table, set_id in getattr(self, "_staged", []):
            manager.get().removeTasks(table, set_id)
            if by_id:
                table_cache(self.spark).remove(set_id)
        self._staged = []
        self._planned = {}
