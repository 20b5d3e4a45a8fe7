"""Named parameters in statement trees (``:name`` placeholders): the names a run binds, and
binding them to literals. The builders put them in; the executor binds them
(``lakewide.compiler.plans.steps`` says which parameters a run binds)."""

from __future__ import annotations

import datetime
import decimal
from typing import Any, cast

from sqlglot import exp

Params = dict[str, Any]


def start(branch: int) -> str:
    return f"start_{branch + 1}"


def end(branch: int) -> str:
    return f"end_{branch + 1}"


def rereading(branch: int) -> str:
    """The parameter saying that the run reads the branch's whole history again (a new column
    of it): its rows were counted already."""
    return f"reread_{branch + 1}"


def param(name: str) -> exp.Placeholder:
    """A named parameter in a tree (``:name``)."""
    return exp.Placeholder(this=name)


def exact_literal(value: Any) -> bool:
    """Whether a value's SQL literal is exact: integers, strings, dates, decimals; not
    timestamps (PySpark returns them in the Python process's time zone), not floats (NaN)."""
    if isinstance(value, bool) or isinstance(value, datetime.datetime):
        return False
    return isinstance(value, (int, str, datetime.date, decimal.Decimal))


def bind(tree: exp.Expression, values: Params) -> exp.Expression:
    """A copy of ``tree`` with each ``:name`` parameter replaced by its value's literal.

    Raises KeyError for a parameter without a value (a plan the executor did not bind).
    """

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Placeholder) and node.name:
            value = values[node.name]
            if value is None:
                return exp.null()
            # convert() is annotated with the Expr trait; what it builds is an Expression
            return cast(exp.Expression, exp.convert(value))
        return node

    return tree.copy().transform(swap)
