"""Rule: the joins a model declares ``delta`` (``joins={'customers': 'delta'}``), checked.

A ``delta`` join keeps the wide table equal to a rebuild while the joined dimension changes:
the fact rows joined to changed dimension keys are derived again and their dimension-fed
columns replaced (``build_delta_join``). That is exact only where a column's rebuilt value
depends on the records of its own branch alone, so this rule refuses, naming the fix:

* engines or options where a branch's records do not decide its columns (deduplicate and
  first_row over several sources pick whole rows across them), sequence groups and change-log
  branches (``row_kind_column``);
* a join that is not ``<driving table> LEFT JOIN <dimension table> ON <equalities>`` of the
  driving table's columns with the dimension's columns (an inner join would drop fact rows,
  which the table cannot un-merge);
* the dimension used outside the SELECT list and the join's ON (a filter on it would change
  which fact rows exist), unqualified columns (which side feeds them is unknown);
* a dimension-fed column owned by another source too, or in the primary key or sequence;
* a temporal join (``FOR SYSTEM_TIME AS OF``), quoted as written.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from lakewide.compiler.model.temporal_join import WRITTEN
from lakewide.compiler.model.wide_model import Branch, WideModel
from lakewide.compiler.trees.rewrite import driving_table, table_key
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError


@dataclass(frozen=True)
class DeltaJoin:
    """One ``delta`` join of one source branch."""

    branch: Branch
    name: str  # as ``joins`` names it
    table: str  # the dimension's relation key
    alias: str  # its qualifier in the branch
    driver_alias: str  # the driving table's qualifier
    fact: tuple[exp.Expr, ...]  # driving-table side of each equality
    keys: tuple[str, ...]  # dimension key column of each equality
    columns: tuple[str, ...]  # model columns the dimension feeds (this branch's alone)


def _error(model: WideModel, message: str, key: str) -> CompileError:
    return CompileError(message, path=model.node.path, model=model.node.name, key=key)


def _qualifier(table: exp.Table) -> str:
    return (table.alias or table.name).lower()


def _joined(branch: Branch) -> list[tuple[exp.Join, exp.Table]]:
    return [
        (join, join.this)
        for join in branch.select.args.get("joins") or []
        if isinstance(join.this, exp.Table)
    ]


def _matches(name: str, table: exp.Table) -> bool:
    wanted = name.lower()
    return wanted in (_qualifier(table), table.name.lower(), table_key(table))


def delta_joins(model: WideModel) -> list[DeltaJoin]:
    """The model's ``delta`` joins, in branch order; every name in ``joins`` must name a
    relation some branch joins (``lookup`` entries only document today's behaviour)."""
    found: list[DeltaJoin] = []
    joined = [(b, j, t) for b in model.branches for j, t in _joined(b)]
    for name, semantics in model.joins.items():
        matching = [(b, j, t) for b, j, t in joined if _matches(name, t)]
        if not matching:
            names = sorted({_qualifier(t) for _, _, t in joined} | {t.name for _, _, t in joined})
            raise _error(
                model,
                f"joins names '{name}', which no source branch joins; expected the alias or "
                f"table name of a joined relation ({', '.join(names) or 'the model joins none'})",
                f"joins.{name}",
            )
        if semantics == "delta":
            found += [_delta(model, name, b, j, t) for b, j, t in matching]
    return sorted(found, key=lambda d: d.branch.index)


def _refuse_model(model: WideModel, name: str) -> None:
    key = f"joins.{name}"
    if model.engine.picks_rows and len(model.branches) > 1:
        raise _error(
            model,
            f"a delta join needs each column decided by its own source's records; "
            f"merge_engine='{model.engine.name}' with several sources picks whole rows across "
            "them. Use partial_update, or one source, or 'lookup'",
            key,
        )
    if model.groups:
        raise _error(
            model,
            "a delta join does not take sequence_groups yet (a group's sequence may come from "
            "other sources); drop sequence_groups or use 'lookup'",
            key,
        )
    if model.row_kind is not None:
        raise _error(
            model,
            "a delta join re-derives fact rows from the driving table's current rows, which a "
            "change log (row_kind_column) does not hold; use 'lookup'",
            key,
        )


def _delta(
    model: WideModel, name: str, branch: Branch, join: exp.Join, table: exp.Table
) -> DeltaJoin:
    key = f"joins.{name}"
    _refuse_model(model, name)
    where = f"UNION ALL branch {branch.index + 1} ({branch.name})"
    source = branch.select.args.get("from_")
    driver = source.this if source is not None else None
    if not isinstance(driver, exp.Table) or driving_table(branch.select) is None:
        raise _error(model, f"{where}: a delta join needs the branch to read a table in FROM", key)
    alias, driver_alias = _qualifier(table), _qualifier(driver)
    if table_key(table) == table_key(driver):
        raise _error(model, f"{where}: a delta join of the driving table with itself", key)
    if join.side.upper() != "LEFT" or join.kind.upper() in ("SEMI", "ANTI"):
        raise _error(
            model,
            f"{where}: a delta join must be a LEFT JOIN of the dimension ({name}): an inner "
            "join drops fact rows when their dimension row goes, which a merge cannot undo; "
            "write LEFT JOIN (the dimension's columns are then NULL, as a rebuild gives them)",
            key,
        )
    written = join.meta.get(WRITTEN)
    if written:
        raise _error(
            model,
            f"{where}: a delta join does not take a temporal join ({written}): each fact row "
            "joins the version valid at its own time, and a run does not re-derive them when "
            "the snapshot's history changes; leave the join 'lookup' and rebuild with "
            "--full-refresh to give older fact rows late versions",
            key,
        )
    fact, keys = _equalities(model, where, key, join, alias, driver_alias)
    for column in model.primary_key:
        qualifiers = {c.table.lower() for c in branch.owned[column].find_all(exp.Column)}
        if not qualifiers <= {driver_alias}:
            raise _error(
                model,
                f"{where}: a delta join needs the primary key from the driving table alone; "
                f"'{column}' reads {', '.join(sorted(qualifiers - {driver_alias}))}",
                key,
            )
    columns = _checked_columns(model, branch, where, key, join, alias)
    return DeltaJoin(
        branch, name, table_key(table), alias, driver_alias, fact, keys, tuple(columns)
    )


def _equalities(
    model: WideModel, where: str, key: str, join: exp.Join, alias: str, driver: str
) -> tuple[tuple[exp.Expr, ...], tuple[str, ...]]:
    """The driving-table sides and dimension key columns of the ON clause's equalities."""
    on = join.args.get("on")
    refusal = _error(
        model,
        f"{where}: a delta join's ON must be equalities (joined by AND) of the driving "
        f"table's columns ({driver}.x) with the dimension's columns ({alias}.k); found "
        f"{on.sql(DIALECT) if on is not None else 'no ON (USING or a cross join)'}",
        key,
    )
    if on is None or join.args.get("using"):
        raise refusal
    parts = list(on.flatten()) if isinstance(on, exp.And) else [on]
    fact: list[exp.Expr] = []
    keys: list[str] = []
    for part in parts:
        part = part.unnest()
        if not isinstance(part, exp.EQ):
            raise refusal
        sides = [part.this, part.expression]
        dims = [s for s in sides if isinstance(s, exp.Column) and s.table.lower() == alias]
        others = [s for s in sides if s not in dims]
        if len(dims) != 1 or len(others) != 1:
            raise refusal
        qualifiers = {c.table.lower() for c in others[0].find_all(exp.Column)}
        if qualifiers != {driver}:
            raise refusal
        fact.append(others[0])
        keys.append(dims[0].name)
    return tuple(fact), tuple(keys)


def _checked_columns(
    model: WideModel, branch: Branch, where: str, key: str, join: exp.Join, alias: str
) -> list[str]:
    """The model columns the dimension feeds, each owned by this branch alone."""
    unqualified = [c.sql(DIALECT) for c in branch.select.find_all(exp.Column) if not c.table]
    if unqualified:
        raise _error(
            model,
            f"{where}: qualify {', '.join(sorted(set(unqualified)))} with its table's alias: a "
            "delta join needs to tell which columns the dimension feeds",
            key,
        )
    allowed = {id(c) for p in branch.select.expressions for c in p.find_all(exp.Column)}
    allowed |= {id(c) for c in join.args["on"].find_all(exp.Column)}
    outside = [
        c.sql(DIALECT)
        for c in branch.select.find_all(exp.Column)
        if c.table.lower() == alias and id(c) not in allowed
    ]
    if outside:
        raise _error(
            model,
            f"{where}: {', '.join(outside)} uses the dimension outside the SELECT list and the "
            "join's ON; a delta join may only feed columns (a filter on the dimension would "
            "change which fact rows exist); use 'lookup' or filter in a downstream model",
            key,
        )
    fed = [
        column
        for column, value in branch.owned.items()
        if any(c.table.lower() == alias for c in value.find_all(exp.Column))
    ]
    for column in fed:
        if column in model.primary_key or column in model.sequence:
            raise _error(
                model,
                f"{where}: the dimension feeds '{column}', a primary_key/sequence_field column; "
                "a delta join may only feed value columns",
                key,
            )
        others = [b.name for b in model.branches if b is not branch and column in b.owned]
        if others:
            raise _error(
                model,
                f"{where}: the dimension feeds '{column}', which source(s) {', '.join(others)} "
                "also own; a delta join re-derives a column from its own source's rows, so the "
                "column must be this source's alone (write NULL in the others) or use 'lookup'",
                key,
            )
    if not fed:
        raise _error(model, f"{where}: the dimension ({alias}) feeds no column; use 'lookup'", key)
    return fed
