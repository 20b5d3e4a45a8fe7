"""``lakewide.union_sources``: a many-source model written from column lists.

A wide model of many sources is one ``UNION ALL`` branch per source, each owning some of the
table's columns. This macro writes it (as dbt_utils' ``union_relations`` pads missing columns
with NULL) from each source's ``columns:`` in the sources' YAML (``data_type`` gives the
column's type) or from a column list given in the model::

    {{ lakewide.union_sources([source('s', 'a'), source('s', 'b')],
                              key=['user_id'], sequence='ts') }}

It writes the narrow form (``lakewide.project.by_name``): the first branch names every column
(``CAST(NULL AS <type>) AS name`` where its source does not own it), each later branch only
its own, joined by ``UNION ALL BY NAME``; so the model grows with the columns, not with
sources x columns. The compiler reads it as the UNION-ALL-with-NULLs it stands for.

The key and sequence columns are selected from every source; every other column is owned by
the sources that list it (several sources may feed one column: a shared column).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.project.sources import Source
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import ConfigError

USAGE = (
    "lakewide.union_sources([source('s', 'a'), {'relation': ref('m'), 'columns': "
    "{'c': 'BIGINT'}}], key=['id'], sequence='ts', types={'c': 'BIGINT'})"
)


class SourceText(str):
    """What ``source()`` renders: the relation's text, remembering the declared source."""

    source: Source | None = None

    @classmethod
    def of(cls, source: Source) -> SourceText:
        """The text of ``source``'s relation, carrying ``source``."""
        text = cls(str(source.relation))
        text.source = source
        return text


@dataclass
class _Branch:
    """One source of the union: its relation and its columns (name -> declared type)."""

    what: str  # how messages name it: source('s', 'a') (models/sources.yml) or the relation
    table: exp.Table
    columns: dict[str, str | None]


def _names(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"union_sources: {what} must be a column name or a list of names; {USAGE}")


def _declared(source: Source) -> dict[str, str | None]:
    """A source's ``columns:`` from its YAML: name -> ``data_type`` (None when not given)."""
    found: dict[str, str | None] = {}
    for index, column in enumerate(source.columns):
        if not isinstance(column, Mapping) or not isinstance(column.get("name"), str):
            raise ConfigError(
                f"union_sources: columns[{index}] of source('{source.source_name}', "
                f"'{source.table_name}') in {source.path} must be a mapping with a 'name' "
                "(and a 'data_type', e.g. `- {name: amount, data_type: bigint}`)"
            )
        data_type = column.get("data_type")
        found[column["name"]] = None if data_type is None else str(data_type)
    return found


def _branch(item: Any) -> _Branch:
    """A list item: ``source(...)``, or ``{'relation': ..., 'columns': {...} or [...]}``."""
    given: Any = None
    if isinstance(item, Mapping):
        if set(item) - {"relation", "columns"} or "relation" not in item:
            raise ConfigError(
                f"union_sources: a mapping item takes 'relation' and 'columns' "
                f"(found {', '.join(map(str, item))}); {USAGE}"
            )
        item, given = item["relation"], item.get("columns")
    if not isinstance(item, str):
        raise ConfigError(f"union_sources: expected source(), ref() or a mapping; {USAGE}")
    source = item.source if isinstance(item, SourceText) else None
    what = f"source('{source.source_name}', '{source.table_name}')" if source else str(item)
    if source is not None:
        table = source.relation.table()
        what += f" ({source.path})"
    else:
        table = exp.to_table(str(item), dialect=DIALECT)
    if isinstance(given, Mapping):
        columns = {str(k): None if v is None else str(v) for k, v in given.items()}
    elif given is not None:
        declared = _declared(source) if source else {}
        columns = {name: declared.get(name) for name in _names(given, f"columns of {what}")}
    elif source is not None and source.columns:
        columns = _declared(source)
    else:
        raise ConfigError(
            f"union_sources: {what} has no column list; declare its `columns:` (with "
            f"`data_type`) in the sources' YAML or give them in the model: {USAGE}"
        )
    return _Branch(what, table, columns)


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> tuple[exp.DataType | None, str]:
    """A type's text parsed once (a wide model declares a thousand columns of a few types),
    with its SQL; shared: callers copy it before putting it in a tree."""
    try:
        built = exp.DataType.build(text, dialect=DIALECT)
    except (ParseError, ValueError):
        return None, ""
    if built.is_type(exp.DataType.Type.USERDEFINED):
        return None, ""
    return built, built.sql(DIALECT)


