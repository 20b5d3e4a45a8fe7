"""Iceberg table layout of a model: USING iceberg, PARTITIONED BY, TBLPROPERTIES, sort order."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.project.config.partition_fields import PARTITION_TRANSFORMS, split_field
from lakewide.project.nodes import ModelNode
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError

WRITE_MODE_PROPERTIES = ("write.merge.mode", "write.update.mode", "write.delete.mode")
# Key tables are written merge-on-read unless ``write_mode`` says otherwise: a MERGE writes only
# delete files and the changed rows instead of rewriting every data file it touches, and
# downstream models read the changes from the model's own changelog (``write_mode`` in
# docs/reference/config.md).
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
            ordered = sqlglot.parse_one(text, read=DIALECT, into=exp.Ordered)
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
    table = node.relation.table().sql(DIALECT)
    # direction and null order spelled out: Spark's defaults (ASC NULLS FIRST, DESC NULLS
    # LAST), which the bootstrap's ORDER BY follows, are then the table's sort order too
    order = ", ".join(
        " ".join(
            (
                key.this.sql(DIALECT),
                "DESC" if key.args.get("desc") else "ASC",
                "NULLS FIRST" if key.args.get("nulls_first") else "NULLS LAST",
            )
        )
        for key in keys
    )
    return exp.Command(
        this="ALTER", expression=" ".join(("TABLE", table, "WRITE ORDERED BY", order))
    )


_ACCEPTED = (
    "expected a column or an Iceberg transform: bucket(N, col), truncate(N, col), "
    "years/months/days/hours(col)"
)


def _partition_field(text: str, columns: list[str] | None) -> exp.Expr:
    """One ``partition_by`` entry as a tree; why not, as a message. ``columns``: the model's
    (None when its query does not name them, e.g. ``SELECT *``)."""
    field = split_field(text)
    if field is None:
        raise ValueError(f"does not parse; {_ACCEPTED}")
    name = field.transform
    if name and name not in PARTITION_TRANSFORMS:
        written = text.split("(", 1)[0].strip()
        raise ValueError(f"'{written}' is not an Iceberg transform; {_ACCEPTED}")
    try:
        column = sqlglot.parse_one(field.column, read=DIALECT)
    except ParseError:
        column = None
    if not isinstance(column, exp.Column):
        raise ValueError(f"is not a column or a transform of one; {_ACCEPTED}")
    source = column.parts[0].name
    if columns is not None and source.lower() not in {c.lower() for c in columns}:
        raise ValueError(f"'{source}' is not a column of the model (columns: {', '.join(columns)})")
    if not name or name == "identity":
        return column
    width = field.width
    if PARTITION_TRANSFORMS[name] != (width is not None):
        usage = f"{name}(N, {column.sql(DIALECT)})" if width is None else f"{name}(col)"
        raise ValueError(f"{name} takes {'a width and ' if width is None else ''}a column: {usage}")
    arguments: list[exp.Expr] = [column]
    if width is not None:
        if not width.isdigit() or int(width) < 1:
            raise ValueError(f"the width of {name} must be a positive whole number, not {width!r}")
        arguments.insert(0, exp.Literal.number(int(width)))
    return exp.Anonymous(this=name, expressions=arguments)


def _partition_expressions(node: ModelNode, query: exp.Query) -> list[exp.Expr]:
    starred = any(s.is_star for s in query.selects)
    columns = None if starred else list(query.named_selects)
    parsed: list[exp.Expr] = []
    for text in node.config.partition_by:
        try:
            parsed.append(_partition_field(text, columns))
        except ValueError as err:
            raise CompileError(
                f"partition_by entry {text!r}: {err}",
                path=node.path,
                model=node.name,
                key="partition_by",
            ) from None
    return parsed


def partitions(node: ModelNode, columns: list[str]) -> list[exp.Expr]:
    """``partition_by`` as Iceberg transforms of ``columns`` (CompileError naming the entry)."""
    return _partition_expressions(node, exp.select(*(exp.to_identifier(c) for c in columns)))


def create_table_as(node: ModelNode, query: exp.Query, *, replace: bool) -> exp.Create:
    """``CREATE [OR REPLACE] TABLE <model> USING iceberg ... AS <query>`` (one atomic commit)."""
    properties: list[exp.Expr] = [exp.FileFormatProperty(this=exp.var("iceberg"))]
    partitions = _partition_expressions(node, query)
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
