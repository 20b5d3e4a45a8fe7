"""The example project built by ``lakewide build`` on a Spark standalone cluster (one master, two
workers, tests/support/spark_cluster.py) gives the same tables, row for row, as the same project built
on local Spark, on the hadoop catalog and on a JDBC catalog in PostgreSQL (the session's
private server, tests/support/postgres_server.py).

The cluster build is one CLI subprocess, the driver, with ``master: spark://...`` in its profile
and nothing else changed but the driver's address; the local build runs on the test session's
SparkSession. Both are read back through the session's Spark and compared whole: every seed
table and every model, its columns with their types and its full set of rows.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output
from lakewide.spark.jars import bundled_jars
from tests.integration.conftest import REPO, copy_project, null_first
from tests.integration.test_jdbc_catalog import add_catalog, require_jdbc
from tests.support.cli_process import quick_jvm
from tests.support.postgres_server import PostgresServer
from tests.support.spark_cluster import StandaloneCluster

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.soak]

# No Python on the executors: lakewide's statements are SQL and DataFrame operations without
# Python UDFs, so executors never start a Python worker. An interpreter that does not exist
# makes any step that would need one fail instead of passing unnoticed.
NO_EXECUTOR_PYTHON = "/nonexistent/python-on-executors"


@dataclass(frozen=True)
class CatalogVariant:
    """A catalog the cluster build writes to: its profile keys and how the test reads a table."""

    name: str
    catalog: str  # the Spark catalog name in the profile
    # (folder for its files, pytest request) -> (catalog profile keys, environment they need)
    profile: Callable[[Path, pytest.FixtureRequest], tuple[dict[str, str], dict[str, str]]]
    frame: Callable[[Any, Output, Relation], Any]  # (session, profile output, table) -> frame


def _hadoop_profile(
    folder: Path, _request: pytest.FixtureRequest
) -> tuple[dict[str, str], dict[str, str]]:
    # Every worker reaches this folder because they all run on this machine; a real cluster
    # needs a shared file system here (docs/how-to/team-setup.md).
    return {"catalog_type": "hadoop", "warehouse": str(folder / "warehouse")}, {}


def _hadoop_frame(spark: Any, output: Output, relation: Relation) -> Any:
    """A hadoop-catalog table read by its folder (warehouse/namespace/table)."""
    folder = Path(output.warehouse or "") / relation.namespace / relation.name
    return spark.read.format("iceberg").load(str(folder))


def _postgres_profile(
    folder: Path, request: pytest.FixtureRequest
) -> tuple[dict[str, str], dict[str, str]]:
    """A JDBC catalog in a new database of the session's PostgreSQL server."""
    require_jdbc("postgresql")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    database = server.create_database(f"cluster_{folder.parent.name[-20:]}".lower())
    keys = {
        "catalog_type": "jdbc",
        "uri": server.jdbc_uri(database),
        "user": "{{ env_var('LW_CLUSTER_PG_USER') }}",
        "password": "{{ env_var('LW_CLUSTER_PG_PASSWORD') }}",
        "warehouse": str(folder / "warehouse"),
    }
    return keys, {"LW_CLUSTER_PG_USER": server.user, "LW_CLUSTER_PG_PASSWORD": server.password}


def _catalog_frame(spark: Any, output: Output, relation: Relation) -> Any:
    """A table read through the profile's catalog, added to the session at runtime."""
    add_catalog(spark, output)
    return spark.table(str(relation))


CATALOGS = [
    CatalogVariant("hadoop", "lw", _hadoop_profile, _hadoop_frame),
    CatalogVariant("postgres", "clusterpg", _postgres_profile, _catalog_frame),
]


def _profile(master: str, catalog: str, namespace: str, catalog_keys: dict[str, str]) -> str:
    """The example's profile for the cluster: the usual keys, the driver on 127.0.0.1."""
    keys = {"master": master, "catalog": catalog, **catalog_keys, "namespace": namespace}
    lines = ["lakewide_example:", "  target: cluster", "  outputs:", "    cluster:"]
    lines += [f'      {key}: "{value}"' for key, value in keys.items()]
    lines += ["      spark_conf:"]
    lines += [
        f'        {key}: "{value}"'
        for key, value in {
            "spark.driver.host": "127.0.0.1",  # the address executors call the driver at
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.memory": "1g",
        }.items()
    ]
    return "\n".join(lines) + "\n"


