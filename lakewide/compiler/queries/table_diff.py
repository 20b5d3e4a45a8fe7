"""``lakewide diff``'s statements (SQLMesh's table_diff): two sides of one model, full-outer
joined on the key, as sqlglot trees.

Side ``a`` and ``b`` are temporary views holding the compared table's rows; keys match with
null-safe equality (``<=>``), so NULL key parts pair up as GROUP BY would pair them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

PRESENT = "__lw_diff_present"  # TRUE on every row of a side: NULL after the join = missing


@dataclass(frozen=True)
class DiffQuery:
    """The joined sides: ``view_a``/``view_b`` keyed by ``keys``, comparing ``columns``."""

    view_a: str
    view_b: str
    keys: list[str]
    columns: list[str]  # compared columns (both sides, not keys)

    def _side(self, view: str, alias: str) -> exp.Subquery:
        names = [*self.keys, *self.columns]
        select = exp.select(*(exp.column(n) for n in names)).select(exp.alias_(exp.true(), PRESENT))
        return select.from_(exp.to_table(view)).subquery(alias)

    def _joined(self) -> exp.Select:
        on = exp.and_(*(exp.NullSafeEQ(this=_a(k), expression=_b(k)) for k in self.keys))
        return (
            exp.select()
            .from_(self._side(self.view_a, "a"))
            .join(self._side(self.view_b, "b"), on=on, join_type="FULL OUTER")
        )

    def only(self, side: str) -> exp.Condition:
        """Rows present on ``side`` only."""
        missing = _b if side == "a" else _a
        return missing(PRESENT).is_(exp.null())

    def both(self) -> exp.Condition:
        return exp.and_(
            exp.not_(_a(PRESENT).is_(exp.null())), exp.not_(_b(PRESENT).is_(exp.null()))
        )

    def differs(self, column: str) -> exp.Condition:
        return exp.not_(exp.NullSafeEQ(this=_a(column), expression=_b(column)))

    def any_differs(self) -> exp.Condition:
        if not self.columns:
            return exp.false()
        return exp.or_(*(self.differs(c) for c in self.columns))

    def stats(self) -> exp.Select:
        """One row: only_a, only_b, both, rows_differing, then one count per column."""
        counts = [
            ("only_a", self.only("a")),
            ("only_b", self.only("b")),
            ("both", self.both()),
            ("rows_differing", exp.and_(self.both(), self.any_differs())),
            *((c, exp.and_(self.both(), self.differs(c))) for c in self.columns),
        ]
        return self._joined().select(
            *(
                exp.alias_(
                    exp.Sum(
                        this=exp.If(
                            this=cond, true=exp.Literal.number(1), false=exp.Literal.number(0)
                        )
                    ),
                    f"n{i}",
                )
                for i, (_, cond) in enumerate(counts)
            )
        )

    def sample_only(self, side: str, limit: int) -> exp.Select:
        """Up to ``limit`` rows found on ``side`` only, by key."""
        column = _a if side == "a" else _b
        names = [*self.keys, *self.columns]
        return (
            self._joined()
            .select(*(exp.alias_(column(n), n) for n in names))
            .where(self.only(side))
            .order_by(*(column(k) for k in self.keys))
            .limit(limit)
        )

    def sample_differing(self, columns: list[str], limit: int) -> exp.Select:
        """Up to ``limit`` keys in both sides whose ``columns`` differ: the key, then each
        column's value in a and in b."""
        projections: list[exp.Expr] = [exp.alias_(_a(k), k) for k in self.keys]
        for c in columns:
            projections += [exp.alias_(_a(c), f"{c}__a"), exp.alias_(_b(c), f"{c}__b")]
        differing = DiffQuery(self.view_a, self.view_b, self.keys, columns).any_differs()
        return (
            self._joined()
            .select(*projections)
            .where(exp.and_(self.both(), differing))
            .order_by(*(_a(k) for k in self.keys))
            .limit(limit)
        )


def duplicate_keys(view: str, keys: list[str]) -> exp.Select:
    """How many key values repeat in ``view`` (0 when the key identifies a row)."""
    repeated = (
        exp.select(*(exp.column(k) for k in keys))
        .from_(exp.to_table(view))
        .group_by(*(exp.column(k) for k in keys))
        .having(exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1)))
    )
    return exp.select(exp.Count(this=exp.Star())).from_(repeated.subquery("repeated"))


def _a(name: str) -> exp.Column:
    return exp.column(name, table="a", quoted=True)


def _b(name: str) -> exp.Column:
    return exp.column(name, table="b", quoted=True)


COUNT_NAMES = ("only_a", "only_b", "both", "rows_differing")
