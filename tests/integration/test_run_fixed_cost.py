"""The fixed work of an incremental run, counted (not timed) on real Spark + Iceberg: a run of a
three-source model in which one source changed plans one read in commit order (the changed
source's new rows; the sources that did not change are pinned by plain snapshot reads), has
Spark analyse no model query (the stored contract's types: lakewide.run.schema.
contract_inputs), and sends no more Spark jobs than it did when this was measured; its rows
are a full refresh's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from lakewide.spark.adapter import SparkAdapter
from tests.integration.conftest import ModelRun

pytestmark = [pytest.mark.spark]

THREE = """
{{ config(merge_engine='partial_update', primary_key='k', sequence_field='seq') }}
SELECT k, a1, CAST(NULL AS BIGINT) AS b1, CAST(NULL AS BIGINT) AS c1, seq
FROM {{ source('src', 'a') }}
UNION ALL
SELECT k, CAST(NULL AS BIGINT), b1, CAST(NULL AS BIGINT), seq FROM {{ source('src', 'b') }}
UNION ALL
SELECT k, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), c1, seq FROM {{ source('src', 'c') }}
"""
SCHEMAS = {t: f"k INT, {t}1 BIGINT, seq BIGINT" for t in "abc"}
#: the adapter calls counted: reads planned in commit order, analyses of a query's columns
COUNTED = ("ordered_read", "column_types")


def jobs_submitted(spark: Any) -> int:
    """Spark jobs submitted so far in this SparkContext (the DAG scheduler's next job id)."""
    return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())


def test_a_one_source_run_of_three_sources_plans_one_read_and_analyses_nothing(
    model_run: Callable[..., ModelRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: Counter[str] = Counter()
    for name in COUNTED:
        method = getattr(SparkAdapter, name)

        def counted(self: SparkAdapter, *args: Any, _m: Any = method, _n: str = name) -> Any:
            calls[_n] += 1
            return _m(self, *args)

        monkeypatch.setattr(SparkAdapter, name, counted)
    m = model_run(THREE, SCHEMAS)
    m.step({t: [(k, 10 * k + i, 1) for k in range(1, 6)] for i, t in enumerate("abc")})
    spark = m.run.spark
    rows: list[tuple] = []
    for round_no in (2, 3):
        calls.clear()
        m.write("a", [(1, 100 + round_no, round_no), (9, 9, round_no)])
        before = jobs_submitted(spark)
        m.last = m.run.run()["m"]
        jobs = jobs_submitted(spark) - before
        rows = m.run.rows("m")
        assert m.last.plan == "incremental"
        modes = {r["relation"].rsplit(".", 1)[1]: r["mode"] for r in m.last.ranges}
        assert modes == {"a": "incremental", "b": "none", "c": "none"}, m.last.ranges
        assert calls == {"ordered_read": 1}, calls
        assert jobs <= JOBS, jobs
    assert m.step({}, full_refresh=True) == rows  # every source folded again: the same


#: Spark jobs of the one-source run above (the staged batch counted by the job that materializes
#: it, the MERGE and its runtime filter, the snapshot's rows): measured, so that a new job is a
#: decision (10 before the batch was counted as it is materialized, 8 before the new files'
#: statistics answered the NULL-key count: lakewide.spark.file_nulls)
JOBS = 7


def test_a_null_key_is_counted_where_the_files_do_not_count_nulls(
    model_run: Callable[..., ModelRun],
) -> None:
    """The NULL-key count is skipped only where every new file says it holds no NULL key:
    a source written without column metrics (its files count nothing) has its new rows
    counted by a query, and a NULL key among them is rejected and counted."""
    m = model_run(THREE, SCHEMAS)
    m.step({t: [(k, k, 1) for k in range(1, 4)] for t in "abc"})
    spark = m.run.spark
    source = f"lw.{m.run.seed_schema}.b"
    spark.sql(f"ALTER TABLE {source} SET TBLPROPERTIES ('write.metadata.metrics.default'='none')")
    m.write("b", [(None, 7, 2), (2, 20, 2)])
    m.last = m.run.run()["m"]
    assert m.last.plan == "incremental" and m.last.rejected == 1
    assert (2, 2, 20, 2, 2) in m.run.rows("m")
    spark.sql(f"ALTER TABLE {source} UNSET TBLPROPERTIES ('write.metadata.metrics.default')")
    m.write("b", [(None, 8, 3)])  # counted by the files' statistics: one NULL
    m.last = m.run.run()["m"]
    assert m.last.rejected == 1
