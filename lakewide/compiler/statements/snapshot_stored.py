"""The stored side of a snapshot run (lakewide.compiler.statements.snapshot): the stored versions of
the keys a run touches, ranked, with the ends hard deletes give them, and ``new_record``'s deletion
records. ``touched_versions`` is ``history``'s CTE ``__lw_stored`` (``STORED``); the other two
read it."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.model.snapshot_model import SnapshotModel
from lakewide.compiler.statements.snapshot_exprs import (
    CAP,
    DELETED_AT,
    GONE,
    NEW,
    NEXT,
    OLD_TO,
    RANK,
    TARGET,
    candidates,
    col,
    keys_equal,
    new_version,
    when,
    window,
)

STORED = "__lw_stored"


def touched_versions(snap: SnapshotModel, query: exp.Select, full: bool) -> exp.Select:
    """The stored versions of the keys this run touches (every key on a full read), with the
    next stored start, the rank from the newest and whether the key left the input."""
    deleted = (
        exp.EQ(this=col(snap.meta("dbt_is_deleted"), "t"), expression=exp.Literal.string("True"))
        if snap.spec.hard_deletes == "new_record"
        else exp.false()
    )
    keys = (
        exp.select(*(col(k) for k in snap.key))
        .distinct()
        .from_(candidates(snap, query).subquery("c"))
    )
    gone = col(snap.key[0], "k").is_(exp.null()) if full else exp.false()
    select = exp.select(
        *(col(c, "t") for c in snap.columns),
        col(snap.meta("dbt_valid_from"), "t"),
        col(snap.meta("dbt_updated_at"), "t"),
        exp.alias_(
            exp.If(
                this=deleted, true=exp.Literal.string("True"), false=exp.Literal.string("False")
            ),
            snap.meta("dbt_is_deleted"),
            quoted=True,
        ),
        exp.alias_(exp.Literal.number(0), NEW, quoted=True),
        exp.alias_(col(snap.meta("dbt_valid_to"), "t"), OLD_TO, quoted=True),
        exp.alias_(gone, GONE, quoted=True),
    ).from_(exp.table_(TARGET, alias="t"))
    join_type = "LEFT" if full else "LEFT SEMI"
    select = select.join(keys.subquery("k"), on=keys_equal(snap, "t", "k"), join_type=join_type)
    vf = col(snap.meta("dbt_valid_from"))
    ranked = exp.select(
        exp.Star(),
        window(exp.Lead(this=vf), snap, [exp.Ordered(this=vf.copy())], NEXT),
        window(exp.RowNumber(), snap, [exp.Ordered(this=vf.copy(), desc=True)], RANK),
    ).from_(select.subquery("s"))
    return ranked


def stored_versions(snap: SnapshotModel, now: exp.Expr) -> exp.Select:
    """Stored versions in the union's shape; ``CAP``: the end a hard delete gave the version
    (``invalidate``: kept when later versions come; a delete seen now closes the open one)."""
    old_to, nxt = col(OLD_TO), col(NEXT)
    cap: exp.Expr = exp.cast(exp.null(), "TIMESTAMP")
    newest = exp.EQ(this=col(RANK), expression=exp.Literal.number(1))
    deleted_at: exp.Expr = exp.cast(exp.null(), "TIMESTAMP")
    if snap.spec.hard_deletes == "new_record":
        is_deleted = exp.EQ(
            this=col(snap.meta("dbt_is_deleted")), expression=exp.Literal.string("True")
        )
        deleted_at = when(exp.and_(newest, is_deleted), col(snap.meta("dbt_valid_from")))
    if snap.spec.hard_deletes == "invalidate":
        deleted_at = when(newest.copy(), old_to.copy())
        closed = exp.and_(
            old_to.is_(exp.null()).not_(),
            exp.or_(nxt.is_(exp.null()), exp.NEQ(this=old_to.copy(), expression=nxt.copy())),
        )
        open_gone = exp.and_(
            col(GONE),
            exp.EQ(this=col(RANK), expression=exp.Literal.number(1)),
            old_to.copy().is_(exp.null()),
        )
        cap = exp.Case(
            ifs=[
                exp.If(this=closed, true=old_to.copy()),
                exp.If(this=open_gone, true=now.copy()),
            ]
        )
    return exp.select(
        *(col(c) for c in snap.columns),
        col(snap.meta("dbt_valid_from")),
        col(snap.meta("dbt_updated_at")),
        col(snap.meta("dbt_is_deleted")),
        col(NEW),
        col(OLD_TO),
        exp.alias_(cap, CAP, quoted=True),
        exp.alias_(deleted_at, DELETED_AT, quoted=True),
    ).from_(STORED)


def deletion_records(snap: SnapshotModel, now: exp.Expr) -> exp.Select:
    """``new_record``: a deletion record from now for each key that left the input while its
    newest version was live."""
    return (
        new_version(snap, now, deleted=True)
        .from_(STORED)
        .where(
            exp.and_(
                col(GONE),
                exp.EQ(this=col(RANK), expression=exp.Literal.number(1)),
                col(OLD_TO).is_(exp.null()),
                exp.EQ(
                    this=col(snap.meta("dbt_is_deleted")), expression=exp.Literal.string("False")
                ),
            )
        )
    )
