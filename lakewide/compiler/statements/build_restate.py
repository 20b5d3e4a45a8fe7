"""Rule: restating the keys a predicate matches (``run --restate``).

The keys are folded again from every record of every source (the bootstrap's fold, restricted
to them) and MERGEd into the table in one commit: a key the fold gives is replaced or inserted,
a key of the table the predicate matches that the fold no longer gives is deleted. The MERGE's
source holds every restated key (``RESTATE_VIEW``, one row per key, ``GONE`` marking the
deleted ones), so the MERGE joins only those keys and its target scan is pruned like an
incremental MERGE's (no ``WHEN NOT MATCHED BY SOURCE``, which would make every file of the
table a candidate for rewriting).

A predicate on primary-key columns only is applied to every source's rows before the fold
(each branch's own filter, pushed by Spark into the source's scan). A predicate naming a
partition column that is not in the key cannot be: a key's records may disagree on the column
(the fold decides its value), so every source is read in full and the keys are chosen after
the fold, together with the keys whose stored row the predicate matches (a key leaving the
range is restated too).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from lakewide.compiler.folds.build_prefolds import assembled, bootstraps_apart, source_fold
from lakewide.compiler.folds.fold_rows import S, T
from lakewide.compiler.model.layout import partitions
from lakewide.compiler.model.wide_model import WideModel
from lakewide.compiler.statements.build_bootstrap import (
    bootstrap_query,
    owned_branch,
    tagged_branch,
    union_all,
)
from lakewide.compiler.statements.build_merge import keys_match, merge_source
from lakewide.project.config.kinds import ModelKind
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import UsageError

OPTION = "--restate"
#: the staged restated keys: the fold's row of each, or ``GONE`` (the key is deleted)
RESTATE_VIEW = "__lw_restate"
GONE = "__lw_gone"

#: functions whose value is not a function of the row (a restatement must match the same keys
#: in every statement that reads the predicate)
_NON_DETERMINISTIC = {
    "rand",
    "random",
    "randn",
    "uuid",
    "shuffle",
    "current_timestamp",
    "current_date",
    "now",
    "unix_timestamp",
    "monotonically_increasing_id",
    "spark_partition_id",
    "input_file_name",
    "current_user",
}
_NON_DETERMINISTIC_CLASSES = tuple(
    getattr(exp, name)
    for name in (
        "Rand",
        "Randn",
        "Uuid",
        "CurrentTimestamp",
        "CurrentDate",
        "CurrentTime",
        "CurrentUser",
        "UnixTimestamp",
    )
    if hasattr(exp, name)
)


def restate_columns(model: WideModel) -> list[str]:
    """The columns a ``--restate`` predicate may name: the primary key, then the columns the
    model's ``partition_by`` transforms read."""
    columns = list(model.primary_key)
    for field in partitions(model.node, model.table_columns):
        for column in field.find_all(exp.Column):
            name = next((c for c in model.stored if c.lower() == column.name.lower()), None)
            if name is not None and name not in columns:
                columns.append(name)
    return columns


def _refuse(model: WideModel, text: str, why: str) -> UsageError:
    accepted = restate_columns(model)
    example = f"{accepted[0]} BETWEEN 1000 AND 1999"
    return UsageError(
        f"{OPTION} {text!r} for model '{model.node.name}': {why}; expected a condition on "
        f"the primary key or partition columns ({', '.join(accepted)}) with literals, "
        f'e.g. --restate "{example}"',
        path=model.node.path,
        model=model.node.name,
    )


def refuse_kind(name: str, kind: ModelKind) -> UsageError:
    """The error for ``--restate`` on a model that is no key table."""
    return UsageError(
        f"{OPTION} applies to key tables (models with a merge_engine) only; '{name}' is "
        f"materialized as a {kind}: select key tables only (-s), or rebuild it with "
        "--full-refresh",
        model=name,
    )


def parse_restate(model: WideModel, text: str) -> exp.Expr:
    """The ``--restate`` predicate as a tree, its columns named as the model names them.

    UsageError (exit 2), naming the option and what it accepts, for a syntax error, a statement
    or value that is no condition, a subquery, an aggregate or window, a non-deterministic
    function, a parameter, or a column that is neither in the primary key nor partitioned on.
    """
    try:
        tree = sqlglot.parse_one(text, read=DIALECT)
    except (ParseError, TokenError) as err:
        first = str(err).splitlines()[0] if str(err) else "syntax error"
        raise _refuse(model, text, f"does not parse ({first})") from None
    if tree is None or isinstance(tree, (exp.Query, exp.Command, exp.DDL, exp.DML)):
        raise _refuse(model, text, "is a statement, not a condition")
    if not isinstance(tree, (exp.Predicate, exp.Connector, exp.Not, exp.Paren, exp.Boolean)):
        raise _refuse(model, text, "is a value, not a condition")
    if tree.find(exp.Query, exp.Subquery):
        raise _refuse(model, text, "a subquery is not accepted")
    if tree.find(exp.AggFunc, exp.Window):
        raise _refuse(model, text, "an aggregate or window function is not accepted")
    if tree.find(exp.Placeholder, exp.Parameter, exp.Star):
        raise _refuse(model, text, "parameters and * are not accepted")
    for func in tree.find_all(exp.Func):
        name = func.name if isinstance(func, exp.Anonymous) else func.sql_name()
        if isinstance(func, _NON_DETERMINISTIC_CLASSES) or name.lower() in _NON_DETERMINISTIC:
            raise _refuse(model, text, f"{name.lower()}() is not deterministic")
    accepted = {c.lower(): c for c in restate_columns(model)}
    for column in list(tree.find_all(exp.Column)):
        if column.table:
            raise _refuse(model, text, f"name the column {column.name} without a table")
        found = accepted.get(column.name.lower())
        if found is None:
            known = column.name.lower() in {c.lower() for c in model.stored}
            why = (
                "is neither in the primary key nor a partition column"
                if known
                else "is not a column of the model"
            )
            raise _refuse(model, text, f"{column.name} {why}")
        column.replace(exp.column(found))
    return tree


