"""Shared pytest fixtures: one local SparkSession with an Iceberg hadoop catalog named ``lw``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.postgres_server import postgres_server  # noqa: F401 - the session's PostgreSQL
from tests.support.s3_server import aws_bundle_jar, s3_server  # noqa: F401 - the session's S3 server
from tests.support.s3proxy_server import s3_store, s3proxy_server  # noqa: F401 - a second S3 server
from tests.support.suite_profile import jvm_files_first, select_soaks


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: slower scenarios, e.g. a real Spark JVM")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The soaks, left out by default, run when named on the command line or with LW_SOAK=long;
    the files with the most tests on a JVM first (tests/support/suite_profile.py)."""
    select_soaks(config, items)
    jvm_files_first(items)


@pytest.fixture
def bootstraps_apart() -> Iterator[None]:
    """Every bootstrap (and restatement) of a model whose sources fold apart built from the
    per-source pre-folds, as a table wider than ``UNION_BOOTSTRAP_COLUMNS`` is: for the tests
    of the pre-folds whose models are narrower (tests/compiler/statements/
    test_bootstrap_width.py checks the choice by width)."""
    from lakewide.compiler.folds import build_prefolds

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build_prefolds, "UNION_BOOTSTRAP_COLUMNS", 0)
        yield


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hadoop-catalog warehouse folder behind the session's ``lw`` catalog."""
    return tmp_path_factory.mktemp("warehouse")


#: Spark settings of this test session only, for the tests' few rows: no whole-stage code
#: generation, so that no statement waits for Java code to be generated and compiled (Spark's
#: two paths, tested by Spark against each other: no result changes). Measured side by side on
#: a loaded 2-core machine, the same five files (integration/test_engines, test_incremental,
#: test_arrival_order, test_changelog, test_snapshots) in the same 15 minutes: lakewide's
#: settings 205 s of the JVM's CPU (444 s wall), whole-stage code generation off 195 s (441 s).
#: Expressions are interpreted as well (spark.sql.codegen.factoryMode=NO_CODEGEN, Spark's
#: interpreted twin of every generated projection, predicate and ordering): on the pytest-xdist
#: workers the machine is CPU-bound, and a test's few rows never repay compiling Java for them.
#: Measured on integration/test_engines + test_incremental + test_properties, alternated, two
#: rounds on an idle 2-core machine: the JVM's CPU 158.4 / 158.1 s with generated expressions,
#: 134.0 / 134.0 s interpreted (wall 149 / 145 s against 134 / 134 s). Interpreted, Spark cannot
#: decode its own catalog objects (spark.catalog.listTables: "argument type mismatch
#: newInstance(class org.apache.spark.sql.catalog.Table)"), so the tests list tables with SHOW
#: TABLES. The `lakewide` processes the tests start keep lakewide's own settings, and so do CI's
#: Spark 4.1 and Spark Connect legs (LW_SESSION_CONF=lakewide: this session with lakewide's
#: settings alone).
#: Its JVM collects garbage with the serial collector: the test session's heap is small and its
#: driver one JVM of several on the machine (one per pytest-xdist worker, beside the `lakewide`
#: processes the tests start), where G1's concurrent threads cost more CPU than they save.
#: Measured on integration/test_engines + test_incremental, alternated, 2 rounds beside another
#: test run: the JVM's CPU 78.7 / 73.8 s with G1 (Java's default), 70.8 / 72.2 s parallel,
#: 69.9 / 68.2 s serial. A collector changes no result.
FEW_ROWS_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC",
}


def session_conf() -> dict[str, str]:
    """The test session's own Spark settings: FEW_ROWS_CONF unless LW_SESSION_CONF=lakewide."""
    return {} if os.environ.get("LW_SESSION_CONF", "").strip() == "lakewide" else FEW_ROWS_CONF


@pytest.fixture(scope="session")
def spark(warehouse: Path) -> Iterator[Any]:
    """A SparkSession built by lakewide's runtime, with catalog ``lw`` over a temp warehouse."""
    from lakewide.project.jdbc import DATABASES
    from lakewide.project.profiles import Output
    from lakewide.spark.runtime import create_session, spark_conf

    # JDBC drivers found on this machine: tests add JDBC catalogs at runtime (spark.conf.set)
    drivers = [d.debian_jar for d in DATABASES.values() if d.debian_jar.is_file()]
    catalog = {"type": "hadoop", "warehouse": str(warehouse)}
    # Iceberg's AWS SDK bundle when fetched (.ci/run): tests add S3 catalogs at runtime
    bundle = aws_bundle_jar()
    # ... on S3-compatible stores (moto, s3proxy): the JVM options a profile with s3_endpoint
    # gives lakewide's own JVMs (Output.s3_java_options)
    s3_compatible = Output(s3_endpoint="http://127.0.0.1").s3_java_options()
    conf = spark_conf(
        "local[2]",
        "lw",
        catalog,
        session_conf(),
        driver_classpath=drivers + ([bundle] if bundle else []),
        java_options=s3_compatible,
    )
    session = create_session("lakewide-tests", "local[2]", conf)
    yield session
    session.stop()
