"""How far each model lags behind its upstreams, from Iceberg metadata alone (no JVM).

A model's **lag** is the age of the oldest upstream change it has not consumed yet: for each
upstream table it reads, its last lakewide commit names the snapshot it consumed (its offsets,
lakewide.offsets); the first snapshot committed after that one is the oldest change still to
take in, and its commit time gives the age. Snapshots that only rewrite files (``replace``:
compaction, ``rewrite_manifests``) change no data and do not count. A model that reads another
model lags at least as much as that model does (the changes its upstream has not taken in yet
are missing here too), so lags add up along a chain: ``lag = max(own lag, upstream models'
lags)``. Commit times are the writers' clocks; the lag is a lower bound of the data's age (an
upstream row may have been written some time before its commit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lakewide.compiler.plans.upstream import branch_drivers, upstream_relations
from lakewide.project.durations import parse_duration
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.state.offsets import (
    WHOLE_MODEL,
    Snapshot,
    TableMeta,
    last_offsets,
    offset_key,
    offset_relation,
)

MetaOf = Callable[[Relation], "TableMeta | None"]

#: states of a model's lag
FRESH, BEHIND, NOT_BUILT, VIEW, UNKNOWN = "fresh", "behind", "not built", "view", "unknown"


@dataclass(frozen=True)
class ModelLag:
    """One model's lag (seconds; None when it cannot be told) and its freshness target."""

    name: str
    state: str  # fresh | behind | not built | view | unknown
    lag: float | None
    target: float | None  # seconds of ``freshness``; None: no target
    own: bool = False  # its own upstream tables have changes it has not consumed (a run helps)
    behind: tuple[str, ...] = ()  # what it lags behind: tables, or ``via <model>``
    why: str = ""  # for UNKNOWN: why it cannot be told
    upstream: dict[str, float] = field(default_factory=dict)  # table -> own lag behind it

    @property
    def within_target(self) -> bool | None:
        """Whether the lag is within the target (None: no target). A model not built, or
        whose lag cannot be told, is not within its target."""
        if self.target is None:
            return None
        return self.lag is not None and self.lag <= self.target


def target_seconds(node: ModelNode) -> float | None:
    """The model's ``freshness`` in seconds; None when it sets none."""
    value = node.config.freshness
    return None if value is None else parse_duration(value)


def first_unconsumed(meta: TableMeta, consumed: int | None) -> Snapshot | None:
    """The oldest snapshot after ``consumed`` on the table's current line that changed data;
    None when there is none. A ``consumed`` snapshot that is not an ancestor (never consumed,
    expired, or the table was replaced) leaves every reachable snapshot unconsumed."""
    first = None
    for snapshot in meta.ancestors():
        if snapshot.id == consumed:
            break
        if snapshot.operation != "replace":
            first = snapshot
    return first


def _offset_keys(node: ModelNode, upstream: dict[str, Relation]) -> list[str] | None:
    """The keys of the offsets vector a run of ``node`` stores; None when a branch of a key
    table has no driving table among its upstreams (its offsets cannot be read)."""
    if node.config.kind.rebuilt_each_run:
        return [offset_key(WHOLE_MODEL, key) for key in upstream]
    keys = []
    for branch, driver in branch_drivers(node):
        if driver is None or driver not in upstream:
            return None
        keys.append(offset_key(branch, driver))
    return keys


class LagReader:
    """Lags of a project's models, each model's and table's metadata read once."""

    def __init__(self, manifest: Manifest, meta_of: MetaOf, now_ms: int) -> None:
        self.manifest = manifest
        self.now_ms = now_ms
        self._meta_of = meta_of
        self._metas: dict[Relation, TableMeta | None] = {}
        self._lags: dict[str, ModelLag] = {}

    def meta(self, relation: Relation) -> TableMeta | None:
        if relation not in self._metas:
            self._metas[relation] = self._meta_of(relation)
        return self._metas[relation]

    def lag(self, name: str) -> ModelLag:
        """The lag of model ``name`` (its upstream models' lags computed on the way)."""
        if name not in self._lags:
            self._lags[name] = self._compute(self.manifest.models[name])
        return self._lags[name]

    def _compute(self, node: ModelNode) -> ModelLag:
        target = target_seconds(node)
        own = self._own(node, target)
        if own.state in (NOT_BUILT, UNKNOWN):
            return own
        lag, behind = own.lag or 0.0, list(own.behind)
        for ref in node.refs:
            upstream = self.lag(ref)
            if upstream.lag:  # a model downstream lags at least as much
                behind.append(f"via {ref}")
                lag = max(lag, upstream.lag)
        state = own.state if own.state == VIEW else (BEHIND if lag > 0 else FRESH)
        return ModelLag(node.name, state, lag, target, own.own, tuple(behind), "", own.upstream)

    def _own(self, node: ModelNode, target: float | None) -> ModelLag:
        """The lag behind the model's own upstream tables (no propagation)."""
        name = node.name
        if not node.config.kind.stores_rows:
            return ModelLag(name, VIEW, 0.0, target)  # computed when read
        upstream = upstream_relations(self.manifest, node)
        other = [r for r in upstream.values() if r.catalog != self.manifest.output.catalog]
        if other:
            why = f"reads {other[0]}, in another catalog than the profile's"
            return ModelLag(name, UNKNOWN, None, target, why=why)
        meta = self.meta(node.relation)
        offsets = last_offsets(meta)
        if offsets is None:
            return ModelLag(name, NOT_BUILT, None, target, own=True)
        keys = _offset_keys(node, upstream)
        if keys is None:
            why = "a source branch has no upstream table to read offsets of"
            return ModelLag(name, UNKNOWN, None, target, why=why)
        by_table: dict[str, float] = {}
        for key in keys:
            relation = offset_relation(key)
            upstream_meta = self.meta(upstream[relation])
            if upstream_meta is None:
                continue  # no table yet: nothing to consume
            first = first_unconsumed(upstream_meta, offsets.get(key))
            if first is not None:
                age = max(0.0, (self.now_ms - first.timestamp_ms) / 1000)
                by_table[relation] = max(by_table.get(relation, 0.0), age)
        lag = max(by_table.values(), default=0.0)
        state = BEHIND if by_table else FRESH
        return ModelLag(name, state, lag, target, bool(by_table), tuple(by_table), "", by_table)


def model_lags(
    manifest: Manifest, names: list[str], meta_of: MetaOf, now_ms: int
) -> list[ModelLag]:
    """The lags of models ``names`` at ``now_ms`` (epoch milliseconds), in that order.

    ``meta_of`` reads a table's metadata (None: no such table); it is called once per table.
    """
    reader = LagReader(manifest, meta_of, now_ms)
    return [reader.lag(name) for name in names]
