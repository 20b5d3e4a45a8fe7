"""Source rows as a query of inline ``VALUES`` with a cast per column, written as
``createDataFrame(rows).writeTo(...)`` writes them (one data file, in this order). No Python
rows travel to the JVM (``createDataFrame`` pickles them and decodes them in a Python worker)."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any


def ddl_columns(schema: str) -> list[tuple[str, str]]:
    """``"k INT, m MAP<STRING, INT>"`` -> ``[("k", "INT"), ("m", "MAP<STRING, INT>")]``."""
    columns, depth, start = [], 0, 0
    for i, char in enumerate(schema + ","):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        if char == "," and depth == 0:
            name, kind = schema[start:i].strip().split(None, 1)
            columns.append((name, kind.strip()))
            start = i + 1
    return columns


def literal(value: Any) -> str:
    """A Python value as a Spark SQL literal; a naive datetime is read in local time, as
    ``createDataFrame`` reads it (the session's time zone is UTC)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, datetime.datetime):
        utc = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return f"TIMESTAMP '{utc.isoformat(sep=' ')}'"
    if isinstance(value, datetime.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, list):
        return f"array({', '.join(literal(v) for v in value)})"
    if isinstance(value, dict):
        return f"map({', '.join(literal(x) for kv in value.items() for x in kv)})"
    raise TypeError(f"no inline literal for {value!r}")


def values_query(schema: str, rows: list[tuple]) -> str:
    """A query of ``rows`` in ``schema``'s columns and types, in this order, as one data file
    (``COALESCE(1)``); no row: the columns and no row."""
    columns = ddl_columns(schema)
    if not rows:
        casts = ", ".join(f"CAST(NULL AS {kind}) AS {name}" for name, kind in columns)
        return f"SELECT {casts} WHERE false"
    casts = ", ".join(
        f"CAST(col{j + 1} AS {kind}) AS {name}" for j, (name, kind) in enumerate(columns)
    )
    values = ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)
    return f"SELECT /*+ COALESCE(1) */ {casts} FROM VALUES {values}"


def write_rows(spark: Any, name: str, schema: str, rows: list[tuple], create: bool) -> None:
    """Create the Iceberg table ``name`` of ``rows`` (``writeTo(...).create()``, a snapshot
    even with no row), or append ``rows`` to it in one commit (nothing when there is none)."""
    if create:
        spark.sql(values_query(schema, rows)).writeTo(name).using("iceberg").create()
    elif rows:
        spark.sql(values_query(schema, rows)).writeTo(name).append()
