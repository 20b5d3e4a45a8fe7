"""Iceberg metadata read with pyiceberg, without a JVM (lakewide.state.metadata): what is read, which
file is current, that every read sees the newest commit, and clear errors for bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output
from lakewide.spark.adapter import SparkAdapter
from lakewide.state.metadata import (
    CorruptMetadataError,
    HadoopMetadataReader,
    read_table_meta,
    table_dir,
)
from lakewide.state.offsets import OFFSETS, Snapshot, TableColumn
from lakewide.state.readers import metadata_reader
from tests.support import iceberg_files

T = Relation("lw", "ns", "t")


def history(warehouse: Path, format_version: int = 2) -> Path:
    """Table ``T``: an append, a lakewide commit, a maintenance commit; v1..v3 files."""
    metadata = iceberg_files.empty_table(table_dir(warehouse, T), format_version)
    metadata = iceberg_files.commit(metadata, 11, {"added-records": "2"})
    iceberg_files.write(warehouse, T, metadata, 1)
    metadata = iceberg_files.commit(
        metadata, 12, {OFFSETS: '{"0:a": 5}', "total-records": "3"}, "overwrite"
    )
    iceberg_files.write(warehouse, T, metadata, 2)
    metadata = iceberg_files.commit(metadata, 13, {}, "replace")
    return iceberg_files.write(warehouse, T, metadata, 3)


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_reads_snapshots_ancestry_summaries_and_sequence_numbers(
    tmp_path: Path, format_version: int
) -> None:
    history(tmp_path, format_version)
    meta = read_table_meta(tmp_path, T)
    assert meta is not None
    assert meta.current == 13 and meta.format_version == format_version
    assert [s.id for s in meta.ancestors()] == [13, 12, 11]
    lakewide = meta.snapshots[12]
    v1 = format_version == 1  # format v1 has no sequence numbers (pyiceberg reads them as 0)
    assert lakewide == Snapshot(
        12,
        11,
        "overwrite",
        {"operation": "overwrite", OFFSETS: '{"0:a": 5}', "total-records": "3"},
        1012,
        0 if v1 else 2,
    )
    assert meta.snapshots[11].parent is None and meta.snapshots[13].operation == "replace"
    assert [meta.snapshots[i].sequence_number for i in (11, 12, 13)] == (
        [0, 0, 0] if v1 else [1, 2, 3]
    )


def test_a_table_without_snapshots_and_a_missing_table(tmp_path: Path) -> None:
    iceberg_files.write(tmp_path, T, iceberg_files.empty_table(table_dir(tmp_path, T)), 1)
    meta = read_table_meta(tmp_path, T)
    assert meta is not None and meta.current is None and meta.snapshots == {}
    assert read_table_meta(tmp_path, Relation("lw", "ns", "missing")) is None


def test_reads_the_current_schema_columns_with_their_iceberg_types(tmp_path: Path) -> None:
    history(tmp_path)
    meta = read_table_meta(tmp_path, T)
    assert meta is not None and meta.columns == (TableColumn("k", "long"),)


def test_every_read_sees_the_newest_commit(tmp_path: Path) -> None:
    reader = HadoopMetadataReader(tmp_path)
    metadata = iceberg_files.commit(iceberg_files.empty_table(table_dir(tmp_path, T)), 1, {})
    iceberg_files.write(tmp_path, T, metadata, 1)
    first = reader.table_meta(T)
    assert first is not None and first.current == 1
    iceberg_files.write(tmp_path, T, iceberg_files.commit(metadata, 2, {}), 2)
    second = reader.table_meta(T)
    assert second is not None and second.current == 2 and second.snapshots[2].parent == 1


@pytest.mark.parametrize("hint", [None, "9", "garbage"], ids=["no-hint", "missing-file", "garbage"])
def test_without_a_usable_version_hint_the_highest_version_is_current(
    tmp_path: Path, hint: str | None
) -> None:
    history(tmp_path)
    folder = table_dir(tmp_path, T) / "metadata"
    if hint is None:
        (folder / "version-hint.text").unlink()
    else:
        (folder / "version-hint.text").write_text(hint)
    meta = read_table_meta(tmp_path, T)
    assert meta is not None and meta.current == 13


def test_the_version_hint_wins_over_newer_files(tmp_path: Path) -> None:
    history(tmp_path)
    (table_dir(tmp_path, T) / "metadata" / "version-hint.text").write_text("2")  # a fallback
    meta = read_table_meta(tmp_path, T)
    assert meta is not None and meta.current == 12 and 13 not in meta.snapshots


@pytest.mark.parametrize(
    ("edit", "detail"),
    [
        (
            lambda text: text.replace('"snapshot-id":12,', ""),
            "(snapshots.1.snapshot-id: Field required)",
        ),
        (lambda text: text.replace('"format-version":2', '"format-version":7'), "format"),
        (lambda text: text[: len(text) // 2], "Invalid JSON"),
    ],
    ids=["snapshot-without-id", "unknown-format-version", "truncated"],
)
def test_a_file_pyiceberg_refuses_is_one_clear_line(tmp_path: Path, edit, detail: str) -> None:
    path = history(tmp_path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(CorruptMetadataError) as caught:
        read_table_meta(tmp_path, T)
    message = str(caught.value)
    assert message.startswith(f"table lw.ns.t: its current Iceberg metadata file {path} cannot")
    assert detail in message and "version-hint.text" in message
    assert "\n" not in message and "pydantic" not in message  # pydantic's report is not shown


@pytest.mark.parametrize(
    ("output", "reads"),
    [
        (Output(catalog_type="hadoop", warehouse="/data/wh"), True),
        (Output(catalog_type="hadoop", warehouse="file:///data/wh"), True),
        (Output(catalog_type="hadoop", warehouse="s3://bucket/wh"), False),
        (Output(catalog_type="jdbc", uri="jdbc:postgresql://db/x", warehouse="/data/wh"), True),
        (Output(catalog_type="rest", uri="http://x", warehouse="/data/wh"), True),
        (Output(catalog_type="hive", uri="thrift://x:9083", warehouse="/data/wh"), False),
    ],
)
def test_which_catalogs_are_read_without_spark(output: Output, reads: bool) -> None:
    from lakewide.state.jdbc_metadata import JdbcMetadataReader
    from lakewide.state.rest_metadata import RestMetadataReader

    reader = metadata_reader(output)
    assert (reader is not None) == reads
    if reader is not None:
        if output.catalog_type == "jdbc":
            assert isinstance(reader, JdbcMetadataReader) and reader.output is output
        elif output.catalog_type == "rest":
            assert isinstance(reader, RestMetadataReader) and reader.output is output
        else:
            assert isinstance(reader, HadoopMetadataReader)
            assert reader.warehouse == Path("/data/wh")


def test_the_adapter_reads_metadata_without_starting_spark(tmp_path: Path) -> None:
    history(tmp_path, 3)
    adapter = SparkAdapter(Output(catalog="lw", catalog_type="hadoop", warehouse=str(tmp_path)))
    assert adapter.table_exists(T) and not adapter.table_exists(Relation("lw", "ns", "nope"))
    meta = adapter.table_meta(T)
    assert meta is not None and meta.current == 13
    last = adapter.last_commit_meta(T, OFFSETS, ())
    assert last is not None and [s.id for s in last.ancestors()] == [13, 12, 11]
    assert adapter.format_version(T) == 3 and adapter.sequence_number(T, 12) == 2
    assert adapter.snapshot_summary(T) == {"operation": "replace"}
    assert not adapter.started  # no JVM
