"""Rule: the changelog a key table produces (``changelog_producer='lookup'``, Paimon's name).

After each MERGE commit, the model's row-level changes are the difference between the target
at the commit's parent and at the commit, for the keys the MERGE touched: a key only after is
``INSERT``, only before ``DELETE``, in both with different values an ``UPDATE_BEFORE`` /
``UPDATE_AFTER`` pair (before and after images), unchanged rows nothing. They are appended to
``<model>__changelog``, an append-only Iceberg table with the model's own columns plus
``_change_type`` and ``_change_ordinal`` (the commit's sequence number) and
``_commit_snapshot_id``: the same two columns Iceberg's changelog view gives, so a downstream
model reads either with the same statements.

Views the statements read (the engine registers them): ``BEFORE`` and ``AFTER``, the target at
the two snapshots; ``KEYS``, the staged batch (any view holding the key columns). Parameters:
``:ordinal``, ``:snapshot`` (the commit) and ``:low`` / ``:high`` (a downstream read's range).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from lakewide.compiler.model.wide_model import WideModel
from lakewide.compiler.trees.placeholders import param
from lakewide.project.nodes import ModelNode, Relation

SUFFIX = "__changelog"
CHANGE_TYPE, CHANGE_ORDINAL, COMMIT = "_change_type", "_change_ordinal", "_commit_snapshot_id"
BEFORE, AFTER, DIFF = "__lw_before", "__lw_after", "__lw_diff"
OLD, NEW, HAD, HAS = "__lw_old", "__lw_new", "__lw_had", "__lw_has"


def changelog_relation(relation: Relation) -> Relation:
    """The changelog table of a model's table (next to it, same namespace)."""
    return Relation(relation.catalog, relation.namespace, relation.name + SUFFIX)


def produces_changelog(node: ModelNode, models: Iterable[ModelNode]) -> bool:
    """Whether a key table keeps its changelog: ``changelog_producer`` when set, else
    whenever another key table of ``models`` reads it through ``ref()`` (it reads the changes)."""
    if not node.config.kind.is_key_table:
        return False
    if node.config.changelog_producer is not None:
        return node.config.changelog_producer == "lookup"
    return any(node.name in m.refs and m.config.kind.is_key_table for m in models)


def statements(model: WideModel, keys_view: str) -> list[exp.Expression]:
    """What a run executes after a MERGE commit, in order, as ``compile`` shows it."""
    relation = model.node.relation
    return [create(model, relation, replace=False), diff(model, keys_view), append(relation)]


def _side(view: str, columns: list[str], key: list[str], keys_view: str | None) -> exp.Select:
    """The model's columns of ``view``, restricted to the keys of ``keys_view`` (if any)."""
    select = exp.select(*(exp.column(c, table="v") for c in columns)).from_(
        exp.table_(view, alias="v")
    )
    if keys_view is not None:
        on = exp.and_(*(exp.column(k, table="v").eq(exp.column(k, table="kv")) for k in key))
        keys = exp.select(*(exp.column(k) for k in key)).distinct().from_(keys_view)
        select = select.join(keys.subquery("kv"), on=on, join_type="LEFT SEMI")
        # the batch's keys are few: broadcast them, as session defaults no longer broadcast by
        # estimated size (lakewide.spark.runtime.MERGE_PRUNING_CONF); else the whole target
        # would be shuffled for the semi join (benchmarks/logs.md#where-a-merges-time-goes)
        hint = exp.JoinHint(this="BROADCAST", expressions=[exp.to_table("kv")])
        select.set("hint", exp.Hint(expressions=[hint]))
    return select


