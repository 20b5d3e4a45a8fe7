"""``lakewide show`` of a table model on a JDBC catalog (SQLite) read with pyiceberg and pyarrow
in a process with no Java: the rows in primary-key order (NULLs first, as Spark orders them)
and nothing but the table on stdout; a table it cannot read so is handed to Spark with a line
on stderr saying why. The table is written by pyiceberg's SQL catalog, which keeps the same
``iceberg_tables`` rows as Iceberg's JDBC catalog."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.project_factory import make_project, no_java_env

pa = pytest.importorskip("pyarrow")
sql_catalog = pytest.importorskip("pyiceberg.catalog.sql")

ROWS = [(3, "c"), (1, "a"), (None, "n"), (2, "b")]


def _project(tmp_path: Path, nested: bool) -> Path:
    catalog = sql_catalog.SqlCatalog(
        "lw", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    catalog.create_namespace("analytics")
    columns = {"k": [k for k, _ in ROWS], "v": [v for _, v in ROWS]}
    if nested:
        columns["tags"] = [[v] for _, v in ROWS]
    data = pa.table(columns)
    catalog.create_table("analytics.m", schema=data.schema).append(data)
    profiles = (
        "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
        f"      catalog_type: jdbc\n      uri: jdbc:sqlite:{tmp_path}/catalog.db\n"
        f"      warehouse: file://{tmp_path}/wh\n      namespace: analytics\n"
    )
    model = "{{ config(materialized='table', primary_key=['k']) }}\nSELECT 1 AS k, 'x' AS v\n"
    return make_project(tmp_path / "p", {"models/m.sql": model, "profiles.yml": profiles})


def _show(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(root), "show", "m"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**no_java_env(), "COLUMNS": "200"},
    )


def test_show_reads_a_jdbc_catalog_table_without_java(tmp_path: Path) -> None:
    done = _show(_project(tmp_path, nested=False))
    assert done.returncode == 0, done.stdout + done.stderr
    ordered = sorted(ROWS, key=lambda row: (row[0] is not None, row[0] or 0))
    expected = [["k", "v"], *(["NULL" if k is None else str(k), v] for k, v in ordered)]
    assert [line.split() for line in done.stdout.splitlines()] == expected
    assert done.stderr == ""


def test_a_table_pyiceberg_cannot_show_as_spark_would_goes_to_spark(tmp_path: Path) -> None:
    done = _show(_project(tmp_path, nested=True))
    assert "reading lw.analytics.m through Spark (nested column tags)" in done.stderr
    assert "tags" not in done.stdout  # nothing printed from the read that was not made
