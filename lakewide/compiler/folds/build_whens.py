"""Rule: the WHEN clauses of a folded batch's MERGE: how each column of a matched row takes
the batch's value, which rows a batch deletes, and which keys it inserts."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from lakewide.compiler.aggregates.aggregate_inputs import Combine
from lakewide.compiler.folds.build_folds import after_name
from lakewide.compiler.folds.fold_rows import Rows, S, T, any_not_null, case, helper, positive
from lakewide.compiler.model import versions
from lakewide.compiler.model.ordering import incoming_older, incoming_wins
from lakewide.compiler.model.wide_model import Group


def updates(rows: Rows) -> list[exp.Expr]:
    """``SET`` assignments of the normal matched update."""
    model = rows.model
    wins = incoming_wins(model.sequence, S, T)
    older = incoming_older(model.sequence, S, T)
    out = []
    for column in rows.values():
        t, s = exp.column(column, table=T), exp.column(column, table=S)
        group = model.group_of(column)
        stored_version = model.versions.of(column)
        if stored_version is not None:
            out += _versioned_update(rows, column, stored_version)
            continue
        if model.engine.keeps_last_row:
            value: exp.Expr = s
        elif column in model.sequence:
            value = case(wins.copy(), s, t)
        elif group is not None and model.group_aggregated(column):
            gwins = _group_wins(group)
            value = case(
                positive(helper(f"gn_{group.index}")),
                _aggregate_merge(rows, column, gwins, exp.not_(gwins.copy())),
                t,
            )
        elif group is not None:
            value = case(_group_wins(group), s, t)
        elif model.engine.aggregates_values:
            value = _aggregate_merge(rows, column, wins.copy(), older.copy())
            if column in model.versions.non_null:
                name = versions.non_null_name(column)
                out.append(exp.EQ(this=exp.column(column, table=T), expression=value))
                value = _non_null_total(name)
                column = name
        elif not model.sequence:
            value = exp.func("COALESCE", s, t)
        else:
            take = exp.and_(
                s.is_(exp.null()).not_(copy=False),
                exp.or_(t.is_(exp.null()), wins.copy(), copy=False),
                copy=False,
            )
            value = case(take, s, t)  # is_() copied s and t
        out.append(exp.EQ(this=exp.column(column, table=T), expression=value))
    return out


def _versioned_update(rows: Rows, column: str, stored_version: str) -> list[exp.Expr]:
    """A versioned column and its version take the batch's when the batch's record sorts
    after the one that set it (first_*: before it)."""

    def take() -> exp.Expr:
        if column in rows.model.versions.plain:
            return versions.newer_plain(column, stored_version, S, T)
        return versions.newer(
            stored_version, S, T, older=versions.picks(rows.model, column) == "first"
        )

    return [
        exp.EQ(
            this=exp.column(name, table=T),
            expression=case(take(), exp.column(name, table=S), exp.column(name, table=T)),
        )
        for name in (column, stored_version)
    ]


def _present(rows: Rows) -> list[str]:
    """Columns of the target that the folded rows carry: stored ones and their versions."""
    return rows.columns + rows.model.versions.stored(rows.columns)


def _replace_row(rows: Rows, name: Callable[[str], str] = str) -> exp.Update:
    """Every stored column replaced: the source's from the batch (its column ``name(c)``),
    the others NULL."""
    sets = []
    present = _present(rows)
    for column in rows.model.table_columns:
        if column in rows.model.primary_key:
            continue
        value = exp.column(name(column), table=S) if column in present else exp.null()
        sets.append(exp.EQ(this=exp.column(column, table=T), expression=value))
    return exp.Update(expressions=sets)


def _paren(condition: exp.Expr | None) -> exp.Expr | None:
    """A WHEN condition, parenthesized when it is an OR (for the reader; the grammar agrees)."""
    return exp.Paren(this=condition) if isinstance(condition, exp.Or) else condition


def _flag(name: str) -> exp.Expr:
    return exp.func("COALESCE", exp.column(helper(name), table=S), exp.false())


def whens(rows: Rows) -> list[exp.When]:
    """The WHEN clauses of the source's MERGE."""
    model = rows.model
    wins = incoming_wins(model.sequence, S, T)
    if model.versions.row:
        wins = versions.newer(versions.ROW_VERSION, S, T)
    present = _present(rows)
    # remove_record_on_sequence_group: a new key is what follows the last removing delete
    name: Callable[[str], str] = str
    if rows.removing_groups():
        keys = model.primary_key
        name = lambda c: c if c in keys else after_name(c)  # noqa: E731
    insert = exp.Insert(
        this=exp.Tuple(expressions=[exp.column(c) for c in present]),
        expression=exp.Tuple(expressions=[_inserted(rows, c, name) for c in present]),
    )
    matched: list[tuple[exp.Expr | None, exp.Expr]] = []
    insert_if: exp.Expr | None = None
    if model.engine.keeps_first:
        out = [exp.When(matched=False, source=False, then=insert)]
        if model.versions.row:  # a record of a lower source is first, whenever it arrives
            first = versions.newer(versions.ROW_VERSION, S, T, older=True)
            out.insert(
                0, exp.When(matched=True, source=False, condition=first, then=_replace_row(rows))
            )
        return out
    if model.engine.keeps_last_row:
        if rows.retracts:
            matched.append((exp.and_(wins.copy(), _flag("deleted")), exp.var("DELETE")))
            insert_if = exp.not_(_flag("deleted"))
        matched.append((wins.copy(), _replace_row(rows)))
    else:
        if rows.removes_on_delete:
            deleted = exp.and_(positive(helper("dels")), wins.copy())
            matched.append(
                (
                    exp.and_(
                        deleted,
                        exp.EQ(
                            this=exp.column(helper("live"), table=S),
                            expression=exp.Literal.number(0),
                        ),
                    ),
                    exp.var("DELETE"),
                )
            )
            matched.append((deleted.copy(), _replace_row(rows)))
            insert_if = positive(helper("live"))
        removing = [
            g
            for g in model.groups
            if g.sequence
            and g.removes_record
            and any(c in rows.columns for c in g.all_columns)
            and rows.retracts
        ]
        if removing:
            deleted = exp.or_(*(_flag(f"after_gdel_{g.index}") for g in removing))
            # the batch's last removing delete wins over the stored row: the row is removed,
            # and the records after that delete make a new one (or none); else no delete of
            # the batch removes it and all its records merge
            cut = _cut_wins(rows)
            live = positive(helper("live"))
            matched.append(
                (exp.and_(cut, exp.or_(exp.not_(live), deleted.copy())), exp.var("DELETE"))
            )
            matched.append((cut.copy(), _replace_row(rows, after_name)))
            matched.append(
                (
                    exp.or_(
                        *(exp.and_(_flag(f"gdel_{g.index}"), _group_wins(g)) for g in removing)
                    ),
                    exp.var("DELETE"),
                )
            )
            insert_if = exp.and_(exp.not_(deleted), live.copy())
        sets = updates(rows)
        if model.versions.count:
            total = exp.Add(
                this=exp.column(versions.ROW_COUNT, table=T),
                expression=exp.column(versions.ROW_COUNT, table=S),
            )
            if rows.retracts:  # every upstream row of the key is gone: so is the key
                matched.append(
                    (
                        exp.LTE(this=total.copy(), expression=exp.Literal.number(0)),
                        exp.var("DELETE"),
                    )
                )
                insert_if = positive(versions.ROW_COUNT)
            sets.append(exp.EQ(this=exp.column(versions.ROW_COUNT, table=T), expression=total))
        if sets:
            matched.append((None, exp.Update(expressions=sets)))
    out = [
        exp.When(matched=True, source=False, condition=_paren(cond), then=then)
        for cond, then in matched
    ]
    out.append(exp.When(matched=False, source=False, condition=_paren(insert_if), then=insert))
    return out


