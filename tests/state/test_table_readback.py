"""What lakewide reads back from a table without a JVM: the stored definition digest, unreadable
metadata files, and the warehouse lock of ``file:`` warehouses (issue 9, section 3)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output, warehouse_path
from lakewide.state.definition import definition_digest
from lakewide.state.lock import LockBusyError, WarehouseLock, lock_path, warehouse_lock
from lakewide.state.metadata import CorruptMetadataError, read_table_meta, table_dir
from lakewide.state.nothing_new import fresh_models
from lakewide.state.offsets import commit_properties, offset_key
from tests.support import iceberg_files
from tests.support.project_factory import make_project, manifest_of

KEY_MODEL = """\
{{ config(merge_engine='partial_update', primary_key='k') }}
SELECT k, a FROM {{ source('src', 'a') }}
UNION ALL
SELECT k, CAST(NULL AS BIGINT) FROM {{ source('src', 'b') }}
"""
TABLE_MODEL = "{{ config(materialized='table') }}\nSELECT k, a FROM {{ source('src', 'a') }}\n"
SOURCES = "sources:\n  - name: src\n    tables:\n      - name: a\n      - name: b\n"


def project(tmp_path: Path, models: dict[str, str]) -> Manifest:
    files: dict[str, str | None] = {"models/sources.yml": SOURCES}
    files.update({f"models/{name}.sql": sql for name, sql in models.items()})
    return manifest_of(make_project(tmp_path, files))


def digest(tmp_path: Path, sql: str) -> str:
    folder = tmp_path / hashlib.sha256(sql.encode()).hexdigest()[:12]
    return definition_digest(project(folder, {"m": sql}).models["m"])


# -- the definition digest ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "cosmetic",
    [
        KEY_MODEL.replace("SELECT k, a", "select   k,\n       a  -- the value\n"),
        "/* owner: data team */\n" + KEY_MODEL.replace("UNION ALL", "union all"),
        KEY_MODEL.replace(
            "primary_key='k')", "primary_key=['k'], tags=['nightly'], description='wide')"
        ),
        KEY_MODEL.replace("primary_key='k')", "primary_key='k', ignore_delete=False)"),
    ],
    ids=[
        "whitespace-comment",
        "block-comment-keyword-case",
        "tags-description",
        "explicit-default",
    ],
)
def test_cosmetic_edits_keep_the_digest(tmp_path: Path, cosmetic: str) -> None:
    assert digest(tmp_path, cosmetic) == digest(tmp_path, KEY_MODEL)


@pytest.mark.parametrize(
    "edited",
    [
        KEY_MODEL.replace("SELECT k, a FROM", "SELECT k, a, a + 1 AS b FROM").replace(
            "CAST(NULL AS BIGINT) FROM", "CAST(NULL AS BIGINT), CAST(NULL AS BIGINT) FROM"
        ),
        KEY_MODEL + "UNION ALL\nSELECT k, a FROM {{ source('src', 'b') }}\n",
        KEY_MODEL.replace(
            "FROM {{ source('src', 'a') }}", "FROM {{ source('src', 'a') }} WHERE a > 0"
        ),
        KEY_MODEL.replace("partial_update", "aggregation"),
        KEY_MODEL.replace("primary_key='k')", "primary_key='k', partition_by=['bucket(4, k)'])"),
        KEY_MODEL.replace("SELECT k, a FROM", "SELECT k, 'a' FROM"),
        KEY_MODEL.replace("SELECT k, a FROM", "SELECT k, A FROM"),
        KEY_MODEL.replace("CAST(NULL AS BIGINT)", "CAST(NULL AS INT)"),
        KEY_MODEL.replace("{{ source('src', 'b') }}", "{{ source('src', 'a') }}"),
    ],
    ids=[
        "new-column",
        "new-branch",
        "filter",
        "engine",
        "partitioning",
        "string-for-column",
        "column-case",
        "type",
        "source",
    ],
)
def test_edits_that_change_the_statements_change_the_digest(tmp_path: Path, edited: str) -> None:
    assert digest(tmp_path, edited) != digest(tmp_path, KEY_MODEL)


# -- the no-op check against stored digests (metadata files written by hand) -------------------


def write_metadata(
    warehouse: Path, relation: Relation, summary: dict[str, str], version: int = 1
) -> Path:
    """A table's metadata file (written by pyiceberg) with one snapshot carrying ``summary``."""
    metadata = iceberg_files.commit(
        iceberg_files.empty_table(table_dir(warehouse, relation)), 100 + version, summary
    )
    return iceberg_files.write(warehouse, relation, metadata, version)


