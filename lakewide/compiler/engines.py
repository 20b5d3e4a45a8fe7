"""Merge engines as SQL: how rows fold per key and how a folded batch merges into the table.

One ``Rows`` context describes the rows being folded (one source's batch, or every source for
the bootstrap). Each engine contributes fold aggregates, MERGE clauses and, for the bootstrap,
which folded keys survive. The contract is the README's "Merge semantics".
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from lakewide.compiler import versions
from lakewide.compiler.aggregates import Combine, FoldInput
from lakewide.compiler.ordering import BRANCH_COLUMN, incoming_older, incoming_wins, ordering
from lakewide.compiler.wide_model import (DELETE_KINDS, RETRACT_KINDS, UPDATE_BEFORE_KINDS, Group,
                                          WideModel)

T, S = "t", "s"
LAST_DELETE = "__lw_last_delete"


def helper(name: str) -> str:
    """Name of a helper column of a folded batch (never stored)."""
    return f"__lw_{name}"


def kinds_in(column: str, kinds: tuple[str, ...]) -> exp.Expression:
    """Whether ``column`` holds one of the row kinds ``kinds`` (NULL counts as no)."""
    test = exp.In(this=exp.column(column), expressions=[exp.Literal.string(k) for k in kinds])
    return exp.func("COALESCE", test, exp.false())


def case(condition: exp.Expression, then: exp.Expression, otherwise: exp.Expression) -> exp.Case:
    """``CASE WHEN condition THEN then ELSE otherwise END``."""
    return exp.Case(ifs=[exp.If(this=condition, true=then)], default=otherwise)


def _any_not_null(fields: list[str], table: str | None = None) -> exp.Expression:
    return exp.or_(*(exp.column(f, table=table).is_(exp.null()).not_() for f in fields))


def _count(where: exp.Expression | None) -> exp.Expression:
    count = exp.Count(this=exp.Star())
    return count if where is None else exp.Filter(this=count, expression=exp.Where(this=where))


def _filter(agg: exp.Expression, where: exp.Expression | None) -> exp.Expression:
    return agg if where is None else exp.Filter(this=agg, expression=exp.Where(this=where))


def _positive(name: str) -> exp.Expression:
    """``s.<name> > 0`` for a helper count of the folded batch."""
    return exp.GT(this=exp.column(name, table=S), expression=exp.Literal.number(0))


@dataclass
class Rows:
    """The rows being folded: which stored columns they carry and what predicates apply."""

    model: WideModel
    columns: list[str]  # stored columns present in the rows, model order (key included)
    with_branch: bool
    has_row_kind: bool
    branch: int | None = None  # one source's batch: its branch index (versions name it)

    @property
    def retracts(self) -> bool:
        """Whether retract rows reach the folds (ignore_delete and first_row drop them)."""
        return self.has_row_kind and not self.model.deletes.ignore_delete \
            and self.model.engine != "first_row"

    @property
    def removes_on_delete(self) -> bool:
        return self.retracts and self.model.deletes.remove_record_on_delete

    def retract(self) -> exp.Expression:
        assert self.model.row_kind
        return kinds_in(self.model.row_kind, RETRACT_KINDS)

    def is_delete(self) -> exp.Expression:
        assert self.model.row_kind
        return kinds_in(self.model.row_kind, DELETE_KINDS)

    def version_of(self, column: str) -> exp.Expression:
        """What ``column``'s stored version holds for a record: its place, or just its sequence
        value for a plain version."""
        if column in self.model.versions.plain:
            return exp.column(self.model.sequence[0])
        return self.version()

    def version(self) -> exp.Struct:
        """A record's place without its arrival: what a versioned column stores."""
        source = (exp.column(BRANCH_COLUMN) if self.with_branch
                  else exp.Literal.number(self.branch if self.branch is not None else 0))
        return versions.version_struct(self.model.sequence, source)

    def order(self, fields: list[str] | None = None) -> exp.Expression:
        return ordering(self.model.sequence if fields is None else fields,
                        with_branch=self.with_branch)

    def prefilter(self) -> exp.Expression | None:
        """Rows dropped before folding: ignored retracts; ``-U`` under remove_record_on_delete
        or ignore_update_before."""
        if self.has_row_kind and not self.retracts:
            return exp.not_(self.retract())
        if self.removes_on_delete:
            return exp.not_(exp.and_(self.retract(), exp.not_(self.is_delete())))
        if self.retracts and self.model.deletes.ignore_update_before:
            assert self.model.row_kind
            return exp.not_(kinds_in(self.model.row_kind, UPDATE_BEFORE_KINDS))
        return None

    def window(self) -> list[exp.Expression]:
        """Extra per-row columns computed with window functions before the fold."""
        if not self.removes_on_delete:
            return []
        last = exp.Window(
            this=exp.Max(this=exp.If(this=self.is_delete(), true=self.order(), false=exp.null())),
            partition_by=[exp.column(k) for k in self.model.primary_key])
        return [exp.alias_(last, LAST_DELETE)]

    def live(self) -> exp.Expression | None:
        """Rows after the key's last delete (remove_record_on_delete), else every row."""
        if not self.removes_on_delete:
            return None
        return exp.or_(exp.column(LAST_DELETE).is_(exp.null()),
                       exp.GT(this=self.order(), expression=exp.column(LAST_DELETE)))

    def values(self) -> list[str]:
        """Stored non-key columns present in the rows."""
        return [c for c in self.columns if c not in self.model.primary_key]


