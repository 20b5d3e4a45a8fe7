"""Table metadata as lakewide needs it: snapshots, summaries, format versions.

Read without Spark where lakewide.state.metadata has a reader (a hadoop catalog on a local
warehouse), else through Spark's metadata tables or Iceberg's Java API.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from lakewide.project.branch_name import MAIN
from lakewide.project.nodes import Relation
from lakewide.spark.errors import unreadable
from lakewide.spark.session import Session
from lakewide.state.branches import on_branch
from lakewide.state.offsets import Snapshot, TableMeta
from lakewide.vocabulary.errors import ModelRunError


class MetadataReads(Session):
    """Reads of a table's Iceberg metadata (no data is read)."""

    def table_exists(self, relation: Relation) -> bool:
        """Whether the table exists; CorruptMetadataError when its metadata cannot be read."""
        known = self.exists_without_spark(relation)
        if known is not None:
            return known
        try:
            return bool(self.spark.catalog.tableExists(str(relation)))
        except Exception as err:  # noqa: BLE001 - py4j errors have many types
            raise unreadable(self.output, relation, err) from err

    def exists_without_spark(self, relation: Relation) -> bool | None:
        """Whether the table exists, read without Spark; None when only Spark can tell."""
        reader = self._reader(relation)
        return None if reader is None else reader.table_meta(relation) is not None

    def snapshot_summary(self, relation: Relation) -> dict[str, str]:
        """Summary of the table's current snapshot (empty when it has none)."""
        reader = self._reader(relation)
        if reader is not None:
            found = reader.table_meta(relation)
            current = (
                None
                if found is None or found.current is None
                else found.snapshots.get(found.current)
            )
            return {} if current is None else dict(current.summary)
        meta = relation.metadata_table("snapshots")
        query = (
            exp.select("summary").from_(meta).order_by(exp.column("committed_at").desc()).limit(1)
        )
        _, rows = self.rows(query)
        return dict(rows[0][0]) if rows else {}

    def table_meta(self, relation: Relation) -> TableMeta | None:
        """Snapshots and current snapshot of a table; None when it does not exist."""
        reader = self._reader(relation)
        if reader is not None:
            return reader.table_meta(relation)
        if not self.table_exists(relation):
            return None
        try:
            snapshots = self._snapshots(relation)
        except ModelRunError as err:
            raise unreadable(self.output, relation, err.__cause__ or err) from err
        refs = exp.select("name", "type", "snapshot_id").from_(relation.metadata_table("refs"))
        _, rows = self.rows(refs)
        branches = {r[0]: r[2] for r in rows if r[1] == "BRANCH"}
        tags = {r[0]: r[2] for r in rows if r[1] == "TAG"}
        version = None if self.remote else self.format_version(relation)
        meta = TableMeta(branches.get(MAIN), snapshots, version, tags=tags, branches=branches)
        return on_branch(meta, self.line(relation))

    def _snapshots(self, relation: Relation) -> dict[int, Snapshot]:
        reader = self._reader(relation)
        if reader is not None:
            meta = reader.table_meta(relation)
            return {} if meta is None else meta.snapshots
        query = exp.select(
            "snapshot_id", "parent_id", "operation", "summary", "committed_at"
        ).from_(relation.metadata_table("snapshots"))
        _, rows = self.rows(query)
        return {
            r[0]: Snapshot(
                r[0],
                r[1],
                r[2] or "",
                dict(r[3] or {}),
                int(r[4].timestamp() * 1000) if r[4] else 0,
            )
            for r in rows
        }

    def _iceberg_table(self, relation: Relation) -> Any:
        if self.remote:  # only tables of the profile's catalog have a reader (connect_profile)
            raise ModelRunError(
                f"over Spark Connect lakewide reads the metadata of tables in catalog "
                f"{self.output.catalog} (the profile's) only, without Spark: {relation} is in "
                "another catalog; read it through the profile's catalog, or run on a local Spark"
            )
        jvm = self.spark.sparkContext._jvm
        return jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            self.spark._jsparkSession, str(relation)
        )

    def last_commit_meta(
        self, relation: Relation, marker: str, keys: tuple[str, ...]
    ) -> TableMeta | None:
        """The current snapshot's ancestors back to the first whose summary holds ``marker``.

        Read without Spark where lakewide.state.metadata has a reader (then every snapshot, whole);
        else only the summary ``keys``, through Iceberg's Java API (no Spark job, a few
        milliseconds instead of a metadata-table query). None when the table does not exist;
        CorruptMetadataError when its metadata cannot be read.
        """
        reader = self._reader(relation)
        if reader is not None:
            return reader.table_meta(relation)
        if not self.table_exists(relation):
            return None
        try:
            table = self._iceberg_table(relation)
            snapshot = self._head(table, relation)
            current = None if snapshot is None else int(snapshot.snapshotId())
            found: dict[int, Snapshot] = {}
            while snapshot is not None:
                summary = snapshot.summary()
                values = {k: str(v) for k in (marker, *keys) if (v := summary.get(k)) is not None}
                parent = snapshot.parentId()
                snapshot_id = int(snapshot.snapshotId())
                found[snapshot_id] = Snapshot(
                    snapshot_id,
                    None if parent is None else int(parent),
                    str(snapshot.operation() or ""),
                    values,
                )
                if marker in values or parent is None:
                    break
                snapshot = table.snapshot(parent)
        except Exception as err:  # noqa: BLE001 - py4j errors have many types
            raise unreadable(self.output, relation, err) from err
        return TableMeta(current, found)

    def _head(self, table: Any, relation: Relation) -> Any:
        """The Java table's head snapshot on ``relation``'s line where it has it (see
        lakewide.state.branches.on_branch), else its current one."""
        branch = self.line(relation)
        found = None if branch is None else table.snapshot(branch)
        return table.currentSnapshot() if found is None else found

    def table_property(self, relation: Relation, name: str) -> str | None:
        """One table property (None when unset): from the metadata file where lakewide reads
        it without the JVM, else through Iceberg's Java API (no Spark job)."""
        reader = self._reader(relation)
        if reader is not None:
            meta = reader.table_meta(relation)
            if meta is not None and meta.properties is not None:
                return meta.properties.get(name)
        try:
            value = self._iceberg_table(relation).properties().get(name)
        except Exception as err:  # noqa: BLE001 - py4j errors have many types
            raise unreadable(self.output, relation, err) from err
        return None if value is None else str(value)

    def current_snapshot(self, relation: Relation) -> int | None:
        """The table's current snapshot as the catalog has it now (None: no table, or no
        snapshot): Iceberg's Java API refreshed from the catalog, no Spark job."""
        reader = self._reader(relation)
        if reader is not None:
            meta = reader.table_meta(relation)
            return None if meta is None else meta.current
        self.forget(relation)
        if not self.table_exists(relation):
            return None
        try:
            table = self._iceberg_table(relation)
            table.refresh()
            snapshot = self._head(table, relation)
        except Exception as err:  # noqa: BLE001 - py4j errors have many types
            raise unreadable(self.output, relation, err) from err
        return None if snapshot is None else int(snapshot.snapshotId())

    def format_version(self, relation: Relation) -> int:
        """The Iceberg format version of a table."""
        reader = self._reader(relation)
        meta = None if reader is None else reader.table_meta(relation)
        if meta is not None and meta.format_version is not None:
            return meta.format_version
        return int(self._iceberg_table(relation).operations().current().formatVersion())

    def sequence_number(self, relation: Relation, snapshot: int) -> int:
        """The data sequence number Iceberg assigned to ``snapshot``."""
        reader = self._reader(relation)
        meta = None if reader is None else reader.table_meta(relation)
        found = None if meta is None else meta.snapshots.get(snapshot)
        if found is not None and found.sequence_number is not None:
            return found.sequence_number
        return int(self._iceberg_table(relation).snapshot(snapshot).sequenceNumber())
