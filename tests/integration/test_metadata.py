"""Table metadata read without Spark on real Spark-written tables (lakewide.state.metadata): it agrees
with Iceberg's own view, an incremental run asks Spark for none of it, and a snapshot another
process committed is read."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from sqlglot import exp

from lakewide.run.models.executor import run_models
from lakewide.spark.adapter import SparkAdapter
from lakewide.state.offsets import OFFSETS
from lakewide.state.readers import metadata_reader
from lakewide.vocabulary.dialect import to_sql
from tests.integration.conftest import ModelRun
from tests.integration.test_incremental import COUNTERS, SCHEMAS

pytestmark = [pytest.mark.spark]


class WatchedAdapter(SparkAdapter):
    """The adapter, noting every statement it sends to Spark and every table it loads through
    Iceberg's Java API for metadata (a read in commit order plans its files through Iceberg's
    Java scan: that is the read itself, counted apart)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.statements: list[str] = []
        self.java_loads = 0
        self.ordered_reads = 0
        self._reading = False

    def ordered_read(self, *args: Any, **kwargs: Any) -> Any:
        self.ordered_reads += 1
        self._reading = True
        try:
            return super().ordered_read(*args, **kwargs)
        finally:
            self._reading = False

    def sql(self, statement: exp.Expression) -> Any:
        self.statements.append(to_sql(statement, pretty=False))
        return super().sql(statement)

    def _iceberg_table(self, relation: Any) -> Any:
        self.java_loads += 0 if self._reading else 1
        return super()._iceberg_table(relation)


def test_metadata_read_without_spark_is_icebergs_own(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    m.step({"a": [(1, 2)], "b": [(1, 5)]})
    m.step({"a": [(1, 3), (2, 1)]})
    m.step({"b": [(2, 7)]})
    spark: Any = m.run.spark
    manifest = m.run.manifest()
    reader = metadata_reader(manifest.output)
    assert reader is not None
    for relation in (manifest.models["m"].relation, manifest.sources[("src", "a")].relation):
        meta = reader.table_meta(relation)
        assert meta is not None
        rows = spark.sql(
            f"SELECT snapshot_id, parent_id, operation, summary FROM {relation}.snapshots"
        ).collect()
        assert {s.id: (s.parent, s.operation, s.summary) for s in meta.snapshots.values()} == {
            r[0]: (r[1], r[2], {"operation": r[2], **r[3]}) for r in rows
        }
        [(main,)] = spark.sql(
            f"SELECT snapshot_id FROM {relation}.refs WHERE name = 'main'"
        ).collect()
        assert meta.current == main
        table = spark.sparkContext._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            spark._jsparkSession, str(relation)
        )
        assert meta.format_version == table.operations().current().formatVersion()
        assert {i: s.sequence_number for i, s in meta.snapshots.items()} == {
            i: table.snapshot(i).sequenceNumber() for i in meta.snapshots
        }
    target = reader.table_meta(manifest.models["m"].relation)
    assert target is not None and len([s for s in target.ancestors() if OFFSETS in s.summary]) == 3


def test_an_incremental_run_reads_no_metadata_through_spark(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    m.step({"a": [(1, 2)], "b": [(1, 5)]})
    m.write("a", [(1, 3)])
    m.write("b", [(2, 4)])
    manifest = m.run.manifest()
    adapter = WatchedAdapter(manifest.output, spark=m.run.spark)
    [result] = run_models(manifest, ["m"], adapter)
    assert result.status == "success" and result.plan == "incremental", result.message
    assert m.run.rows("m") == [(1, 5, 5, 3), (2, None, 4, 1)]
    assert any(s.startswith("MERGE INTO") for s in adapter.statements)  # it did run
    metadata_tables = [
        s
        for s in adapter.statements
        if any(f".{t}" in s for t in ("snapshots", "refs", "history", "entries"))
    ]
    assert metadata_tables == [] and adapter.java_loads == 0
    assert adapter.ordered_reads >= 2  # each source's appended rows, in commit order
    assert result.rows == 2  # the row count, from the commit's summary


def test_a_snapshot_committed_by_another_process_is_read(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    m.step({"a": [(1, 2)], "b": [(1, 5)]})  # this session's catalog now holds `a` as it was
    other = m.run.spark.newSession()  # its own catalog: a writer lakewide's session never saw
    other.createDataFrame([(1, 10), (3, 1)], SCHEMAS["a"]).writeTo(
        f"lw.{m.run.seed_schema}.a"
    ).append()
    assert m.step({}) == [(1, 12, 5, 3), (3, 1, None, 1)]
    assert m.last.plan == "incremental"
    offsets = json.loads(
        m.run.spark.sql(
            f"SELECT summary FROM lw.{m.run.namespace}.m.snapshots ORDER BY committed_at DESC "
            "LIMIT 1"
        ).collect()[0][0][OFFSETS]
    )
    [(newest,)] = other.sql(
        f"SELECT snapshot_id FROM lw.{m.run.seed_schema}.a.refs WHERE name = 'main'"
    ).collect()
    assert offsets[f"0:lw.{m.run.seed_schema}.a"] == newest