def build_state(manifest: Manifest, name: str, definition: str | None) -> None:
    """Sources at snapshot 101, and model ``name`` committed as having read them."""
    warehouse = warehouse_path(manifest.output.warehouse)
    assert warehouse is not None
    node = manifest.models[name]
    sources = [manifest.sources[s].relation for s in node.sources]
    for relation in sources:
        write_metadata(warehouse, relation, {})
    keys = [r.key for r in sources]
    if node.config.kind == "table":
        offsets = {offset_key(-1, k): 101 for k in keys}
    else:
        offsets = {offset_key(i, k): 101 for i, k in enumerate(keys)}
    write_metadata(warehouse, node.relation, commit_properties(offsets, "run", name, definition))


def test_noop_check_skips_a_model_whose_definition_is_unchanged(tmp_path: Path) -> None:
    manifest = project(tmp_path, {"m": KEY_MODEL})
    build_state(manifest, "m", definition_digest(manifest.models["m"]))
    assert fresh_models(manifest, ["m"]) == {"m"}


def test_noop_check_sends_an_edited_key_model_to_the_run(tmp_path: Path) -> None:
    manifest = project(tmp_path, {"m": KEY_MODEL})
    build_state(manifest, "m", "0" * 64)
    # not fresh: the run compares the table's stored contract (docs/how-to/schema-changes.md)
    assert fresh_models(manifest, ["m"]) == set()


def test_noop_check_accepts_a_table_without_a_digest(tmp_path: Path) -> None:
    manifest = project(tmp_path, {"m": KEY_MODEL})
    build_state(manifest, "m", None)  # built by a lakewide that stored no digest
    assert fresh_models(manifest, ["m"]) == {"m"}


def test_noop_check_rebuilds_an_edited_table_model(tmp_path: Path) -> None:
    manifest = project(tmp_path, {"t": TABLE_MODEL})
    build_state(manifest, "t", definition_digest(manifest.models["t"]))
    assert fresh_models(manifest, ["t"]) == {"t"}
    build_state(manifest, "t", "0" * 64)
    assert fresh_models(manifest, ["t"]) == set()  # not refused: a table is rebuilt every run


# -- unreadable metadata files -----------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b'{"format-version": 2, "snapsh',
        b"",
        b"\xff\xfe\x00",
        b'{"snapshots": [{"summary": {}}]}',
        b"[1, 2]",
    ],
    ids=["truncated", "empty", "not-utf8", "no-snapshot-id", "not-object"],
)
def test_unreadable_metadata_names_table_and_file(tmp_path: Path, content: bytes) -> None:
    relation = Relation("lw", "ns", "t")
    path = write_metadata(tmp_path, relation, {})
    path.write_bytes(content)
    with pytest.raises(CorruptMetadataError) as caught:
        read_table_meta(tmp_path, relation)
    assert caught.value.exit_code == 1
    assert "table lw.ns.t" in str(caught.value) and str(path) in str(caught.value)


