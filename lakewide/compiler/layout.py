"""Iceberg table layout of a model: USING iceberg, PARTITIONED BY, TBLPROPERTIES, sort order."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.errors import CompileError
from lakewide.nodes import ModelNode

WRITE_MODE_PROPERTIES = ("write.merge.mode", "write.update.mode", "write.delete.mode")
# Key tables are written merge-on-read unless ``write_mode`` says otherwise: a MERGE writes only
# delete files and the changed rows instead of rewriting every data file it touches, and
# downstream models read the changes from the model's own changelog (README "Write mode").
KEY_TABLE_WRITE_MODE = "merge-on-read"


def table_properties(node: ModelNode) -> dict[str, str]:
    """The TBLPROPERTIES lakewide sets for a model: format, write mode, key, then the user's."""
    config = node.config
    props = {"format-version": str(config.format_version)}
    mode = config.write_mode or (KEY_TABLE_WRITE_MODE if config.merge_engine else None)
    if mode:
        props.update({name: mode for name in WRITE_MODE_PROPERTIES})
    if config.merge_engine:
        props["lakewide.merge-engine"] = config.merge_engine
        props["lakewide.primary-key"] = ",".join(config.primary_key)
    if config.sequence_field:
        props["lakewide.sequence-field"] = ",".join(config.sequence_field)
    props.update(config.table_properties)
    return props


def sort_keys(node: ModelNode) -> list[exp.Ordered]:
    """``sort_by`` entries as ordered columns (``k``, ``k DESC``, ``k ASC NULLS LAST``)."""
    keys: list[exp.Ordered] = []
    for text in node.config.sort_by:
        try:
            ordered = sqlglot.parse_one(text, read="spark", into=exp.Ordered)
        except ParseError:
            ordered = None
        if (
            not isinstance(ordered, exp.Ordered)
            or not isinstance(ordered.this, exp.Column)
            or ordered.this.table
        ):
            raise CompileError(
                f"sort_by entry {text!r} is not a column with an optional direction; expected "
                "'col', 'col DESC' or 'col ASC NULLS LAST'",
                path=node.path,
                model=node.name,
                key="sort_by",
            )
        keys.append(ordered)
    return keys


def write_ordered_by(node: ModelNode) -> exp.Command | None:
    """``ALTER TABLE <model> WRITE ORDERED BY <sort_by>`` (Iceberg's table sort order), or None.

    Spark's CTAS cannot declare a sort order, so this runs right after the bootstrap; later
    MERGE commits then sort what they write. sqlglot has no node for Iceberg's statement, so it
    is a Command whose text is assembled from generated (quoted) identifiers only.
    """
    keys = sort_keys(node)
    if not keys:
        return None
    table = node.relation.table().sql(dialect="spark")
    # direction and null order spelled out: Spark's defaults (ASC NULLS FIRST, DESC NULLS
    # LAST), which the bootstrap's ORDER BY follows, are then the table's sort order too
    order = ", ".join(
        " ".join(
            (
                key.this.sql(dialect="spark"),
                "DESC" if key.args.get("desc") else "ASC",
                "NULLS FIRST" if key.args.get("nulls_first") else "NULLS LAST",
            )
        )
        for key in keys
    )
    return exp.Command(
        this="ALTER", expression=" ".join(("TABLE", table, "WRITE ORDERED BY", order))
    )


def _partition_expressions(node: ModelNode) -> list[exp.Expr]:
    parsed: list[exp.Expr] = []
    for text in node.config.partition_by:
        try:
            parsed.append(sqlglot.parse_one(text, read="spark"))
        except ParseError:
            raise CompileError(
                f"partition_by entry {text!r} does not parse; expected a column or an Iceberg "
                "transform: bucket(N, col), truncate(N, col), years/months/days/hours(col)",
                path=node.path,
                model=node.name,
                key="partition_by",
            ) from None
    return parsed


def create_table_as(node: ModelNode, query: exp.Query, *, replace: bool) -> exp.Create:
    """``CREATE [OR REPLACE] TABLE <model> USING iceberg ... AS <query>`` (one atomic commit)."""
    properties: list[exp.Expr] = [exp.FileFormatProperty(this=exp.var("iceberg"))]
    partitions = _partition_expressions(node)
    if partitions:
        properties.append(exp.PartitionedByProperty(this=exp.Schema(expressions=partitions)))
    for name, value in table_properties(node).items():
        properties.append(
            exp.Property(this=exp.Literal.string(name), value=exp.Literal.string(value))
        )
    return exp.Create(
        this=node.relation.table(),
        kind="TABLE",
        replace=replace,
        expression=query,
        properties=exp.Properties(expressions=properties),
    )
