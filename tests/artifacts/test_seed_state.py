"""Seeds against ``--state`` without a JVM: recorded in manifest.json, which changed, the
models reading a changed one selected by ``state:modified``, and where a deferred command
loads and reads each seed (lakewide.artifacts.seed_state)."""

from __future__ import annotations

import json
from pathlib import Path

from lakewide.artifacts.seed_state import deferred_seeds
from lakewide.artifacts.state_compare import compare, load_state
from lakewide.project.nodes import Relation
from lakewide.project.seeds import seeds_to_load
from tests.support.project_factory import (
    DEFAULT_PYPROJECT,
    PROD_DEV_PROFILES,
    manifest_of,
    production_state,
)

PROD = ("lw", "prod")
FILES = {
    "pyproject.toml": DEFAULT_PYPROJECT + 'seed-schema = "raw"\n',
    "profiles.yml": PROD_DEV_PROFILES,
    "models/sources.yml": (
        "sources:\n  - name: raw\n    schema: raw\n    tables:\n"
        "      - name: tiers\n      - name: regions\n"
    ),
    "models/labelled.sql": "SELECT id, label FROM {{ source('raw', 'tiers') }}",
    "models/top.sql": "SELECT id FROM {{ ref('labelled') }}",
    "models/placed.sql": "SELECT id, region FROM {{ source('raw', 'regions') }}",
    "seeds/tiers.csv": "id,label\n1,gold\n",
    "seeds/regions.csv": "id,region\n1,north\n",
}


def _production(tmp_path: Path) -> Path:
    return production_state(tmp_path, FILES)


def test_manifest_json_records_each_seed_with_its_checksum(tmp_path: Path) -> None:
    root = _production(tmp_path)
    document = json.loads((root / "target" / "manifest.json").read_text())
    node = document["nodes"]["seed.demo.tiers"]
    assert node["resource_type"] == "seed" and node["relation_name"] == "lw.raw.tiers"
    assert len(node["checksum"]["checksum"]) == 64
    assert document["metadata"]["seeds_recorded"] is True


def test_an_edited_csv_makes_its_readers_modified_and_loads_into_the_target(
    tmp_path: Path,
) -> None:
    root = _production(tmp_path)
    state = load_state(tmp_path / "prod-target")
    manifest = manifest_of(root, target="dev")
    assert not compare(manifest, state)["modified"]
    loads, instead = deferred_seeds(manifest, state.seeds, PROD)
    assert loads == {"tiers": None, "regions": None} and instead == {}  # production's read

    (root / "seeds" / "tiers.csv").write_text("id,label\n1,platinum\n")
    manifest = manifest_of(root, target="dev")
    sets = compare(manifest, state)
    assert sets["modified"] == sets["modified.seeds"] == {"labelled"}  # top: with state:modified+
    loads, instead = deferred_seeds(manifest, state.seeds, PROD)
    assert loads == {"tiers": Relation("lw", "dev", "tiers"), "regions": None}
    assert instead == {"lw.raw.tiers": Relation("lw", "dev", "tiers")}
    assert [
        (s.path.stem, str(s.relation))
        for s in seeds_to_load(manifest.project, manifest.output, loads)
    ] == [("tiers", "lw.dev.tiers")]
    # the production target itself: a changed seed is loaded where it always is
    prod = manifest_of(root, target="prod")
    loads, instead = deferred_seeds(prod, state.seeds, PROD)
    assert loads is None and instead == {}


def test_a_state_that_records_no_seeds_changes_none(tmp_path: Path) -> None:
    root = _production(tmp_path)
    path = tmp_path / "prod-target" / "manifest.json"
    document = json.loads(path.read_text())
    del document["metadata"]["seeds_recorded"]
    path.write_text(json.dumps(document))
    (root / "seeds" / "tiers.csv").write_text("id,label\n1,platinum\n")
    state = load_state(tmp_path / "prod-target")
    manifest = manifest_of(root, target="dev")
    assert not compare(manifest, state)["modified"]
    assert deferred_seeds(manifest, state.seeds, PROD) == ({"tiers": None, "regions": None}, {})
