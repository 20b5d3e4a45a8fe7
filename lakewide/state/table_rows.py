"""A small table's rows read without a JVM: pyiceberg plans the scan from the table's metadata
and reads its data files through pyarrow (``lakewide show``).

Hadoop catalogs (a local warehouse), JDBC catalogs (the metadata file the catalog names) and
REST catalogs (pyiceberg's REST client) are read here. Whatever this cannot read as Spark
would show it raises ``NotReadable`` with the reason, and the caller reads through Spark: a
table larger than ``MAX_ROWS`` (sorted here in memory), nested columns (Spark shows them as its
own ``Row`` objects), delete files pyiceberg cannot apply, pyarrow not installed, a store
pyarrow cannot reach.
"""

from __future__ import annotations

import datetime
from typing import Any

from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output, warehouse_path

#: the most rows read into memory to be sorted here; larger tables are read through Spark
MAX_ROWS = 200_000
HIDDEN = "__lw_"  # lakewide's own columns (docs/concepts/run-boundaries.md), never shown


class NotReadable(Exception):
    """The table cannot be read here (the message says why); read it through Spark."""


class Missing(Exception):
    """The table does not exist in the catalog."""


def read_rows(
    output: Output, relation: Relation, order: list[str], limit: int
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The first ``limit`` rows of ``relation`` ordered by ``order`` (NULLs first, as Spark
    orders ascending), in the table's own columns (lakewide's ``__lw_`` columns left out),
    as Spark would return them (timestamps naive, in UTC: the session's time zone).

    Raises ``Missing`` when the table does not exist, ``NotReadable`` when it cannot be read
    without Spark.
    """
    try:
        import pyarrow.compute as pc
    except ImportError:
        raise NotReadable("pyarrow is not installed") from None
    table = _load(output, relation)
    snapshot = _snapshot(table, output.branch)
    if snapshot is not None:
        summary = {} if snapshot.summary is None else snapshot.summary.additional_properties
        total = summary.get("total-records")
        if total is not None and int(total) > MAX_ROWS:
            raise NotReadable(f"{total} rows (more than {MAX_ROWS} are sorted by Spark)")
    fields = [f for f in table.schema().fields if not f.name.startswith(HIDDEN)]
    nested = [f.name for f in fields if not f.field_type.is_primitive]
    if nested:
        raise NotReadable(f"nested column {nested[0]}")
    if any(column not in {f.name for f in fields} for column in order):
        raise NotReadable("an order column is not in the table")
    try:
        scan = table.scan(
            selected_fields=tuple(f.name for f in fields),
            snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        )
        data = scan.to_arrow()
    except Exception as err:  # noqa: BLE001 - pyiceberg's and pyarrow's errors alike
        raise NotReadable(_first_line(err)) from None
    if order and data.num_rows:
        data = data.take(_sort_indices(pc, data, order))
    data = data.slice(0, limit)
    columns = [f.name for f in fields]
    rows = [tuple(_spark_value(row[c]) for c in columns) for row in data.to_pylist()]
    return columns, rows


def _sort_indices(pc: Any, data: Any, order: list[str]) -> Any:
    """The rows' order by ``order``, ascending, NULLs first (pyarrow 25 takes the NULLs'
    place per key, earlier versions once for all keys)."""
    import pyarrow

    if int(pyarrow.__version__.split(".")[0]) >= 25:
        keys = [(column, "ascending", "at_start") for column in order]
        return pc.sort_indices(data, sort_keys=keys)
    keys2 = [(column, "ascending") for column in order]
    return pc.sort_indices(data, sort_keys=keys2, null_placement="at_start")


def _load(output: Output, relation: Relation) -> Any:
    """pyiceberg's table of ``relation`` with a FileIO that reads its data files."""
    from pyiceberg.table import StaticTable

    properties = {**output.iceberg_catalog_properties(), **output.catalog_secrets()}
    properties.pop("io-impl", None)  # a Java class; pyiceberg picks its own by scheme
    if output.catalog_type == "hadoop":
        from lakewide.state.metadata import current_metadata_file

        warehouse = warehouse_path(output.warehouse)
        if warehouse is None or not warehouse.is_dir():  # e.g. a Spark Connect server's own
            raise NotReadable("the hadoop warehouse is not a folder on this machine")
        path = current_metadata_file(warehouse, relation)
        if path is None:
            raise Missing(str(relation))
        return _static(StaticTable, str(path), properties)
    if output.catalog_type == "jdbc":
        from lakewide.state.jdbc_metadata import JdbcMetadataReader

        reader = JdbcMetadataReader(output)
        try:
            location = reader.metadata_location(relation)
        finally:
            reader.close()
        if location is None:
            raise Missing(str(relation))
        return _static(StaticTable, location, properties)
    if output.catalog_type == "rest":
        return _rest_table(output, relation)
    raise NotReadable(f"a {output.catalog_type} catalog is read through Spark")


def _static(kind: Any, location: str, properties: dict[str, str]) -> Any:
    local = warehouse_path(location)
    try:
        return kind.from_metadata(str(local) if local else location, properties)
    except Exception as err:  # noqa: BLE001 - I/O and pyiceberg's validation
        raise NotReadable(_first_line(err)) from None


def _rest_table(output: Output, relation: Relation) -> Any:
    """The table from pyiceberg's REST client, with a FileIO for its data files (pyarrow's,
    unless the profile names one) instead of the metadata-only one of the metadata reads."""
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    from lakewide.state.rest_metadata import rest_properties

    properties = rest_properties(output)
    if "py-io-impl" not in output.catalog_properties:
        properties.pop("py-io-impl", None)
    properties.update(
        {k: v for k, v in output.s3_properties().items() if k != "io-impl"}
        | {k: v for k, v in output.catalog_secrets().items() if k.startswith("s3.")}
    )
    try:
        catalog = RestCatalog(output.catalog, **properties)
        return catalog.load_table((relation.namespace, relation.name))
    except (NoSuchTableError, NoSuchNamespaceError):
        raise Missing(str(relation)) from None
    except Exception as err:  # noqa: BLE001 - requests, OAuth and REST errors
        raise NotReadable(output.masked(_first_line(err))) from None


def _snapshot(table: Any, branch: str | None) -> Any:
    """The snapshot read: the branch's head where the output writes to a branch that the
    table has, else the table's current one (None: an empty table)."""
    if branch is not None and branch in table.metadata.refs:
        return table.snapshot_by_id(table.metadata.refs[branch].snapshot_id)
    return table.current_snapshot()


def _spark_value(value: Any) -> Any:
    """A value as Spark returns it: a timestamp with a zone as a naive one in UTC."""
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0][:200]}" if lines else type(err).__name__
