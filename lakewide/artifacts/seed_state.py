"""Seeds in ``manifest.json`` and against ``--state``: which seeds a pull request changed, and
where a deferred command's seeds are loaded and read.

``manifest.json`` records each seed as a node (``resource_type: seed``, as dbt does) with its
table and a checksum of its CSV and declared column types. Against a state:

* a seed whose checksum the state records is *unchanged*: a deferred command reads
  production's table (the state's), and ``build`` does not load it;
* a seed the state lacks or records with another checksum is *modified*: a deferred ``build``
  loads it into the target's own namespace, and every ``source()`` naming its table reads that
  copy; the models reading it are ``state:modified`` (their input changed), so
  ``state:modified+`` rebuilds them and what is downstream of them.

A state written before seeds were recorded (no ``seeds_recorded`` in its metadata) changes no
seed: every seed is read from production's table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.project.seeds import Seed, find_seeds
from lakewide.vocabulary.errors import ConfigError

SEEDS_RECORDED = "seeds_recorded"  # the metadata key saying the manifest records its seeds


@dataclass(frozen=True)
class StateSeed:
    """One seed as the state's ``manifest.json`` recorded it."""

    relation: Relation
    checksum: str


def _seeds(manifest: Manifest) -> list[Seed]:
    try:
        return find_seeds(manifest.project, manifest.output)
    except ConfigError:
        return []  # a broken seed file: the seed command says what is wrong with it


def seed_nodes(manifest: Manifest) -> dict[str, Any]:
    """The ``nodes`` entries of the project's seeds."""
    out: dict[str, Any] = {}
    for seed in _seeds(manifest):
        name = seed.path.stem
        uid = f"seed.{manifest.project.name}.{name}"
        out[uid] = {
            "unique_id": uid,
            "resource_type": "seed",
            "name": name,
            "original_file_path": manifest.project.relative(seed.path),
            "relation_name": str(seed.relation),
            "database": seed.relation.catalog,
            "schema": seed.relation.namespace,
            "alias": seed.relation.name,
            "config": {"column_types": seed.column_types},
            "depends_on": {"nodes": []},
            "checksum": {"name": "sha256", "checksum": seed.checksum()},
        }
    return out


def state_seeds(document: dict[str, Any]) -> dict[str, StateSeed] | None:
    """The seeds a state's manifest records (None: a manifest that records none)."""
    if not document.get("metadata", {}).get(SEEDS_RECORDED):
        return None
    return {
        node["name"]: StateSeed(
            Relation(node["database"] or "", node["schema"] or "", node["alias"]),
            node["checksum"]["checksum"],
        )
        for node in document["nodes"].values()
        if node.get("resource_type") == "seed"
    }


def modified_seeds(manifest: Manifest, seeds: dict[str, StateSeed] | None) -> list[Seed]:
    """The project's seeds the state lacks or records with another checksum."""
    if seeds is None:
        return []
    return [
        seed
        for seed in _seeds(manifest)
        if seed.path.stem not in seeds or seeds[seed.path.stem].checksum != seed.checksum()
    ]


def seed_readers(manifest: Manifest, changed: list[Seed]) -> set[str]:
    """The models whose ``source()`` names the table of one of ``changed``."""
    tables = {seed.relation.key for seed in changed}
    return {
        name
        for name, node in manifest.models.items()
        if any(
            key in manifest.sources and manifest.sources[key].relation.key in tables
            for key in node.sources
        )
    }


def deferred_seeds(
    manifest: Manifest, seeds: dict[str, StateSeed] | None, production: tuple[str, str]
) -> tuple[dict[str, Relation | None] | None, dict[str, Relation]]:
    """``--defer``: each seed's table to load into (None: not loaded, production's is read;
    all None: the target is ``production``'s own (catalog, namespace), its seeds are loaded as
    ever), and the tables ``source()`` reads instead (a seed's table key -> the table read)."""
    output = manifest.output
    if (output.catalog.lower(), output.namespace.lower()) == tuple(p.lower() for p in production):
        return None, {}
    loads: dict[str, Relation | None] = {}
    instead: dict[str, Relation] = {}
    changed = {seed.path.stem for seed in modified_seeds(manifest, seeds)}
    for seed in _seeds(manifest):
        name = seed.path.stem
        before = (seeds or {}).get(name)
        if name in changed:
            own = Relation(output.catalog, output.namespace, name)
            loads[name] = own
            if own.key != seed.relation.key:
                instead[seed.relation.key] = own
        else:
            loads[name] = None
            if before is not None and before.relation.key != seed.relation.key:
                instead[seed.relation.key] = before.relation
    return loads, instead
