"""Table metadata of a JDBC catalog read without Spark: pyiceberg's SQL catalog.

Iceberg's Java ``JdbcCatalog`` keeps one row per table in the database's ``iceberg_tables``
(catalog name, namespace, table name, current metadata file; schema V1 adds ``iceberg_type``,
TABLE or VIEW). pyiceberg's ``SqlCatalog`` reads the same rows, through SQLAlchemy
(``lakewide.jdbc.sqlalchemy_url``), and loads the metadata file they point to. SQLAlchemy,
the database driver and pyiceberg's catalog are imported on the first read, not before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lakewide.errors import RuntimeSetupError
from lakewide.jdbc import DATABASES, database_kind, sqlalchemy_url
from lakewide.metadata import corrupt_metadata, parse_error, table_meta_of, warehouse_path
from lakewide.nodes import Relation
from lakewide.offsets import TableMeta
from lakewide.profiles import Output

if TYPE_CHECKING:
    from pyiceberg.catalog.sql import SqlCatalog


class SqlCatalogReader:
    """A JDBC catalog's tables, read by pyiceberg's ``SqlCatalog`` under the Spark catalog's
    name (the ``catalog_name`` Iceberg's JdbcCatalog writes)."""

    def __init__(self, output: Output) -> None:
        self.output = output
        self._catalog: SqlCatalog | None = None
        self._has_tables = False

    def _secret(self, text: str) -> str:
        """``text`` with the profile's password masked (driver messages may quote the URL)."""
        password = self.output.password.get_secret_value() if self.output.password else ""
        return text.replace(password, "***") if password else text

    def _unreachable(self, err: Exception) -> RuntimeSetupError:
        lines = str(getattr(err, "orig", None) or err).strip().splitlines()
        detail = self._secret(lines[0] if lines else type(err).__name__)
        return RuntimeSetupError(
            f"catalog {self.output.catalog} (jdbc): its database did not answer ({detail}); "
            "check the profile's uri, user and password"
        )

    def _sql_catalog(self) -> SqlCatalog:
        if self._catalog is not None:
            return self._catalog
        kind = database_kind(self.output.uri) or ""
        try:
            from pyiceberg.catalog.sql import SqlCatalog
            from sqlalchemy.exc import SQLAlchemyError
        except ImportError as err:
            extra = DATABASES[kind].pip_extra if kind in DATABASES else "sql-postgres"
            raise RuntimeSetupError(
                f"reading a jdbc catalog without Spark needs pyiceberg's SQL catalog "
                f"({err.name} is missing): pip install 'pyiceberg[{extra}]'"
            ) from None
        properties = {
            "uri": sqlalchemy_url(self.output),
            "warehouse": self.output.warehouse or "",
            "init_catalog_tables": "false",  # a reader creates nothing; Spark creates them
        }
        if warehouse_path(self.output.warehouse) is not None:
            from lakewide.local_io import IMPL

            properties["py-io-impl"] = IMPL  # no pyarrow/fsspec import for local files
        try:
            self._catalog = SqlCatalog(self.output.catalog, **properties)
        except (SQLAlchemyError, ImportError) as err:
            if isinstance(err, ImportError):
                extra = DATABASES[kind].pip_extra if kind in DATABASES else "sql-postgres"
                raise RuntimeSetupError(
                    f"the {kind} database driver for pyiceberg is missing ({err.name}): "
                    f"pip install 'pyiceberg[{extra}]'"
                ) from None
            raise self._unreachable(err) from None
        return self._catalog

    def _tables_exist(self, catalog: SqlCatalog) -> bool:
        """Whether the catalog tables exist yet (Spark creates them on its first use)."""
        if not self._has_tables:
            from sqlalchemy import inspect

            self._has_tables = inspect(catalog.engine).has_table("iceberg_tables")
        return self._has_tables

    def table_meta(self, relation: Relation) -> TableMeta | None:
        """See lakewide.metadata.MetadataReader.table_meta."""
        from pyiceberg.exceptions import NoSuchTableError
        from sqlalchemy.exc import SQLAlchemyError

        catalog = self._sql_catalog()
        identifier = (*relation.namespace.split("."), relation.name)
        try:
            if not self._tables_exist(catalog):
                return None
            table: Any = catalog.load_table(identifier)
        except NoSuchTableError:
            return None
        except SQLAlchemyError as err:
            raise self._unreachable(err) from None
        except Exception as err:  # noqa: BLE001 - I/O, decoding and pyiceberg's validation
            raise corrupt_metadata(relation, None, self._secret(parse_error(err))) from None
        return table_meta_of(table.metadata)

    def close(self) -> None:
        if self._catalog is not None:
            self._catalog.engine.dispose()
