"""A table's metadata file read with the standard JSON parser, when it has the plain shape that
lakewide's tables and their sources have (format 2 or 3, columns of primitive types).

Importing pyiceberg's table metadata model costs about 0.2 s of CPU, the largest part of a
``lakewide run`` with nothing new, which reads one metadata file per table. Anything outside
the plain shape (format 1, a nested or parameterized column type, a field missing, mistyped or
pointing nowhere) gives None, and pyiceberg parses the file: the same ``TableMeta``, or the
error it names. ``tests/state/test_metadata_json.py`` holds both readers to the same result.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from lakewide.state.offsets import Snapshot, TableColumn, TableMeta

# Iceberg's primitive types whose name is their whole text (pyiceberg prints them so)
_PRIMITIVES = frozenset(
    {"boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz"}
    | {"timestamp_ns", "timestamptz_ns", "string", "uuid", "binary"}
)
_OPERATIONS = frozenset({"append", "replace", "overwrite", "delete"})
# what pyiceberg requires of format 2 and 3 metadata besides what is read below
_NUMBERS = ("last-updated-ms", "last-column-id", "last-partition-id", "last-sequence-number")


class _NotPlain(Exception):
    """The document is outside the plain shape: pyiceberg reads it."""


def plain_table_meta(data: bytes) -> TableMeta | None:
    """The table's metadata from the file's bytes, or None where pyiceberg must read them."""
    try:
        return _table_meta(json.loads(data))
    except (ValueError, TypeError, KeyError, AttributeError, _NotPlain):
        return None  # JSON and UTF-8 errors are ValueErrors


def _int(value: Any) -> int:
    if type(value) is not int:  # not a bool either
        raise _NotPlain
    return value


def _text(mapping: Any) -> dict[str, str]:
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise _NotPlain
    return mapping


def _ids(items: Any, key: str) -> set[int]:
    if not isinstance(items, list):
        raise _NotPlain
    return {_int(item[key]) for item in items}


def _columns(schema: dict[str, Any]) -> tuple[TableColumn, ...]:
    if schema.get("type") != "struct":
        raise _NotPlain
    columns = []
    for field in schema["fields"]:
        _int(field["id"])
        name, kind, doc = field["name"], field["type"], field.get("doc")
        plain = isinstance(name, str) and isinstance(field["required"], bool)
        if not plain or kind not in _PRIMITIVES or not isinstance(doc, (str, type(None))):
            raise _NotPlain
        columns.append(TableColumn(name, kind, doc))
    return tuple(columns)


def _snapshot(item: dict[str, Any]) -> Snapshot:
    summary = _text(item["summary"])
    parent, schema_id = item.get("parent-snapshot-id"), item.get("schema-id")
    if summary.get("operation") not in _OPERATIONS or not isinstance(item["manifest-list"], str):
        raise _NotPlain
    return Snapshot(
        _int(item["snapshot-id"]),
        None if parent is None else _int(parent),
        summary["operation"],
        dict(summary),
        _int(item["timestamp-ms"]),
        _int(item["sequence-number"]),
        None if schema_id is None else _int(schema_id),
    )


def _table_meta(doc: Any) -> TableMeta:
    if not isinstance(doc, dict) or _int(doc["format-version"]) not in (2, 3):
        raise _NotPlain
    for key in _NUMBERS:
        _int(doc[key])
    uuid.UUID(doc["table-uuid"])
    if not isinstance(doc["location"], str):
        raise _NotPlain
    if _int(doc["default-spec-id"]) not in _ids(doc["partition-specs"], "spec-id"):
        raise _NotPlain
    if _int(doc["default-sort-order-id"]) not in _ids(doc["sort-orders"], "order-id"):
        raise _NotPlain
    schema_id = _int(doc["current-schema-id"])
    schemas = [s for s in doc["schemas"] if _int(s["schema-id"]) == schema_id]
    if len(schemas) != 1:
        raise _NotPlain
    snapshots = {s.id: s for s in map(_snapshot, doc.get("snapshots", []))}
    current = doc.get("current-snapshot-id")
    current = None if current in (None, -1) else _int(current)
    refs = doc.get("refs", {})
    if not isinstance(refs, dict):
        raise _NotPlain
    tags: dict[str, int] = {}
    branches: dict[str, int] = {}
    for name, ref in refs.items():
        kinds = {"tag": tags, "branch": branches}
        if ref["type"] not in kinds:
            raise _NotPlain
        kinds[ref["type"]][name] = _int(ref["snapshot-id"])
    if current is not None:
        branches.setdefault("main", current)  # pyiceberg names the current snapshot's branch
    return TableMeta(
        current,
        snapshots,
        doc["format-version"],
        _columns(schemas[0]),
        tags,
        dict(_text(doc.get("properties", {}))),
        branches,
        schema_id,
    )