def diff(model: WideModel, keys_view: str | None) -> exp.Select:
    """One row per changed key: the old and new row images as structs, and which exist.

    ``keys_view`` None compares every key (recovering the changelog of a commit whose batch is
    gone); Spark's null-safe struct equality tells changed rows from unchanged ones.
    """
    columns, key = model.columns, model.primary_key
    old = exp.Struct(expressions=[exp.column(c, table="b") for c in columns])
    new = exp.Struct(expressions=[exp.column(c, table="a") for c in columns])
    had = exp.column(key[0], table="b").is_(exp.null()).not_()
    has = exp.column(key[0], table="a").is_(exp.null()).not_()
    on = exp.and_(*(exp.column(k, table="b").eq(exp.column(k, table="a")) for k in key))
    joined = (
        exp.select(
            exp.alias_(old, OLD), exp.alias_(new, NEW), exp.alias_(had, HAD), exp.alias_(has, HAS)
        )
        .from_(_side(BEFORE, columns, key, keys_view).subquery("b"))
        .join(_side(AFTER, columns, key, keys_view).subquery("a"), on=on, join_type="FULL OUTER")
    )
    same = exp.and_(
        exp.column(HAD),
        exp.column(HAS),
        exp.NullSafeEQ(this=exp.column(OLD), expression=exp.column(NEW)),
    )
    return exp.select("*").from_(joined.subquery("j")).where(exp.not_(exp.paren(same)))


def _images(image: str, present: str, other: str, both: str, alone: str) -> exp.Select:
    kind = exp.Case(
        ifs=[exp.If(this=exp.column(other), true=exp.Literal.string(both))],
        default=exp.Literal.string(alone),
    )
    return (
        exp.select(
            exp.column(exp.Star(), table=image),
            exp.alias_(kind, CHANGE_TYPE),
            exp.alias_(exp.cast(param("ordinal"), "BIGINT"), CHANGE_ORDINAL),
            exp.alias_(exp.cast(param("snapshot"), "BIGINT"), COMMIT),
        )
        .from_(DIFF)
        .where(exp.column(present))
    )


def changes() -> exp.Union:
    """The changelog rows of the staged ``DIFF``: before images, then after images."""
    return exp.union(
        _images(OLD, HAD, HAS, "UPDATE_BEFORE", "DELETE"),
        _images(NEW, HAS, HAD, "UPDATE_AFTER", "INSERT"),
        distinct=False,
    )


def append(relation: Relation) -> exp.Insert:
    """Append the changes of one commit to the changelog table, by column name (columns added
    to a model since its changelog table was made come after the changelog's own three:
    lakewide.compiler.schema.changelog_schema)."""
    insert = exp.insert(changes(), changelog_relation(relation).table())
    insert.set("by_name", True)
    return insert


def create(model: WideModel, relation: Relation, *, replace: bool) -> exp.Create:
    """The empty changelog table, its columns typed like the model's table (read as AFTER)."""
    select = (
        exp.select(
            *(exp.column(c) for c in model.columns),
            exp.alias_(exp.cast(exp.null(), "STRING"), CHANGE_TYPE),
            exp.alias_(exp.cast(exp.null(), "BIGINT"), CHANGE_ORDINAL),
            exp.alias_(exp.cast(exp.null(), "BIGINT"), COMMIT),
        )
        .from_(AFTER)
        .where(exp.false())
    )
    properties = exp.Properties(expressions=[exp.FileFormatProperty(this=exp.var("iceberg"))])
    return exp.Create(
        this=changelog_relation(relation).table(),
        kind="TABLE",
        replace=replace,
        exists=not replace,
        expression=select,
        properties=properties,
    )


def read(relation: Relation, low: str = "low", high: str = "high") -> exp.Select:
    """A downstream read: the changes of the commits with ordinals in ``(:low, :high]``."""
    ordinal = exp.column(CHANGE_ORDINAL)
    return (
        exp.select("*")
        .from_(changelog_relation(relation).table())
        .where(
            exp.and_(
                exp.GT(this=ordinal, expression=exp.cast(param(low), "BIGINT")),
                exp.LTE(this=ordinal.copy(), expression=exp.cast(param(high), "BIGINT")),
            )
        )
    )
