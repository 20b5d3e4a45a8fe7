"""Rule: the statements of a ``snapshot`` model (dbt snapshots: a type-2 history of its input).

Every run turns the input rows it reads into candidate versions (``dbt_valid_from``: the row's
``updated_at``; ``strategy='check'`` without ``updated_at``: the run's time) and recomputes the
history of the keys they touch: the stored versions of those keys and the candidates, ordered by
``dbt_valid_from``, where each version is valid until the next one starts. So a version that
arrives late (an ``updated_at`` older than the key's newest version) is placed at its own time
and closes at the next one, and the version before it is closed at its start. ``strategy='check'``
keeps a candidate only when its ``check_cols`` differ from the version before it. The MERGE
(on ``dbt_scd_id``) inserts the new versions and sets ``dbt_valid_to`` where it changed.

A full read of the input also knows which keys left it (``hard_deletes``): ``invalidate`` closes
their open version at the run's time (a version closed that way keeps its end when the key
comes back later); ``new_record`` adds a deletion record (``dbt_is_deleted = 'True'``) from
the run's time, closed when the key comes back.

Views the statements read: ``TARGET`` (the snapshot table as it is) and the input's views the
plan registers (``rewrite.replace_tables``).
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.model.layout import create_table_as
from lakewide.compiler.model.snapshot_model import SnapshotModel
from lakewide.compiler.statements.snapshot_exprs import (
    CAP,
    DELETED_AT,
    HISTORY,
    LAST_DELETE,
    NEW,
    NEWEST,
    NEXT,
    OLD_TO,
    PREV,
    TARGET,
    accepted,
    by_time,
    candidates,
    col,
    scd_id,
    when,
    window,
)
from lakewide.compiler.statements.snapshot_stored import (
    STORED,
    deletion_records,
    stored_versions,
    touched_versions,
)

__all__ = [
    "HISTORY",
    "TARGET",
    "bootstrap",
    "duplicate_count",
    "history",
    "merge",
    "rejected_count",
]


def rejected_count(query: exp.Select, snap: SnapshotModel) -> exp.Select:
    """Input rows without a key (or updated_at): counted, never written."""
    return (
        exp.select(exp.alias_(exp.func("count", exp.Star()), "rejected"))
        .from_(query.subquery("q"))
        .where(exp.not_(exp.paren(accepted(snap))))
    )


def duplicate_count(query: exp.Select, snap: SnapshotModel) -> exp.Select:
    """Keys holding two input rows with the same start (dbt: unique_key must be unique)."""
    starts = [*snap.key, *([snap.spec.updated_at] if snap.spec.updated_at else [])]
    groups = (
        exp.select(*(col(c) for c in starts))
        .from_(query.subquery("q"))
        .where(accepted(snap))
        .group_by(*(col(c) for c in starts))
        .having(exp.GT(this=exp.func("count", exp.Star()), expression=exp.Literal.number(1)))
    )
    return exp.select(exp.alias_(exp.func("count", exp.Star()), "duplicates")).from_(
        groups.subquery("d")
    )


def _kept(snap: SnapshotModel, union: exp.Query) -> exp.Select:
    """One row per ``dbt_scd_id`` (a stored version wins over the same version read again);
    strategy='check': a new version only where its checked columns differ from the version
    before it (or that one was deleted)."""
    scd = exp.alias_(
        scd_id(snap, col(snap.meta("dbt_valid_from"))), snap.meta("dbt_scd_id"), quoted=True
    )
    numbered = exp.select(
        exp.Star(),
        exp.alias_(
            exp.Window(
                this=exp.RowNumber(),
                partition_by=[col(snap.meta("dbt_scd_id"))],
                order=exp.Order(expressions=[exp.Ordered(this=col(NEW))]),
            ),
            "__lw_copy",
            quoted=True,
        ),
    ).from_(exp.select(exp.Star(), scd).from_(union.subquery("u")).subquery("n"))
    unique = (
        exp.select(exp.Star())
        .from_(numbered.subquery("d"))
        .where(exp.EQ(this=col("__lw_copy"), expression=exp.Literal.number(1)))
    )
    if snap.spec.strategy != "check":
        return unique
    values = exp.Struct(expressions=[col(c) for c in snap.checked])
    ended = exp.or_(
        exp.EQ(this=col(snap.meta("dbt_is_deleted")), expression=exp.Literal.string("True")),
        col(CAP).is_(exp.null()).not_(),
    )
    prev = exp.Struct(expressions=[exp.alias_(values, "v"), exp.alias_(ended, "ended")])
    lagged = exp.select(exp.Star(), window(exp.Lag(this=prev), snap, by_time(snap), PREV)).from_(
        unique.subquery("q")
    )
    changed = exp.or_(
        exp.EQ(this=col(NEW), expression=exp.Literal.number(0)),
        exp.EQ(this=col(snap.meta("dbt_is_deleted")), expression=exp.Literal.string("True")),
        col(PREV).is_(exp.null()),
        exp.column("ended", table=PREV, quoted=True),
        exp.not_(
            exp.NullSafeEQ(
                this=exp.column("v", table=PREV, quoted=True),
                expression=exp.Struct(expressions=[col(c) for c in snap.checked]),
            )
        ),
    )
    return exp.select(exp.Star()).from_(lagged.subquery("l")).where(changed)


def _reinstated(snap: SnapshotModel, union: exp.Query, now: exp.Expr) -> exp.Select:
    """A key back after a hard delete: its newest candidate starts no earlier than now when
    its own start is not after the delete (the delete was seen at a run's time)."""

    def over_key(func: exp.Expr, alias: str) -> exp.Expr:
        window = exp.Window(this=func, partition_by=[col(k) for k in snap.key])
        return exp.alias_(window, alias, quoted=True)

    vf = col(snap.meta("dbt_valid_from"))
    newest_new = when(exp.EQ(this=col(NEW), expression=exp.Literal.number(1)), vf.copy())
    marked = exp.select(
        exp.Star(),
        over_key(exp.Max(this=col(DELETED_AT)), LAST_DELETE),
        over_key(exp.Max(this=newest_new), NEWEST),
    ).from_(union.subquery("u"))
    moved = exp.and_(
        exp.EQ(this=col(NEW), expression=exp.Literal.number(1)),
        exp.EQ(this=vf.copy(), expression=col(NEWEST)),
        exp.LTE(this=vf.copy(), expression=col(LAST_DELETE)),
    )
    start = exp.Case(ifs=[exp.If(this=moved, true=now.copy())], default=vf.copy())
    return exp.select(
        *(col(c) for c in snap.columns),
        exp.alias_(start, snap.meta("dbt_valid_from"), quoted=True),
        exp.alias_(start.copy(), snap.meta("dbt_updated_at"), quoted=True),
        col(snap.meta("dbt_is_deleted")),
        col(NEW),
        col(OLD_TO),
        col(CAP),
    ).from_(marked.subquery("r"))


def history(snap: SnapshotModel, query: exp.Select, *, stored: bool, full: bool) -> exp.Select:
    """The versions to write: every version of a new table (``stored`` False), else the new
    versions and the stored ones whose ``dbt_valid_to`` changes. ``full``: the input read
    whole (keys that left it are hard deletes)."""
    now = exp.CurrentTimestamp()
    parts: list[exp.Select] = [candidates(snap, query)]
    with_stored: exp.Select | None = None
    if stored:
        with_stored = touched_versions(snap, query, full)
        parts.append(stored_versions(snap, now))
        if full and snap.spec.hard_deletes == "new_record":
            parts.append(deletion_records(snap, now))
    union: exp.Query = parts[0]
    for part in parts[1:]:
        union = exp.union(union, part, distinct=False)
    kept = _kept(snap, _reinstated(snap, union, now))
    lead = exp.Lead(this=col(snap.meta("dbt_valid_from")))
    ended = exp.select(exp.Star(), window(lead, snap, by_time(snap), NEXT)).from_(
        kept.subquery("k")
    )
    valid_to = exp.Case(
        ifs=[
            exp.If(
                this=col(CAP).is_(exp.null()).not_(),
                true=exp.Least(this=col(CAP), expressions=[col(NEXT)]),
            )
        ],
        default=col(NEXT),
    )
    out = [
        *(col(c) for c in snap.columns),
        col(snap.meta("dbt_scd_id")),
        col(snap.meta("dbt_updated_at")),
        col(snap.meta("dbt_valid_from")),
        exp.alias_(valid_to, snap.meta("dbt_valid_to"), quoted=True),
    ]
    if snap.spec.hard_deletes == "new_record":
        out.append(col(snap.meta("dbt_is_deleted")))
    final = exp.select(*out, col(NEW), col(OLD_TO)).from_(ended.subquery("e"))
    rows = exp.select(*(col(c) for c in snap.out_columns)).from_(final.subquery("f"))
    if stored:
        changed = exp.or_(
            exp.EQ(this=col(NEW), expression=exp.Literal.number(1)),
            exp.not_(exp.NullSafeEQ(this=col(OLD_TO), expression=col(snap.meta("dbt_valid_to")))),
        )
        rows = rows.where(changed)
    if with_stored is not None:
        rows = rows.with_(STORED, as_=with_stored)
    return rows


def bootstrap(snap: SnapshotModel, query: exp.Select) -> exp.Create:
    """The new snapshot table: the history of every input row (one atomic CTAS)."""
    return create_table_as(snap.node, history(snap, query, stored=False, full=True), replace=False)


def merge(snap: SnapshotModel) -> exp.Merge:
    """MERGE the staged versions: new ones inserted, changed ends updated (on dbt_scd_id)."""
    scd = snap.meta("dbt_scd_id")
    valid_to = snap.meta("dbt_valid_to")
    columns = snap.out_columns
    return exp.Merge(
        this=snap.node.relation.table(alias="t"),
        using=exp.table_(HISTORY, alias="s"),
        on=exp.EQ(this=col(scd, "t"), expression=col(scd, "s")),
        whens=exp.Whens(
            expressions=[
                exp.When(
                    matched=True,
                    then=exp.Update(
                        expressions=[exp.EQ(this=col(valid_to, "t"), expression=col(valid_to, "s"))]
                    ),
                ),
                exp.When(
                    matched=False,
                    then=exp.Insert(
                        this=exp.Tuple(expressions=[col(c) for c in columns]),
                        expression=exp.Tuple(expressions=[col(c, "s") for c in columns]),
                    ),
                ),
            ]
        ),
    )