def _and(*parts: exp.Expression | None) -> exp.Expression | None:
    present = [p for p in parts if p is not None]
    return exp.and_(*present) if present else None


def _aggregate_fold(rows: Rows, column: str, order: exp.Expression,
                    keep: exp.Expression | None) -> list[exp.Expression]:
    """The fold of an aggregate column plus its helper columns (count, ordered records)."""
    keep = _and(keep, _owners(rows, column))
    aggregate = rows.model.aggregate(column)
    function = aggregate.function
    retract = rows.retract() if _retracts(rows, column) else None
    if rows.retracts and retract is None:  # ignore_retract (validated at compile time)
        keep = _and(keep, exp.not_(rows.retract()))
    inp = FoldInput(exp.column(column), retract, order, aggregate.options, keep)
    counted = keep if function.counts_nulls else _and(keep, exp.column(column).is_(exp.null()).not_())
    out = [exp.alias_(function.fold(inp), column),
           exp.alias_(_count(counted), helper(f"n_{column}"))]
    stored_version = rows.model.versions.of(column)
    if stored_version is not None and function.version is not None:
        out.append(exp.alias_(function.version(inp, rows.version_of(column)), stored_version))
    if function.ops is not None and retract is not None:
        out.append(exp.alias_(function.ops(inp), helper(f"ops_{column}")))
    return out


def _retracts(rows: Rows, column: str) -> bool:
    """Whether retract rows reach ``column``'s aggregate (``ignore_retract`` drops them, for
    every function, as Paimon's ``fields.<col>.ignore-retract``)."""
    return rows.retracts and rows.model.aggregate(column).retracts


def _owners(rows: Rows, column: str) -> exp.Expression | None:
    """Bootstrap: only rows of the branches that own ``column`` feed its aggregate (another
    branch's row carries a NULL there, which is not a record of this column)."""
    if not rows.with_branch:
        return None
    owners = [b.index for b in rows.model.branches if column in b.owned]
    if len(owners) == len(rows.model.branches):
        return None
    return exp.In(this=exp.column(BRANCH_COLUMN),
                  expressions=[exp.Literal.number(i) for i in owners])


def _aggregate_merge(rows: Rows, column: str, wins: exp.Expression,
                     older: exp.Expression) -> exp.Expression:
    aggregate = rows.model.aggregate(column)
    ops = (exp.column(helper(f"ops_{column}"), table=S)
           if aggregate.function.ops is not None and _retracts(rows, column) else None)
    combined = aggregate.function.combine(Combine(exp.column(column, table=T),
                                                  exp.column(column, table=S), ops, wins,
                                                  older, aggregate.options))
    return case(_positive(helper(f"n_{column}")), combined, exp.column(column, table=T))


def _group_wins(group: Group) -> exp.Expression:
    return exp.and_(_positive(helper(f"gn_{group.index}")),
                    incoming_wins(group.sequence, S, T))


# ---------------------------------------------------------------- folds


