"""Real Iceberg table metadata files written with pyiceberg (no JVM), for reader tests."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadata, new_table_metadata
from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRefType
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import AddSnapshotUpdate, SetSnapshotRefUpdate, update_table_metadata
from pyiceberg.types import LongType, NestedField

from lakewide.project.nodes import Relation
from lakewide.state.metadata import table_dir


def empty_table(location: Path, format_version: int = 2) -> TableMetadata:
    """Metadata of a table with one column ``k`` and no snapshot."""
    schema = Schema(NestedField(1, "k", LongType(), required=False))
    return new_table_metadata(
        schema,
        UNPARTITIONED_PARTITION_SPEC,
        UNSORTED_SORT_ORDER,
        str(location),
        {"format-version": str(format_version)},
    )


def commit(
    metadata: TableMetadata, snapshot_id: int, summary: dict[str, str], operation: str = "append"
) -> TableMetadata:
    """``metadata`` with one more snapshot on main (its parent: the current one)."""
    snapshot = Snapshot(
        **{
            "snapshot-id": snapshot_id,
            "parent-snapshot-id": metadata.current_snapshot_id,
            "sequence-number": metadata.next_sequence_number(),
            "timestamp-ms": 1000 + snapshot_id,
            "manifest-list": f"/nowhere/snap-{snapshot_id}.avro",
            "summary": Summary(Operation(operation), **summary),
            **(
                {"first-row-id": metadata.next_row_id or 0, "added-rows": 0}
                if metadata.format_version >= 3
                else {}
            ),
        }
    )
    return update_table_metadata(
        metadata,
        (
            AddSnapshotUpdate(snapshot=snapshot),
            SetSnapshotRefUpdate(
                ref_name=MAIN_BRANCH, type=SnapshotRefType.BRANCH, snapshot_id=snapshot_id
            ),
        ),
    )


def write(
    warehouse: Path, relation: Relation, metadata: TableMetadata, version: int, hint: bool = True
) -> Path:
    """``metadata`` as the table's ``v<version>.metadata.json`` (and version hint)."""
    folder = table_dir(warehouse, relation) / "metadata"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"v{version}.metadata.json"
    # pydantic's own serializer: pyiceberg 0.12 refuses to write format v3 metadata
    path.write_text(BaseModel.model_dump_json(metadata, by_alias=True, exclude_none=True))
    if hint:
        (folder / "version-hint.text").write_text(str(version))
    return path
