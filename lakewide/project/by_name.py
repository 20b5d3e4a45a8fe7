"""A wide model's narrow form: ``UNION ALL BY NAME`` branches that name only their own columns.

The UNION-ALL-with-NULLs pattern has every branch list every column of the table, so the model
text grows with sources x columns. In the narrow form (what ``lakewide.union_sources`` writes)
the first branch names every column of the model, in the table's order (its own, and
``CAST(NULL AS <type>) AS name`` for the others), and every later branch names only the
columns it owns, joined by ``UNION ALL BY NAME``::

    SELECT k, CAST(a AS STRING) AS a, CAST(NULL AS INT) AS b, ts FROM s.one
    UNION ALL BY NAME
    SELECT k, b, ts FROM s.two

A column a later branch does not name is a NULL of the type the first branch's ``CAST`` gives
it (of its NULL or of its value; a plain ``NULL`` without one). :func:`positional` turns the
narrow form into the positional UNION ALL it stands for, as trees (no text is parsed again):
what the compiler splits into sources, and the query a view or a reader sends to Spark.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sqlglot import exp

from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError


def _chain(query: exp.Expr) -> list[exp.Union] | None:
    """The top-level UNION nodes of ``query`` (left-deep, as the parser builds them) when
    any of them is BY NAME; None for a query without BY NAME at its top."""
    unions: list[exp.Union] = []
    node = query
    while isinstance(node, exp.Union):
        unions.append(node)
        node = node.this
    if not any(u.args.get("by_name") for u in unions):
        return None
    return unions


def _name(projection: exp.Expr) -> str:
    named = isinstance(projection, (exp.Alias, exp.Column)) and not projection.is_star
    return projection.alias_or_name if named else ""


def _branch(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Subquery) and not node.alias:
        node = node.this
    return node


def _null_of(header: exp.Expr) -> Callable[[], exp.Expr]:
    """What makes the NULL a branch writes for a column it does not name: typed as the
    header's CAST (decided once per column; each branch gets a node of its own)."""
    value = header.this if isinstance(header, exp.Alias) else header
    if not isinstance(value, (exp.Cast, exp.TryCast)):
        return exp.Null
    to = value.to
    plain = not any(v for k, v in to.args.items() if k not in ("this", "nested"))
    if isinstance(to, exp.DataType) and plain and not to.comments:
        # a plain type (BIGINT, STRING): built anew, much cheaper than a deep copy
        kind, nested = to.this, to.args.get("nested")
        return lambda: exp.Cast(this=exp.Null(), to=exp.DataType(this=kind, nested=nested))
    return lambda: exp.Cast(this=exp.Null(), to=to.copy())


def named(select: exp.Select) -> dict[str, exp.Expr]:
    """A narrow branch's projections by the column each names."""
    return {_name(p): p for p in select.expressions}


def narrow(
    query: exp.Expr, path: Path | str | None = None, model: str = ""
) -> dict[str, Callable[[], exp.Expr]] | None:
    """For a narrow model (top-level ``UNION ALL BY NAME``), checked: per model column (the
    first branch's, in order), what makes the NULL a branch that does not name it writes;
    None for a model without BY NAME. Leaves ``query`` as it is."""
    unions = _chain(query)
    if unions is None:
        return None

    def fail(message: str) -> CompileError:
        return CompileError(message, path=path, model=model or None)

    if any(not u.args.get("by_name") for u in unions):
        raise fail("a model joins its branches with UNION ALL BY NAME throughout or not at all")
    found = [_branch(unions[-1].this)] + [_branch(u.expression) for u in reversed(unions)]
    for index, node in enumerate(found, start=1):
        if not isinstance(node, exp.Select):
            raise fail(
                f"UNION ALL BY NAME joins SELECT branches; branch {index} is {node.key.upper()}"
            )
    header, *rest = found
    nulls: dict[str, Callable[[], exp.Expr]] = {}
    for position, projection in enumerate(header.expressions, start=1):
        name = _name(projection)
        if not name:
            raise fail(
                f"column {position} of the first branch has no name; a UNION ALL BY NAME "
                f"branch names each column: add AS <column_name> to "
                f"`{projection.sql(DIALECT)}`"
            )
        nulls[name] = _null_of(projection)
    for index, branch in enumerate(rest, start=2):
        for projection in branch.expressions:
            name = _name(projection)
            if name not in nulls:
                shown = f"column '{name}'" if name else f"`{projection.sql(DIALECT)}`"
                raise fail(
                    f"branch {index} of the UNION ALL BY NAME selects {shown}, which the first "
                    "branch does not name; the first branch names every column of the model "
                    "(CAST(NULL AS <type>) AS <name> for those it does not own), the others "
                    "only their own, each with its name"
                )
    return nulls


def widened(select: exp.Select, nulls: dict[str, Callable[[], exp.Expr]]) -> list[exp.Expr]:
    """A narrow branch's projections as the positional UNION ALL lists them: every column,
    in the model's order, a NULL where the branch does not name it."""
    given = named(select)
    return [given[c] if c in given else null() for c, null in nulls.items()]


def positional(query: exp.Expr, path: Path | str | None = None, model: str = "") -> exp.Expr:
    """``query`` with its top-level ``UNION ALL BY NAME`` written as the positional UNION ALL
    it stands for (in place; a query without one is returned as it is)."""
    nulls = narrow(query, path, model)
    if nulls is None:
        return query
    unions = _chain(query)
    assert unions is not None
    for union in unions:
        select = _branch(union.expression)
        assert isinstance(select, exp.Select)
        select.set("expressions", widened(select, nulls))
        union.set("by_name", None)
    return query
