"""Tests for lakewide.spark.runtime and commit: Spark conf, commit properties, Spark + Iceberg."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lakewide.spark import commit, runtime
from lakewide.vocabulary.errors import ConfigError, RuntimeSetupError

# ---------------------------------------------------------------- spark_conf (pure)


@pytest.fixture
def fake_jars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "bundled_jars", lambda *_: [Path("/j/a.jar"), Path("/j/b.jar")])


def test_spark_conf_defaults(fake_jars: None) -> None:
    conf = runtime.spark_conf("local[2]", "lw", {"type": "hadoop", "warehouse": "/wh"}, {})
    assert conf == {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile="
        + runtime.LOG_CONFIG.as_uri(),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.ansi.enabled": "false",
        "spark.buffer.pageSize": "1m",
        "spark.sql.extensions": runtime.ICEBERG_EXTENSIONS,
        "spark.sql.catalog.lw": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lw.type": "hadoop",
        "spark.sql.catalog.lw.warehouse": "/wh",
        "spark.sql.shuffle.partitions": "4",
        **runtime.MERGE_PRUNING_CONF,
        "spark.jars": "/j/a.jar,/j/b.jar",
    }


@pytest.mark.parametrize(
    ("theirs", "expected"),
    [
        ("-XX:TieredStopAtLevel=1", "{ours} -XX:TieredStopAtLevel=1"),
        (
            "-Dlog4j2.configurationFile=file:/x.properties",
            "-Dlog4j2.configurationFile=file:/x.properties",
        ),
    ],
)
def test_spark_conf_user_java_options_follow_the_log_option(
    fake_jars: None, theirs: str, expected: str
) -> None:
    ours = "-Dlog4j2.configurationFile=" + runtime.LOG_CONFIG.as_uri()
    conf = runtime.spark_conf("local[2]", "lw", {}, {"spark.driver.extraJavaOptions": theirs})
    assert conf["spark.driver.extraJavaOptions"] == expected.format(ours=ours)


def test_spark_conf_cluster_master_keeps_spark_default_partitions(fake_jars: None) -> None:
    conf = runtime.spark_conf("spark://host:7077", "lw", {}, {})
    assert "spark.sql.shuffle.partitions" not in conf and "spark.driver.memory" not in conf


@pytest.mark.parametrize("key", ["spark.jars.packages", "spark.jars"])
def test_spark_conf_user_jars_suppress_bundled(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    monkeypatch.setattr(
        runtime, "bundled_jars", lambda *_: pytest.fail("bundled jars must not be built")
    )
    conf = runtime.spark_conf("local", "lw", {}, {key: "org.apache.iceberg:x:1"})
    assert conf[key] == "org.apache.iceberg:x:1"
    assert ("spark.jars" in conf) == (key == "spark.jars")


def test_spark_conf_user_wins(fake_jars: None) -> None:
    user = {
        "spark.sql.shuffle.partitions": "16",
        "spark.sql.autoBroadcastJoinThreshold": "10MB",
        "spark.sql.session.timeZone": "Europe/Paris",
        "spark.sql.catalog.lw.type": "rest",
    }
    conf = runtime.spark_conf("local[*]", "lw", {"type": "hadoop"}, user)
    assert {k: conf[k] for k in user} == user


def test_spark_conf_rejects_bad_catalog_name(fake_jars: None) -> None:
    with pytest.raises(ConfigError):
        runtime.spark_conf("local", "lw.x", {}, {})


def test_commit_with_properties_refuses_unpinned_gateway() -> None:
    from types import SimpleNamespace

    fake = SimpleNamespace(
        sparkContext=SimpleNamespace(_gateway=object())
    )  # not a py4j ClientServer
    with pytest.raises(RuntimeSetupError, match="PYSPARK_PIN_THREAD"):
        commit.commit_with_properties(fake, {"k": "v"}, lambda: None)


# ---------------------------------------------------------------- Spark + Iceberg (real JVM)


def rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in spark.sql(sql).collect()]


def snapshot_count(spark: Any, table: str) -> int:
    return spark.sql("SELECT * FROM " + table + ".snapshots").count()


MERGE_T = """
MERGE INTO lw.db.t AS t
USING (SELECT * FROM VALUES (2L, 'b2'), (3L, 'c') AS s(id, v)) AS s
ON t.id = s.id
WHEN MATCHED THEN UPDATE SET v = s.v
WHEN NOT MATCHED THEN INSERT *
"""


@pytest.mark.slow
@pytest.mark.spark
def test_insert_merge_time_travel(spark: Any) -> None:
    spark.sql("CREATE TABLE lw.db.t (id BIGINT, v STRING) USING iceberg")
    spark.sql("INSERT INTO lw.db.t VALUES (1, 'a'), (2, 'b')")
    (first,) = rows(spark, "SELECT snapshot_id FROM lw.db.t.snapshots")[0]
    spark.sql(MERGE_T)
    assert rows(spark, "SELECT id, v FROM lw.db.t ORDER BY id") == [(1, "a"), (2, "b2"), (3, "c")]
    old = rows(spark, "SELECT id, v FROM lw.db.t VERSION AS OF " + str(first) + " ORDER BY id")
    assert old == [(1, "a"), (2, "b")]


@pytest.mark.slow
@pytest.mark.spark
def test_changelog_view_copy_on_write(spark: Any) -> None:
    spark.sql(
        "CREATE TABLE lw.db.cow (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ("
        "'format-version'='2', 'write.update.mode'='copy-on-write', 'write.delete.mode'='copy-on-write')"
    )
    spark.sql("INSERT INTO lw.db.cow VALUES (1, 'a'), (2, 'b')")
    spark.sql("UPDATE lw.db.cow SET v = 'b2' WHERE id = 2")
    spark.sql(
        "CALL lw.system.create_changelog_view(table => 'db.cow', changelog_view => 'cow_changes', "
        "compute_updates => true, identifier_columns => array('id'))"
    )
    changes = rows(spark, "SELECT _change_ordinal, id, v, _change_type FROM cow_changes")
    assert sorted(changes) == [
        (0, 1, "a", "INSERT"),
        (0, 2, "b", "INSERT"),
        (1, 2, "b", "UPDATE_BEFORE"),
        (1, 2, "b2", "UPDATE_AFTER"),
    ]


@pytest.mark.slow
@pytest.mark.spark
def test_commit_with_properties(spark: Any) -> None:
    spark.sql("CREATE TABLE lw.db.p (id BIGINT, v STRING) USING iceberg")
    spark.sql("INSERT INTO lw.db.p VALUES (1, 'a')")
    merge = (
        "MERGE INTO lw.db.p t USING (SELECT 1L AS id, 'z' AS v) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET v = s.v"
    )

    def action() -> str:
        spark.sql(merge)
        return "done"

    result = commit.commit_with_properties(spark, {"lakewide.test": "42"}, action)

    assert result == "done"
    latest = "SELECT summary FROM lw.db.p.snapshots ORDER BY committed_at DESC LIMIT 1"
    assert rows(spark, latest)[0][0]["lakewide.test"] == "42"
    spark.sql(
        "INSERT INTO lw.db.p VALUES (2, 'b')"
    )  # the properties must not leak into later commits
    assert "lakewide.test" not in rows(spark, latest)[0][0]


class Boom(Exception):
    pass


@pytest.mark.slow
@pytest.mark.spark
def test_commit_with_properties_propagates_errors(spark: Any) -> None:
    from pyspark.errors import AnalysisException

    spark.sql("CREATE TABLE lw.db.e (id BIGINT) USING iceberg")
    spark.sql("INSERT INTO lw.db.e VALUES (1)")
    before = snapshot_count(spark, "lw.db.e")

    def fail() -> None:
        raise Boom("from python")

    with pytest.raises(Boom, match="from python"):
        commit.commit_with_properties(spark, {"lakewide.test": "x"}, fail)
    with pytest.raises(AnalysisException):
        commit.commit_with_properties(
            spark, {"lakewide.test": "x"}, lambda: spark.sql("MERGE INTO lw.db.nope")
        )
    assert snapshot_count(spark, "lw.db.e") == before
    assert os.environ.get("JAVA_HOME")  # create_session exported the Java it checked
