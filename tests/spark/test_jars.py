"""Tests for lakewide.spark.jars: the pinned Iceberg runtime jar is complete (no JVM)."""

from __future__ import annotations

import zipfile

import pytest

from lakewide.spark import jars


def test_bundled_jar_is_the_iceberg_spark_runtime() -> None:
    found = jars.bundled_jars()
    assert [j.exists() for j in found] == [True]
    assert found[0].name.startswith("iceberg-spark-runtime-3.5_2.12-1.10.")


@pytest.mark.parametrize("package", jars.REQUIRED_SHADED_PACKAGES)
def test_pinned_runtime_jar_holds_the_shaded_packages_lakewide_uses(package: str) -> None:
    """snowpark-connect-deps-iceberg 1.0.3 ships a runtime jar without its shaded Jackson and
    HttpClient 5; a pin on such a build fails here, not at a user's first REST commit."""
    with zipfile.ZipFile(jars.iceberg_runtime_jar()) as jar:
        classes = [n for n in jar.namelist() if n.startswith(package) and n.endswith(".class")]
    assert len(classes) > 50, f"{package} missing from {jars.iceberg_runtime_jar().name}"


def test_runtime_jar_holds_the_rest_catalog_client() -> None:
    with zipfile.ZipFile(jars.iceberg_runtime_jar()) as jar:
        names = set(jar.namelist())
    assert "org/apache/iceberg/rest/RESTCatalog.class" in names
    assert "org/apache/iceberg/shaded/org/apache/hc/core5/http/Method.class" in names


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
