"""How a seed table takes a CSV whose columns changed without losing its history: the
``ALTER TABLE`` statements Iceberg allows (a column added, a type widened), or None when only
a new table can hold the CSV (a column dropped, a type changed otherwise)."""

from __future__ import annotations

import re

from sqlglot import exp

from lakewide.project.nodes import Relation
from lakewide.vocabulary.dialect import DIALECT

WIDER = {("int", "bigint"), ("float", "double")}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")


def evolution(
    relation: Relation, old: dict[str, str], new: dict[str, str]
) -> list[exp.Alter] | None:
    """Statements taking a table of ``old`` columns (name -> Spark type, as ``DataFrame.dtypes``
    gives them) to ``new``'s; empty when they are the same; None when Iceberg cannot."""
    if any(c not in new for c in old):
        return None
    actions: list[exp.Expr] = []
    for column, type_name in old.items():
        if new[column] != type_name:
            if not widens(type_name, new[column]):
                return None
            actions.append(
                exp.AlterColumn(this=exp.to_identifier(column), dtype=_type(new[column]))
            )
    added = [c for c in new if c not in old]
    if added:
        actions.append(
            exp.Schema(
                expressions=[
                    exp.ColumnDef(this=exp.to_identifier(c), kind=_type(new[c])) for c in added
                ]
            )
        )
    return [exp.Alter(this=relation.table(), kind="TABLE", actions=[a]) for a in actions]


def widens(old: str, new: str) -> bool:
    """Whether Iceberg promotes type ``old`` to ``new`` (int -> bigint, float -> double, a
    decimal to more digits at the same scale)."""
    if (old, new) in WIDER:
        return True
    was, now = _DECIMAL.fullmatch(old), _DECIMAL.fullmatch(new)
    return bool(was and now and was[2] == now[2] and int(now[1]) >= int(was[1]))


def _type(type_name: str) -> exp.DataType:
    return exp.DataType.build(type_name, dialect=DIALECT)
