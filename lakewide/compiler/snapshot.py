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

from lakewide.compiler.layout import create_table_as
from lakewide.compiler.snapshot_model import Snapshot

TARGET, HISTORY = "__lw_snap_target", "__lw_snap_history"
DELETED_AT, LAST_DELETE, NEWEST = "__lw_deleted_at", "__lw_last_delete", "__lw_newest"
FROM, NEW, OLD_TO, CAP, NEXT, RANK, GONE, PREV = (
    "__lw_from",
    "__lw_new",
    "__lw_old_to",
    "__lw_cap",
    "__lw_next",
    "__lw_rank",
    "__lw_gone",
    "__lw_prev",
)


def _when(condition: exp.Expr, value: exp.Expr) -> exp.Case:
    """``CASE WHEN condition THEN value END`` (NULL otherwise)."""
    return exp.Case(ifs=[exp.If(this=condition, true=value)])


def _col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table, quoted=True)


def _keys_equal(snap: Snapshot, left: str, right: str) -> exp.Expr:
    return exp.and_(*(_col(k, left).eq(_col(k, right)) for k in snap.key))


def _window(func: exp.Expr, snap: Snapshot, order: list[exp.Ordered], alias: str) -> exp.Expr:
    over = exp.Window(
        this=func,
        partition_by=[_col(k) for k in snap.key],
        order=exp.Order(expressions=order),
    )
    return exp.alias_(over, alias, quoted=True)


def _by_time(snap: Snapshot, desc: bool = False) -> list[exp.Ordered]:
    return [
        exp.Ordered(this=_col(snap.meta("dbt_valid_from")), desc=desc),
        exp.Ordered(this=_col(NEW), desc=desc),
    ]


def scd_id(snap: Snapshot, valid_from: exp.Expr) -> exp.Expr:
    """dbt's ``dbt_scd_id``: a hash of the key and the version's start (as epoch micros, so it
    does not depend on the session's time zone)."""
    parts: list[exp.Expr] = [exp.cast(_col(k), "STRING") for k in snap.key]
    parts.append(exp.cast(exp.Anonymous(this="unix_micros", expressions=[valid_from]), "STRING"))
    joined = exp.Anonymous(this="concat_ws", expressions=[exp.Literal.string("|"), *parts])
    return exp.func("md5", joined)


def valid_from(snap: Snapshot) -> exp.Expr:
    """A candidate's start: its ``updated_at``, else (strategy='check') the run's time."""
    if snap.spec.updated_at:
        return exp.cast(_col(snap.spec.updated_at), "TIMESTAMP")
    return exp.CurrentTimestamp()


def accepted(snap: Snapshot) -> exp.Expr:
    """Input rows a snapshot takes: a whole key and, when it orders versions, an updated_at."""
    needed = [*snap.key, *([snap.spec.updated_at] if snap.spec.updated_at else [])]
    return exp.and_(*(_col(c).is_(exp.null()).not_() for c in needed))


def input_rows(snap: Snapshot, query: exp.Select) -> exp.Select:
    """The input (``query``: the model's SELECT on the plan's views) with each row's start."""
    return exp.select(
        *(_col(c, "q") for c in snap.columns), exp.alias_(valid_from(snap), FROM)
    ).from_(query.subquery("q"))


def rejected_count(query: exp.Select, snap: Snapshot) -> exp.Select:
    """Input rows without a key (or updated_at): counted, never written."""
    return (
        exp.select(exp.alias_(exp.func("count", exp.Star()), "rejected"))
        .from_(query.subquery("q"))
        .where(exp.not_(exp.paren(accepted(snap))))
    )


def duplicate_count(query: exp.Select, snap: Snapshot) -> exp.Select:
    """Keys holding two input rows with the same start (dbt: unique_key must be unique)."""
    starts = [*snap.key, *([snap.spec.updated_at] if snap.spec.updated_at else [])]
    groups = (
        exp.select(*(_col(c) for c in starts))
        .from_(query.subquery("q"))
        .where(accepted(snap))
        .group_by(*(_col(c) for c in starts))
        .having(exp.GT(this=exp.func("count", exp.Star()), expression=exp.Literal.number(1)))
    )
    return exp.select(exp.alias_(exp.func("count", exp.Star()), "duplicates")).from_(
        groups.subquery("d")
    )


