"""Iceberg's stored procedures (``CALL <catalog>.system.<name>(...)``) as statements."""

from __future__ import annotations

from sqlglot import exp

from lakewide.project.nodes import Relation
from lakewide.vocabulary.dialect import to_sql


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


def changelog_view_call(view: str, relation: Relation, after: int, snapshot: int) -> exp.Command:
    """``CALL <catalog>.system.create_changelog_view(...)`` of ``relation`` after ``after`` up
    to ``snapshot`` into ``view`` (Iceberg's changelog: carry-over rows of copy-on-write
    rewrites removed)."""
    options = exp.Anonymous(
        this="map",
        expressions=[
            exp.Literal.string(v)
            for v in ("start-snapshot-id", str(after), "end-snapshot-id", str(snapshot))
        ],
    )
    arguments = {
        "table": exp.Literal.string(str(relation)),
        "options": options,
        "changelog_view": exp.Literal.string(view),
    }
    return call(relation.catalog, "create_changelog_view", arguments)
