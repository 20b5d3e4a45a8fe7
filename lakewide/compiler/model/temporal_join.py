"""Rule: an event-time temporal join (``FOR SYSTEM_TIME AS OF <fact column>``) as a range join.

``JOIN {{ ref('customers_snapshot') }} FOR SYSTEM_TIME AS OF o.order_ts AS c ON o.id = c.id``
(Flink's syntax) joins each fact row to the version of the dimension valid at the row's own
time. The joined table must be a ``snapshot`` model; its history makes the join a range join:

    ON o.id = c.id AND o.order_ts >= c.dbt_valid_from
       AND (c.dbt_valid_to IS NULL OR o.order_ts < c.dbt_valid_to)

sqlglot parses the clause as a table's ``Version`` (``TIMESTAMP AS OF``), as it does Spark's
time travel; a constant (``TIMESTAMP AS OF '2024-01-01'``) stays Spark's time travel, an
expression naming a column is a temporal join.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from sqlglot import exp

from lakewide.compiler.trees.rewrite import table_key
from lakewide.project.nodes import ModelNode
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError

E = TypeVar("E", bound=exp.Expr)
#: key of a rewritten join's ``meta``: the temporal join as the model wrote it
WRITTEN = "lakewide_temporal_join"


def temporal_tables(tree: exp.Expr) -> list[exp.Table]:
    """Tables joined ``AS OF`` an expression that names a column (not Spark time travel)."""
    found = []
    for table in tree.find_all(exp.Table):
        version = table.args.get("version")
        if isinstance(version, exp.Version) and version.expression is not None:
            if version.expression.find(exp.Column) is not None:
                found.append(table)
    return found


def rewrite_temporal_joins(
    tree: E, snapshots: Mapping[str, tuple[str, str, str | None]], node: ModelNode
) -> E:
    """``tree`` with each temporal join turned into a range join on the snapshot's history
    (in place). ``snapshots``: relation key -> (valid_from, valid_to, is_deleted or None)
    column names of every snapshot model (``hard_deletes='new_record'``: a deletion record
    is a version in which the key does not exist, so it never joins). Raises CompileError
    naming the table when it is not a snapshot model or the join is not an inner or left join
    with an ON condition."""

    def error(message: str) -> CompileError:
        return CompileError(message, path=node.path, model=node.name)

    for table in temporal_tables(tree):
        version = table.args["version"]
        key = table_key(table)
        shown = ".".join(part.name for part in table.parts)
        if key not in snapshots:
            known = ", ".join(sorted(snapshots)) or "none in this project"
            raise error(
                f"FOR SYSTEM_TIME AS OF joins a snapshot model's history; {shown} is not a "
                f"snapshot model (materialized='snapshot'). Snapshot models: {known}"
            )
        join = table.parent
        if not isinstance(join, exp.Join):
            raise error(f"FOR SYSTEM_TIME AS OF applies to a joined table: {shown}")
        side, kind = join.side.upper(), join.kind.upper()
        if side not in ("", "LEFT") or kind not in ("", "INNER", "OUTER") or join.args.get("using"):
            raise error(
                f"a temporal join of {shown} is a JOIN or LEFT JOIN ... ON <key condition>; "
                f"found {' '.join(w for w in (side, kind) if w) or 'a join'} "
                f"{'USING' if join.args.get('using') else ''}".rstrip()
            )
        on = join.args.get("on")
        if on is None:
            raise error(f"a temporal join of {shown} needs ON <key condition>")
        valid_from, valid_to, deleted = snapshots[key]
        alias = table.alias_or_name
        at = version.expression
        start = exp.column(valid_from, table=alias, quoted=True)
        end = exp.column(valid_to, table=alias, quoted=True)
        within = exp.and_(
            exp.GTE(this=at.copy(), expression=start),
            exp.paren(exp.or_(end.is_(exp.null()), exp.LT(this=at.copy(), expression=end.copy()))),
        )
        if deleted is not None:
            flag = exp.column(deleted, table=alias, quoted=True)
            within = exp.and_(within, exp.NEQ(this=flag, expression=exp.Literal.string("True")))
        # what the user wrote, for errors about this join (the rewritten ON is ours)
        join.meta[WRITTEN] = (
            f"{join.side + ' ' if join.side else ''}JOIN {shown} FOR SYSTEM_TIME AS OF "
            f"{at.sql(DIALECT)} AS {alias} ON {on.sql(DIALECT)}"
        )
        join.set("on", exp.and_(exp.paren(on.copy()), within))
        table.set("version", None)
    return tree