def _new_version(snap: Snapshot, start: exp.Expr, *, deleted: bool) -> exp.Select:
    """A new version's row in the union's column order, starting at ``start``."""
    never = [OLD_TO, CAP, DELETED_AT]
    return exp.select(
        *(_col(c) for c in snap.columns),
        exp.alias_(start.copy(), snap.meta("dbt_valid_from"), quoted=True),
        exp.alias_(start.copy(), snap.meta("dbt_updated_at"), quoted=True),
        exp.alias_(exp.Literal.string(str(deleted)), snap.meta("dbt_is_deleted"), quoted=True),
        exp.alias_(exp.Literal.number(1), NEW, quoted=True),
        *(exp.alias_(exp.cast(exp.null(), "TIMESTAMP"), c, quoted=True) for c in never),
    )


def _candidates(snap: Snapshot, query: exp.Select) -> exp.Select:
    """New versions from the input, in the union's column order."""
    return (
        _new_version(snap, _col(FROM), deleted=False)
        .from_(input_rows(snap, query).subquery("i"))
        .where(accepted(snap))
    )


def _stored(snap: Snapshot, query: exp.Select, full: bool) -> exp.Select:
    """The stored versions of the keys this run touches (every key on a full read), with the
    next stored start, the rank from the newest and whether the key left the input."""
    deleted = (
        exp.EQ(this=_col(snap.meta("dbt_is_deleted"), "t"), expression=exp.Literal.string("True"))
        if snap.spec.hard_deletes == "new_record"
        else exp.false()
    )
    keys = (
        exp.select(*(_col(k) for k in snap.key))
        .distinct()
        .from_(_candidates(snap, query).subquery("c"))
    )
    gone = _col(snap.key[0], "k").is_(exp.null()) if full else exp.false()
    select = exp.select(
        *(_col(c, "t") for c in snap.columns),
        _col(snap.meta("dbt_valid_from"), "t"),
        _col(snap.meta("dbt_updated_at"), "t"),
        exp.alias_(
            exp.If(
                this=deleted, true=exp.Literal.string("True"), false=exp.Literal.string("False")
            ),
            snap.meta("dbt_is_deleted"),
            quoted=True,
        ),
        exp.alias_(exp.Literal.number(0), NEW, quoted=True),
        exp.alias_(_col(snap.meta("dbt_valid_to"), "t"), OLD_TO, quoted=True),
        exp.alias_(gone, GONE, quoted=True),
    ).from_(exp.table_(TARGET, alias="t"))
    join_type = "LEFT" if full else "LEFT SEMI"
    select = select.join(keys.subquery("k"), on=_keys_equal(snap, "t", "k"), join_type=join_type)
    vf = _col(snap.meta("dbt_valid_from"))
    ranked = exp.select(
        exp.Star(),
        _window(exp.Lead(this=vf), snap, [exp.Ordered(this=vf.copy())], NEXT),
        _window(exp.RowNumber(), snap, [exp.Ordered(this=vf.copy(), desc=True)], RANK),
    ).from_(select.subquery("s"))
    return ranked


def _stored_versions(snap: Snapshot, now: exp.Expr) -> exp.Select:
    """Stored versions in the union's shape; ``CAP``: the end a hard delete gave the version
    (``invalidate``: kept when later versions come; a delete seen now closes the open one)."""
    old_to, nxt = _col(OLD_TO), _col(NEXT)
    cap: exp.Expr = exp.cast(exp.null(), "TIMESTAMP")
    newest = exp.EQ(this=_col(RANK), expression=exp.Literal.number(1))
    deleted_at: exp.Expr = exp.cast(exp.null(), "TIMESTAMP")
    if snap.spec.hard_deletes == "new_record":
        is_deleted = exp.EQ(
            this=_col(snap.meta("dbt_is_deleted")), expression=exp.Literal.string("True")
        )
        deleted_at = _when(exp.and_(newest, is_deleted), _col(snap.meta("dbt_valid_from")))
    if snap.spec.hard_deletes == "invalidate":
        deleted_at = _when(newest.copy(), old_to.copy())
        closed = exp.and_(
            old_to.is_(exp.null()).not_(),
            exp.or_(nxt.is_(exp.null()), exp.NEQ(this=old_to.copy(), expression=nxt.copy())),
        )
        open_gone = exp.and_(
            _col(GONE),
            exp.EQ(this=_col(RANK), expression=exp.Literal.number(1)),
            old_to.copy().is_(exp.null()),
        )
        cap = exp.Case(
            ifs=[
                exp.If(this=closed, true=old_to.copy()),
                exp.If(this=open_gone, true=now.copy()),
            ]
        )
    return exp.select(
        *(_col(c) for c in snap.columns),
        _col(snap.meta("dbt_valid_from")),
        _col(snap.meta("dbt_updated_at")),
        _col(snap.meta("dbt_is_deleted")),
        _col(NEW),
        _col(OLD_TO),
        exp.alias_(cap, CAP, quoted=True),
        exp.alias_(deleted_at, DELETED_AT, quoted=True),
    ).from_("__lw_stored")


