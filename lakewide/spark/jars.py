"""The jars lakewide puts on ``spark.jars``: Iceberg's Spark runtime from PyPI and Jackson
relocated into Iceberg's shaded package (built once, cached); what those jars cannot run.

Packages are found without importing them, so no JVM starts here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import tempfile
import zipfile
from pathlib import Path

from lakewide.errors import RuntimeSetupError
from lakewide.project.profiles import Output
from lakewide.spark.jackson_relocate import relocate_jar

JACKSON_MARKER = "org/apache/iceberg/shaded/com/fasterxml/jackson/databind/ObjectMapper.class"
# Bump when jackson_relocate changes its output, so stale cached jars are not reused.
_RELOCATE_REVISION = 1


def cache_dir() -> Path:
    """$LAKEWIDE_CACHE_DIR, else $XDG_CACHE_HOME/lakewide, else ~/.cache/lakewide."""
    override = os.environ.get("LAKEWIDE_CACHE_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "lakewide"


def _package_dir(name: str, install: str) -> Path:
    """Directory of an installed package, found without importing it (no JVM starts)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeSetupError(
            f"Python package {name!r} is not installed: `pip install {install}`."
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _spark_jars_dir() -> Path:
    """``jars/`` of the Spark that PySpark will launch ($SPARK_HOME wins, as in PySpark)."""
    spark_home = os.environ.get("SPARK_HOME")
    if spark_home and (Path(spark_home) / "jars").is_dir():
        return Path(spark_home) / "jars"
    return _package_dir("pyspark", "'pyspark>=3.5,<3.6'") / "jars"


def _scala_version(jars_dir: Path) -> str:
    """Scala binary version of the Spark build ("2.12" or "2.13"), from its spark-core jar."""
    for jar in jars_dir.glob("spark-core_*.jar"):
        match = re.match(r"spark-core_(\d+\.\d+)-", jar.name)
        if match:
            return match.group(1)
    return "2.12"


def iceberg_runtime_jar() -> Path:
    """The Iceberg Spark 3.5 runtime jar shipped by ``snowpark-connect-deps-iceberg``."""
    jars = _package_dir("snowpark_connect_deps_iceberg", "snowpark-connect-deps-iceberg") / "jars"
    scala = _scala_version(_spark_jars_dir())
    found = sorted(jars.glob("iceberg-spark-runtime-3.5_" + scala + "-*.jar"))
    if not found:
        raise RuntimeSetupError(
            f"No iceberg-spark-runtime-3.5_{scala} jar in {jars}; "
            "reinstall snowpark-connect-deps-iceberg."
        )
    return found[-1]


def _jackson_sources() -> tuple[list[Path], str]:
    """Spark's jackson core/databind/annotations jars and a version tag for the cache name."""
    jars_dir = _spark_jars_dir()
    sources: list[Path] = []
    versions: list[str] = []
    for artifact in ("core", "databind", "annotations"):
        # The regex skips look-alikes such as jackson-core-asl-1.9.13.jar.
        pattern = re.compile(r"^jackson-" + artifact + r"-(\d+\.\d+\.\d+[\w.-]*)\.jar$")
        matches = sorted(p for p in jars_dir.glob("jackson-*.jar") if pattern.match(p.name))
        if not matches:
            raise RuntimeSetupError(
                f"jackson-{artifact} jar not found in {jars_dir}; is PySpark 3.5 installed?"
            )
        sources.append(matches[-1])
        found = pattern.match(matches[-1].name)
        assert found is not None, "matches holds only names the pattern matches"
        version = found.group(1)
        if version not in versions:
            versions.append(version)
    return sources, "_".join(versions)


def _jar_is_valid(path: Path) -> bool:
    """True when ``path`` is a readable zip whose CRCs check out and that holds the marker class."""
    try:
        with zipfile.ZipFile(path) as jar:
            return jar.testzip() is None and JACKSON_MARKER in jar.namelist()
    except Exception:  # missing, truncated, not a zip, bad deflate stream, ...
        return False


def relocated_jackson_jar() -> Path:
    """Jackson relocated into Iceberg's shaded package; built once, cached, rebuilt if corrupt."""
    sources, version = _jackson_sources()
    dest = cache_dir() / f"iceberg-shaded-jackson-{version}-r{_RELOCATE_REVISION}.jar"
    if _jar_is_valid(dest):
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent)
        os.close(fd)
    except OSError as exc:
        raise RuntimeSetupError(
            f"Cannot write lakewide's jar cache at {dest.parent}: {exc}. "
            "Set LAKEWIDE_CACHE_DIR to a writable directory."
        ) from exc
    tmp = Path(tmp_name)
    try:
        relocate_jar(sources, tmp)
        os.replace(tmp, dest)  # atomic: concurrent builders each publish a complete jar
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def bundled_jars() -> list[Path]:
    """Jars lakewide puts on ``spark.jars`` when the user brings none of their own."""
    return [iceberg_runtime_jar(), relocated_jackson_jar()]


def uses_bundled_jars(user_conf: dict[str, str]) -> bool:
    """True when lakewide adds its own jars: the profile sets neither spark.jars nor
    spark.jars.packages."""
    return "spark.jars" not in user_conf and "spark.jars.packages" not in user_conf


def check_catalog_supported(output: Output) -> None:
    """Refuse, before any JVM starts, a catalog the bundled jars cannot run (ConfigError).

    The PyPI Iceberg runtime jar lacks its shaded Apache HttpClient 5 classes, which the REST
    catalog client needs (``NoClassDefFoundError: .../shaded/org/apache/hc/core5/http/Method``);
    no PyPI package ships HttpClient 5 to relocate the way Jackson is. A profile that brings its
    own jars (``spark.jars`` / ``spark.jars.packages``) is let through.
    """
    props = output.iceberg_catalog_properties()
    rest = props.get("type") == "rest" or props.get("catalog-impl", "").endswith(".RESTCatalog")
    if not rest or not uses_bundled_jars(output.spark_conf):
        return
    raise output.config_error(
        "catalog_type 'rest' cannot start with the Iceberg jar lakewide bundles from PyPI: it "
        "lacks Iceberg's shaded HttpClient 5 classes (org.apache.iceberg.shaded.org.apache.hc.*) "
        "that the REST client needs. Use catalog_type: jdbc (a shared database) or hadoop "
        "(one writer), or, on a machine that reaches Maven, set spark_conf: "
        "{spark.jars.packages: 'org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2'} "
        "(or spark.jars: a complete runtime jar) so lakewide adds none of its own",
        "catalog_type",
    )
