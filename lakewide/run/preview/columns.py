"""The columns of a changed model before and after, and which downstream readers they break.

Before: the columns of the table as its metadata says (pyiceberg; Iceberg type names turned
into Spark's). A reader breaks when a column it reads went away or changed type; what it reads
comes from its column lineage (``lakewide.compiler.queries.column_lineage``: the columns behind each
of its own) and from the columns its filters, joins and groupings name; ``SELECT *`` reads all.
"""

from __future__ import annotations

import re

from sqlglot import exp

from lakewide.compiler.model.versions import NON_NULL_PREFIX, PREFIX, ROW_COUNT, ROW_VERSION
from lakewide.compiler.model.wide_model import WideModel, parse_model_sql
from lakewide.compiler.queries.column_lineage import model_lineage
from lakewide.compiler.schema.contract import Contract
from lakewide.project.nodes import ModelNode
from lakewide.state.offsets import TableMeta
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import LakewideError

#: column -> Spark type name ("?" where only Spark could tell)
Columns = dict[str, str]

_ICEBERG_TO_SPARK = {"long": "bigint", "timestamptz": "timestamp", "timestamp": "timestamp_ntz"}


def _spark_type(iceberg: str) -> str:
    text = iceberg.replace(" ", "")
    if "<" in text:
        return "?"  # nested types: compared by Spark at run time, not here
    return _ICEBERG_TO_SPARK.get(text, re.sub(r"^fixed\[\d+\]$", "binary", text))


def _hidden(column: str) -> bool:
    return column in (ROW_VERSION, ROW_COUNT) or column.startswith((PREFIX, NON_NULL_PREFIX))


def stored_columns(meta: TableMeta | None) -> Columns | None:
    """The table's own columns (lakewide's hidden ones left out); None without a table."""
    if meta is None or meta.columns is None:
        return None
    return {c.name: _spark_type(c.type) for c in meta.columns if not _hidden(c.name)}


def cast_type(projection: exp.Expr) -> str | None:
    """The Spark type name (as ``simpleString``) an outer CAST gives a projection, else None."""
    value = projection.this if isinstance(projection, exp.Alias) else projection
    if not isinstance(value, (exp.Cast, exp.TryCast)):
        return None
    text = value.to.sql(DIALECT).lower().replace(" ", "")
    text = re.sub(r"\b(?:var)?char\(\d+\)", "string", text)  # Spark's result type
    return re.sub(r"\bdecimal\b(?!\()", "decimal(10,0)", text)


def key_types(model: WideModel, stored: Contract | None) -> dict[str, str]:
    """A key table's column types without Spark: its CASTs, else the stored contract's
    (a column whose expression did not change keeps its type), else ``?``."""
    types = dict(stored.columns) if stored is not None else {}
    for column in model.columns:
        index = model.columns.index(column)
        for branch in model.branches:
            cast = cast_type(branch.projection(column, index))
            if cast:
                types[column] = cast
                break
    return {c: types.get(c, "?") for c in model.table_columns}


def query_columns(node: ModelNode) -> Columns:
    """A model's output columns and the types its CASTs give them (``?`` elsewhere)."""
    query = parse_model_sql(node)
    if not isinstance(query, exp.Query):
        return {}
    return {s.alias_or_name: cast_type(s) or "?" for s in query.selects if s.alias_or_name != "*"}


def _columns_read(child: ModelNode, parent: ModelNode) -> set[str] | None:
    """The columns of ``parent`` that ``child`` reads (lower case); None: all of them."""
    try:
        query = parse_model_sql(child)
        lineage = model_lineage(child, {})
    except LakewideError:
        return None  # it does not parse: its own plan says so; count it as reading everything
    if not isinstance(query, exp.Query):
        return None
    if any(isinstance(s, exp.Star) or s.is_star for s in query.selects):
        return None
    read = {
        ref.column
        for column in lineage.values()
        for ref in column.direct
        if ref.table == parent.relation.key
    }
    projected = {id(c) for s in query.selects for c in s.find_all(exp.Column)}
    for column in query.find_all(exp.Column):
        if id(column) not in projected:
            read.add(column.name.lower())  # a filter, join or grouping names it
    return read


def breaking_columns(
    child: ModelNode, parent: ModelNode, removed: list[str], retyped: dict[str, list[str]]
) -> list[str]:
    """What ``child`` reads of the changed ``parent`` that went away (``removed``) or changed
    type (``retyped``: column -> [stored, now]), e.g. ``orders.amount (removed)`` or
    ``orders.id (int -> string)``."""
    changed = {c.lower(): "removed" for c in removed}
    changed |= {c.lower(): f"{old} -> {new}" for c, (old, new) in retyped.items()}
    if not changed:
        return []
    read = _columns_read(child, parent)
    hits = sorted(changed if read is None else set(changed) & read)
    return [f"{parent.name}.{c} ({changed[c]})" for c in hits]
