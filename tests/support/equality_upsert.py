"""An upstream kept the way Flink's Iceberg upsert sink keeps it: equality deletes.

Spark's SQL never writes equality delete files (its MERGE rewrites files or writes position
deletes), so a table written the way Flink's upsert sink (or Kafka Connect's Iceberg sink in
upsert mode) writes it is made here through Iceberg's Java API in the session's JVM: one
``RowDelta`` commit per call that

* adds the new rows (a data file), and
* adds an equality delete file on the key columns with every upserted and deleted key.

An equality delete applies to data files of a lower data sequence number only, so the rows
added in the same commit stay live: the old row of an upserted key is hidden, the new one is
read, a deleted key is gone. Both files are written by Spark into throwaway Iceberg tables
whose files live in the upstream's data folder (their schema, so their field ids, copied from
the upstream by ``CREATE TABLE ... AS SELECT``), then registered in the upstream: the key
table's file as an equality delete file (readers project its key columns by field id).
"""

from __future__ import annotations

import itertools
from typing import Any

_stage = itertools.count(1)


def java_table(spark: Any, name: str) -> Any:
    """The Iceberg ``Table`` behind ``name`` in ``spark``'s catalogs (Iceberg's Java API)."""
    return spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, name
    )


def _staged_files(spark: Any, upstream: str, location: str, rows: Any) -> list[Any]:
    """Write ``rows`` (a DataFrame with the upstream's columns) as an Iceberg table in the
    upstream's data folder; its data files, and drop the table (its files stay)."""
    stage = f"{upstream}__eq{next(_stage)}"
    rows.createOrReplaceTempView("lw_eq_stage_rows")
    spark.sql(
        f"CREATE TABLE {stage} USING iceberg TBLPROPERTIES ('write.data.path'='{location}/data',"
        " 'format-version'='2') AS SELECT * FROM lw_eq_stage_rows"
    )
    table = java_table(spark, stage)
    upstream_schema = java_table(spark, upstream).schema()
    for field in spark.table(upstream).columns:  # same field ids, or the deletes would miss
        assert (
            table.schema().findField(field).fieldId() == upstream_schema.findField(field).fieldId()
        )
    snapshot = table.currentSnapshot()
    files = []
    if snapshot is not None:
        found = snapshot.addedDataFiles(table.io()).iterator()
        while found.hasNext():
            files.append(found.next())
    spark.sql(f"DROP TABLE {stage}")  # a hadoop table's drop removes its folder, not these files
    return files


def upsert(spark: Any, upstream: str, rows: Any, deleted: Any, key: str) -> None:
    """Commit ``rows`` (a DataFrame of whole rows, or None) as upserts by ``key`` and delete
    the keys of ``deleted`` (a DataFrame with the column ``key``, or None), in one commit with
    an equality delete file, as Flink's upsert sink does."""
    from pyspark.sql import functions as f

    table = java_table(spark, upstream)
    schema = spark.table(upstream).schema
    location = str(table.location())
    keys = [frame.select(key) for frame in (rows, deleted) if frame is not None]
    if not keys:
        return
    every = keys[0] if len(keys) == 1 else keys[0].unionByName(keys[1])
    key_rows = every.distinct().select(
        *[
            f.col(c.name) if c.name == key else f.lit(None).cast(c.dataType).alias(c.name)
            for c in schema
        ]
    )
    jvm = spark._jvm
    delta = table.newRowDelta()
    if rows is not None:
        for data_file in _staged_files(spark, upstream, location, rows.select(*schema.names)):
            delta.addRows(data_file)
    key_ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    key_ids[0] = table.schema().findField(key).fieldId()
    for keys_file in _staged_files(spark, upstream, location, key_rows):
        deletes = (
            jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec())
            .ofEqualityDeletes(key_ids)
            .withPath(keys_file.location())
            .withFormat(keys_file.format())
            .withFileSizeInBytes(keys_file.fileSizeInBytes())
            .withRecordCount(keys_file.recordCount())
            .build()
        )
        delta.addDeletes(deletes)
    delta.commit()
    spark.sql(f"REFRESH TABLE {upstream}")
