"""Rule: a column of the assembled per-source pre-folds (``build_prefolds``) taken from the folds
of the sources that feed it, where that needs more than one fold's value: the typing the
union gives it, and the columns of a sequence group.

A sequence group's columns are set by its last record in ``(group sequence, source,
arrival)`` order among the records with a group sequence, NULLs included (a source writes a
whole group or none of it). Each source that carries the group (a *participant*) folds the
group over its own records: its last record's columns and sequence. The key's last record is
then the last one of the participant whose ``STRUCT(group sequence, source index)`` is the
greatest (a participant without a record of the group has NULL sequence fields, which sort
first, as the union's ordering sorts a NULL sequence), and each group column is that
participant's value. A group with one participant is taken from its fold as is.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from lakewide.compiler.folds.fold_rows import helper
from lakewide.compiler.model.versions import BRANCH_FIELD
from lakewide.compiler.model.wide_model import Branch, Group, WideModel


def fold_name(branch: Branch) -> str:
    """The alias of a source's pre-fold."""
    return f"__lw_f{branch.index}"


def joined(model: WideModel, select: exp.Select, keys: str) -> exp.Select:
    """``select`` (over the key universe aliased ``keys``) with every source's fold LEFT
    JOINed on the key."""
    for branch in model.branches:
        on = exp.and_(
            *(
                exp.EQ(
                    this=exp.column(k, table=keys),
                    expression=exp.column(k, table=fold_name(branch)),
                )
                for k in model.primary_key
            )
        )
        select = select.join(exp.table_(fold_name(branch)), on=on, join_type="left", copy=False)
    return select


def greatest(parts: Sequence[exp.Expr]) -> exp.Expr:
    """``GREATEST(parts)`` (the one part alone)."""
    return parts[0] if len(parts) == 1 else exp.func("GREATEST", *parts)


def struct_field(struct: exp.Expr, name: str) -> exp.Expr:
    """``(struct).name``."""
    return exp.Dot(this=exp.Paren(this=struct), expression=exp.to_identifier(name))


def typed(model: WideModel, column: str, value: exp.Expr) -> exp.Expr:
    """``value`` typed as the union types the column: with the ``CAST(NULL AS T)`` the other
    branches write, ``COALESCE(value, CAST(NULL AS T))`` (Spark widens both alike)."""
    declared = [exp.cast(exp.null(), t.copy()) for t in model.null_types(column)]
    return exp.func("COALESCE", value, *declared) if declared else value


def participants(model: WideModel, group: Group) -> list[Branch]:
    """The sources carrying the group's sequence (any of its fields), in branch order."""
    return [b for b in model.branches if any(f in b.owned for f in group.sequence)]


def group_apart(model: WideModel, group: Group) -> bool:
    """Whether the group's columns can be taken from per-source folds: an aggregated column
    of the group has one participant (no per-source aggregates to combine). (Each source
    writes a whole group or none of it: ``validate``.)"""
    sources = participants(model, group)
    return len(sources) == 1 or (
        bool(sources) and not any(model.group_aggregated(c) for c in group.columns)
    )


def _winner(model: WideModel, group: Group) -> exp.Expr:
    """The index of the participant holding the key's last record of the group."""
    structs = [
        exp.Struct(
            expressions=[
                *(
                    exp.alias_(exp.column(f, table=fold_name(b)), f"s{i}")
                    for i, f in enumerate(group.sequence)
                ),
                exp.alias_(exp.Literal.number(b.index), BRANCH_FIELD),
            ]
        )
        for b in participants(model, group)
    ]
    return struct_field(greatest(structs), BRANCH_FIELD)


def grouped(model: WideModel, group: Group, column: str) -> exp.Expr:
    """A column of a sequence group (guarded or sequence field), aliased."""
    sources = participants(model, group)
    if len(sources) == 1:
        value: exp.Expr = exp.column(column, table=fold_name(sources[0]))
    else:
        value = exp.Case(
            this=_winner(model, group),
            ifs=[
                exp.If(
                    this=exp.Literal.number(b.index),
                    true=exp.column(column, table=fold_name(b)),
                )
                for b in sources
                if column in b.owned
            ],
        )
    return exp.alias_(typed(model, column, value), column, copy=False)


def summed(parts: Sequence[exp.Expr]) -> exp.Expr:
    """The sum of ``parts``, a NULL one (a fold without the key) counted as 0."""
    total: exp.Expr | None = None
    for part in parts:
        term = exp.func("COALESCE", part, exp.Literal.number(0))
        total = term if total is None else exp.Add(this=total, expression=term)
    assert total is not None
    return total


def _count(name: str, sources: list[Branch]) -> exp.Expr:
    """A helper count summed over the sources' folds."""
    parts = [exp.column(name, table=fold_name(b)) for b in sources]
    return exp.alias_(summed(parts), name, copy=False)


def group_helpers(model: WideModel) -> list[exp.Expr]:
    """The helper columns a batch's MERGE reads of the groups: per group how many of the
    batch's records carry its sequence; per aggregated group column how many inputs it
    folded (that column's group has one participant)."""
    out = []
    for group in model.groups:
        sources = participants(model, group)
        out.append(_count(helper(f"gn_{group.index}"), sources))
        out += [
            _count(helper(f"n_{c}"), sources) for c in group.columns if model.group_aggregated(c)
        ]
    return out
