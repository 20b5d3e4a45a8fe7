"""What ``lakewide maintain`` does to one model's table, decided from Iceberg metadata alone.

Steps, in order: the ``retention`` partition drop and the ``ttl`` row DELETE (data first, so
compaction then works on what is left), ``rewrite_data_files`` (the table's sort order when the
model has ``sort_by``, else binpack), ``rewrite_position_delete_files``, ``rewrite_manifests``,
``expire_snapshots``, ``remove_orphan_files``.

**Which snapshots expire_snapshots keeps.** A run resumes from the newest commit carrying
lakewide's offsets and walks to it through the snapshots after it; a downstream model that
consumed snapshot S of this table reads the table incrementally from S: it needs S and every
snapshot after it on the table's current history (the parent chain from the current snapshot
down to S). So the protected set is, for the table's own last lakewide commit, for the parent
of every commit whose changelog is still due (``lakewide.state.changelog_producer``) and for every
snapshot of this table that the last commit of any model of the project names in its offsets:
the chain from the current snapshot down to it. ``expire_snapshots`` then gets ``older_than`` =
the earlier of ``now - expire_after`` and the oldest timestamp in the protected set. Iceberg
keeps every ancestor of the current snapshot from the newest down to the first one older than
``older_than`` (and at least ``retain_last``), and every other snapshot not older than it: all
protected snapshots are at least that new, so none can expire, whatever the clocks did. Explicit
``snapshot_ids`` are not used: the procedure would still expire by the table's default age
(5 days) next to them. Tags past their ``max-ref-age`` are dropped by the procedure itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlglot import exp

from lakewide.compiler.plans.upstream import produces_changelog
from lakewide.compiler.queries import build_maintenance as sql
from lakewide.compiler.statements.build_changes import changelog_relation
from lakewide.project.config.keys import KeyTableConfig
from lakewide.project.config.maintenance import retention_granularity
from lakewide.project.config.specs import RuleError
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.state.changelog_producer import missing_changes
from lakewide.state.offsets import TableMeta, last_commit, last_offsets, offset_relation
from lakewide.vocabulary.errors import ConfigError

MetaOf = Callable[[Relation], "TableMeta | None"]
TIME_TYPES = ("date", "timestamp", "timestamptz")


@dataclass(frozen=True)
class MaintenanceStep:
    """One statement of the maintenance of a table."""

    kind: str  # retention | ttl | rewrite_data_files | ... | remove_orphan_files
    statement: exp.Expression
    probe: exp.Expression | None = None  # retention/ttl: a row query; no row, no DELETE


@dataclass
class TablePlan:
    """The maintenance of one model's table."""

    model: str
    relation: Relation
    steps: list[MaintenanceStep] = field(default_factory=list)
    produces: bool = False  # the model keeps its changelog: deletes get their changes written
    skipped: str = ""  # why nothing runs (not built, a view, maintenance disabled)


def chain(meta: TableMeta, down_to: int) -> list[int]:
    """Snapshot ids from the current one back to ``down_to`` (inclusive); empty when
    ``down_to`` is not an ancestor of the current snapshot."""
    ids = []
    for snapshot in meta.ancestors():
        ids.append(snapshot.id)
        if snapshot.id == down_to:
            return ids
    return []


def protected_snapshots(
    manifest: Manifest, node: ModelNode, meta: TableMeta, meta_of: MetaOf
) -> dict[int, str]:
    """The snapshots of ``node``'s table expire_snapshots must keep, each with why (the
    reasons joined by ``; ``)."""
    protected: dict[int, str] = {}

    def protect(down_to: int, why: str) -> None:
        for snapshot in chain(meta, down_to):
            reasons = protected.get(snapshot)
            protected[snapshot] = why if reasons is None else f"{reasons}; {why}"

    last = last_commit(meta)
    if last is not None:
        protect(last.id, f"{node.name}'s last commit (its offsets)")
    if produces_changelog(manifest, node):
        for parent, _ in missing_changes(meta, meta_of(changelog_relation(node.relation))):
            protect(parent, f"{node.name}'s changelog still due")
    key = node.relation.key
    for other in manifest.models.values():
        if not other.config.kind.stores_rows or key not in _upstream_keys(manifest, other):
            continue
        for offset, snapshot in (last_offsets(meta_of(other.relation)) or {}).items():
            if offset_relation(offset) == key and snapshot is not None:
                protect(snapshot, f"consumed by {other.name}")
    return protected


def _upstream_keys(manifest: Manifest, node: ModelNode) -> set[str]:
    return {manifest.models[r].relation.key for r in node.refs if r in manifest.models}


def expire_before(
    meta: TableMeta, protected: dict[int, str], now: datetime, age: timedelta
) -> datetime:
    """``older_than`` for expire_snapshots: ``now - age``, moved back to the oldest protected
    snapshot's timestamp when that is earlier."""
    older_than = now - age
    stamps = [meta.snapshots[s].timestamp_ms for s in protected if s in meta.snapshots]
    if stamps:
        oldest = datetime.fromtimestamp(min(stamps) / 1000, tz=now.tzinfo)
        older_than = min(older_than, oldest)
    return older_than


def floor_to(at: datetime, granularity: str) -> datetime:
    """``at`` (UTC) down to the start of its hour, day or month: a partition boundary."""
    at = at.replace(minute=0, second=0, microsecond=0)
    if granularity in ("day", "month"):
        at = at.replace(hour=0)
    if granularity == "month":
        at = at.replace(day=1)
    return at


