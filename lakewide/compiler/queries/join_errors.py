"""Rule: Spark's type error on a join condition, told as the model's join.

Spark analyses the compiled statement, so a join key whose two sides have types it cannot
compare fails with ``Cannot resolve "(customer_id = customer_id)" due to data type mismatch
... line 1 pos 340``: a position in SQL the user never wrote, with the qualifiers gone. This
finds the equality among the ON conditions of the model's joins and names the model file, the
join as written and the cast to add.
"""

from __future__ import annotations

import re

from sqlglot import exp

from lakewide.compiler.model.temporal_join import WRITTEN
from lakewide.project.nodes import ModelNode
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import LakewideError, ModelRunError

_MISMATCH = re.compile(
    r'Cannot resolve "\((?P<condition>.+?)\)" due to data type mismatch: .*?'
    r'incompatible types \("(?P<left>[^"]+)" and "(?P<right>[^"]+)"\)'
)


def _unqualified(condition: exp.Expr) -> str:
    """The condition as Spark prints it in the error: columns without their table."""
    bare = condition.copy()
    for column in bare.find_all(exp.Column):
        column.set("table", None)
    return bare.sql(DIALECT).replace("`", "")


def _written(join: exp.Join) -> str:
    if join.meta.get(WRITTEN):
        return str(join.meta[WRITTEN])
    table = join.this
    shown = join.this.sql(DIALECT)
    if isinstance(table, exp.Table):
        shown = ".".join(part.name for part in table.parts)
        shown += f" AS {table.alias}" if table.alias else ""
    side = f"{join.side} " if join.side else ""
    return f"{side}JOIN {shown} ON {join.args['on'].sql(DIALECT)}"


def join_type_error(node: ModelNode, tree: exp.Expr, err: LakewideError) -> ModelRunError | None:
    """The error naming ``node``'s file and join for Spark's type mismatch ``err`` on an
    equality of a join's ON in the compiled ``tree``; None when ``err`` is another error."""
    found = _MISMATCH.search(err.message)
    if found is None:
        return None
    for join in tree.find_all(exp.Join):
        on = join.args.get("on")
        if on is None:
            continue
        for equality in on.find_all(exp.EQ):
            if _unqualified(equality) != found["condition"]:
                continue
            left, right = (side.sql(DIALECT) for side in (equality.this, equality.expression))
            told = (
                f"the join {_written(join)} compares {left} ({found['left']}) with {right} "
                f"({found['right']}), which Spark cannot compare; cast one side in the ON, "
                f"e.g. CAST({left} AS {found['right']}) = {right}"
            )
            key = f"join {join.this.alias_or_name}"
            return ModelRunError(told, path=node.path, model=node.name, key=key)
    return None