def test_noop_check_runs_a_model_whose_metadata_is_unreadable(tmp_path: Path) -> None:
    manifest = project(tmp_path, {"m": KEY_MODEL, "t": TABLE_MODEL})
    build_state(manifest, "m", definition_digest(manifest.models["m"]))
    build_state(manifest, "t", definition_digest(manifest.models["t"]))
    warehouse = warehouse_path(manifest.output.warehouse)
    assert warehouse is not None
    (
        table_dir(warehouse, manifest.models["t"].relation) / "metadata" / "v1.metadata.json"
    ).write_text('{"current-snap')
    assert fresh_models(manifest, ["m", "t"]) == {"m"}  # t goes to the run, which reports it


# -- the warehouse lock of file: URIs ----------------------------------------------------------


@pytest.mark.parametrize(
    ("warehouse", "expected"),
    [
        ("/data/wh", "/data/wh"),
        ("file:///data/wh", "/data/wh"),
        ("file:/data/wh", "/data/wh"),
        ("file://localhost/data/wh", "/data/wh"),
        ("file:///data/my%20wh", "/data/my wh"),
        ("FILE:///data/wh", "/data/wh"),
        ("s3://bucket/wh", None),
        ("hdfs://nn:8020/wh", None),
        ("file://otherhost/data/wh", None),
        (None, None),
    ],
)
def test_warehouse_path(warehouse: str | None, expected: str | None) -> None:
    found = warehouse_path(warehouse)
    assert (None if found is None else str(found)) == expected


def test_file_uri_warehouse_takes_the_same_lock_as_its_path(tmp_path: Path) -> None:
    output = Output(catalog_type="hadoop", warehouse=f"file://{tmp_path}/wh")
    assert lock_path(output) == tmp_path / "wh" / ".lakewide.lock"
    with warehouse_lock(output, 0):
        with pytest.raises(LockBusyError) as caught:
            with WarehouseLock(tmp_path / "wh" / ".lakewide.lock", 0):
                pass
    assert caught.value.exit_code == 2
    with warehouse_lock(Output(catalog_type="hadoop", warehouse=str(tmp_path / "wh")), 0):
        pass  # released when the first holder left


def test_noop_check_reads_a_file_uri_warehouse(tmp_path: Path) -> None:
    profiles = (
        "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
        f"      catalog_type: hadoop\n      warehouse: file://{tmp_path}/wh\n"
        "      namespace: analytics\n"
    )
    root = make_project(
        tmp_path,
        {"models/sources.yml": SOURCES, "models/m.sql": KEY_MODEL, "profiles.yml": profiles},
    )
    manifest = manifest_of(root)
    build_state(manifest, "m", definition_digest(manifest.models["m"]))
    assert (tmp_path / "wh" / "analytics" / "m" / "metadata" / "v1.metadata.json").is_file()
    assert fresh_models(manifest, ["m"]) == {"m"}


@pytest.mark.parametrize(
    "output",
    [
        Output(catalog_type="hadoop", warehouse="s3://b/wh"),
        Output(catalog_type="rest", uri="http://x", warehouse="/wh"),
    ],
)
def test_no_lakewide_lock_where_the_catalog_arbitrates(output: Output) -> None:
    assert lock_path(output) is None


@pytest.mark.parametrize("sql", [KEY_MODEL, TABLE_MODEL], ids=["key table", "table"])
def test_noop_check_reads_past_compactions_but_not_past_new_data(tmp_path: Path, sql: str) -> None:
    manifest = project(tmp_path, {"m": sql})
    build_state(manifest, "m", definition_digest(manifest.models["m"]))
    warehouse = warehouse_path(manifest.output.warehouse)
    assert warehouse is not None
    source = manifest.sources[manifest.models["m"].sources[0]].relation
    metadata = iceberg_files.commit(
        iceberg_files.empty_table(table_dir(warehouse, source)), 101, {}
    )
    compacted = iceberg_files.commit(metadata, 102, {}, operation="replace")
    iceberg_files.write(warehouse, source, compacted, 2)
    assert fresh_models(manifest, ["m"]) == {"m"}  # a rewrite of files brings no new data
    iceberg_files.write(warehouse, source, iceberg_files.commit(compacted, 103, {}), 3)
    assert fresh_models(manifest, ["m"]) == set()
