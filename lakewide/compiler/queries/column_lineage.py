"""Column-level lineage of a model with ``sqlglot.lineage``: which table columns feed each of
its columns, directly and followed through ``ref()``'d models down to their sources.

A column fed only by constants (``1 AS events``, ``COUNT(*)``) or by ``CAST(NULL AS T)`` (a
source that does not own it) has no table column behind it in that branch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.lineage import Node, lineage

from lakewide.compiler.trees.rewrite import table_key
from lakewide.project.by_name import positional
from lakewide.project.nodes import ModelNode
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError


@dataclass(frozen=True, order=True)
class ColumnRef:
    """A column of a catalog table, by the table's relation key (``lw.ods.impressions``)."""

    table: str
    column: str


@dataclass
class ColumnLineage:
    """Where one model column comes from."""

    column: str
    direct: list[ColumnRef] = field(default_factory=list)  # tables the model itself reads
    sources: list[ColumnRef] = field(default_factory=list)  # through ref()'d models
    unresolved: list[str] = field(default_factory=list)  # columns bound to no table


def _leaves(root: Node) -> tuple[list[ColumnRef], list[str]]:
    """The table columns at the bottom of a lineage tree, in first-seen order, and the
    column names sqlglot could bind to no table (ambiguous in a join without a schema)."""
    found: list[ColumnRef] = []
    unresolved: list[str] = []
    for node in root.walk():
        if node.downstream:
            continue
        if isinstance(node.expression, exp.Placeholder) and node.name not in unresolved:
            unresolved.append(node.name)
        if not isinstance(node.expression, exp.Table):
            continue
        ref = ColumnRef(table_key(node.expression), node.name.rsplit(".", 1)[-1].lower())
        if ref not in found:
            found.append(ref)
    return found, unresolved


def _column(name: str, direct: Node, followed: Node) -> ColumnLineage:
    refs, unresolved = _leaves(direct)
    sources, more = _leaves(followed)
    return ColumnLineage(name, refs, sources, unresolved + [m for m in more if m not in unresolved])


def _all_columns(
    query: exp.Expr, schema: Mapping[str, Any], sources: Mapping[str, str | exp.Query] | None
) -> dict[str, Node]:
    result = lineage(None, query, dict(schema), sources=sources, dialect=DIALECT)
    assert isinstance(result, dict), "lineage(None, ...) maps every output column"
    return result


def model_lineage(
    node: ModelNode,
    models: Mapping[str, str],
    schema: Mapping[str, Any] | None = None,
) -> dict[str, ColumnLineage]:
    """Each output column of ``node`` -> the table columns it is computed from.

    ``models`` maps relation keys of the project's models to their rendered SQL: a ``ref()``
    to one of them is followed into its own query, down to tables that are no model.
    ``schema`` (sqlglot's nested mapping, catalog -> namespace -> table -> column -> type)
    lets ``SELECT *`` and unqualified columns of joins resolve. Raises CompileError naming the
    model when sqlglot cannot trace its columns.
    """
    schema = schema or {}
    try:
        query = positional(sqlglot.parse_one(node.sql, read=DIALECT), node.path, node.name)
        direct = _all_columns(query, schema, None)
        followed = _all_columns(query, schema, dict(models)) if node.refs else direct
    except (SqlglotError, KeyError, ValueError) as err:
        raise CompileError(
            f"column lineage cannot be traced: {err}", path=node.path, model=node.name
        ) from None
    # ``SELECT *`` over a table of unknown columns stays ``*`` unless expanded through a ref()
    return {name: _column(name, tree, followed.get(name, tree)) for name, tree in direct.items()}
