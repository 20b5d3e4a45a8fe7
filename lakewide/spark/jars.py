"""The jar lakewide puts on ``spark.jars``: Iceberg's complete Spark runtime from PyPI.

``snowpark-connect-deps-iceberg`` 1.0.2 ships the Iceberg 1.10.2 runtime with its shaded
Jackson and shaded Apache HttpClient 5 (the REST catalog client needs both); 1.0.3 lacks them.
Packages are found without importing them, so no JVM starts here.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

from lakewide.errors import RuntimeSetupError

# Shaded packages lakewide relies on in the runtime jar: Jackson (table metadata, every
# catalog) and HttpClient 5 (the REST catalog client). tests/spark/test_jars.py checks the pin.
REQUIRED_SHADED_PACKAGES = (
    "org/apache/iceberg/shaded/com/fasterxml/jackson/core/",
    "org/apache/iceberg/shaded/com/fasterxml/jackson/databind/",
    "org/apache/iceberg/shaded/org/apache/hc/client5/",
    "org/apache/iceberg/shaded/org/apache/hc/core5/",
)


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


def bundled_jars() -> list[Path]:
    """Jars lakewide puts on ``spark.jars`` when the user brings none of their own."""
    return [iceberg_runtime_jar()]


def uses_bundled_jars(user_conf: dict[str, str]) -> bool:
    """True when lakewide adds its own jars: the profile sets neither spark.jars nor
    spark.jars.packages."""
    return "spark.jars" not in user_conf and "spark.jars.packages" not in user_conf
