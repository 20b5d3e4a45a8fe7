"""Spark configuration, session start-up and the running JVM (Ctrl-C, exit codes).

PySpark is imported lazily inside the functions that need a JVM; ``spark_conf`` works without
starting one. Java discovery is ``lakewide.spark.java``, the bundled jars ``lakewide.spark.jars``.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lakewide.project.profiles import CATALOG_NAME
from lakewide.spark.jars import bundled_jars, uses_bundled_jars
from lakewide.spark.java import find_java
from lakewide.vocabulary.errors import ConfigError, RunInterrupted, RuntimeSetupError

ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
ICEBERG_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
_LOG_OPTION = "-Dlog4j2.configurationFile=" + LOG_CONFIG.as_uri()
JAVA_OPTIONS = "spark.driver.extraJavaOptions"
EXECUTOR_JAVA_OPTIONS = "spark.executor.extraJavaOptions"
# Session defaults that let Spark's runtime Bloom filter prune the target rows of a MERGE before its
# join shuffles them (docs/benchmarks/index.md, docs/reference/defaults.md). Iceberg rewrites a
# MERGE with WHEN NOT MATCHED into ``target RIGHT OUTER JOIN source``; Spark 3.5 adds the filter
# only when it plans a shuffle join, and it takes a source under the broadcast threshold for a
# broadcast join although a right outer join cannot broadcast its right side. So joins are not
# broadcast by estimated size at planning time; adaptive execution still broadcasts a side whose
# measured size is under 10 MB. The Bloom filter's creation side has no size limit: a staged batch's
# size is its origin plan's estimate, which for a branch with a join is the product of the joined
# tables' sizes (terabytes for a few thousand rows). Any key set in the profile's spark_conf wins.
MERGE_PRUNING_CONF = {
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.adaptive.autoBroadcastJoinThreshold": "10MB",
    "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold": "1MB",
    "spark.sql.optimizer.runtime.bloomFilter.creationSideThreshold": f"{2**63 - 1}b",
}
# Spark 4 turns ANSI mode on by default (an invalid cast or an overflow raises instead of giving
# NULL); Spark 3.5 has it off. lakewide sets it off on both, so that a model's SQL, the merge
# engines' folds and the tests give the same rows on either version, as on the Spark 3.5 the
# semantics were verified on (docs/how-to/spark-version.md). A profile's spark_conf may turn it on.
SQL_SEMANTICS_CONF = {"spark.sql.ansi.enabled": "false"}
# A wide model of deduplicate or first_row joins one pre-fold per source on the key
# (lakewide.compiler.folds.prefold_rows): one sort per source in the same task. Spark sizes its
# memory pages from the memory per core (about a sixteenth of a task's share), and each sort holds
# at least one page, so past about a dozen sources a task could not get memory for the next sort
# (UNABLE_TO_ACQUIRE_MEMORY) at any driver memory. 1 MB pages let a task hold hundreds of sorts.
MEMORY_CONF = {"spark.buffer.pageSize": "1m"}


def spark_conf(
    master: str,
    catalog: str,
    catalog_props: dict[str, str],
    user_conf: dict[str, str],
    *,
    driver_classpath: Sequence[Path] = (),
    java_options: Sequence[str] = (),
) -> dict[str, str]:
    """Full Spark conf for an Iceberg catalog named ``catalog``; ``user_conf`` always wins.

    ``spark.driver.extraJavaOptions`` from ``user_conf`` follows lakewide's log configuration
    option instead of replacing it, unless it names a log configuration of its own
    (docs/reference/defaults.md: ``-XX:TieredStopAtLevel=1``). ``java_options`` (the AWS
    SDK's checksum settings, Output.s3_java_options) go on the driver's and the executors'
    JVM options, before any of ``user_conf``'s (a later ``-D`` wins).

    Bundled jars are added only when ``user_conf`` sets neither ``spark.jars`` nor
    ``spark.jars.packages`` (users who can reach Maven bring their own). ``driver_classpath``
    (a JDBC driver) goes on ``spark.driver.extraClassPath``, after the profile's own entries:
    java.sql.DriverManager finds drivers there, and the bundled jars stay as they are.
    """
    if not CATALOG_NAME.fullmatch(catalog):
        raise ConfigError(
            f"invalid catalog name {catalog!r}: use letters, digits and _", key="catalog"
        )
    prefix = "spark.sql.catalog." + catalog
    conf: dict[str, str] = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        JAVA_OPTIONS: " ".join([_LOG_OPTION, *java_options]),
        "spark.sql.session.timeZone": "UTC",
        **SQL_SEMANTICS_CONF,
        **MEMORY_CONF,
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        prefix: ICEBERG_CATALOG,
    }
    if master.startswith("local"):
        conf["spark.sql.shuffle.partitions"] = "4"
    conf.update(MERGE_PRUNING_CONF)
    for key, value in catalog_props.items():
        conf[prefix + "." + key] = value
    if uses_bundled_jars(user_conf):
        conf["spark.jars"] = ",".join(str(jar) for jar in bundled_jars(list(driver_classpath)))
    conf.update(user_conf)
    options = user_conf.get(JAVA_OPTIONS)
    if options and "log4j2.configurationFile" not in options:  # theirs, after lakewide's log set-up
        conf[JAVA_OPTIONS] = " ".join([_LOG_OPTION, *java_options, options])
    elif options:
        conf[JAVA_OPTIONS] = " ".join([*java_options, options])
    if java_options:
        theirs = user_conf.get(EXECUTOR_JAVA_OPTIONS)
        conf[EXECUTOR_JAVA_OPTIONS] = " ".join([*java_options, *([theirs] if theirs else [])])
    if driver_classpath:
        entries = [str(jar) for jar in driver_classpath]
        theirs = user_conf.get("spark.driver.extraClassPath")
        conf["spark.driver.extraClassPath"] = os.pathsep.join(
            ([theirs] if theirs else []) + entries
        )
    return conf


def set_catalog_conf(spark: Any, catalog: str, props: dict[str, str]) -> None:
    """Set catalog properties on a running session (before the catalog's first use: Spark
    loads a catalog, reading its properties, when a statement first names it)."""
    for key, value in props.items():
        spark.conf.set(f"spark.sql.catalog.{catalog}.{key}", value)


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
        raise RuntimeSetupError(
            "PySpark is not installed: `pip install 'lakewide[spark35]'` (Spark 3.5, "
            "the embedded default) or `pip install 'lakewide[spark4]'`."
        ) from exc
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
        return not (
            record.name.startswith("py4j") or f"{os.sep}py4j{os.sep}" in (record.pathname or "")
        )


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
        code: int | None = proc.wait(timeout=wait) if wait else proc.poll()  # a Popen
        return code
    except subprocess.TimeoutExpired:
        return None
