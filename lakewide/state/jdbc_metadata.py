"""Table metadata of a JDBC catalog read without Spark.

Iceberg's Java ``JdbcCatalog`` keeps one row per table in the database's ``iceberg_tables``
(catalog name = the Spark catalog's name, namespace, table name, current metadata file; schema
V1 adds ``iceberg_type``: TABLE or VIEW). The reader selects the row the way pyiceberg's SQL
catalog does (``SqlCatalog.load_table``: views left out, a NULL type is a table; the tests
check it against pyiceberg) and parses the metadata file it points to like a hadoop table's.

It talks to the database through its DB-API driver (psycopg2 for PostgreSQL, the standard
library's sqlite3), imported on the first read: a no-op ``lakewide run`` pays neither
SQLAlchemy's nor pyiceberg's catalog import (0.4-0.7 s measured), only pyiceberg's table
metadata model, as on a hadoop catalog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lakewide.project.jdbc import DATABASES, database_kind, libpq_uri, login, sqlite_file
from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output, warehouse_path
from lakewide.state.metadata import corrupt_metadata, parse_error, table_meta_of
from lakewide.state.offsets import TableMeta
from lakewide.vocabulary.errors import RuntimeSetupError

_SELECT = (
    "SELECT metadata_location FROM iceberg_tables "
    "WHERE catalog_name = {p} AND table_namespace = {p} AND table_name = {p}"
)
_TABLES_ONLY = " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)"  # schema V1


class JdbcMetadataReader:
    """The tables of one JDBC catalog (see the module docstring)."""

    def __init__(self, output: Output) -> None:
        self.output = output
        self.kind = database_kind(output.uri) or ""
        self._connection: Any = None
        self._query: str | None = None  # None until the catalog tables exist

    def _secret(self, text: str) -> str:
        """``text`` with the profile's password masked."""
        _, password = login(self.output)
        return text.replace(password, "***") if password else text

    def _unreachable(self, err: Exception) -> RuntimeSetupError:
        lines = str(err).strip().splitlines()
        detail = self._secret(lines[0] if lines else type(err).__name__)
        return RuntimeSetupError(
            f"catalog {self.output.catalog} (jdbc): its database did not answer ({detail}); "
            "check the profile's uri, user and password"
        )

    def _connect(self) -> Any:
        if self._connection is not None:
            return self._connection
        if self.kind == "sqlite":
            import sqlite3

            path = sqlite_file(self.output)
            if not path.is_file():
                return None  # Spark creates the file on the catalog's first use
            try:
                self._connection = sqlite3.connect(
                    f"{path.as_uri()}?mode=ro", uri=True, timeout=30, isolation_level=None
                )
            except sqlite3.Error as err:
                raise self._unreachable(err) from None
            return self._connection
        try:
            import psycopg2
        except ImportError:
            extra = DATABASES[self.kind].pip_extra
            raise RuntimeSetupError(
                "reading a PostgreSQL catalog without Spark needs psycopg2: "
                f"pip install 'lakewide[jdbc]' (or 'pyiceberg[{extra}]')"
            ) from None
        try:
            connection = psycopg2.connect(libpq_uri(self.output), connect_timeout=10)
        except psycopg2.Error as err:
            raise self._unreachable(err) from None
        connection.autocommit = True  # each read sees the newest commit, no open transaction
        self._connection = connection
        return connection

    def _table_query(self, connection: Any) -> str | None:
        """The SELECT of a table's row, once the catalog tables exist (None before)."""
        if self._query is None:
            cursor = connection.cursor()
            try:
                cursor.execute("SELECT * FROM iceberg_tables WHERE 1 = 0")
            except Exception as err:  # noqa: BLE001 - each driver has its own error types
                if "iceberg_tables" not in str(err):
                    raise self._unreachable(err) from None
                return None  # no table was created in this database yet
            columns = {d[0].lower() for d in cursor.description}
            marker = "?" if self.kind == "sqlite" else "%s"
            query = _SELECT.format(p=marker)
            self._query = query + _TABLES_ONLY if "iceberg_type" in columns else query
        return self._query

    def metadata_location(self, relation: Relation) -> str | None:
        """The table's current metadata file as the catalog records it; None when missing."""
        connection = self._connect()
        query = None if connection is None else self._table_query(connection)
        if query is None:
            return None
        try:
            cursor = connection.cursor()
            cursor.execute(query, (self.output.catalog, relation.namespace, relation.name))
            row = cursor.fetchone()
        except Exception as err:  # noqa: BLE001 - each driver has its own error types
            raise self._unreachable(err) from None
        return None if row is None else row[0]

    def table_meta(self, relation: Relation) -> TableMeta | None:
        """See lakewide.state.metadata.MetadataReader.table_meta."""
        location = self.metadata_location(relation)
        if location is None:
            return None
        from lakewide.state.s3_objects import S3RequestError

        try:
            metadata = _read_metadata(location, self.output)
        except S3RequestError:
            raise  # the storage refused or did not answer: not a corrupt file
        except Exception as err:  # noqa: BLE001 - I/O, decoding and pyiceberg's validation
            raise corrupt_metadata(relation, location, parse_error(err)) from None
        return table_meta_of(metadata)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _read_metadata(location: str, output: Output) -> Any:
    """pyiceberg's table metadata of the file at ``location``: a local file read directly, one
    on S3 by a signed GET (lakewide.state.s3_objects, with the profile's ``s3_*`` keys), any
    other through pyiceberg's FileIO (pyarrow or fsspec)."""
    from pyiceberg.table.metadata import TableMetadataUtil

    from lakewide.state.s3_objects import S3Client, is_s3

    local: Path | None = warehouse_path(location)
    if local is not None:
        return TableMetadataUtil.parse_raw(local.read_bytes().decode("utf-8"))
    client = S3Client.of(output) if is_s3(location) else None
    if client is not None:
        return TableMetadataUtil.parse_raw(client.request("GET", location).decode("utf-8"))
    from pyiceberg.io import load_file_io
    from pyiceberg.serializers import FromInputFile

    # pyiceberg's FileIO (pyarrow or fsspec, when installed) with the catalog's properties: the
    # S3 keys in Iceberg's names, which pyiceberg reads too (the secret included: never print)
    properties = {**output.iceberg_catalog_properties(), **output.catalog_secrets()}
    properties.pop("io-impl", None)  # a Java class; pyiceberg picks its own by scheme
    file_io = load_file_io(properties=properties, location=location)
    return FromInputFile.table_metadata(file_io.new_input(location))
