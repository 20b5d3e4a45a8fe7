"""Spark Connect mode: lakewide as a pure-Python client of a Spark Connect server.

No JVM starts here and nothing goes through py4j: the session is ``SparkSession.builder
.remote(...).create()`` (one per model run concurrently: Connect sessions have no
``newSession()``, and the commit properties below are session-wide). The profile's Iceberg
catalog is configured on the session (catalog settings are session settings), so the server
needs only Iceberg's runtime jar and SQL extensions.

Offsets ride in the data commit through Iceberg's ``spark.sql.iceberg.snapshot-property.<key>``
session settings (Iceberg >= 1.11 on Spark 4.x; Iceberg's ``CommitMetadata``, used in local
mode, keeps properties in a JVM thread-local that a Connect client cannot reach). A server
without them is refused at connect time (``check_server``), before anything is written.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from sqlglot import exp

from lakewide.project.connect_profile import connect_address, server_address, server_host_port
from lakewide.project.profiles import Output
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import RuntimeSetupError

T = TypeVar("T")
SNAPSHOT_PROPERTY = "spark.sql.iceberg.snapshot-property."
#: the oldest Iceberg whose Spark 4 runtime has the snapshot-property settings (PR 14545)
MIN_ICEBERG = (1, 11)
# PySpark's client logs every failed query's error with a JVM stack trace on stderr, as JSON;
# lakewide reports the failure itself
_CLIENT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def create_remote(output: Output, conf: dict[str, str]) -> Any:
    """A new session on ``output``'s Connect server with the session settings ``conf`` (a
    RuntimeSetupError, secrets masked, when the server does not answer or refuses them)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise RuntimeSetupError(
            "the Spark Connect client is not installed: `pip install 'lakewide[connect]'`"
        ) from exc
    for name in _CLIENT_LOGGERS:
        logging.getLogger(name).disabled = True
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]")
    try:
        # a Connect session (pyspark.sql.connect): typed as the classic one under pyspark 3.5
        spark: Any = SparkSession.builder.remote(connect_address(output)).create()
        spark.client.set_retry_policies([retry_policy()])
        for key, value in conf.items():
            spark.conf.set(key, value)
    except Exception as exc:  # noqa: BLE001 - gRPC and Spark errors have many types
        raise RuntimeSetupError(
            f"could not open a session on the Spark Connect server {server_address(output)}: "
            f"{_first_line(output, exc)}"
        ) from None
    return spark


def retry_policy() -> Any:
    """The client's retries of an unavailable server: 4, a few seconds of back-off (gRPC's
    own reconnect back-off adds to it; about 18 s in all measured), not PySpark's default of
    at least 10 minutes: a run whose server went away ends with a clear error."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    return DefaultPolicy(max_retries=4, max_backoff=10000)


def reachable(output: Output, timeout: float = 2.0) -> bool:
    """Whether the Connect server's port accepts a connection (asked after a failed step:
    a server that went away ends the run at once, instead of failing each model after the
    client's retries)."""
    try:
        with socket.create_connection(server_host_port(output), timeout=timeout):
            return True
    except OSError:
        return False


def unavailable(err: BaseException) -> str | None:
    """``UNAVAILABLE: <details>`` when ``err`` (or an error it came from) is gRPC's answer
    that the server cannot be reached; None for any other error."""
    seen: BaseException | None = err
    for _ in range(8):
        if seen is None:
            break
        code = getattr(seen, "code", None)
        details = getattr(seen, "details", None)
        if callable(code) and callable(details):
            name = str(getattr(code(), "name", code()))
            if name in ("UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED"):
                return f"{name}: {str(details()).strip().splitlines()[0]}"
        if "RETRIES_EXCEEDED" in str(seen):
            return "no answer after the client's retries (RETRIES_EXCEEDED)"
        seen = seen.__cause__ or seen.__context__
    return None


def is_remote(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def remote_conf(output: Output) -> dict[str, str]:
    """The settings a Connect session of ``output`` gets (what local mode puts in the conf a
    JVM starts with, less what only a starting Spark reads): lakewide's SQL semantics and MERGE
    defaults, the profile's catalog with its secrets, then the profile's spark_conf."""
    from lakewide.spark.runtime import ICEBERG_CATALOG, MERGE_PRUNING_CONF, SQL_SEMANTICS_CONF

    prefix = "spark.sql.catalog." + output.catalog
    catalog = {**output.iceberg_catalog_properties(), **output.catalog_secrets()}
    return {
        "spark.sql.session.timeZone": "UTC",
        **SQL_SEMANTICS_CONF,
        **MERGE_PRUNING_CONF,
        prefix: ICEBERG_CATALOG,
        **{f"{prefix}.{key}": value for key, value in catalog.items()},
        **output.spark_conf,
    }


def check_server(output: Output, spark: Any) -> str:
    """``Spark X, Iceberg Y`` of the server; RuntimeSetupError when it cannot carry offsets in
    a data commit (Spark < 4, Iceberg < 1.11 or no Iceberg runtime at all)."""
    version = exp.Dot.build(
        [
            exp.to_identifier(output.catalog),
            exp.to_identifier("system"),
            exp.Anonymous(this="iceberg_version"),
        ]
    )
    spark_version = str(spark.version)
    try:
        iceberg = str(spark.sql(to_sql(exp.select(version), pretty=False)).collect()[0][0])
    except Exception as exc:  # noqa: BLE001
        raise RuntimeSetupError(
            f"the Spark Connect server {server_address(output)} (Spark {spark_version}) did not "
            f"answer {output.catalog}.system.iceberg_version(): {_first_line(output, exc)}; it "
            "needs Iceberg's Spark runtime jar (>= 1.11) and its SQL extensions "
            "(docs/how-to/spark-connect.md)"
        ) from None
    found = (spark_version, iceberg)
    if _numbers(spark_version) < (4, 0) or _numbers(iceberg) < MIN_ICEBERG:
        raise RuntimeSetupError(
            f"the Spark Connect server {server_address(output)} runs Spark {found[0]} with Iceberg "
            f"{found[1]}: lakewide needs Spark >= 4.0 with Iceberg >= 1.11, whose snapshot-"
            "property settings carry the offsets in the data commit (exactly-once); older "
            "servers offer no way to do that over Connect"
        )
    return f"Spark {found[0]}, Iceberg {found[1]}"


@contextlib.contextmanager
def snapshot_properties(spark: Any, properties: dict[str, str]) -> Iterator[None]:
    """Every Iceberg commit of ``spark``'s session meanwhile carries ``properties``."""
    for key, value in properties.items():
        spark.conf.set(SNAPSHOT_PROPERTY + key, value)
    try:
        yield
    finally:
        for key in properties:
            with contextlib.suppress(Exception):  # the server is gone: nothing to unset
                spark.conf.unset(SNAPSHOT_PROPERTY + key)


def commit_remote(spark: Any, properties: dict[str, str], action: Callable[[], T]) -> T:
    """Run ``action`` (``spark.sql`` writes) so that its commits carry ``properties``."""
    with snapshot_properties(spark, properties):
        return action()


def _numbers(version: str) -> tuple[int, ...]:
    parts = []
    for part in version.split("."):
        digits = "".join(c for c in part if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def _first_line(output: Output, exc: BaseException) -> str:
    text = unavailable(exc) or str(exc).strip() or type(exc).__name__
    return output.masked(text.splitlines()[0])
