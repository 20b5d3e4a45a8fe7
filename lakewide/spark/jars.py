"""The Iceberg runtime jar lakewide puts on ``spark.jars``, chosen by the installed Spark.

* Spark 3.5 (Scala 2.12): the complete Iceberg 1.10.2 runtime from PyPI
  (``snowpark-connect-deps-iceberg`` 1.0.2 ships its shaded Jackson and shaded Apache HttpClient
  5, which the REST catalog client needs; 1.0.3 lacks them): the embedded default needs no Maven.
* Spark 4.0 / 4.1 (Scala 2.13): no PyPI package ships an Iceberg runtime for them; it is taken
  from the local Maven repository (``~/.m2/repository``, filled by ``mvn dependency:get``), the
  newest version there, or from a jar the profile lists under ``jars:``.

Packages and jars are found without importing PySpark, so no JVM starts here.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

from lakewide.vocabulary.errors import RuntimeSetupError

# Shaded packages lakewide relies on in the runtime jar: Jackson (table metadata, every
# catalog) and HttpClient 5 (the REST catalog client). tests/spark/test_jars.py checks the pin.
REQUIRED_SHADED_PACKAGES = (
    "org/apache/iceberg/shaded/com/fasterxml/jackson/core/",
    "org/apache/iceberg/shaded/com/fasterxml/jackson/databind/",
    "org/apache/iceberg/shaded/org/apache/hc/client5/",
    "org/apache/iceberg/shaded/org/apache/hc/core5/",
)
# Spark lines lakewide runs on -> (the Iceberg release lakewide is tested with, the first
# Iceberg release that supports the line). Spark 3.5's runtime comes from PyPI.
SPARK_LINES = {
    "3.5": ("1.10.2", "1.10.0"),
    "4.0": ("1.10.1", "1.10.0"),
    "4.1": ("1.12.0", "1.11.0"),
}
INSTALL_HINTS = {
    "3.5": "pip install 'lakewide[spark35]'",
    "4.1": "pip install 'lakewide[spark4]'",
}
RUNTIME_PREFIX = "iceberg-spark-runtime-"
MAVEN_GROUP = "org.apache.iceberg"


@dataclass(frozen=True)
class SparkBuild:
    """The Spark that PySpark will launch: its version ("4.1.4") and Scala version ("2.13")."""

    version: str
    scala: str

    @property
    def line(self) -> str:
        """ "3.5", "4.1", ...: the Spark line Iceberg publishes a runtime for."""
        return ".".join(self.version.split(".")[:2])

    @property
    def runtime_artifact(self) -> str:
        """Maven artifact id of its Iceberg runtime: iceberg-spark-runtime-4.1_2.13."""
        return f"{RUNTIME_PREFIX}{self.line}_{self.scala}"


def _package_dir(name: str, install: str) -> Path:
    """Directory of an installed package, found without importing it (no JVM starts)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeSetupError(f"Python package {name!r} is not installed: `{install}`.")
    return Path(next(iter(spec.submodule_search_locations)))


def _spark_jars_dir() -> Path:
    """``jars/`` of the Spark that PySpark will launch ($SPARK_HOME wins, as in PySpark)."""
    spark_home = os.environ.get("SPARK_HOME")
    if spark_home and (Path(spark_home) / "jars").is_dir():
        return Path(spark_home) / "jars"
    return _package_dir("pyspark", INSTALL_HINTS["3.5"]) / "jars"


def spark_build(jars_dir: Path | None = None) -> SparkBuild:
    """Spark and Scala versions of the Spark build, from ``spark-core_<scala>-<version>.jar``."""
    jars_dir = jars_dir or _spark_jars_dir()
    for jar in jars_dir.glob("spark-core_*.jar"):
        match = re.fullmatch(r"spark-core_(\d+\.\d+)-(\d+\.\d+\.\d+)\.jar", jar.name)
        if match:
            return SparkBuild(version=match.group(2), scala=match.group(1))
    raise RuntimeSetupError(
        f"no spark-core jar in {jars_dir}: reinstall pyspark ({INSTALL_HINTS['3.5']})"
    )


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def maven_repository() -> Path:
    """The local Maven repository (``~/.m2/repository``) where ``mvn dependency:get`` puts jars."""
    return Path.home() / ".m2" / "repository"


def _pypi_runtime(build: SparkBuild) -> Path:
    """The Iceberg Spark 3.5 runtime jar shipped by ``snowpark-connect-deps-iceberg``."""
    package = _package_dir("snowpark_connect_deps_iceberg", INSTALL_HINTS["3.5"])
    jars = package / "jars"
    found = sorted(jars.glob(f"{build.runtime_artifact}-*.jar"))
    if not found:
        raise RuntimeSetupError(
            f"No {build.runtime_artifact} jar in {jars}; reinstall snowpark-connect-deps-iceberg."
        )
    return found[-1]


def _maven_runtime(build: SparkBuild) -> Path:
    """The newest Iceberg runtime for ``build`` in the local Maven repository."""
    tested, first = SPARK_LINES[build.line]
    folder = maven_repository() / MAVEN_GROUP.replace(".", "/") / build.runtime_artifact
    found = [
        jar
        for jar in folder.glob(f"*/{build.runtime_artifact}-*.jar")
        if jar.name == f"{build.runtime_artifact}-{jar.parent.name}.jar"
        and _version_key(jar.parent.name) >= _version_key(first)
    ]
    if not found:
        artifact = f"{MAVEN_GROUP}:{build.runtime_artifact}:{tested}"
        raise RuntimeSetupError(
            f"Spark {build.version} needs Iceberg's runtime for Spark {build.line} "
            f"({build.runtime_artifact}, Iceberg >= {first}), which no PyPI package ships, and "
            f"none is in {folder}: fetch it with `mvn dependency:get -Dtransitive=false "
            f"-Dartifact={artifact}`, or list the jar under the profile output's `jars:` key"
        )
    return max(found, key=lambda jar: _version_key(jar.parent.name))


def iceberg_runtime_jar(build: SparkBuild | None = None) -> Path:
    """The Iceberg runtime jar for the installed Spark: from PyPI on Spark 3.5, from the local
    Maven repository on Spark 4; RuntimeSetupError (exit 2) naming what to install otherwise."""
    build = build or spark_build()
    if build.line not in SPARK_LINES:
        lines = ", ".join(SPARK_LINES)
        raise RuntimeSetupError(
            f"Spark {build.version} is not supported: lakewide runs on Spark {lines} "
            f"(`{INSTALL_HINTS['3.5']}` or `{INSTALL_HINTS['4.1']}`)"
        )
    if build.line == "3.5":
        return _pypi_runtime(build)
    return _maven_runtime(build)


def bundled_jars(user_jars: list[Path] | None = None) -> list[Path]:
    """Jars lakewide puts on ``spark.jars`` when the user brings none of their own: the
    Iceberg runtime listed under the profile's ``jars:`` if any, else the one for this Spark."""
    listed = [jar for jar in user_jars or [] if jar.name.startswith(RUNTIME_PREFIX)]
    return listed[:1] or [iceberg_runtime_jar()]


def uses_bundled_jars(user_conf: dict[str, str]) -> bool:
    """True when lakewide adds its own jars: the profile sets neither spark.jars nor
    spark.jars.packages."""
    return "spark.jars" not in user_conf and "spark.jars.packages" not in user_conf
