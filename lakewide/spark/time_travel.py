"""Reads of an Iceberg table at a snapshot or tag, and what differs between Iceberg's runtimes.

Iceberg's Spark 3.5 runtime takes its own read options (``snapshot-id``, ``tag``) and a staged
task set through ``scan-task-set-id``. Its Spark 4 runtimes (Iceberg >= 1.11) refuse the first
two ("Time travel option `snapshot-id` is no longer supported, use Spark built-in
`versionAsOf`") and silently ignore the third: a staged task set is read by loading its id,
registered in ``SparkTableCache``, as a ``SparkRewriteTable``. That class, which the older
runtimes lack, tells the two apart (1.10 has ``SparkTableCache`` too, with another meaning:
loading a cached table's id reads the whole table).
"""

from __future__ import annotations

from typing import Any


def reads_staged_by_id(spark: Any) -> bool:
    """Whether the Iceberg runtime is one of 1.11 and later (``SparkRewriteTable``): time
    travel through Spark's ``versionAsOf``, staged task sets loaded by their id."""
    from py4j.java_gateway import JavaClass

    return isinstance(spark._jvm.org.apache.iceberg.spark.source.SparkRewriteTable, JavaClass)


def table_cache(spark: Any) -> Any:
    """Iceberg's ``SparkTableCache`` singleton. Its static ``get()`` is called by reflection:
    py4j resolves ``SparkTableCache.get`` to the instance method ``get(String)`` of the same
    name and answers that it "does not exist in the JVM"."""
    gateway = spark.sparkContext._gateway
    lang = spark._jvm.java.lang
    cache_class = spark._jvm.org.apache.iceberg.spark.SparkTableCache._java_lang_class
    getter = cache_class.getMethod("get", gateway.new_array(lang.Class, 0))
    return getter.invoke(None, gateway.new_array(lang.Object, 0))


def at_version(spark: Any, reader: Any, version: str) -> Any:
    """``reader`` (a DataFrameReader of format iceberg) reading snapshot id or tag
    ``version``, with the option the running Iceberg runtime accepts."""
    from lakewide.spark.connect import is_remote

    # over Connect the server was checked to run Iceberg >= 1.11 (lakewide.spark.connect)
    if is_remote(spark) or reads_staged_by_id(spark):
        return reader.option("versionAsOf", version)
    return reader.option("snapshot-id" if version.isdigit() else "tag", version)


def in_schema(frame: Any, schema: Any) -> Any:
    """``frame`` (a table read at a snapshot, in that snapshot's columns) in ``schema`` (a
    StructType, the table's current one): each column by name, cast to its current type; a
    column added since reads as NULL, as Iceberg reads a file written before it was added."""
    from pyspark.sql import functions as F

    present = {name.lower() for name in frame.columns}
    return frame.select(
        *(
            (F.col(f.name) if f.name.lower() in present else F.lit(None))
            .cast(f.dataType)
            .alias(f.name)
            for f in schema.fields
        )
    )
