"""Which models have nothing new to read, judged from Iceberg metadata files alone (no JVM)."""

from __future__ import annotations

from lakewide.compiler.plans.upstream import branch_drivers, upstream_relations
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.state.definition import definition_changed
from lakewide.state.metadata import CorruptMetadataError, MetadataReader
from lakewide.state.offsets import (
    TableMeta,
    branch_offsets,
    last_offsets,
    offset_relation,
    rewrites_only,
    table_offsets,
)
from lakewide.state.readers import metadata_reader


class _Metas:
    """Table metadata read once per relation for one check."""

    def __init__(self, reader: MetadataReader) -> None:
        self.reader = reader
        self._read: dict[Relation, TableMeta | None] = {}

    def get(self, relation: Relation) -> TableMeta | None:
        """Raises CorruptMetadataError when the table's metadata file cannot be read."""
        if relation not in self._read:
            self._read[relation] = self.reader.table_meta(relation)
        return self._read[relation]


def _fresh(manifest: Manifest, name: str, metas: _Metas) -> bool:
    node = manifest.models[name]
    if not node.config.kind.stores_rows:
        return True
    meta = metas.get(node.relation)
    offsets = last_offsets(meta)
    if offsets is None:
        return False
    upstream = upstream_relations(manifest, node)
    if any(r.catalog != manifest.output.catalog for r in upstream.values()):
        return False  # another catalog: not the one this reader reads
    current: dict[str, int | None] = {}
    upstream_metas: dict[str, TableMeta | None] = {}
    for key, relation in upstream.items():
        upstream_meta = upstream_metas[key] = metas.get(relation)
        current[key] = None if upstream_meta is None else upstream_meta.current
    if definition_changed(node, meta):
        return False  # tables are rebuilt; key tables plan their schema changes (with Spark)
    if node.config.kind.rebuilt_each_run:
        expected = table_offsets(current)
        return set(offsets) == set(expected) and _caught_up(offsets, expected, upstream_metas)
    drivers = branch_drivers(node)
    if any(driver is None or driver not in current for _, driver in drivers):
        return False
    return _caught_up(offsets, branch_offsets(drivers, current), upstream_metas)


def _caught_up(
    offsets: dict[str, int | None],
    expected: dict[str, int | None],
    metas: dict[str, TableMeta | None],
) -> bool:
    """Every upstream is at its consumed snapshot, or past it by file rewrites only (a
    compaction brings no new data: the next run that has some reads across it)."""
    for key, snapshot in expected.items():
        consumed = offsets.get(key)
        if consumed == snapshot:
            continue
        meta = metas.get(offset_relation(key))
        if meta is None or consumed is None or snapshot is None:
            return False
        if not rewrites_only(meta, consumed, snapshot):
            return False
    return True


def fresh_models(manifest: Manifest, names: list[str]) -> set[str] | None:
    """Selected models (in DAG order) with no new upstream data; None if it cannot be told.

    Only catalogs that lakewide.state.metadata reads without Spark can tell (the hadoop catalog on
    a local warehouse, JDBC catalogs). A model downstream of a model that will run is never
    fresh; a model whose table's metadata is unreadable is not fresh (its run reports the
    file), nor one whose definition changed since its last commit (a table is rebuilt, a key
    table plans its schema changes: lakewide.run.schema.schema_steps).
    """
    reader = metadata_reader(manifest.output)
    if reader is None:
        return None
    metas = _Metas(reader)
    fresh: set[str] = set()
    for name in names:
        stale_parent = any(r in names and r not in fresh for r in manifest.models[name].refs)
        if stale_parent:
            continue
        try:
            if _fresh(manifest, name, metas):
                fresh.add(name)
        except CorruptMetadataError:
            continue  # not fresh: the run reports what is wrong with this model
    return fresh
