"""Which models have nothing new to read, judged from Iceberg metadata files alone (no JVM)."""

from __future__ import annotations

from pathlib import Path

from lakewide.compiler.rewrite import driving_table
from lakewide.compiler.wide_model import analyze
from lakewide.incremental import upstream_relations
from lakewide.manifest import Manifest
from lakewide.metadata import read_table_meta
from lakewide.offsets import last_offsets, offset_key


def _fresh(manifest: Manifest, name: str, warehouse: Path) -> bool:
    node = manifest.models[name]
    if node.config.kind == "view":
        return True
    offsets = last_offsets(read_table_meta(warehouse, node.relation))
    if offsets is None:
        return False
    upstream = upstream_relations(manifest, node)
    if any(r.catalog != manifest.output.catalog for r in upstream.values()):
        return False  # another catalog: its metadata is not under this warehouse
    current = {}
    for key, relation in upstream.items():
        meta = read_table_meta(warehouse, relation)
        current[key] = None if meta is None else meta.current
    if node.config.kind == "table":
        return offsets == {offset_key(-1, key): snap for key, snap in current.items()}
    drivers = [driving_table(b.select) for b in analyze(node).branches]
    return all(d is not None and d in current and offsets.get(offset_key(i, d)) == current[d]
               for i, d in enumerate(drivers))


def fresh_models(manifest: Manifest, names: list[str]) -> set[str] | None:
    """Selected models (in DAG order) with no new upstream data; None if it cannot be told.

    Only the hadoop catalog keeps its metadata where lakewide can read it without Spark. A model
    downstream of a model that will run is never fresh.
    """
    if manifest.output.catalog_type != "hadoop" or not manifest.output.warehouse:
        return None
    warehouse = Path(manifest.output.warehouse)
    fresh: set[str] = set()
    for name in names:
        stale_parent = any(r in names and r not in fresh for r in manifest.models[name].refs)
        if not stale_parent and _fresh(manifest, name, warehouse):
            fresh.add(name)
    return fresh