def _deletion_records(snap: Snapshot, now: exp.Expr) -> exp.Select:
    """``new_record``: a deletion record from now for each key that left the input while its
    newest version was live."""
    return (
        _new_version(snap, now, deleted=True)
        .from_("__lw_stored")
        .where(
            exp.and_(
                _col(GONE),
                exp.EQ(this=_col(RANK), expression=exp.Literal.number(1)),
                _col(OLD_TO).is_(exp.null()),
                exp.EQ(
                    this=_col(snap.meta("dbt_is_deleted")), expression=exp.Literal.string("False")
                ),
            )
        )
    )


def _kept(snap: Snapshot, union: exp.Query) -> exp.Select:
    """One row per ``dbt_scd_id`` (a stored version wins over the same version read again);
    strategy='check': a new version only where its checked columns differ from the version
    before it (or that one was deleted)."""
    scd = exp.alias_(
        scd_id(snap, _col(snap.meta("dbt_valid_from"))), snap.meta("dbt_scd_id"), quoted=True
    )
    numbered = exp.select(
        exp.Star(),
        exp.alias_(
            exp.Window(
                this=exp.RowNumber(),
                partition_by=[_col(snap.meta("dbt_scd_id"))],
                order=exp.Order(expressions=[exp.Ordered(this=_col(NEW))]),
            ),
            "__lw_copy",
            quoted=True,
        ),
    ).from_(exp.select(exp.Star(), scd).from_(union.subquery("u")).subquery("n"))
    unique = (
        exp.select(exp.Star())
        .from_(numbered.subquery("d"))
        .where(exp.EQ(this=_col("__lw_copy"), expression=exp.Literal.number(1)))
    )
    if snap.spec.strategy != "check":
        return unique
    values = exp.Struct(expressions=[_col(c) for c in snap.checked])
    ended = exp.or_(
        exp.EQ(this=_col(snap.meta("dbt_is_deleted")), expression=exp.Literal.string("True")),
        _col(CAP).is_(exp.null()).not_(),
    )
    prev = exp.Struct(expressions=[exp.alias_(values, "v"), exp.alias_(ended, "ended")])
    lagged = exp.select(exp.Star(), _window(exp.Lag(this=prev), snap, _by_time(snap), PREV)).from_(
        unique.subquery("q")
    )
    changed = exp.or_(
        exp.EQ(this=_col(NEW), expression=exp.Literal.number(0)),
        exp.EQ(this=_col(snap.meta("dbt_is_deleted")), expression=exp.Literal.string("True")),
        _col(PREV).is_(exp.null()),
        exp.column("ended", table=PREV, quoted=True),
        exp.not_(
            exp.NullSafeEQ(
                this=exp.column("v", table=PREV, quoted=True),
                expression=exp.Struct(expressions=[_col(c) for c in snap.checked]),
            )
        ),
    )
    return exp.select(exp.Star()).from_(lagged.subquery("l")).where(changed)


def _reinstated(snap: Snapshot, union: exp.Query, now: exp.Expr) -> exp.Select:
    """A key back after a hard delete: its newest candidate starts no earlier than now when
    its own start is not after the delete (the delete was seen at a run's time)."""

    def over_key(func: exp.Expr, alias: str) -> exp.Expr:
        window = exp.Window(this=func, partition_by=[_col(k) for k in snap.key])
        return exp.alias_(window, alias, quoted=True)

    vf = _col(snap.meta("dbt_valid_from"))
    newest_new = _when(exp.EQ(this=_col(NEW), expression=exp.Literal.number(1)), vf.copy())
    marked = exp.select(
        exp.Star(),
        over_key(exp.Max(this=_col(DELETED_AT)), LAST_DELETE),
        over_key(exp.Max(this=newest_new), NEWEST),
    ).from_(union.subquery("u"))
    moved = exp.and_(
        exp.EQ(this=_col(NEW), expression=exp.Literal.number(1)),
        exp.EQ(this=vf.copy(), expression=_col(NEWEST)),
        exp.LTE(this=vf.copy(), expression=_col(LAST_DELETE)),
    )
    start = exp.Case(ifs=[exp.If(this=moved, true=now.copy())], default=vf.copy())
    return exp.select(
        *(_col(c) for c in snap.columns),
        exp.alias_(start, snap.meta("dbt_valid_from"), quoted=True),
        exp.alias_(start.copy(), snap.meta("dbt_updated_at"), quoted=True),
        _col(snap.meta("dbt_is_deleted")),
        _col(NEW),
        _col(OLD_TO),
        _col(CAP),
    ).from_(marked.subquery("r"))


