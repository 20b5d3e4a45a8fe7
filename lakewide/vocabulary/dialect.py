"""The one SQL dialect lakewide reads and writes, Spark SQL, and the one printer of statements.

Every parse (``sqlglot.parse_one(..., read=DIALECT)``), type (``exp.DataType.build(...,
dialect=DIALECT)``) and generated text (``tree.sql(DIALECT)``, ``to_sql``) names this constant.
"""

from __future__ import annotations

from sqlglot import exp

DIALECT = "spark"


def to_sql(statement: exp.Expr, *, pretty: bool = True, copy: bool = True) -> str:
    """The one place statement text is produced from a tree (Spark dialect): pretty-printed and
    ended by ``;`` and a new line, or on one line (``pretty=False``) as a run sends it.

    The generator rewrites the tree it prints, so it prints a copy; ``copy=False`` saves that
    copy for a tree built only to be printed.
    """
    return statement.sql(DIALECT, pretty=pretty, copy=copy) + (";\n" if pretty else "")
