"""Rule: point a statement's upstream tables at pinned or incremental reads (temporary views)."""

from __future__ import annotations

from typing import TypeVar, cast

from sqlglot import exp

E = TypeVar("E", bound=exp.Expr)


def table_key(table: exp.Table) -> str:
    """Case-insensitive dotted name of a table reference."""
    return ".".join(part.name for part in table.parts).lower()


def _cte_names(tree: exp.Expr) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def tables_in(tree: exp.Expr) -> list[str]:
    """Keys of the real tables a query reads (CTE names excluded), first one first."""
    ctes = _cte_names(tree)
    keys: list[str] = []
    for table in tree.find_all(exp.Table):
        key = table_key(table)
        if key not in ctes and key not in keys:
            keys.append(key)
    return keys


def driving_table(select: exp.Select) -> str | None:
    """The table a branch is driven by: the first real table of its FROM clause."""
    source = select.args.get("from_")
    if source is None:
        return None
    found = tables_in(source)
    return found[0] if found else None


def replace_tables(tree: E, views: dict[str, str]) -> E:
    """A copy of ``tree`` reading ``views[key]`` wherever it read table ``key``.

    The replacement keeps the original name as its alias, so qualified columns still resolve.
    """
    ctes = _cte_names(tree)

    def swap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and not isinstance(node.parent, (exp.Merge,)):
            key = table_key(node)
            if key in views and key not in ctes:
                alias = node.alias or node.name
                return exp.table_(views[key], alias=alias)
        return node

    # swap turns a table into a table and keeps every other node: the root keeps its type
    return cast(E, tree.copy().transform(swap))
