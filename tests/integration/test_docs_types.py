"""The docs' column types against what Spark builds: the types inferred from the compiled SQL
before a build are the types the built tables have, and after the build every column's type is
read from the tables' Iceberg metadata (no JVM in the docs)."""

from __future__ import annotations

import pytest

from lakewide.artifacts.docs.documents import build_documents
from lakewide.state.readers import metadata_reader
from tests.integration.conftest import ProjectRun

pytestmark = [pytest.mark.spark, pytest.mark.slow]

# Iceberg's type names where Spark's simpleString differs
ICEBERG_TO_SPARK = {"long": "bigint", "timestamptz": "timestamp"}


def _catalog(example: ProjectRun) -> dict:
    manifest = example.manifest()
    return build_documents(manifest, metadata_reader(manifest.output)).catalog


def _spark_types(example: ProjectRun, relation: str) -> dict[str, str]:
    schema = example.spark.table(relation).schema
    return {f.name: f.dataType.simpleString() for f in schema if not f.name.startswith("__lw_")}


def test_inferred_types_are_the_built_types_and_then_read_from_metadata(
    example: ProjectRun,
) -> None:
    example.seed()
    before = _catalog(example)
    example.run()
    after = _catalog(example)
    compared = 0
    for unique_id, entry in after["nodes"].items():
        meta = entry["metadata"]
        built = _spark_types(example, f"lw.{meta['schema']}.{meta['name']}")
        assert entry["exists"] is True
        assert {v["type_origin"] for v in entry["columns"].values()} == {"iceberg"}
        stored = {
            c: ICEBERG_TO_SPARK.get(v["type"], v["type"]) for c, v in entry["columns"].items()
        }
        assert stored == built
        for column, found in before["nodes"][unique_id]["columns"].items():
            if found["type_origin"] == "inferred":
                assert found["type"].lower() == built[column], (unique_id, column)
                compared += 1
    assert compared >= 20  # sources exist after the seed: most model columns were inferred
