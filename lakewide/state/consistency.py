"""Consistent versions across tables: which snapshots of two lakewide tables were built from the
same upstream snapshots (Paimon's lineage), read from Iceberg metadata only.

The **lineage** of a snapshot ``x`` of a lakewide table ``T`` is a set of (relation, snapshot)
pairs: ``(T, x)`` itself; every entry of the offsets vector of ``x`` (or, for a snapshot that
is not a lakewide commit, such as a compaction, of its newest lakewide ancestor): the driving
relation of each source branch of a key table, every upstream of a table model, at the
snapshot consumed; and, for each consumed relation that is itself a lakewide table whose
consumed snapshot is still in its metadata, the lineage of that snapshot (transitively). Tables
joined inside a branch (lookup semantics: read as of each run) are not part of it.

Two snapshots are **consistent** when their lineages agree on every relation both name: the
same set of snapshots of it. When ``B`` reads ``A``, ``B``'s snapshot names the snapshot of
``A`` it consumed, so a consistent pair is that very snapshot of ``A`` and ``B``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from lakewide.project.nodes import ModelNode
from lakewide.state.offsets import Snapshot, TableMeta, offset_relation, snapshot_offsets
from lakewide.vocabulary.dialect import to_sql

#: relation key -> the snapshots of it a lineage names (None: the relation had no snapshot)
Lineage = dict[str, frozenset[int | None]]


def lakewide_commits(meta: TableMeta | None) -> list[Snapshot]:
    """The current snapshot's ancestors that lakewide committed (carry offsets), newest first."""
    if meta is None:
        return []
    return [s for s in meta.ancestors() if snapshot_offsets(s) is not None]


def commit_behind(meta: TableMeta, snapshot: int) -> Snapshot | None:
    """The lakewide commit whose data ``snapshot`` holds: itself, else its newest lakewide
    ancestor (maintenance commits carry no offsets); None when there is none."""
    return next((s for s in meta.ancestors(snapshot) if snapshot_offsets(s) is not None), None)


def disagreement(a: Lineage, b: Lineage) -> str | None:
    """The first relation (by name) both lineages name at different snapshots; None when
    they agree."""
    return next((r for r in sorted(a.keys() & b.keys()) if a[r] != b[r]), None)


def shown(snapshots: frozenset[int | None]) -> str:
    """Snapshots of one relation, as a message shows them."""
    return ", ".join("no snapshot" if s is None else str(s) for s in sorted(snapshots, key=str))


class Lineages:
    """Lineages of snapshots of lakewide tables, from metadata read once per table.

    ``meta_of(key)`` reads a relation's metadata (None: missing, or not a lakewide table whose
    lineage can be followed, e.g. a source).
    """

    def __init__(self, meta_of: Callable[[str], TableMeta | None]) -> None:
        self._meta_of = meta_of
        self._metas: dict[str, TableMeta | None] = {}
        self._lineages: dict[tuple[str, int], Lineage] = {}

    def meta(self, key: str) -> TableMeta | None:
        if key not in self._metas:
            self._metas[key] = self._meta_of(key)
        return self._metas[key]

    def of(self, key: str, snapshot: int) -> Lineage:
        """The lineage of ``snapshot`` of table ``key`` (see the module's docstring)."""
        cached = self._lineages.get((key, snapshot))
        if cached is not None:
            return cached
        found: dict[str, set[int | None]] = {key: {snapshot}}
        meta = self.meta(key)
        commit = None if meta is None else commit_behind(meta, snapshot)
        offsets = {} if commit is None else snapshot_offsets(commit) or {}
        for offset_key, consumed in offsets.items():
            relation = offset_relation(offset_key)
            found.setdefault(relation, set()).add(consumed)
            upstream = None if consumed is None else self.meta(relation)
            if upstream is not None and consumed in upstream.snapshots:
                assert consumed is not None
                for name, ids in self.of(relation, consumed).items():
                    found.setdefault(name, set()).update(ids)
        lineage = {name: frozenset(ids) for name, ids in found.items()}
        self._lineages[(key, snapshot)] = lineage
        return lineage


@dataclass(frozen=True)
class Pair:
    """A consistent pair: a snapshot of A and one of B, and the relations their lineages share."""

    a: Snapshot
    b: Snapshot
    shared: tuple[str, ...]


