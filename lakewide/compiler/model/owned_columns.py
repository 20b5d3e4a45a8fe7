"""Rule: find which model columns each source branch owns.

A projection that is a bare ``NULL`` or ``CAST(NULL AS T)`` means "this source does not own
this column"; anything else is owned.
"""

from __future__ import annotations

from pathlib import Path

from sqlglot import exp

from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError


def is_null_projection(projection: exp.Expr) -> bool:
    """True for ``NULL``, ``CAST(NULL AS T)`` and ``TRY_CAST(NULL AS T)``, aliased or not."""
    node = projection.this if isinstance(projection, exp.Alias) else projection
    while isinstance(node, (exp.Cast, exp.Paren)):
        node = node.this
    return isinstance(node, exp.Null)


def model_columns(first: exp.Select, *, model: str, path: Path | str | None = None) -> list[str]:
    """The model's column names, taken from the first branch (as SQL's UNION does)."""
    names: list[str] = []
    for position, projection in enumerate(first.expressions, start=1):
        if isinstance(projection, exp.Star) or (
            isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
        ):
            raise CompileError(
                "SELECT * cannot be split into owned columns; list the columns of the first "
                "branch explicitly",
                model=model,
                path=path,
            )
        named = isinstance(projection, exp.Alias) or (
            isinstance(projection, exp.Column) and not isinstance(projection.this, exp.Star)
        )
        name = projection.alias_or_name if named else ""
        if not name:
            raise CompileError(
                f"column {position} of the first branch has no name; add AS <column_name> "
                f"to `{projection.sql(DIALECT)}`",
                model=model,
                path=path,
            )
        if name in names:
            raise CompileError(
                f"column '{name}' appears twice in the first branch", model=model, path=path
            )
        names.append(name)
    return names


def owned_columns(
    branch: exp.Select,
    columns: list[str],
    *,
    index: int,
    model: str,
    path: Path | str | None = None,
) -> dict[str, exp.Expr]:
    """Map each column the branch owns to its (unaliased) expression, in model column order."""
    projections = branch.expressions
    if len(projections) != len(columns):
        raise CompileError(
            f"UNION ALL branch {index + 1} has {len(projections)} columns but the model has "
            f"{len(columns)} ({', '.join(columns)}); align every branch to the same columns, "
            "using CAST(NULL AS <type>) for columns a source does not own",
            model=model,
            path=path,
        )
    owned: dict[str, exp.Expr] = {}
    for name, projection in zip(columns, projections):
        if not is_null_projection(projection):
            value = projection.this if isinstance(projection, exp.Alias) else projection
            owned[name] = value.copy()
    return owned


def owned_by_name(given: dict[str, exp.Expr], columns: list[str]) -> dict[str, exp.Expr]:
    """A narrow branch's owned columns (``given``: its projections by name, checked against
    the model's by lakewide.project.by_name), in model column order."""
    owned: dict[str, exp.Expr] = {}
    for name in columns:
        projection = given.get(name)
        if projection is not None and not is_null_projection(projection):
            value = projection.this if isinstance(projection, exp.Alias) else projection
            owned[name] = value.copy()
    return owned
