"""Table metadata of an Iceberg REST catalog read without Spark, through pyiceberg's REST
catalog client (``pyiceberg.catalog.rest.RestCatalog``, imported on the first read).

The client is given the profile's ``uri``, ``warehouse``, ``credential`` / ``token`` and its
``catalog_properties`` (pyiceberg reads the same property names as Iceberg's Java client for
these: ``oauth2-server-uri``, ``scope``, ``prefix``, ``header.*``). ``load_table`` returns the
table's current metadata, which ``table_meta_of`` turns into lakewide's view. No message shows a
credential or token: the profile's secrets are masked in whatever the server or client said.

The REST server sends the table metadata in its answer, so no file is read: pyiceberg is given
``MetadataOnlyFileIO`` (``py-io-impl``) instead of a FileIO it would otherwise need pyarrow or
fsspec for, unless the profile's ``catalog_properties`` name one.
"""

from __future__ import annotations

from typing import Any

from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output
from lakewide.state.metadata import table_meta_of
from lakewide.state.offsets import TableMeta
from lakewide.vocabulary.errors import RuntimeSetupError

_FILE_IO = "lakewide.state.rest_file_io.MetadataOnlyFileIO"  # imported by pyiceberg


def rest_properties(output: Output) -> dict[str, str]:
    """pyiceberg ``RestCatalog`` properties of ``output`` (secrets included: never print)."""
    props = {k: v for k, v in output.catalog_properties.items() if k not in ("type", "uri")}
    props["uri"] = output.uri or ""
    if output.warehouse:
        props["warehouse"] = output.warehouse
    props.setdefault("py-io-impl", _FILE_IO)
    props.update(output.catalog_secrets())
    return props


class RestMetadataReader:
    """The tables of one REST catalog (see the module docstring)."""

    def __init__(self, output: Output) -> None:
        self.output = output
        self._catalog: Any = None

    def unreachable(self, err: BaseException) -> RuntimeSetupError:
        """The error for a REST catalog that refused or did not answer (secrets masked)."""
        lines = str(err).strip().splitlines()
        detail = self.output.masked(lines[0] if lines else type(err).__name__)[:300]
        return RuntimeSetupError(
            f"catalog {self.output.catalog} (rest at {self.output.uri}) refused or did not answer: "
            f"{type(err).__name__}: {detail}; check the profile's uri, credential or token"
        )

    def catalog(self) -> Any:
        """pyiceberg's REST catalog client, connected (config and OAuth2) on first use."""
        if self._catalog is None:
            from pyiceberg.catalog.rest import RestCatalog

            try:
                self._catalog = RestCatalog(self.output.catalog, **rest_properties(self.output))
            except Exception as err:  # noqa: BLE001 - requests, OAuth and REST errors
                raise self.unreachable(err) from None
        return self._catalog

    def table_meta(self, relation: Relation) -> TableMeta | None:
        """See lakewide.state.metadata.MetadataReader.table_meta."""
        from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

        catalog = self.catalog()
        try:
            table = catalog.load_table((relation.namespace, relation.name))
        except (NoSuchTableError, NoSuchNamespaceError):
            return None
        except Exception as err:  # noqa: BLE001 - requests, OAuth and REST errors
            raise self.unreachable(err) from None
        return table_meta_of(table.metadata)

    def storage_location(self, namespace: str) -> tuple[str | None, str]:
        """Where the catalog keeps tables, for ``lakewide debug``'s storage probe, and how that
        was found: its configured ``warehouse`` (the profile's, or the defaults and overrides
        of ``/v1/config``) when that is a location; else the location the server would give a
        new table in ``namespace`` (a staged create, committing nothing); else an existing
        table's. (None, why) when none of these says."""
        from pyiceberg.exceptions import NoSuchNamespaceError

        catalog = self.catalog()
        named = catalog.properties.get("warehouse")
        if is_location(named):
            return named, "the catalog's warehouse"
        try:
            return self._staged_location(catalog, namespace), "a new table's location"
        except NoSuchNamespaceError:
            why = f"namespace {namespace} does not exist yet and the catalog names no warehouse"
        except Exception:  # noqa: BLE001 - a server without staged creates: look at a table
            why = "the catalog names no warehouse location nor stages a table"
        try:
            for identifier in catalog.list_tables(namespace)[:1]:
                return str(catalog.load_table(identifier).metadata.location), "a table's location"
        except Exception:  # noqa: BLE001 - requests, OAuth and REST errors: said as not checked
            pass
        return None, why

    @staticmethod
    def _staged_location(catalog: Any, namespace: str) -> str:
        from pyiceberg.schema import Schema
        from pyiceberg.types import LongType, NestedField

        schema = Schema(NestedField(1, "probe", LongType(), required=False))
        staged = catalog.create_table_transaction((namespace, "lakewide_debug_probe"), schema)
        return str(staged.table_metadata.location)


def is_location(text: str | None) -> bool:
    """A warehouse given as a URI or path (a REST catalog's may be a name, e.g. Polaris')."""
    return bool(text) and ("://" in (text or "") or (text or "").startswith(("/", "file:")))
