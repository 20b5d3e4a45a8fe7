"""Iceberg commits that carry lakewide's properties in their snapshot summary."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from lakewide.vocabulary.errors import RuntimeSetupError

T = TypeVar("T")
_callback_start = threading.Lock()


class _ActionCallable:
    """py4j proxy implementing java.util.concurrent.Callable around a Python callable."""

    def __init__(self, action: Callable[[], Any]) -> None:
        self.action = action
        self.result: Any = None
        self.error: BaseException | None = None

    def call(self) -> None:
        try:
            self.result = self.action()
        except BaseException as exc:
            self.error = exc
            raise  # makes the Java side fail too, so withCommitProperties unwinds
        return None  # the result stays in Python; it is rarely Java-convertible

    class Java:
        implements = ["java.util.concurrent.Callable"]


def commit_with_properties(spark: Any, properties: dict[str, str], action: Callable[[], T]) -> T:
    """Run ``action`` so that its Iceberg commits carry ``properties`` in the snapshot summary.

    ``action`` issues ``spark.sql(...)`` statements (MERGE, INSERT, ...); it runs on a py4j
    callback thread pinned to the JVM thread where Iceberg's CommitMetadata thread-local is set.
    An exception raised by ``action`` is re-raised here unchanged. On a Spark Connect session
    the properties are session settings instead (lakewide.spark.connect.commit_remote).
    """
    from lakewide.spark.connect import commit_remote, is_remote

    if is_remote(spark):
        return commit_remote(spark, properties, action)
    from py4j.clientserver import ClientServer
    from py4j.java_gateway import JavaPackage
    from py4j.protocol import Py4JJavaError
    from pyspark.java_gateway import ensure_callback_server_started

    gateway = spark.sparkContext._gateway
    if not isinstance(gateway, ClientServer):
        # Without pinned threads the callback's spark.sql runs on another JVM thread, which
        # does not see the CommitMetadata thread-local: the properties would be silently lost.
        raise RuntimeSetupError(
            "commit properties need PySpark's pinned-thread mode: unset PYSPARK_PIN_THREAD."
        )
    jvm = gateway.jvm
    commit_metadata = jvm.org.apache.iceberg.spark.CommitMetadata
    if isinstance(commit_metadata, JavaPackage):  # py4j's answer for "class not found"
        raise RuntimeSetupError(
            "Iceberg's Spark runtime is not on the Spark classpath (spark.jars)."
        )
    with _callback_start:  # idempotent, but not thread-safe (--threads commits at once)
        ensure_callback_server_started(gateway)  # type: ignore[no-untyped-call]
    props = jvm.java.util.HashMap()
    for key, value in properties.items():
        props.put(key, value)
    callback = _ActionCallable(action)
    exc_class = jvm.java.lang.Class.forName("java.lang.RuntimeException")
    try:
        commit_metadata.withCommitProperties(props, callback, exc_class)
    except Py4JJavaError:
        if callback.error is None:
            raise
    if callback.error is not None:
        raise callback.error
    # the action ran without error, so result holds what it returned (a T)
    return callback.result  # type: ignore[no-any-return]
