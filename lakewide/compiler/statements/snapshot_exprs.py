"""The shared pieces of a ``snapshot`` model's statements (lakewide.compiler.statements.snapshot):
the hidden column names, window and column helpers, a candidate version's start and ``dbt_scd_id``,
and the candidate versions read from the input."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.model.snapshot_model import SnapshotModel

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


def when(condition: exp.Expr, value: exp.Expr) -> exp.Case:
    """``CASE WHEN condition THEN value END`` (NULL otherwise)."""
    return exp.Case(ifs=[exp.If(this=condition, true=value)])


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table, quoted=True)


def keys_equal(snap: SnapshotModel, left: str, right: str) -> exp.Expr:
    return exp.and_(*(col(k, left).eq(col(k, right)) for k in snap.key))


def window(func: exp.Expr, snap: SnapshotModel, order: list[exp.Ordered], alias: str) -> exp.Expr:
    over = exp.Window(
        this=func,
        partition_by=[col(k) for k in snap.key],
        order=exp.Order(expressions=order),
    )
    return exp.alias_(over, alias, quoted=True)


def by_time(snap: SnapshotModel, desc: bool = False) -> list[exp.Ordered]:
    return [
        exp.Ordered(this=col(snap.meta("dbt_valid_from")), desc=desc),
        exp.Ordered(this=col(NEW), desc=desc),
    ]


def scd_id(snap: SnapshotModel, valid_from: exp.Expr) -> exp.Expr:
    """dbt's ``dbt_scd_id``: a hash of the key and the version's start (as epoch micros, so it
    does not depend on the session's time zone)."""
    parts: list[exp.Expr] = [exp.cast(col(k), "STRING") for k in snap.key]
    parts.append(exp.cast(exp.Anonymous(this="unix_micros", expressions=[valid_from]), "STRING"))
    joined = exp.Anonymous(this="concat_ws", expressions=[exp.Literal.string("|"), *parts])
    return exp.func("md5", joined)


def valid_from(snap: SnapshotModel) -> exp.Expr:
    """A candidate's start: its ``updated_at``, else (strategy='check') the run's time."""
    if snap.spec.updated_at:
        return exp.cast(col(snap.spec.updated_at), "TIMESTAMP")
    return exp.CurrentTimestamp()


def accepted(snap: SnapshotModel) -> exp.Expr:
    """Input rows a snapshot takes: a whole key and, when it orders versions, an updated_at."""
    needed = [*snap.key, *([snap.spec.updated_at] if snap.spec.updated_at else [])]
    return exp.and_(*(col(c).is_(exp.null()).not_() for c in needed))


def input_rows(snap: SnapshotModel, query: exp.Select) -> exp.Select:
    """The input (``query``: the model's SELECT on the plan's views) with each row's start."""
    return exp.select(
        *(col(c, "q") for c in snap.columns), exp.alias_(valid_from(snap), FROM)
    ).from_(query.subquery("q"))


def new_version(snap: SnapshotModel, start: exp.Expr, *, deleted: bool) -> exp.Select:
    """A new version's row in the union's column order, starting at ``start``."""
    never = [OLD_TO, CAP, DELETED_AT]
    return exp.select(
        *(col(c) for c in snap.columns),
        exp.alias_(start.copy(), snap.meta("dbt_valid_from"), quoted=True),
        exp.alias_(start.copy(), snap.meta("dbt_updated_at"), quoted=True),
        exp.alias_(exp.Literal.string(str(deleted)), snap.meta("dbt_is_deleted"), quoted=True),
        exp.alias_(exp.Literal.number(1), NEW, quoted=True),
        *(exp.alias_(exp.cast(exp.null(), "TIMESTAMP"), c, quoted=True) for c in never),
    )


def candidates(snap: SnapshotModel, query: exp.Select) -> exp.Select:
    """New versions from the input, in the union's column order."""
    return (
        new_version(snap, col(FROM), deleted=False)
        .from_(input_rows(snap, query).subquery("i"))
        .where(accepted(snap))
    )
