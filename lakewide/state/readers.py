"""Which reader reads a catalog's table metadata without Spark (one interface, one per catalog)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakewide.project.profiles import Output, warehouse_path
from lakewide.state.jdbc_metadata import JdbcMetadataReader
from lakewide.state.metadata import HadoopMetadataReader, MetadataReader
from lakewide.state.rest_metadata import RestMetadataReader

if TYPE_CHECKING:
    from lakewide.state.branches import Line


def metadata_reader(output: Output, line: Line | None = None) -> MetadataReader | None:
    """The reader of ``output``'s catalog, showing each table on the output's branch where it
    has it, or on the line ``line`` gives it (lakewide.state.branches); None where metadata is
    read through Spark."""
    reader = catalog_reader(output)
    if reader is None or output.branch is None:
        return reader
    from lakewide.state.branches import BranchReader

    return BranchReader(reader, output.branch, line)


def catalog_reader(output: Output) -> MetadataReader | None:
    """The reader of ``output``'s catalog, on main; None where metadata is read through Spark.

    The hadoop catalog on a local folder, JDBC catalogs (their ``iceberg_tables`` rows,
    lakewide.state.jdbc_metadata) and REST catalogs (pyiceberg's REST client,
    lakewide.state.rest_metadata). Hive's reader would belong here too.
    """
    if output.catalog_type == "hadoop":
        warehouse = warehouse_path(output.warehouse)
        return None if warehouse is None else HadoopMetadataReader(warehouse)
    if output.catalog_type == "jdbc":
        return JdbcMetadataReader(output)
    if output.catalog_type == "rest":
        return RestMetadataReader(output)
    return None
