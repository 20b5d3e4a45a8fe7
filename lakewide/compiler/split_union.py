"""Rule: split a model's top-level UNION ALL into one SELECT per source branch."""

from __future__ import annotations

from sqlglot import exp

from lakewide.errors import CompileError


def split_union(query: exp.Expression, *, model: str, path: object = None) -> list[exp.Select]:
    """Return the branches of a top-level ``UNION ALL`` (a plain SELECT is one branch).

    The branches are ``query``'s own nodes, not copies (callers pass a tree they just parsed).
    A leading ``WITH`` on the union is copied onto every branch so each branch stands alone.
    """
    ctes = query.args.get("with_") if isinstance(query, exp.SetOperation) else None
    branches: list[exp.Select] = []

    def walk(node: exp.Expression) -> None:
        if isinstance(node, exp.Subquery) and isinstance(node.this, (exp.Union, exp.Select)) \
                and not node.alias:
            walk(node.this)
        elif isinstance(node, exp.Union):
            if node.args.get("distinct"):
                raise CompileError(
                    "a wide-table model combines its sources with UNION ALL, not UNION "
                    "(UNION removes duplicates before the merge engine sees them); write UNION ALL",
                    model=model, path=path)
            walk(node.left)
            walk(node.right)
        elif isinstance(node, exp.Select):
            branches.append(node)
        else:
            raise CompileError(
                f"expected SELECT branches joined by UNION ALL, found {node.key.upper()}; "
                "INTERSECT/EXCEPT are not sources", model=model, path=path)

    walk(query)
    if ctes is not None:
        for branch in branches:
            branch.set("with_", ctes.copy())
    return branches
