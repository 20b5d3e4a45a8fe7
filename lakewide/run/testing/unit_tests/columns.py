"""The columns a unit test may name: the model's (from its SQL, no Spark), checked before any
test runs."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.compiler.model.wide_model import analyze
from lakewide.project.by_name import positional
from lakewide.project.nodes import ModelNode
from lakewide.run.testing.unit_tests.spec import UnitTest
from lakewide.vocabulary.dialect import DIALECT


def model_columns(node: ModelNode) -> tuple[list[str], list[str]] | None:
    """(the model's columns, every column of its table with the hidden ones), or None when the
    SQL does not say (``SELECT *``)."""
    if node.config.merge_engine:
        model = analyze(node)
        return model.stored, model.table_columns
    try:
        query = positional(sqlglot.parse_one(node.sql, read=DIALECT), node.path, node.name)
    except ParseError:
        return None
    if not isinstance(query, exp.Query) or any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        for e in query.selects
    ):
        return None
    names = list(query.named_selects)
    return names, names


def check_expected(test: UnitTest, visible: list[str]) -> None:
    """Every expected column must be one of the model's ``visible`` columns."""
    for n, row in enumerate(test.expect):
        unknown = [c for c in row if c not in visible]
        if unknown:
            raise test.error(
                f"expected column '{unknown[0]}' is not a column of model {test.model}; its "
                f"columns: {', '.join(visible)}",
                f"{test.key}.expect.rows[{n}]",
            )


def check_columns(node: ModelNode, test: UnitTest) -> None:
    """Expected columns and the columns of ``this`` must be the model's."""
    found = model_columns(node)
    if found is None:
        return
    visible, table = found
    check_expected(test, visible)
    this = test.this
    for n, row in enumerate(this.rows if this else []):
        unknown = [c for c in row if c not in table]
        if unknown:
            assert this is not None
            raise test.error(
                f"column '{unknown[0]}' of `this` is not a column of model {test.model}; its "
                f"columns: {', '.join(visible)}",
                f"{this.key}.rows[{n}]",
            )