def _rows(frame: Any) -> tuple[list[tuple[str, str]], list[tuple]]:
    """A table's columns with their types and its sorted rows (hidden ``__lw_`` columns out)."""
    frame = frame.select(*(c for c in frame.columns if not c.startswith("__lw_")))
    return frame.dtypes, sorted((tuple(r) for r in frame.collect()), key=null_first)


def _build_on_cluster(project: Path, cluster: StandaloneCluster, env: dict[str, str]) -> str:
    """``lakewide build`` as the cluster's driver; returns the id of its Spark application."""
    before = cluster.app_ids()
    done = subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(project), "build"],
        capture_output=True,
        text=True,
        timeout=600,
        env=quick_jvm(
            {
                **os.environ,
                "PYTHONPATH": os.pathsep.join(
                    p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p
                ),
                "PYSPARK_PYTHON": NO_EXECUTOR_PYTHON,
                "COLUMNS": "200",
                **env,
            }
        ),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    apps = cluster.app_ids() - before
    assert len(apps) == 1, f"the build ran {len(apps)} applications on the cluster: {apps}"
    return apps.pop()


def _assert_ran_on_executors(cluster: StandaloneCluster, app_id: str) -> None:
    """Executors on both workers fetched lakewide's jars (spark.jars is shipped, not just on the
    driver's class path), called the driver at 127.0.0.1 and ran the build's tasks."""
    executors = cluster.executor_dirs(app_id)
    workers = {d.parent.parent for d in executors}
    assert workers == set(cluster.work_dirs), f"executors only on {sorted(workers)}"
    jars = sorted(jar.name for jar in bundled_jars())
    finished = 0
    for executor in executors:
        assert sorted(p.name for p in executor.glob("*.jar")) == jars, executor
        log = (executor / "stderr").read_text(errors="replace")
        assert '--driver-url" "spark://CoarseGrainedScheduler@127.0.0.1:' in log, executor
        finished += log.count("Finished task")
    assert finished > 0, "no task ran on the executors"


def _tables(manifest: Manifest) -> dict[str, Relation]:
    """Every table a build writes: the models and the seed tables (the example's sources)."""
    tables = {name: m.relation for name, m in manifest.models.items()}
    tables.update({f"seed {key[1]}": s.relation for key, s in manifest.sources.items()})
    return tables


@pytest.fixture(scope="module")
def local_build(
    tmp_path_factory: pytest.TempPathFactory, spark: Any, warehouse: Path
) -> dict[str, tuple[list[tuple[str, str]], list[tuple]]]:
    """The example built on the session's local Spark: each table's columns and rows."""
    local = copy_project(tmp_path_factory.mktemp("local"), spark, warehouse, REPO)
    local.seed()
    local.run()
    return {name: _rows(spark.table(str(r))) for name, r in _tables(local.manifest()).items()}


@pytest.mark.parametrize("catalog", CATALOGS, ids=[c.name for c in CATALOGS])
def test_example_builds_on_a_standalone_cluster_with_the_local_rows(
    tmp_path: Path,
    spark: Any,
    warehouse: Path,
    spark_cluster: StandaloneCluster,
    local_build: dict[str, tuple[list[tuple[str, str]], list[tuple]]],
    catalog: CatalogVariant,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for folder in ("catalog", "cluster"):
        (tmp_path / folder).mkdir()
    keys, env = catalog.profile(tmp_path / "catalog", request)
    on_cluster = copy_project(tmp_path / "cluster", spark, warehouse, REPO)
    (on_cluster.root / "profiles.yml").write_text(
        _profile(spark_cluster.master_url, catalog.catalog, on_cluster.namespace, keys)
    )
    app_id = _build_on_cluster(on_cluster.root, spark_cluster, env)
    _assert_ran_on_executors(spark_cluster, app_id)

    for name, value in env.items():  # the cluster profile's env_var()s, to read it here
        monkeypatch.setenv(name, value)
    manifest = on_cluster.manifest()
    output = manifest.output
    assert output.master == spark_cluster.master_url
    assert output.catalog_type == keys["catalog_type"]
    tables = _tables(manifest)
    assert tables.keys() == local_build.keys()
    for name, relation in sorted(tables.items()):
        expected = local_build[name]
        assert expected[1], f"{name}: the local build has no rows to compare"
        assert _rows(catalog.frame(spark, output, relation)) == expected, name
