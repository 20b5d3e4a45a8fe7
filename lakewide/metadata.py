"""Iceberg table metadata read straight from a hadoop-catalog warehouse (no JVM).

Used to decide, before Spark starts, whether any model has new upstream data, and by
``lakewide lineage``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from lakewide.nodes import Relation
from lakewide.offsets import Snapshot, TableMeta

_VERSION_FILE = re.compile(r"^v(\d+)\.metadata\.json$")


def table_dir(warehouse: Path, relation: Relation) -> Path:
    """The folder of a table in a hadoop warehouse (one folder per namespace level)."""
    return warehouse.joinpath(*relation.namespace.split("."), relation.name)


def _metadata_file(folder: Path) -> Path | None:
    hint = folder / "version-hint.text"
    if hint.is_file():
        candidate = folder / f"v{hint.read_text().strip()}.metadata.json"
        if candidate.is_file():
            return candidate
    versions = [(int(m.group(1)), p) for p in folder.glob("v*.metadata.json")
                if (m := _VERSION_FILE.match(p.name))]
    return max(versions)[1] if versions else None


def read_table_meta(warehouse: Path, relation: Relation) -> TableMeta | None:
    """Current snapshot and snapshots of a table, or None when the table does not exist."""
    path = _metadata_file(table_dir(warehouse, relation) / "metadata")
    if path is None:
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    current = data.get("current-snapshot-id")
    snapshots = {
        s["snapshot-id"]: Snapshot(s["snapshot-id"], s.get("parent-snapshot-id"),
                                   s.get("summary", {}).get("operation", ""),
                                   dict(s.get("summary", {})), s.get("timestamp-ms", 0))
        for s in data.get("snapshots", [])}
    return TableMeta(None if current in (None, -1) else current, snapshots)