def folds(rows: Rows) -> list[exp.Expression]:
    """Aggregates folding the rows of one key (aliased; key columns are grouped on)."""
    model, engine = rows.model, rows.model.engine
    order = rows.order()
    out: list[exp.Expression] = []
    if engine in ("deduplicate", "first_row"):
        pick = exp.ArgMax if engine == "deduplicate" else exp.ArgMin
        for column in rows.values():
            out.append(exp.alias_(pick(this=exp.column(column), expression=order.copy()), column))
        if rows.retracts:
            out.append(exp.alias_(exp.ArgMax(this=rows.retract(), expression=order.copy()),
                                  helper("deleted")))
        if model.versions.row:
            place = exp.Max if engine == "deduplicate" else exp.Min
            out.append(exp.alias_(place(this=rows.version()), versions.ROW_VERSION))
        return out
    live = rows.live()
    group_rows = exp.not_(rows.retract()) if rows.retracts and model.groups else None
    plain_keep = _and(live, group_rows)
    for column in rows.values():
        group = model.group_of(column)
        if column in model.sequence:
            keep = group_rows if model.groups else None
            out.append(exp.alias_(_filter(exp.ArgMax(this=exp.column(column), expression=order.copy()),
                                          keep), column))
        elif group is not None:
            out += _group_column_fold(rows, group, column)
        elif engine == "aggregation":
            out += _aggregate_fold(rows, column, order, None)
        else:
            cond = _and(exp.column(column).is_(exp.null()).not_(copy=False), plain_keep)
            out.append(exp.alias_(_filter(exp.ArgMax(this=exp.column(column), expression=order.copy()),
                                          cond), column, copy=False))  # _and copied plain_keep
            stored_version = model.versions.of(column)
            if stored_version is not None:
                out.append(exp.alias_(_filter(exp.Max(this=rows.version_of(column)), cond.copy()),
                                      stored_version))
    for group in model.groups:
        if any(c in rows.columns for c in group.all_columns):
            present = _any_not_null(group.sequence)
            out.append(exp.alias_(_count(present), helper(f"gn_{group.index}")))
            if rows.retracts:  # a -D removes the row (remove_record_on_sequence_group); -U not
                out.append(exp.alias_(_filter(exp.ArgMax(this=rows.is_delete(),
                                                         expression=rows.order(group.sequence)),
                                              present.copy()), helper(f"gdel_{group.index}")))
    if rows.removes_on_delete:
        out.append(exp.alias_(_count(rows.is_delete()), helper("dels")))
        out.append(exp.alias_(_count(_and(live, exp.not_(rows.retract()))), helper("live")))
    if model.versions.count:
        counted: exp.Expression = exp.Count(this=exp.Star())
        if rows.retracts:  # an upstream row deleted or updated away counts -1
            counted = exp.Sum(this=exp.If(this=rows.retract(), true=exp.Literal.number(-1),
                                          false=exp.Literal.number(1)))
        out.append(exp.alias_(counted, versions.ROW_COUNT))
    return out


def _group_column_fold(rows: Rows, group: Group, column: str) -> list[exp.Expression]:
    order = rows.order(group.sequence)
    present = _any_not_null(group.sequence)
    if rows.model.group_aggregated(column):
        return _aggregate_fold(rows, column, order, present)
    value: exp.Expression = exp.column(column)
    if rows.retracts and column not in group.sequence:
        value = exp.If(this=rows.retract(), true=exp.null(), false=value)
    return [exp.alias_(_filter(exp.ArgMax(this=value, expression=order), present), column)]


# ---------------------------------------------------------------- merge


def updates(rows: Rows) -> list[exp.Expression]:
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
        if model.engine == "deduplicate":
            value: exp.Expression = s
        elif column in model.sequence:
            value = case(wins.copy(), s, t)
        elif group is not None and model.group_aggregated(column):
            gwins = _group_wins(group)
            value = case(_positive(helper(f"gn_{group.index}")),
                         _aggregate_merge(rows, column, gwins, exp.not_(gwins.copy())), t)
        elif group is not None:
            value = case(_group_wins(group), s, t)
        elif model.engine == "aggregation":
            value = _aggregate_merge(rows, column, wins.copy(), older.copy())
        elif not model.sequence:
            value = exp.func("COALESCE", s, t)
        else:
            take = exp.and_(s.is_(exp.null()).not_(copy=False),
                            exp.or_(t.is_(exp.null()), wins.copy(), copy=False), copy=False)
            value = case(take, s, t)  # is_() copied s and t
        out.append(exp.EQ(this=exp.column(column, table=T), expression=value))
    return out


def _versioned_update(rows: Rows, column: str, stored_version: str) -> list[exp.Expression]:
    """A versioned column and its version take the batch's when the batch's record sorts
    after the one that set it (first_*: before it)."""
    def take() -> exp.Expression:
        if column in rows.model.versions.plain:
            return versions.newer_plain(column, stored_version, S, T)
        return versions.newer(stored_version, S, T,
                              older=versions.picks(rows.model, column) == "first")
    return [exp.EQ(this=exp.column(name, table=T),
                   expression=case(take(), exp.column(name, table=S), exp.column(name, table=T)))
            for name in (column, stored_version)]


def _present(rows: Rows) -> list[str]:
    """Columns of the target that the folded rows carry: stored ones and their versions."""
    return rows.columns + rows.model.versions.stored(rows.columns)


