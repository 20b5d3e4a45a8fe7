"""The example project on Iceberg's JDBC catalog: PostgreSQL (the session's private server) and
SQLite, against the same project built on the hadoop catalog as the reference.

JVMs: the session's SparkSession (JDBC catalogs added at runtime, its driver classpath holds the
Debian JDBC jars) and one ``lakewide seed`` subprocess on PostgreSQL, which checks that lakewide
itself puts the driver on the classpath and the password on the session (the build that follows
runs in-process). The no-op run and
``lineage`` run as subprocesses with ``JAVA_HOME`` pointing nowhere: starting a JVM would fail.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.jdbc import DATABASES, sqlalchemy_url
from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output
from lakewide.spark.runtime import ICEBERG_CATALOG, set_catalog_conf
from lakewide.state.metadata import table_meta_of
from lakewide.state.readers import metadata_reader
from tests.integration.conftest import (
    APPENDS,
    EXAMPLE_PARTS,
    MODELS,
    REPO,
    SEEDS,
    ProjectRun,
    null_first,
)
from tests.support.cli_process import quick_jvm
from tests.support.postgres_server import PostgresServer, missing_prerequisite

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_counter = itertools.count(1)


def require_jdbc(kind: str) -> None:
    """Skip (locally) or fail (CI) when the JDBC driver jar or the Python driver is missing."""
    database = DATABASES[kind]
    if not database.debian_jar.is_file():
        missing_prerequisite(
            f"{database.title} JDBC driver missing: apt-get install {database.apt_package}"
        )
    if kind == "postgresql" and importlib.util.find_spec("psycopg2") is None:
        missing_prerequisite('psycopg2 missing: pip install -e ".[test]"')
    if importlib.util.find_spec("sqlalchemy") is None:  # pyiceberg's SQL catalog, the oracle
        missing_prerequisite('pyiceberg SQL catalog missing: pip install -e ".[test]"')


def table_rows(spark: Any, table: str) -> list[tuple]:
    frame = spark.table(table)
    frame = frame.select(*(c for c in frame.columns if not c.startswith("__lw_")))
    return sorted((tuple(r) for r in frame.collect()), key=null_first)


def copy_example_parts(root: Path) -> None:
    """The example's models, seeds, macros and tests copied into a new folder ``root``."""
    root.mkdir(parents=True)
    for part in EXAMPLE_PARTS:
        if (REPO / part).is_dir():
            shutil.copytree(REPO / part, root / part)
        else:
            shutil.copy(REPO / part, root / part)


def jdbc_project(root: Path, catalog: str, uri: str, warehouse: Path, login: bool) -> Path:
    """A copy of the example whose profile's only target is a JDBC catalog."""
    copy_example_parts(root)
    credentials = (
        "        user: \"{{ env_var('LW_IT_PG_USER') }}\"\n"
        "        password: \"{{ env_var('LW_IT_PG_PASSWORD') }}\"\n"
        if login
        else ""
    )
    (root / "profiles.yml").write_text(
        "lakewide_example:\n  target: team\n  outputs:\n    team:\n"
        f"        master: local[2]\n        catalog: {catalog}\n        catalog_type: jdbc\n"
        f'        uri: "{uri}"\n{credentials}        warehouse: {warehouse}\n'
        "        namespace: analytics\n        spark_conf:\n          spark.driver.memory: 1g\n"
    )
    return root


def add_catalog(spark: Any, output: Output) -> None:
    """The profile's JDBC catalog on the session, with lakewide's own property mapping."""
    spark.conf.set(f"spark.sql.catalog.{output.catalog}", ICEBERG_CATALOG)
    set_catalog_conf(spark, output.catalog, output.iceberg_catalog_properties())
    set_catalog_conf(spark, output.catalog, output.catalog_secrets())


def cli(
    root: Path, env: dict[str, str], *args: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``lakewide ARGS`` in ``root`` as a subprocess (200 columns wide: its tables print whole
    whatever the terminal running the tests), and its wall seconds."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lakewide", *args],
        cwd=root,
        env=quick_jvm({**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **env}),
        capture_output=True,
        text=True,
        timeout=900,
    )
    return done, time.perf_counter() - started


def no_java(tmp_path: Path) -> dict[str, str]:
    """An environment in which starting a JVM fails (find_java checks JAVA_HOME first)."""
    return {"JAVA_HOME": str(tmp_path / "no-java-here")}


