"""Iceberg table metadata read with pyiceberg, without a JVM.

Snapshot ids, parents, summaries, sequence numbers and the format version of a table: what
pins a run's upstreams, finds its consumed offsets, decides a no-op run before Spark starts and
answers ``lakewide lineage``. Every read loads the table's current metadata file afresh, so it
sees the newest commit. Catalogs without a reader here (rest, hive) are read through Spark
(the adapter).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from lakewide.project.nodes import Relation
from lakewide.state.metadata_json import plain_table_meta
from lakewide.state.offsets import Snapshot, TableColumn, TableMeta
from lakewide.vocabulary.errors import ModelRunError

if TYPE_CHECKING:
    from pyiceberg.table.metadata import TableMetadata

_VERSION_FILE = re.compile(r"^v(\d+)\.metadata\.json$")


class CorruptMetadataError(ModelRunError):
    """A table's Iceberg metadata file cannot be read (exit code 1: that model fails)."""


def corrupt_metadata(
    relation: Relation | str, file: Path | str | None, detail: str
) -> CorruptMetadataError:
    """The error for unreadable table metadata, naming the table, the file and the way out."""
    if file is None:
        return CorruptMetadataError(
            f"table {relation}: its Iceberg metadata cannot be read "
            f"({detail}). Models that do not read this table still run."
        )
    return CorruptMetadataError(
        f"table {relation}: its current Iceberg metadata file {file} cannot be read ({detail}). "
        "Restore that file from a backup; or, on a hadoop catalog, move it aside and write the "
        "previous version number into version-hint.text next to it: the table falls back to "
        "that version and lakewide resumes from its offsets. Models that do not read this "
        "table still run."
    )


def table_dir(warehouse: Path, relation: Relation) -> Path:
    """The folder of a table in a hadoop warehouse (one folder per namespace level)."""
    return warehouse.joinpath(*relation.namespace.split("."), relation.name)


def current_metadata_file(warehouse: Path, relation: Relation) -> Path | None:
    """The table's current ``vN.metadata.json`` (version hint, else the highest version)."""
    folder = table_dir(warehouse, relation) / "metadata"
    hint = folder / "version-hint.text"
    if hint.is_file():
        try:
            candidate = folder / f"v{int(hint.read_text().strip())}.metadata.json"
        except (ValueError, OSError):
            candidate = None
        if candidate is not None and candidate.is_file():
            return candidate
    versions = [
        (int(m.group(1)), p)
        for p in folder.glob("v*.metadata.json")
        if (m := _VERSION_FILE.match(p.name))
    ]
    return max(versions)[1] if versions else None


class MetadataReader(Protocol):
    """Reads a catalog's table metadata without Spark."""

    def table_meta(self, relation: Relation) -> TableMeta | None:
        """The table's snapshots and current snapshot; None when it does not exist.

        Raises CorruptMetadataError (naming the table and file) when it cannot be read.
        """


class HadoopMetadataReader:
    """A hadoop-catalog warehouse in a local folder: each table's current metadata file
    (version hint, else the highest version) parsed by pyiceberg's table metadata model, or
    by the JSON parser where it has the plain shape (``lakewide.state.metadata_json``).

    The file is read here rather than through ``StaticTable.from_metadata``: that parses it
    the same way but first loads a pyiceberg FileIO (pyarrow, or fsspec with ``requests`` and
    the REST catalog's auth), a quarter of pyiceberg's import time, which a no-op run would pay
    to open one local file.
    """

    def __init__(self, warehouse: Path) -> None:
        self.warehouse = warehouse

    def table_meta(self, relation: Relation) -> TableMeta | None:
        """See MetadataReader.table_meta."""
        path = current_metadata_file(self.warehouse, relation)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError as err:
            raise corrupt_metadata(relation, path, parse_error(err)) from None
        plain = plain_table_meta(data)  # no pyiceberg import for the plain shape
        if plain is not None:
            return plain
        from pyiceberg.table.metadata import TableMetadataUtil

        try:
            metadata = TableMetadataUtil.parse_raw(data.decode("utf-8"))
        except Exception as err:  # noqa: BLE001 - decoding and pyiceberg's validation
            raise corrupt_metadata(relation, path, parse_error(err)) from None
        return table_meta_of(metadata)


def table_meta_of(metadata: TableMetadata) -> TableMeta:
    """lakewide's view of pyiceberg table metadata (with the current schema's columns)."""
    snapshots = {}
    for s in metadata.snapshots:
        summary = (
            {}
            if s.summary is None
            else {"operation": s.summary.operation.value, **s.summary.additional_properties}
        )
        snapshots[s.snapshot_id] = Snapshot(
            s.snapshot_id,
            s.parent_snapshot_id,
            summary.get("operation", ""),
            summary,
            s.timestamp_ms,
            s.sequence_number,
            s.schema_id,
        )
    current = metadata.current_snapshot_id
    columns = tuple(TableColumn(f.name, str(f.field_type), f.doc) for f in metadata.schema().fields)
    tags = {
        name: ref.snapshot_id
        for name, ref in metadata.refs.items()
        if ref.snapshot_ref_type.value == "tag"
    }
    branches = {
        name: ref.snapshot_id
        for name, ref in metadata.refs.items()
        if ref.snapshot_ref_type.value == "branch"
    }
    return TableMeta(
        None if current in (None, -1) else current,
        snapshots,
        int(metadata.format_version),
        columns,
        tags,
        dict(metadata.properties),
        branches,
        metadata.current_schema_id,
    )


def read_table_meta(warehouse: Path, relation: Relation) -> TableMeta | None:
    """Current snapshot and snapshots of a table in a local hadoop warehouse, or None when the
    table does not exist. Raises CorruptMetadataError (naming the table and file) when the file
    is not Iceberg table metadata.
    """
    return HadoopMetadataReader(warehouse).table_meta(relation)


def parse_error(err: Exception) -> str:
    """One line saying why a metadata file was refused: pydantic's first complaint, where it
    is (``snapshots.0.snapshot-id: Field required``), not its multi-line report."""
    from pydantic import ValidationError

    cause = err.__cause__ if isinstance(err.__cause__, ValidationError) else err
    if isinstance(cause, ValidationError) and cause.errors():
        first = cause.errors()[0]
        loc = first.get("loc", ())
        if loc and str(loc[0]).isdigit():
            loc = loc[1:]  # the format version pydantic chose the metadata class by
        where = ".".join(str(part) for part in loc)
        return f"{where}: {first['msg']}" if where else first["msg"]
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:300]}" if text else type(err).__name__