def _column_type(node: ModelNode, meta: TableMeta, key: str, column: str) -> str:
    if meta.columns is None:
        return "timestamptz"  # the reader did not say: Spark's TIMESTAMP
    found = {c.name.lower(): c.type for c in meta.columns}
    kind = found.get(column.lower())
    if kind is None or kind not in TIME_TYPES:
        what = "is not a column of the table" if kind is None else f"has type {kind}"
        raise ConfigError(
            f"{key} column '{column}' {what}; expected a date or timestamp column of "
            f"{node.relation}",
            key=f"{key}.column",
            path=node.path,
            model=node.name,
        )
    return kind


def _row_probe(relation: Relation, condition: exp.Expression) -> exp.Expression:
    return exp.select("1").from_(relation.table()).where(condition).limit(1)


def data_steps(node: ModelNode, meta: TableMeta, now: datetime) -> list[MaintenanceStep]:
    """The retention partition drop and the TTL delete of a key table."""
    config = node.config
    steps: list[MaintenanceStep] = []
    if not isinstance(config, KeyTableConfig):
        return steps
    if config.retention is not None:
        try:
            granularity = retention_granularity(config.retention, config.partition_by)
        except RuleError as err:
            raise ConfigError(err.message, key=err.key, path=node.path, model=node.name) from None
        column = config.retention.column
        kind = _column_type(node, meta, "retention", column)
        bound = sql.bound_literal(floor_to(now - config.retention.age, granularity), kind)
        delete = sql.delete_older(node.relation, column, bound)
        steps.append(
            MaintenanceStep(
                "retention", delete, _row_probe(node.relation, delete.args["where"].this)
            )
        )
    if config.ttl is not None:
        column = config.ttl.column
        kind = _column_type(node, meta, "ttl", column)
        delete = sql.delete_older(
            node.relation, column, sql.bound_literal(now - config.ttl.age, kind)
        )
        steps.append(
            MaintenanceStep("ttl", delete, _row_probe(node.relation, delete.args["where"].this))
        )
    return steps


def table_steps(node: ModelNode) -> list[MaintenanceStep]:
    """Compaction: data files, position delete files (format 2+), manifests."""
    config = node.config.maintenance
    if not config.rewrite:
        return []
    relation = node.relation
    steps = [
        MaintenanceStep(
            "rewrite_data_files",
            sql.rewrite_data_files(
                relation, sort=bool(node.config.sort_by), options=config.rewrite_options
            ),
        )
    ]
    if node.config.format_version >= 2:
        steps.append(
            MaintenanceStep(
                "rewrite_position_delete_files", sql.rewrite_position_delete_files(relation)
            )
        )
    steps.append(MaintenanceStep("rewrite_manifests", sql.rewrite_manifests(relation)))
    return steps


def expire_step(
    manifest: Manifest, node: ModelNode, meta: TableMeta, meta_of: MetaOf, now: datetime
) -> tuple[MaintenanceStep | None, dict[int, str]]:
    """expire_snapshots with an ``older_than`` that keeps every protected snapshot."""
    config = node.config.maintenance
    age = config.expire_age
    if age is None:
        return None, {}
    protected = protected_snapshots(manifest, node, meta, meta_of)
    older_than = expire_before(meta, protected, now, age)
    statement = sql.expire_snapshots(node.relation, older_than, config.retain_last)
    return MaintenanceStep("expire_snapshots", statement), protected


def orphan_step(node: ModelNode, now: datetime, object_store: bool) -> MaintenanceStep | None:
    """remove_orphan_files; on object storage (``object_store``) it lists the table's files
    through its FileIO (``prefix_listing``: S3FileIO) instead of a Hadoop file system."""
    age = node.config.maintenance.orphan_age
    if age is None:
        return None
    statement = sql.remove_orphan_files(node.relation, now - age, prefix_listing=object_store)
    return MaintenanceStep("remove_orphan_files", statement)


def skip_reason(node: ModelNode, meta: TableMeta | None) -> str:
    """Why ``maintain`` leaves a model alone ('' when it does not)."""
    if not node.config.kind.stores_rows:
        return "a view: no table"
    if not node.config.maintenance.enabled:
        return "maintenance={'enabled': false}"
    if meta is None or meta.current is None:
        return "not built yet"
    return ""


def plan_table(
    manifest: Manifest, name: str, meta_of: MetaOf, now: datetime
) -> tuple[TablePlan, dict[int, str]]:
    """Every step of one model's maintenance, as decided from the metadata now (the expire
    step's ``older_than`` is decided again, from fresh metadata, when it runs)."""
    node = manifest.models[name]
    meta = meta_of(node.relation) if node.config.kind.stores_rows else None
    plan = TablePlan(name, node.relation, skipped=skip_reason(node, meta))
    if plan.skipped or meta is None:
        return plan, {}
    plan.produces = produces_changelog(manifest, node)
    plan.steps = [*data_steps(node, meta, now), *table_steps(node)]
    expire, protected = expire_step(manifest, node, meta, meta_of, now)
    orphans = orphan_step(node, now, manifest.output.uses_s3())
    plan.steps += [s for s in (expire, orphans) if s is not None]
    return plan, protected