def _replace_row(rows: Rows) -> exp.Update:
    """Every stored column replaced: the source's from the batch, the others NULL."""
    sets = []
    present = _present(rows)
    for column in rows.model.table_columns:
        if column in rows.model.primary_key:
            continue
        value = exp.column(column, table=S) if column in present else exp.null()
        sets.append(exp.EQ(this=exp.column(column, table=T), expression=value))
    return exp.Update(expressions=sets)


def _paren(condition: exp.Expression | None) -> exp.Expression | None:
    """A WHEN condition, parenthesized when it is an OR (for the reader; the grammar agrees)."""
    return exp.Paren(this=condition) if isinstance(condition, exp.Or) else condition


def _flag(name: str) -> exp.Expression:
    return exp.func("COALESCE", exp.column(helper(name), table=S), exp.false())


def whens(rows: Rows) -> list[exp.When]:
    """The WHEN clauses of the source's MERGE."""
    model = rows.model
    wins = incoming_wins(model.sequence, S, T)
    if model.versions.row:
        wins = versions.newer(versions.ROW_VERSION, S, T)
    present = _present(rows)
    insert = exp.Insert(this=exp.Tuple(expressions=[exp.column(c) for c in present]),
                        expression=exp.Tuple(expressions=[exp.column(c, table=S)
                                                          for c in present]))
    matched: list[tuple[exp.Expression | None, exp.Expression]] = []
    insert_if: exp.Expression | None = None
    if model.engine == "first_row":
        out = [exp.When(matched=False, source=False, then=insert)]
        if model.versions.row:  # a record of a lower source is first, whenever it arrives
            first = versions.newer(versions.ROW_VERSION, S, T, older=True)
            out.insert(0, exp.When(matched=True, source=False, condition=first,
                                   then=_replace_row(rows)))
        return out
    if model.engine == "deduplicate":
        if rows.retracts:
            matched.append((exp.and_(wins.copy(), _flag("deleted")), exp.var("DELETE")))
            insert_if = exp.not_(_flag("deleted"))
        matched.append((wins.copy(), _replace_row(rows)))
    else:
        if rows.removes_on_delete:
            deleted = exp.and_(_positive(helper("dels")), wins.copy())
            matched.append((exp.and_(deleted, exp.EQ(this=exp.column(helper("live"), table=S),
                                                     expression=exp.Literal.number(0))),
                            exp.var("DELETE")))
            matched.append((deleted.copy(), _replace_row(rows)))
            insert_if = _positive(helper("live"))
        removing = [g for g in model.groups
                    if g.sequence and g.removes_record
                    and any(c in rows.columns for c in g.all_columns) and rows.retracts]
        if removing:
            matched.append((exp.or_(*(exp.and_(_flag(f"gdel_{g.index}"), _group_wins(g))
                                      for g in removing)), exp.var("DELETE")))
            insert_if = exp.not_(exp.or_(*(_flag(f"gdel_{g.index}") for g in removing)))
        sets = updates(rows)
        if model.versions.count:
            total = exp.Add(this=exp.column(versions.ROW_COUNT, table=T),
                            expression=exp.column(versions.ROW_COUNT, table=S))
            if rows.retracts:  # every upstream row of the key is gone: so is the key
                matched.append((exp.LTE(this=total.copy(), expression=exp.Literal.number(0)),
                                exp.var("DELETE")))
                insert_if = _positive(versions.ROW_COUNT)
            sets.append(exp.EQ(this=exp.column(versions.ROW_COUNT, table=T), expression=total))
        if sets:
            matched.append((None, exp.Update(expressions=sets)))
    out = [exp.When(matched=True, source=False, condition=_paren(cond), then=then)
           for cond, then in matched]
    out.append(exp.When(matched=False, source=False, condition=_paren(insert_if), then=insert))
    return out


def keep_key(rows: Rows) -> exp.Expression | None:
    """Bootstrap: which folded keys become rows (deleted ones do not)."""
    model = rows.model
    if model.engine == "deduplicate" and rows.retracts:
        return exp.not_(exp.func("COALESCE", exp.column(helper("deleted")), exp.false()))
    if rows.removes_on_delete:
        return exp.GT(this=exp.column(helper("live")), expression=exp.Literal.number(0))
    removing = [g for g in model.groups if g.removes_record]
    if removing and rows.retracts:
        return exp.not_(exp.or_(*(exp.func("COALESCE", exp.column(helper(f"gdel_{g.index}")),
                                           exp.false()) for g in removing)))
    return None