def _type(text: str, column: str, where: str) -> exp.DataType:
    built, _sql = _parsed(text)
    if built is None:
        raise ConfigError(
            f"union_sources: data_type '{text}' of column '{column}' ({where}) is not a Spark "
            "SQL type; use e.g. STRING, BIGINT, DOUBLE, DECIMAL(10, 2), TIMESTAMP, ARRAY<INT>"
        )
    return built


def _column_type(
    column: str, owners: list[_Branch], types: Mapping[str, Any]
) -> exp.DataType | None:
    """The type of a column's NULLs: ``types`` given in the model, else the owners' one
    declared ``data_type`` (None when every source owns the column: no NULL is written)."""
    if column in types:
        return _type(str(types[column]), column, "types= of the model")
    declared = {b.what: _type(t, column, b.what) for b in owners if (t := b.columns[column])}
    distinct = {_parsed(t)[1] for b in owners if (t := b.columns[column])}
    if len(distinct) > 1:
        listed = "; ".join(f"{t.sql(DIALECT)} in {w}" for w, t in declared.items())
        raise ConfigError(
            f"union_sources: column '{column}' has conflicting types: {listed}; declare one "
            f"data_type for it, or choose one in the model with types={{'{column}': '<type>'}}"
        )
    if not declared:
        return None
    return next(iter(declared.values()))


def union_sources(
    relations: Any,
    key: Any,
    sequence: Any = None,
    types: Mapping[str, Any] | None = None,
) -> str:
    """The UNION ALL of ``relations`` with typed NULLs for the columns a source does not own.

    ``relations``: ``source()`` results (columns from the sources' YAML) or mappings
    ``{'relation': <source() or ref() or name>, 'columns': {name: type} or [names]}``;
    ``key`` and ``sequence``: columns every branch selects itself; ``types``: a column's type
    where no source declares it or the sources disagree.
    """
    keys, sequences = _names(key, "key"), _names(sequence, "sequence")
    if not keys:
        raise ConfigError(f"union_sources: give the key column(s); {USAGE}")
    if not isinstance(relations, (list, tuple)) or not relations:
        raise ConfigError(f"union_sources: give a non-empty list of relations; {USAGE}")
    types = types or {}
    branches = [_branch(item) for item in relations]
    common = set(keys) | set(sequences)
    order: dict[str, list[_Branch]] = {}
    for branch in branches:
        for column in branch.columns:
            if column not in common:
                order.setdefault(column, []).append(branch)
    unknown = sorted(set(types) - set(order))
    if unknown:
        raise ConfigError(
            f"union_sources: types= names {', '.join(map(repr, unknown))}, which no source "
            f"lists; the sources' columns are: {', '.join(order) or 'none'}"
        )
    nulls: dict[str, exp.DataType | None] = {}
    for column, owners in order.items():
        nulls[column] = _column_type(column, owners, types)
        if nulls[column] is None and len(owners) < len(branches):
            first = owners[0].what
            raise ConfigError(
                f"union_sources: column '{column}' of {first} has no data_type, and the "
                f"sources without it need a typed NULL; add `data_type:` to it in the "
                f"sources' YAML, give {{'{column}': '<type>'}} as its columns, or "
                f"types={{'{column}': '<type>'}} in the model"
            )
    everywhere = {c for c, owners in order.items() if len(owners) == len(branches)}
    selects = [
        _select(b, keys, sequences, nulls, everywhere, first=i == 0) for i, b in enumerate(branches)
    ]
    union: exp.Query = selects[0]
    for select in selects[1:]:  # narrow: each later branch names its own columns only
        union = exp.Union(this=union, expression=select, distinct=False, by_name=True)
    return union.sql(DIALECT, copy=False)


def _select(
    branch: _Branch,
    keys: list[str],
    sequences: list[str],
    nulls: dict[str, exp.DataType | None],
    everywhere: set[str],
    *,
    first: bool,
) -> exp.Select:
    """One branch: keys, its columns, sequences. The first branch names every column (a typed
    NULL where it does not own one, its own cast to the column's type where other sources
    write NULLs for it: the type of their NULLs); a later one only its own."""
    projections: list[exp.Expr] = [exp.column(k) for k in keys]
    for column, null_type in nulls.items():
        if column in branch.columns:
            value: exp.Expr = exp.column(column)
            own = branch.columns[column]
            differs = own and null_type is not None and _type(own, column, branch.what) != null_type
            if null_type is not None and (differs or (first and column not in everywhere)):
                value = exp.alias_(exp.Cast(this=value, to=null_type.copy()), column)
            projections.append(value)
        elif first:
            assert null_type is not None  # checked by union_sources
            projections.append(exp.alias_(exp.Cast(this=exp.Null(), to=null_type.copy()), column))
    projections.extend(exp.column(s) for s in sequences)
    return exp.select(*projections).from_(branch.table)
