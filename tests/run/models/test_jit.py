"""Tests for lakewide.run.models.jit: which runs start their JVM with C1 only, and the conf it gives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.run.models.jit import QUICK_JIT, merges_only
from lakewide.spark.adapter import SparkAdapter
from lakewide.spark.runtime import JAVA_OPTIONS
from tests.support.project_factory import make_project, manifest_of

SOURCES = "sources:\n  - name: src\n    tables:\n      - name: a\n"
MODELS = {
    "wide": "{{ config(merge_engine='partial_update', primary_key='k') }}\n"
    "SELECT k, a FROM {{ source('src', 'a') }}\n",
    "snap": "{{ config(materialized='snapshot', unique_key='k', strategy='check', "
    "check_cols=['a']) }}\nSELECT k, a FROM {{ source('src', 'a') }}\n",
    "listing": "{{ config(materialized='view') }}\nSELECT k FROM {{ ref('wide') }}\n",
    "report": "{{ config(materialized='table') }}\nSELECT k FROM {{ ref('wide') }}\n",
}


@pytest.fixture
def manifest(tmp_path: Path) -> Manifest:
    files: dict[str, str | None] = {"models/sources.yml": SOURCES}
    files.update({f"models/{name}.sql": sql for name, sql in MODELS.items()})
    return manifest_of(make_project(tmp_path, files))


def existing(*names: str, unknown: bool = False) -> Callable[[Relation], bool | None]:
    def exists(relation: Relation) -> bool | None:
        return None if unknown else relation.name in names

    return exists


@pytest.mark.parametrize(
    ("names", "exists", "full_refresh", "expected"),
    [
        (["wide", "snap", "listing"], existing("wide", "snap"), False, True),
        (["listing"], existing(), False, True),  # views build nothing
        (["wide", "snap"], existing("wide", "snap"), True, False),  # --full-refresh
        (["wide", "snap"], existing("wide"), False, False),  # the snapshot is new
        (["wide", "report"], existing("wide", "report"), False, False),  # a table is rebuilt
        (["wide"], existing("wide", unknown=True), False, False),  # only Spark could tell
    ],
    ids=["merges", "views", "full-refresh", "bootstrap", "table", "unknown"],
)
def test_merges_only(
    manifest: Manifest,
    names: list[str],
    exists: Callable[[Relation], bool | None],
    full_refresh: bool,
    expected: bool,
) -> None:
    assert merges_only(manifest, names, exists, full_refresh) is expected


def test_session_conf_adds_java_options_unless_the_profile_sets_them(manifest: Manifest) -> None:
    adapter = SparkAdapter(manifest.output)
    plain = adapter.conf()[JAVA_OPTIONS]
    assert QUICK_JIT not in plain
    adapter.java_options.append(QUICK_JIT)
    assert adapter.conf()[JAVA_OPTIONS] == f"{plain} {QUICK_JIT}"
    assert not adapter.started  # building the conf starts no JVM

    theirs = manifest.output.model_copy(
        update={"spark_conf": {JAVA_OPTIONS: "-Dlog4j2.configurationFile=file:/x"}}
    )
    mine = SparkAdapter(theirs)
    mine.java_options.append(QUICK_JIT)
    assert mine.conf()[JAVA_OPTIONS] == "-Dlog4j2.configurationFile=file:/x"