def check_jvm_free_reads(run: ProjectRun, env: dict[str, str], label: str) -> None:
    """No-op ``run`` and ``lineage`` without a JVM; the reader agrees with pyiceberg's SQL
    catalog and with Spark's snapshots table."""
    root, spark = run.root, run.spark
    output = run.manifest().output
    done, seconds = cli(root, env, "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Spark not started" in done.stdout
    results = json.loads((root / "target" / "run_results.json").read_text())
    assert results["spark_started"] is False
    assert {r["plan"] for r in results["results"]} == {"skipped"}
    print(f"\n{label}: no-op `lakewide run` without a JVM took {seconds:.2f} s (wall)")

    done, _ = cli(root, env, "lineage", "user_rec_wide")
    assert done.returncode == 0, done.stdout + done.stderr
    table = f"{output.catalog}.analytics.user_rec_wide"
    current = spark.sql(
        f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).first()[0]
    assert str(current) in done.stdout
    for source in ("recommendations", "impressions", "clicks"):
        upstream = spark.sql(
            f"SELECT snapshot_id FROM {output.catalog}.ods.{source}.snapshots "
            "ORDER BY committed_at DESC LIMIT 1"
        ).first()[0]
        assert f"{output.catalog}.ods.{source} @ {upstream}" in done.stdout

    # the reader's view of every table equals pyiceberg's SQL catalog's (the schema V1 rows
    # Iceberg's Java JdbcCatalog wrote), and a view is not a table to either
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.exceptions import NoSuchTableError

    spark.sql(f"CREATE VIEW {output.catalog}.analytics.v AS SELECT 1 AS one")
    reader = metadata_reader(output)
    assert reader is not None
    properties = {"init_catalog_tables": "false", "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO"}
    oracle_catalog = SqlCatalog(output.catalog, uri=sqlalchemy_url(output), **properties)
    for namespace, names in (("analytics", MODELS), ("ods", SEEDS)):
        for name in names:
            row = oracle_catalog.load_table((namespace, name))
            expected = table_meta_of(row.metadata)
            assert reader.table_meta(Relation(output.catalog, namespace, name)) == expected
    with pytest.raises(NoSuchTableError):
        oracle_catalog.load_table(("analytics", "v"))
    assert reader.table_meta(Relation(output.catalog, "analytics", "v")) is None
    assert not list(Path(output.warehouse or "").rglob(".lakewide.lock"))  # no hadoop lock


def test_example_on_postgres_matches_hadoop(
    tmp_path: Path,
    spark: Any,
    postgres_server: PostgresServer,
    hadoop_reference: dict[str, dict[str, list[tuple]]],
    cli_streams: Callable[..., tuple[int, str, str]],
) -> None:
    require_jdbc("postgresql")

    def in_process(project: Path, *args: str) -> tuple[int, str]:
        code, out, err = cli_streams(project, *args)
        return code, out + err

    n = next(_counter)
    database = postgres_server.create_database(f"example_{n}")
    catalog = f"pg{n}"
    root = jdbc_project(
        tmp_path / "project", catalog, postgres_server.jdbc_uri(database), tmp_path / "wh", True
    )
    env = {"LW_IT_PG_USER": postgres_server.user, "LW_IT_PG_PASSWORD": postgres_server.password}
    # lakewide's own session: the driver jar on the classpath, the password set at runtime
    done, seconds = cli(root, env, "seed")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(f"-> {catalog}.ods.{name} (" in done.stdout for name in SEEDS), done.stdout
    assert postgres_server.password not in done.stdout + done.stderr
    print(f"\npostgres: `lakewide seed` (JVM start included) took {seconds:.1f} s")

    os.environ.update(env)  # the in-process runs read the same profile
    try:
        run = ProjectRun(root, spark, "analytics", "ods")
        output = run.manifest().output
        add_catalog(spark, output)
        # the build on the test session (the catalog's settings as lakewide maps them)
        code, said = in_process(root, "build")
        assert code == 0, said
        assert f"{len(MODELS)} ok, 0 failed" in said
        assert postgres_server.password not in said
        rows = {m: table_rows(spark, f"{catalog}.analytics.{m}") for m in MODELS}
        assert rows == hadoop_reference["build"]
        for statement in APPENDS:
            spark.sql(statement.format(ods=f"{catalog}.ods"))
        results = run.run()
        assert results["user_rec_wide"].plan == "incremental"
        assert results["order_detail"].plan == "incremental"
        rows = {m: table_rows(spark, f"{catalog}.analytics.{m}") for m in MODELS}
        assert rows == hadoop_reference["appended"]
        check_jvm_free_reads(run, {**env, **no_java(tmp_path)}, "postgres")
    finally:
        for name in env:
            os.environ.pop(name, None)


def test_example_on_sqlite_matches_hadoop(
    tmp_path: Path, spark: Any, hadoop_reference: dict[str, dict[str, list[tuple]]]
) -> None:
    require_jdbc("sqlite")
    catalog = f"sq{next(_counter)}"
    uri = f"jdbc:sqlite:{tmp_path / 'catalog.db'}"
    root = jdbc_project(tmp_path / "project", catalog, uri, tmp_path / "wh", False)
    run = ProjectRun(root, spark, "analytics", "ods")
    add_catalog(spark, run.manifest().output)
    run.seed()
    assert run.run()["user_rec_wide"].plan == "bootstrap"
    rows = {m: table_rows(spark, f"{catalog}.analytics.{m}") for m in MODELS}
    assert rows == hadoop_reference["build"]
    for statement in APPENDS:
        spark.sql(statement.format(ods=f"{catalog}.ods"))
    assert run.run()["user_rec_wide"].plan == "incremental"
    rows = {m: table_rows(spark, f"{catalog}.analytics.{m}") for m in MODELS}
    assert rows == hadoop_reference["appended"]
    check_jvm_free_reads(run, no_java(tmp_path), "sqlite")
