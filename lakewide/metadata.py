"""Iceberg table metadata read straight from a hadoop-catalog warehouse (no JVM).

Used to decide, before Spark starts, whether any model has new upstream data, and by
``lakewide lineage``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from lakewide.errors import ModelRunError
from lakewide.nodes import Relation
from lakewide.offsets import Snapshot, TableMeta

_VERSION_FILE = re.compile(r"^v(\d+)\.metadata\.json$")


class CorruptMetadataError(ModelRunError):
    """A table's Iceberg metadata file cannot be read (exit code 1: that model fails)."""


def corrupt_metadata(relation: Relation | str, file: Path | str | None,
                     detail: str) -> CorruptMetadataError:
    """The error for unreadable table metadata, naming the table, the file and the way out."""
    if file is None:
        return CorruptMetadataError(f"table {relation}: its Iceberg metadata cannot be read "
                                    f"({detail}). Models that do not read this table still run.")
    return CorruptMetadataError(
        f"table {relation}: its current Iceberg metadata file {file} cannot be read ({detail}). "
        "Restore that file from a backup; or, on a hadoop catalog, move it aside and write the "
        "previous version number into version-hint.text next to it: the table falls back to "
        "that version and lakewide resumes from its offsets. Models that do not read this "
        "table still run.")


def warehouse_path(warehouse: str | None) -> Path | None:
    """A hadoop warehouse as a local folder: plain paths and ``file:`` URIs; None otherwise.

    ``file:///data/wh``, ``file:/data/wh`` and ``file://localhost/data/wh`` are the folder
    ``/data/wh`` (percent-escapes decoded); ``s3://...``, ``hdfs://...`` are not local.
    """
    if not warehouse:
        return None
    if "://" not in warehouse and not warehouse.startswith("file:"):
        return Path(warehouse)
    parts = urlsplit(warehouse)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parts.path))


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
    versions = [(int(m.group(1)), p) for p in folder.glob("v*.metadata.json")
                if (m := _VERSION_FILE.match(p.name))]
    return max(versions)[1] if versions else None


def read_table_meta(warehouse: Path, relation: Relation) -> TableMeta | None:
    """Current snapshot and snapshots of a table, or None when the table does not exist.

    Raises CorruptMetadataError (naming the table and file) when the file is not Iceberg JSON.
    """
    path = current_metadata_file(warehouse, relation)
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        current = data.get("current-snapshot-id")
        snapshots = {
            s["snapshot-id"]: Snapshot(s["snapshot-id"], s.get("parent-snapshot-id"),
                                       s.get("summary", {}).get("operation", ""),
                                       dict(s.get("summary", {})), s.get("timestamp-ms", 0))
            for s in data.get("snapshots", [])}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise corrupt_metadata(relation, path, f"{type(err).__name__}: {err}") from None
    return TableMeta(None if current in (None, -1) else current, snapshots)
