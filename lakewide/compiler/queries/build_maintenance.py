"""The statements of ``lakewide maintain``: Iceberg's Spark procedures and the retention/TTL
DELETEs, as sqlglot trees.

sqlglot has no CALL node: a call is built as a tree (``<catalog>.system.<procedure>(name =>
value, ...)``) and wrapped in a ``Command`` at the end, as the adapter's changelog view is.
Every value is a sqlglot literal (strings quoted by sqlglot), never text pasted into SQL.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlglot import exp

from lakewide.project.nodes import Relation
from lakewide.vocabulary.dialect import DIALECT, to_sql

Arg = tuple[str, exp.Expression]


def table_argument(relation: Relation) -> exp.Literal:
    """The ``table`` argument: the table's name inside its catalog, each part quoted."""
    table = exp.Table(
        this=exp.to_identifier(relation.name, quoted=True),
        db=exp.to_identifier(relation.namespace, quoted=True),
    )
    return exp.Literal.string(table.sql(DIALECT))


def call(relation: Relation, procedure: str, *args: Arg) -> exp.Command:
    """``CALL <catalog>.system.<procedure>(table => '<ns>.<name>', <args>)``."""
    arguments = [("table", table_argument(relation)), *args]
    function = exp.Anonymous(
        this=procedure,
        expressions=[exp.Kwarg(this=exp.var(n), expression=v) for n, v in arguments],
    )
    target = exp.Dot.build(
        [exp.to_identifier(relation.catalog), exp.to_identifier("system"), function]
    )
    return exp.Command(this="CALL", expression=exp.Literal.string(to_sql(target, pretty=False)))


def utc_text(at: datetime) -> str:
    """``at`` in UTC to the millisecond, with an explicit zone (``Z``), so the session's time
    zone does not move it."""
    return at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def timestamp_literal(at: datetime) -> exp.Expression:
    """``TIMESTAMP '<UTC>'``: the typed literal Iceberg's CALL grammar takes (it refuses a
    ``CAST``, and sqlglot prints typed literals as casts); the quoted text is sqlglot's."""
    return exp.var(f"TIMESTAMP {exp.Literal.string(utc_text(at)).sql(DIALECT)}")


def string_map(options: dict[str, str]) -> exp.Expression:
    """``map('k', 'v', ...)``."""
    return exp.Anonymous(
        this="map",
        expressions=[
            exp.Literal.string(part) for key in sorted(options) for part in (key, options[key])
        ],
    )


def rewrite_data_files(relation: Relation, *, sort: bool, options: dict[str, str]) -> exp.Command:
    """Compaction: ``sort`` by the table's sort order (the model's ``sort_by``), else binpack."""
    args: list[Arg] = [("strategy", exp.Literal.string("sort" if sort else "binpack"))]
    if options:
        args.append(("options", string_map(options)))
    return call(relation, "rewrite_data_files", *args)


def rewrite_position_delete_files(relation: Relation) -> exp.Command:
    return call(relation, "rewrite_position_delete_files")


def rewrite_manifests(relation: Relation) -> exp.Command:
    return call(relation, "rewrite_manifests")


def expire_snapshots(relation: Relation, older_than: datetime, retain_last: int) -> exp.Command:
    return call(
        relation,
        "expire_snapshots",
        ("older_than", timestamp_literal(older_than)),
        ("retain_last", exp.Literal.number(retain_last)),
    )


def remove_orphan_files(
    relation: Relation, older_than: datetime, *, prefix_listing: bool = False
) -> exp.Command:
    """``remove_orphan_files``; ``prefix_listing`` lists files through the table's FileIO
    (object storage, where Spark has no Hadoop file system for the scheme)."""
    args: list[Arg] = [("older_than", timestamp_literal(older_than))]
    if prefix_listing:
        args.append(("prefix_listing", exp.true()))
    return call(relation, "remove_orphan_files", *args)


def delete_older(relation: Relation, column: str, before: exp.Expression) -> exp.Delete:
    """``DELETE FROM <table> WHERE <column> < <before>`` (retention and TTL)."""
    return exp.delete(
        relation.table(), where=exp.column(column, quoted=True) < before, dialect=DIALECT
    )


def bound_literal(at: datetime, column_type: str) -> exp.Expression:
    """``at`` as a literal of the column's Iceberg type: ``date``, ``timestamp`` (no zone:
    the UTC wall time) or ``timestamptz``."""
    utc = at.astimezone(timezone.utc)
    if column_type == "date":
        return exp.cast(exp.Literal.string(utc.strftime("%Y-%m-%d")), exp.DataType.build("DATE"))
    if column_type == "timestamp":
        text = utc.strftime("%Y-%m-%d %H:%M:%S.%f")
        return exp.cast(exp.Literal.string(text), exp.DataType.build("TIMESTAMP_NTZ"))
    return exp.cast(exp.Literal.string(utc_text(at)), exp.DataType.build("TIMESTAMP"))