def keys_only(model: WideModel, predicate: exp.Expr) -> bool:
    """Whether the predicate names primary-key columns only (it is then applied to every
    source's rows before the fold)."""
    return all(c.name in model.primary_key for c in predicate.find_all(exp.Column))


def _qualified(predicate: exp.Expr, table: str) -> exp.Expr:
    qualified = predicate.copy()
    for column in list(qualified.find_all(exp.Column)):
        column.replace(exp.column(column.name, table=table))
    return qualified


def restate_fold(model: WideModel, where: exp.Expr | None) -> exp.Select:
    """The bootstrap's fold of every source's records (``where``: a predicate on the key
    alone, :func:`keys_only`, applied as each branch's own filter before its rows are
    numbered, joined and folded). A model whose sources fold apart (``build_prefolds``) is
    folded per source over the columns each owns, then put together per key, as its
    bootstrap is."""
    if bootstraps_apart(model):
        folds = {
            b.index: source_fold(model, b, owned_branch(model, b, where=where))
            for b in model.branches
        }
        return assembled(model, folds)
    return bootstrap_query(
        model, union_all([tagged_branch(model, b, where=where) for b in model.branches])
    )


def restate_rows(model: WideModel, folded: exp.Select, predicate: exp.Expr) -> exp.Select:
    """One row per restated key: the ``folded`` records (:func:`restate_fold`, read at the
    run's pinned snapshots) for the keys the predicate matches in the fold or in the table,
    ``GONE`` where the fold gives no row."""
    columns = list(folded.named_selects)
    keys = model.primary_key
    stored = (
        exp.select(*(exp.column(k) for k in keys))
        .from_(model.node.relation.table())
        .where(predicate.copy())
        .distinct()
    )
    f, x = "__lw_f", "__lw_k"
    on = exp.and_(*(exp.column(k, table=f).eq(exp.column(k, table=x)) for k in keys))
    projections = [
        exp.alias_(
            exp.func("COALESCE", exp.column(c, table=f), exp.column(c, table=x))
            if c in keys
            else exp.column(c, table=f),
            c,
        )
        for c in columns
    ]
    gone = exp.column(keys[0], table=f).is_(exp.null())
    return (
        exp.select(*projections, exp.alias_(gone, GONE))
        .from_(folded.subquery(f))
        .join(stored.subquery(x), on=on, join_type="FULL OUTER")
        .where(
            exp.or_(_qualified(predicate, f), exp.column(keys[0], table=x).is_(exp.null()).not_())
        )
    )


def restate_merge(model: WideModel, columns: list[str]) -> exp.Merge:
    """``MERGE`` the staged restated keys: deleted where ``GONE``, else every column
    replaced (``columns``: the fold's, stored and helper) or the row inserted."""
    gone = exp.column(GONE, table=S)
    sets = [
        exp.EQ(this=exp.column(c, table=T), expression=exp.column(c, table=S))
        for c in columns
        if c not in model.primary_key
    ]
    insert = exp.Insert(
        this=exp.Tuple(expressions=[exp.column(c) for c in columns]),
        expression=exp.Tuple(expressions=[exp.column(c, table=S) for c in columns]),
    )
    whens = [
        exp.When(matched=True, source=False, condition=gone, then=exp.var("DELETE")),
        exp.When(matched=True, source=False, then=exp.Update(expressions=sets)),
        exp.When(matched=False, source=False, condition=exp.not_(gone.copy()), then=insert),
    ]
    return exp.Merge(
        this=model.node.relation.table(alias=T),
        using=merge_source(model, RESTATE_VIEW),
        on=keys_match(model),
        whens=exp.Whens(expressions=whens),
    )


def restate_bounds(model: WideModel) -> exp.Select:
    """``SELECT MIN(k), MAX(k)`` of the staged keys' first key column (the MERGE is narrowed
    to that range: ``build_merge.narrow_merge``)."""
    key = exp.column(model.primary_key[0])
    return exp.select(exp.Min(this=key), exp.Max(this=key.copy())).from_(RESTATE_VIEW)


def restated_counts() -> exp.Select:
    """How many staged keys are replaced or inserted, and how many deleted."""
    gone = exp.column(GONE)
    return exp.select(
        exp.alias_(exp.func("COUNT_IF", exp.not_(gone)), "restated"),
        exp.alias_(exp.func("COUNT_IF", gone.copy()), "removed"),
    ).from_(RESTATE_VIEW)