def newest_pair(lineages: Lineages, a: str, b: str) -> Pair | str:
    """The newest consistent pair of lakewide commits of tables ``a`` and ``b`` (ranked by the
    older commit time of the two, then the newer), or why none exists."""
    commits_a, commits_b = lakewide_commits(lineages.meta(a)), lakewide_commits(lineages.meta(b))
    for name, commits in ((a, commits_a), (b, commits_b)):
        if not commits:
            return f"{name} has no lakewide commits (never built, or its history was replaced)"
    best: Pair | None = None
    rank = (-1, -1)
    for sa in commits_a:
        if sa.timestamp_ms < rank[0]:
            break  # every later pair is older
        la = lineages.of(a, sa.id)
        for sb in commits_b:
            lb = lineages.of(b, sb.id)
            if disagreement(la, lb) is None:
                times = sorted((sa.timestamp_ms, sb.timestamp_ms))
                if (times[0], times[1]) > rank:
                    rank = (times[0], times[1])
                    best = Pair(sa, sb, tuple(sorted(la.keys() & lb.keys())))
                break  # the newest agreeing snapshot of b is the best one for sa
    if best is not None:
        return best
    return _why_none(lineages, a, b, commits_a, commits_b)


def _why_none(
    lineages: Lineages, a: str, b: str, commits_a: list[Snapshot], commits_b: list[Snapshot]
) -> str:
    """Why no pair agrees: a relation at which one side's newest commit consumed a snapshot
    the other side never consumed; else the relation the two newest commits differ on."""
    for (x, commits_x), (y, commits_y) in (
        ((a, commits_a), (b, commits_b)),
        ((b, commits_b), (a, commits_a)),
    ):
        newest = lineages.of(x, commits_x[0].id)
        others = [lineages.of(y, s.id) for s in commits_y]
        for relation in sorted(newest):
            named = [o[relation] for o in others if relation in o]
            if named and newest[relation] not in named:
                seen = frozenset().union(*named)
                return (
                    f"{x}'s newest snapshot {commits_x[0].id} consumed {relation} at "
                    f"{shown(newest[relation])}; {y} never consumed {relation} at that snapshot "
                    f"(its snapshots consumed it at {shown(seen)})"
                )
    la, lb = lineages.of(a, commits_a[0].id), lineages.of(b, commits_b[0].id)
    differing = disagreement(la, lb)
    assert differing is not None, "the newest commits agree, so they are a pair"
    return (
        f"no snapshot of {a} agrees with one of {b} on every upstream both consumed; their "
        f"newest snapshots differ on {differing}: {a} at {shown(la[differing])}, {b} at "
        f"{shown(lb[differing])}"
    )


def tags_of(meta: TableMeta | None, snapshot: int) -> list[str]:
    """The tags on ``snapshot``, or on a later non-lakewide snapshot holding its data."""
    if meta is None:
        return []
    return sorted(
        name
        for name, tagged in meta.tags.items()
        if tagged in meta.snapshots
        and (found := commit_behind(meta, tagged)) is not None
        and found.id == snapshot
    )


def _at(node: ModelNode, snapshot: int, alias: str) -> exp.Table:
    table = node.relation.table(alias)
    table.set(
        "version",
        exp.Version(this="VERSION", kind="AS OF", expression=exp.Literal.number(snapshot)),
    )
    return table


def pair_sql(a: ModelNode, snapshot_a: int, b: ModelNode, snapshot_b: int) -> str:
    """Spark SQL reading the pair: one join on the primary key columns both models declare,
    else one SELECT per model."""
    shared: list[int | str | exp.Expr] = [
        c for c in a.config.primary_key if c in b.config.primary_key
    ]
    if shared and a.relation != b.relation:
        query = (
            exp.select("*")
            .from_(_at(a, snapshot_a, "a"))
            .join(_at(b, snapshot_b, "b"), using=shared)
        )
        return to_sql(query)
    return "".join(
        to_sql(exp.select("*").from_(_at(node, snapshot, alias)))
        for node, snapshot, alias in ((a, snapshot_a, "a"), (b, snapshot_b, "b"))
    )
