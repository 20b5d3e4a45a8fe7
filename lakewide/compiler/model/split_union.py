"""Rule: split a model's top-level UNION ALL into one SELECT per source branch."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from sqlglot import exp

from lakewide.vocabulary.errors import CompileError

# clauses that would apply to the union as a whole, or to a branch's rows as a whole: the plans
# read each source on its own (and only its new rows in incremental runs), so they cannot hold
_WHOLE_RESULT = {"order": "ORDER BY", "limit": "LIMIT", "offset": "OFFSET"}


class Where(TypedDict):
    """The model (and its file) a compile error names, passed on as keyword arguments."""

    model: str
    path: Path | str | None


def split_union(query: exp.Expr, *, model: str, path: Path | str | None = None) -> list[exp.Select]:
    """Return the branches of a top-level ``UNION ALL`` (a plain SELECT is one branch).

    The branches are ``query``'s own nodes, not copies (callers pass a tree they just parsed).
    A ``WITH`` on the union or on a branch is inlined: each reference to a CTE becomes a
    derived table holding the CTE's query, so every branch stands alone without a ``WITH``
    (a union branch cannot carry one in Spark SQL, and a branch's driving table must be a real
    table for incremental reads). ``ORDER BY``/``LIMIT``/``OFFSET`` on the union or on a
    branch are refused: the plans read each source separately.
    """
    where: Where = {"model": model, "path": path}
    ctes = query.args.get("with_") if isinstance(query, exp.SetOperation) else None
    branches: list[exp.Select] = []

    def walk(node: exp.Expr) -> None:
        if (
            isinstance(node, exp.Subquery)
            and isinstance(node.this, (exp.Union, exp.Select))
            and not node.alias
        ):
            walk(node.this)
        elif isinstance(node, exp.Union):
            if node.args.get("distinct"):
                raise CompileError(
                    "a wide-table model combines its sources with UNION ALL, not UNION "
                    "(UNION removes duplicates before the merge engine sees them); write UNION ALL",
                    **where,
                )
            if node is not query and node.args.get("with_") is not None:
                raise CompileError(
                    "a WITH inside a parenthesized UNION ALL is not supported; "
                    "move it to the top of the model",
                    **where,
                )
            _refuse_whole_result(node, "the UNION ALL", **where)
            walk(node.left)
            walk(node.right)
        elif isinstance(node, exp.Select):
            _refuse_whole_result(node, f"UNION ALL branch {len(branches) + 1}", **where)
            branches.append(node)
        else:
            raise CompileError(
                f"expected SELECT branches joined by UNION ALL, found {node.key.upper()}; "
                "INTERSECT/EXCEPT are not sources",
                **where,
            )

    walk(query)
    shared = _definitions(ctes, {}, **where) if ctes is not None else {}
    for branch in branches:
        own = branch.args.get("with_")
        defined = _definitions(own, shared, **where) if own is not None else shared
        branch.set("with_", None)
        _inline(branch, defined, **where)
    return branches


def _refuse_whole_result(
    node: exp.Query, what: str, *, model: str, path: Path | str | None
) -> None:
    for key, clause in _WHOLE_RESULT.items():
        if node.args.get(key) is not None:
            raise CompileError(
                f"{clause} on {what} is not supported: lakewide reads each source branch on "
                "its own (only its new rows in incremental runs), so it would not apply to the "
                f"rows you expect; remove it (order records with sequence_field, filter with "
                "WHERE), or put the limited query in a table model the wide model reads",
                model=model,
                path=path,
            )


def _definitions(
    with_: exp.With, outer: dict[str, exp.CTE], *, model: str, path: Path | str | None
) -> dict[str, exp.CTE]:
    """CTE name -> its definition with earlier CTEs already inlined (later names shadow)."""
    if with_.args.get("recursive"):
        raise CompileError(
            "WITH RECURSIVE cannot be split into sources; compute it in a "
            "table model and read that with ref()",
            model=model,
            path=path,
        )
    defined = dict(outer)
    for cte in with_.expressions:
        inlined = cte.copy()
        _inline(inlined.this, defined, model=model, path=path)
        defined = {**defined, cte.alias_or_name.lower(): inlined}
    return defined


def _inline(
    tree: exp.Expr, defined: dict[str, exp.CTE], *, model: str, path: Path | str | None
) -> None:
    """Replace, in place, each table reference to a CTE of ``defined`` by its query."""
    if not defined:
        return
    for nested in tree.find_all(exp.CTE):
        if nested.alias_or_name.lower() in defined:
            raise CompileError(
                f"CTE '{nested.alias_or_name}' is defined twice (once inside a "
                "query, once around it); rename one",
                model=model,
                path=path,
            )
    for table in list(tree.find_all(exp.Table)):
        name = table.name.lower()
        if table.args.get("db") or table.args.get("catalog") or name not in defined:
            continue
        cte = defined[name]
        alias = exp.TableAlias(this=exp.to_identifier(table.alias or cte.alias_or_name))
        columns = cte.args["alias"].columns
        if columns:  # WITH a(x, y) AS (...): the derived table keeps the column names
            alias.set("columns", [c.copy() for c in columns])
        table.replace(exp.Subquery(this=cte.this.copy(), alias=alias))