def _aggregate_merge(rows: Rows, column: str, wins: exp.Expr, older: exp.Expr) -> exp.Expr:
    aggregate = rows.model.aggregate(column)
    ops = (
        exp.column(helper(f"ops_{column}"), table=S)
        if aggregate.function.ops is not None and rows.aggregate_retracts(column)
        else None
    )
    combined = aggregate.function.combine(
        Combine(
            exp.column(column, table=T),
            exp.column(column, table=S),
            ops,
            wins,
            older,
            aggregate.options,
        )
    )
    if column in rows.model.versions.non_null:  # no non-null input left: no value
        left = exp.GT(
            this=_non_null_total(versions.non_null_name(column)), expression=exp.Literal.number(0)
        )
        combined = case(left, combined, exp.null())
    return case(positive(helper(f"n_{column}")), combined, exp.column(column, table=T))


def _non_null_total(name: str) -> exp.Expr:
    """The stored count of a column's non-null inputs plus the batch's."""
    stored = exp.func("COALESCE", exp.column(name, table=T), exp.Literal.number(0))
    return exp.Add(this=stored, expression=exp.column(name, table=S))


def _inserted(rows: Rows, column: str, name: Callable[[str], str] = str) -> exp.Expr:
    """The batch's value of ``column`` (its column ``name(column)``) for a new key (NULL when
    no non-null input is left)."""
    value = exp.column(name(column), table=S)
    if column not in rows.model.versions.non_null:
        return value
    return case(positive(versions.non_null_name(column)), value, exp.null())


def _cut_wins(rows: Rows) -> exp.Expr:
    """The batch's last removing delete (remove_record_on_sequence_group) wins over the
    stored row: its group sequence is >= the stored one of its group."""
    parts = []
    for group in rows.removing_groups():
        cut = [helper(f"cut_{group.index}_{i}") for i in range(len(group.sequence))]
        parts.append(
            exp.and_(
                any_not_null(cut, table=S), incoming_wins(group.sequence, S, T, new_fields=cut)
            )
        )
    return exp.or_(*parts)


def _group_wins(group: Group) -> exp.Expr:
    return exp.and_(positive(helper(f"gn_{group.index}")), incoming_wins(group.sequence, S, T))
