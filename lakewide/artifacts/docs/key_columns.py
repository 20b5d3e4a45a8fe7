"""What the docs say of a key table's columns: the source branches that own each one and how
the merge engine treats it."""

from __future__ import annotations

from typing import Any

from lakewide.compiler import WideModel
from lakewide.compiler.trees.rewrite import driving_table


def owners_of(model: WideModel, ids: dict[str, str]) -> dict[str, list[Any]]:
    """Key tables: per column, the source branches that own it (write it)."""
    owners: dict[str, list[Any]] = {c: [] for c in model.columns}
    for branch in model.branches:
        table = driving_table(branch.select)
        for column in branch.owned:
            owners[column].append(
                {
                    "branch": branch.index + 1,
                    "name": branch.name,
                    "table": table,
                    "unique_id": ids.get(table or ""),
                }
            )
    return owners


def merge_roles(model: WideModel) -> dict[str, str]:
    """Key tables: how the merge engine treats each column (key, sequence, row kind, or the
    function folding it: ``sum``, ``last_non_null_value`` ... with its sequence group)."""
    roles: dict[str, str] = {}
    for column in model.columns:
        if column in model.primary_key:
            roles[column] = "primary key"
        elif column in model.sequence:
            roles[column] = "sequence field"
        elif column == model.row_kind:
            roles[column] = "row kind"
        elif not model.engine.picks_rows:
            group = model.group_of(column)
            name = model.aggregate(column).name
            roles[column] = f"{name} (group {group.name})" if group is not None else name
        else:
            roles[column] = model.engine.label
    return roles
