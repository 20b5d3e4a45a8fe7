"""Iceberg's stored procedures (``CALL <catalog>.system.<name>(...)``) as statements."""

from __future__ import annotations

from sqlglot import exp

from lakewide.dialect import to_sql


def call(catalog: str, name: str, arguments: dict[str, exp.Expression]) -> exp.Command:
    """``CALL <catalog>.system.<name>(key => value, ...)``."""
    procedure = exp.Anonymous(
        this=name,
        expressions=[
            exp.Kwarg(this=exp.var(key), expression=value) for key, value in arguments.items()
        ],
    )
    target = exp.Dot.build([exp.to_identifier(catalog), exp.to_identifier("system"), procedure])
    # sqlglot has no CALL node: the call is built as a tree, rendered here at the boundary
    return exp.Command(this="CALL", expression=exp.Literal.string(to_sql(target, pretty=False)))