def history(snap: Snapshot, query: exp.Select, *, stored: bool, full: bool) -> exp.Select:
    """The versions to write: every version of a new table (``stored`` False), else the new
    versions and the stored ones whose ``dbt_valid_to`` changes. ``full``: the input read
    whole (keys that left it are hard deletes)."""
    now = exp.CurrentTimestamp()
    parts: list[exp.Select] = [_candidates(snap, query)]
    with_stored: exp.Select | None = None
    if stored:
        with_stored = _stored(snap, query, full)
        parts.append(_stored_versions(snap, now))
        if full and snap.spec.hard_deletes == "new_record":
            parts.append(_deletion_records(snap, now))
    union: exp.Query = parts[0]
    for part in parts[1:]:
        union = exp.union(union, part, distinct=False)
    kept = _kept(snap, _reinstated(snap, union, now))
    lead = exp.Lead(this=_col(snap.meta("dbt_valid_from")))
    ended = exp.select(exp.Star(), _window(lead, snap, _by_time(snap), NEXT)).from_(
        kept.subquery("k")
    )
    valid_to = exp.Case(
        ifs=[
            exp.If(
                this=_col(CAP).is_(exp.null()).not_(),
                true=exp.Least(this=_col(CAP), expressions=[_col(NEXT)]),
            )
        ],
        default=_col(NEXT),
    )
    out = [
        *(_col(c) for c in snap.columns),
        _col(snap.meta("dbt_scd_id")),
        _col(snap.meta("dbt_updated_at")),
        _col(snap.meta("dbt_valid_from")),
        exp.alias_(valid_to, snap.meta("dbt_valid_to"), quoted=True),
    ]
    if snap.spec.hard_deletes == "new_record":
        out.append(_col(snap.meta("dbt_is_deleted")))
    final = exp.select(*out, _col(NEW), _col(OLD_TO)).from_(ended.subquery("e"))
    rows = exp.select(*(_col(c) for c in snap.out_columns)).from_(final.subquery("f"))
    if stored:
        changed = exp.or_(
            exp.EQ(this=_col(NEW), expression=exp.Literal.number(1)),
            exp.not_(exp.NullSafeEQ(this=_col(OLD_TO), expression=_col(snap.meta("dbt_valid_to")))),
        )
        rows = rows.where(changed)
    if with_stored is not None:
        rows = rows.with_("__lw_stored", as_=with_stored)
    return rows


def bootstrap(snap: Snapshot, query: exp.Select) -> exp.Create:
    """The new snapshot table: the history of every input row (one atomic CTAS)."""
    return create_table_as(snap.node, history(snap, query, stored=False, full=True), replace=False)


def merge(snap: Snapshot) -> exp.Merge:
    """MERGE the staged versions: new ones inserted, changed ends updated (on dbt_scd_id)."""
    scd = snap.meta("dbt_scd_id")
    valid_to = snap.meta("dbt_valid_to")
    columns = snap.out_columns
    return exp.Merge(
        this=snap.node.relation.table(alias="t"),
        using=exp.table_(HISTORY, alias="s"),
        on=exp.EQ(this=_col(scd, "t"), expression=_col(scd, "s")),
        whens=exp.Whens(
            expressions=[
                exp.When(
                    matched=True,
                    then=exp.Update(
                        expressions=[
                            exp.EQ(this=_col(valid_to, "t"), expression=_col(valid_to, "s"))
                        ]
                    ),
                ),
                exp.When(
                    matched=False,
                    then=exp.Insert(
                        this=exp.Tuple(expressions=[_col(c) for c in columns]),
                        expression=exp.Tuple(expressions=[_col(c, "s") for c in columns]),
                    ),
                ),
            ]
        ),
    )
