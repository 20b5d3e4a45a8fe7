"""Column types for the docs, without a JVM: from the Iceberg table's metadata when the table
exists (a MetadataReader), else inferred from the compiled model by sqlglot, else unknown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from lakewide.compiler import WideModel
from lakewide.project.by_name import positional
from lakewide.project.nodes import ModelNode, Relation
from lakewide.state.metadata import MetadataReader
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import LakewideError

ICEBERG = "iceberg"  # the table's current schema, read from its metadata file
INFERRED = "inferred"  # sqlglot's type annotation of the compiled model
UNKNOWN = "unknown"
HIDDEN_PREFIX = "__lw_"  # lakewide's own columns of a key table (versions), not shown


@dataclass
class TableTypes:
    """The columns of one table with their types and where each type comes from."""

    columns: dict[str, str] = field(default_factory=dict)  # name -> type ("" when unknown)
    origins: dict[str, str] = field(default_factory=dict)  # name -> ICEBERG/INFERRED/UNKNOWN
    comments: dict[str, str] = field(default_factory=dict)  # Iceberg column docs
    exists: bool | None = None  # None: no reader for this catalog
    problem: str | None = None  # why the metadata or the inference failed

    def type_of(self, column: str) -> tuple[str, str]:
        """(type, origin) of a column; ("", UNKNOWN) when nothing says."""
        found = self.columns.get(column, "")
        return found, self.origins.get(column, UNKNOWN) if found else UNKNOWN


def stored_types(reader: MetadataReader | None, relation: Relation) -> TableTypes:
    """The table's columns as its Iceberg metadata says (empty when it does not exist)."""
    if reader is None or not relation.catalog:
        return TableTypes()
    try:
        meta = reader.table_meta(relation)
    except LakewideError as err:
        return TableTypes(exists=True, problem=str(err))
    if meta is None:
        return TableTypes(exists=False)
    out = TableTypes(exists=True)
    for column in meta.columns or ():
        if column.name.startswith(HIDDEN_PREFIX):
            continue
        out.columns[column.name] = column.type
        out.origins[column.name] = ICEBERG
        if column.doc:
            out.comments[column.name] = column.doc
    return out


def _sqlglot_type(iceberg_type: str) -> str:
    try:
        return exp.DataType.build(iceberg_type, dialect=DIALECT).sql(DIALECT)
    except (SqlglotError, ValueError):
        return "UNKNOWN"


def add_to_schema(
    schema: dict[str, Any], relation: Relation, types: TableTypes, columns: Sequence[str] = ()
) -> None:
    """Put a table into sqlglot's nested schema (catalog -> db -> table -> column -> type):
    its ``columns`` and those with a known type (``UNKNOWN`` where none is)."""
    names = list(dict.fromkeys([*columns, *types.columns]))
    if not names or not relation.catalog:
        return
    table = schema.setdefault(relation.catalog, {}).setdefault(relation.namespace, {})
    table[relation.name] = {
        name: _sqlglot_type(found) if origin == ICEBERG else (found or "UNKNOWN")
        for name in names
        for found, origin in [types.type_of(name)]
    }


def inferred_types(node: ModelNode, schema: Mapping[str, Any]) -> TableTypes:
    """Each column's type as sqlglot infers it from the model's SQL and the known upstream
    types. A UNION ALL column gets the type Spark coerces its branches to (``CAST(NULL AS
    BIGINT)`` in one branch widens an INT of another); a branch of unknown type leaves the
    column unknown."""
    out = TableTypes()
    try:
        model = positional(sqlglot.parse_one(node.sql, read=DIALECT), node.path, node.name)
        if not isinstance(model, exp.Query):
            return out
        # the model as a derived table: its columns typed as the set operation coerces them
        query = exp.select("*").from_(model.subquery("__lw_model"))
        query = qualify(query, schema=dict(schema), dialect=DIALECT, validate_qualify_columns=False)
        annotate_types(query, schema=dict(schema), dialect=DIALECT)
    except (SqlglotError, KeyError, ValueError) as err:
        out.problem = f"types cannot be inferred: {err}"
        return out
    for projection in query.selects:
        found = projection.type
        if found is None or found.this in (exp.DType.UNKNOWN, exp.DType.NULL):
            continue
        out.columns[projection.alias_or_name] = found.sql(DIALECT)
        out.origins[projection.alias_or_name] = INFERRED
    return out


_INTEGRAL = {exp.DType.TINYINT, exp.DType.SMALLINT, exp.DType.INT, exp.DType.BIGINT}
_FLOATING = {exp.DType.FLOAT, exp.DType.DOUBLE}


def _folded_type(function: str, value: str) -> str | None:
    """The type a key table stores for a column its aggregate function folds from values of
    type ``value``: Spark's SUM widens integers to BIGINT and floats to DOUBLE; ``product``
    and a decimal SUM are left unknown; every other function keeps the type."""
    if function == "product":
        return None
    if function != "sum":
        return value
    kind = exp.DataType.build(value, dialect=DIALECT).this
    if kind in _INTEGRAL:
        return "BIGINT"
    return "DOUBLE" if kind in _FLOATING else None


def _fold(types: TableTypes, model: WideModel) -> None:
    """Inferred types of the aggregated columns as the merge engine stores them."""
    for column in model.aggregated:
        if types.origins.get(column) != INFERRED:
            continue
        folded = _folded_type(model.aggregate(column).name, types.columns[column])
        if folded is None:
            del types.columns[column], types.origins[column]
        else:
            types.columns[column] = folded


def model_types(
    node: ModelNode,
    reader: MetadataReader | None,
    schema: Mapping[str, Any],
    model: WideModel | None = None,
) -> TableTypes:
    """A model's column types: the stored table's, else inferred (per column; a key table's
    aggregated columns as its merge engine folds them, ``model``)."""
    stored = stored_types(reader, node.relation)
    inferred = inferred_types(node, schema)
    if model is not None:
        _fold(inferred, model)
    for name, found in inferred.columns.items():
        if name not in stored.columns:
            stored.columns[name] = found
            stored.origins[name] = INFERRED
    if stored.problem is None:
        stored.problem = inferred.problem
    return stored
