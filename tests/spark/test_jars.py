"""Tests for lakewide.spark.jars: the pinned Iceberg runtime jar is complete (no JVM)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from lakewide.spark import jars
from lakewide.vocabulary.errors import RuntimeSetupError

SPARK_4 = jars.SparkBuild(version="4.1.4", scala="2.13")
spark35_only = pytest.mark.skipif(
    jars.spark_build().line != "3.5", reason="the PyPI runtime jar is Spark 3.5's"
)


def test_bundled_jar_is_the_iceberg_spark_runtime_of_the_installed_spark() -> None:
    build = jars.spark_build()
    found = jars.bundled_jars()
    assert [j.exists() for j in found] == [True]
    assert found[0].name.startswith(f"iceberg-spark-runtime-{build.line}_{build.scala}-")
    if build.line == "3.5":  # the embedded default: from PyPI
        assert found[0].name.startswith("iceberg-spark-runtime-3.5_2.12-1.10.")
        assert ".m2" not in found[0].parts


def test_spark_build_is_read_from_the_spark_core_jar(tmp_path: Path) -> None:
    (tmp_path / "spark-core_2.13-4.1.4.jar").touch()
    (tmp_path / "spark-core-extra_2.12-9.9.9.jar").touch()
    assert jars.spark_build(tmp_path) == SPARK_4
    assert SPARK_4.runtime_artifact == "iceberg-spark-runtime-4.1_2.13"


def _maven_jar(repo: Path, artifact: str, version: str) -> Path:
    folder = repo / "org/apache/iceberg" / artifact / version
    folder.mkdir(parents=True)
    jar = folder / f"{artifact}-{version}.jar"
    jar.touch()
    (folder / f"{artifact}-{version}-sources.jar").touch()
    return jar


def test_spark_4_takes_the_newest_iceberg_runtime_from_the_local_maven_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jars, "maven_repository", lambda: tmp_path)
    _maven_jar(tmp_path, "iceberg-spark-runtime-4.1_2.13", "1.10.0")  # too old for Spark 4.1
    _maven_jar(tmp_path, "iceberg-spark-runtime-4.1_2.13", "1.11.0")
    newest = _maven_jar(tmp_path, "iceberg-spark-runtime-4.1_2.13", "1.12.0")
    _maven_jar(tmp_path, "iceberg-spark-runtime-4.0_2.13", "1.13.0")  # another Spark line
    assert jars.iceberg_runtime_jar(SPARK_4) == newest


def test_spark_4_without_the_runtime_says_what_to_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jars, "maven_repository", lambda: tmp_path)
    _maven_jar(tmp_path, "iceberg-spark-runtime-4.1_2.13", "1.10.0")  # predates Spark 4.1
    with pytest.raises(RuntimeSetupError) as err:
        jars.iceberg_runtime_jar(SPARK_4)
    message = str(err.value)
    assert "Spark 4.1.4 needs Iceberg's runtime for Spark 4.1" in message
    assert "mvn dependency:get -Dtransitive=false " in message
    assert "-Dartifact=org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0" in message
    assert "`jars:`" in message


def test_an_unsupported_spark_line_is_refused_naming_the_supported_ones() -> None:
    with pytest.raises(
        RuntimeSetupError, match=r"Spark 3\.4\.1 is not supported: .*3\.5, 4\.0, 4\.1"
    ):
        jars.iceberg_runtime_jar(jars.SparkBuild(version="3.4.1", scala="2.12"))


def test_a_runtime_listed_under_the_profiles_jars_wins(tmp_path: Path) -> None:
    driver = tmp_path / "postgresql.jar"
    listed = tmp_path / "iceberg-spark-runtime-4.1_2.13-1.12.0.jar"
    assert jars.bundled_jars([driver, listed]) == [listed]


@spark35_only
@pytest.mark.parametrize("package", jars.REQUIRED_SHADED_PACKAGES)
def test_pinned_runtime_jar_holds_the_shaded_packages_lakewide_uses(package: str) -> None:
    """snowpark-connect-deps-iceberg 1.0.3 ships a runtime jar without its shaded Jackson and
    HttpClient 5; a pin on such a build fails here, not at a user's first REST commit."""
    with zipfile.ZipFile(jars.iceberg_runtime_jar()) as jar:
        classes = [n for n in jar.namelist() if n.startswith(package) and n.endswith(".class")]
    assert len(classes) > 50, f"{package} missing from {jars.iceberg_runtime_jar().name}"


@spark35_only
def test_runtime_jar_holds_the_rest_catalog_client() -> None:
    with zipfile.ZipFile(jars.iceberg_runtime_jar()) as jar:
        names = set(jar.namelist())
    assert "org/apache/iceberg/rest/RESTCatalog.class" in names
    assert "org/apache/iceberg/shaded/org/apache/hc/core5/http/Method.class" in names


@spark35_only
def test_the_embedded_default_asks_no_maven_repository() -> None:
    """The repository's own default target (local Spark, hadoop catalog) starts Spark with
    jars from installed Python packages only: nothing for Spark to resolve from Maven or Ivy
    (no ``spark.jars.packages``/``repositories``/``ivy``), no jar under ``~/.m2``, every jar
    a file inside a PyPI distribution (pyspark's own, and the pinned Iceberg runtime)."""
    import site
    import sysconfig
    from pathlib import Path

    from lakewide.project.profiles_file import load_output
    from lakewide.spark.session import Session

    root = Path(__file__).resolve().parents[2]
    conf = Session(load_output(root / "profiles.yml", "lakewide_example", "dev", root)).conf()
    assert not {k for k in conf if k.startswith(("spark.jars.packages", "spark.jars.repo"))}
    assert "spark.jars.ivy" not in conf
    assert "spark.driver.extraClassPath" not in conf  # no JDBC driver from Debian either
    jars = [Path(j) for j in conf["spark.jars"].split(",")]
    paths = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    installed = [Path(p).resolve() for p in paths]
    assert jars and all(j.is_file() for j in jars)
    for jar in jars:
        assert ".m2" not in jar.parts, jar
        assert any(jar.resolve().is_relative_to(p) for p in installed), jar


@pytest.mark.skipif(jars.spark_build().line == "3.5", reason="Spark 3.5's runtime is on PyPI")
def test_build_on_spark_4_without_the_runtime_exits_2_naming_what_to_fetch(tmp_path: Path) -> None:
    """The whole command, as a user runs it: a local Maven repository without Iceberg's Spark 4
    runtime (HOME elsewhere) stops ``lakewide build`` before Spark starts, with exit code 2."""
    import os
    import subprocess
    import sys

    from tests.support.project_factory import REPO_ROOT, copy_example_project

    project = copy_example_project(tmp_path / "example")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAKEWIDE_")}
    env["HOME"] = str(tmp_path / "home")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    command = [sys.executable, "-c", "from lakewide.cli import main; main()", "build"]
    done = subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=300
    )
    output = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, output
    build = jars.spark_build()
    assert f"needs Iceberg's runtime for Spark {build.line}" in output
    assert f"-Dartifact=org.apache.iceberg:{build.runtime_artifact}:" in output
    assert "starting Spark" not in output
