"""The JSON reader of plain metadata files gives what pyiceberg's model gives, and leaves every
other file to pyiceberg (lakewide.state.metadata_json)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.table.metadata import TableMetadataUtil
from pyiceberg.table.refs import SnapshotRefType
from pyiceberg.table.update import SetPropertiesUpdate, SetSnapshotRefUpdate, update_table_metadata

from lakewide.project.nodes import Relation
from lakewide.state.metadata import read_table_meta, table_meta_of
from lakewide.state.metadata_json import plain_table_meta
from tests.support import iceberg_files

T = Relation("lw", "ns", "t")


def table(tmp_path: Path, format_version: int = 2) -> Path:
    """A table with two snapshots, a tag, a branch, properties and a column comment."""
    metadata = iceberg_files.empty_table(tmp_path / "t", format_version)
    metadata = iceberg_files.commit(metadata, 11, {"lakewide.offsets": '{"0:lw.src.a": 3}'})
    metadata = iceberg_files.commit(metadata, 12, {}, operation="replace")
    metadata = update_table_metadata(
        metadata,
        (
            SetSnapshotRefUpdate(ref_name="v1", type=SnapshotRefType.TAG, snapshot_id=11),
            SetSnapshotRefUpdate(ref_name="dev", type=SnapshotRefType.BRANCH, snapshot_id=11),
            SetPropertiesUpdate(updates={"write.format.default": "parquet"}),
        ),
    )
    return iceberg_files.write(tmp_path, T, metadata, 3)


def by_pyiceberg(path: Path) -> Any:
    return table_meta_of(TableMetadataUtil.parse_raw(path.read_text()))


@pytest.mark.parametrize("format_version", [2, 3])
def test_a_plain_file_reads_as_pyiceberg_reads_it(tmp_path: Path, format_version: int) -> None:
    path = table(tmp_path, format_version)
    plain = plain_table_meta(path.read_bytes())
    assert plain is not None and plain == by_pyiceberg(path)
    assert plain.tags == {"v1": 11} and plain.branches == {"main": 12, "dev": 11}
    assert read_table_meta(tmp_path, T) == plain


def test_without_refs_the_current_snapshot_is_main_as_pyiceberg_says(tmp_path: Path) -> None:
    path = table(tmp_path)
    doc = json.loads(path.read_text())
    del doc["refs"]
    path.write_text(json.dumps(doc))
    plain = plain_table_meta(path.read_bytes())
    assert plain is not None and plain == by_pyiceberg(path)
    assert plain.branches == {"main": 12} and plain.tags == {}


def _edit(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc.__setitem__(key, value)


def _column_type(kind: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["schemas"][0]["fields"][0].__setitem__("type", kind)


def _snapshot(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["snapshots"][0].__setitem__(key, value)


@pytest.mark.filterwarnings("ignore:Encountered invalid snapshot summary")  # pyiceberg's
@pytest.mark.parametrize(
    "edit",
    [
        _column_type("decimal(10,2)"),  # pyiceberg prints it "decimal(10, 2)"
        _column_type({"type": "list", "element-id": 2, "element": "long", "element-required": 0}),
        _edit("properties", {"flag": True}),  # pyiceberg makes it "true"
        _edit("current-schema-id", 7),
        _edit("format-version", 1),
        _edit("table-uuid", "not-a-uuid"),
        _snapshot("summary", {"lakewide.offsets": "{}"}),  # no operation: pyiceberg says one
        _snapshot("snapshot-id", "11"),
        lambda doc: doc.pop("last-column-id"),
    ],
    ids=[
        "decimal",
        "nested",
        "bool-property",
        "no-such-schema",
        "format-1",
        "bad-uuid",
        "no-operation",
        "string-id",
        "no-last-column-id",
    ],
)
def test_anything_else_is_read_by_pyiceberg(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None]
) -> None:
    path = table(tmp_path)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    assert plain_table_meta(path.read_bytes()) is None
    try:
        expected = by_pyiceberg(path)
    except Exception:  # noqa: BLE001 - pyiceberg refuses it: so does the reader
        with pytest.raises(Exception, match="cannot be read"):
            read_table_meta(tmp_path, T)
        return
    assert read_table_meta(tmp_path, T) == expected
