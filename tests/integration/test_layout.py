"""sort_by (Iceberg sort order) and merge_filter on real Spark + Iceberg."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from lakewide.spark.adapter import SparkAdapter
from lakewide.vocabulary.dialect import to_sql
from tests.integration.conftest import ModelRun

pytestmark = [pytest.mark.spark, pytest.mark.slow]

WIDE = """
{{ config(merge_engine='partial_update', primary_key='k', sequence_field='seq',
          sort_by='k', merge_filter=true) }}
SELECT k, a, CAST(NULL AS BIGINT) AS b, seq FROM {{ source('src', 'x') }}
UNION ALL
SELECT k, CAST(NULL AS BIGINT), b, seq FROM {{ source('src', 'y') }}
"""
SCHEMAS = {"x": "k INT, a BIGINT, seq INT", "y": "k INT, b BIGINT, seq INT"}


def sort_order(m: ModelRun) -> str:
    name = f"lw.{m.run.namespace}.m"
    props = {r[0]: r[1] for r in m.run.spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}
    return props.get("sort-order", "")


def test_sort_by_is_the_tables_sort_order_and_files_are_sorted(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(WIDE, SCHEMAS)
    rows = m.step(
        {
            "x": [(k, k * 10, 1) for k in range(40, 0, -1)],
            "y": [(k, k * 100, 1) for k in range(1, 41)],
        }
    )
    assert rows == [(k, k * 10, k * 100, 1) for k in range(1, 41)]
    assert sort_order(m) == "k ASC NULLS FIRST"
    name = f"lw.{m.run.namespace}.m"
    bounds = sorted(
        (r[0], r[1])
        for r in m.run.spark.sql(
            f"SELECT readable_metrics.k.lower_bound, readable_metrics.k.upper_bound "
            f"FROM {name}.files"
        ).collect()
    )
    # range-ordered output: the data files cover disjoint key ranges
    assert all(upper < lower for (_, upper), (lower, _) in zip(bounds, bounds[1:])), bounds
    m.step({}, full_refresh=True)
    assert sort_order(m) == "k ASC NULLS FIRST", "CREATE OR REPLACE keeps the sort order"


def test_merge_filter_narrows_the_merge_to_the_batch_key_range(
    model_run: Callable[..., ModelRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    m = model_run(WIDE, SCHEMAS)
    m.step({"x": [(k, k, 1) for k in range(1, 21)], "y": [(k, k, 1) for k in range(1, 21)]})
    ran: list[str] = []
    commit = SparkAdapter.commit

    def recording(self: SparkAdapter, statement: Any, properties: dict[str, str]) -> None:
        ran.append(to_sql(statement, pretty=False))
        commit(self, statement, properties)

    monkeypatch.setattr(SparkAdapter, "commit", recording)
    # keys 5..7 (one known, 25 new) in x: range 5..25; b of key 3 in y, with a late seq
    rows = m.step({"x": [(7, 70, 2), (5, 50, 2), (25, 250, 2), (6, None, 2)], "y": [(3, 300, 0)]})
    merges = [s for s in ran if s.startswith("MERGE")]
    # both sources changed: one MERGE over the combined batch's key range
    assert len(merges) == 1
    assert "ON t.k = s.k AND t.k BETWEEN 3 AND 25 WHEN" in merges[0]
    expected = {k: (k, k, k, 1) for k in range(1, 21)}
    expected.update({5: (5, 50, 5, 2), 7: (7, 70, 7, 2), 6: (6, 6, 6, 2), 25: (25, 250, None, 2)})
    assert rows == sorted(expected.values())
    # one source changed: its own MERGE over its batch's key range
    ran.clear()
    rows = m.step({"y": [(9, 900, 3), (11, 110, 3)]})
    merges = [s for s in ran if s.startswith("MERGE")]
    assert len(merges) == 1
    assert "ON t.k = s.k AND t.k BETWEEN 9 AND 11 WHEN" in merges[0]
    expected.update({9: (9, 9, 900, 3), 11: (11, 11, 110, 3)})
    assert rows == sorted(expected.values())


PARTITIONED = """
{{ config(merge_engine='partial_update', primary_key='k', sequence_field='seq',
          partition_by=['bucket(2, k)', 'TRUNCATE(2, name)', 'day(ts)', 'identity(g)']) }}
SELECT k, name, ts, g, CAST(NULL AS BIGINT) AS b, seq FROM {{ source('src', 'x') }}
UNION ALL
SELECT k, CAST(NULL AS STRING), CAST(NULL AS TIMESTAMP), CAST(NULL AS INT), b, seq
FROM {{ source('src', 'y') }}
"""


def test_partition_by_transforms_are_the_tables_partition_spec(
    model_run: Callable[..., ModelRun],
) -> None:
    """Every transform spelling the compiler accepts is one Iceberg takes (truncate was once
    printed as a CAST by the SQL printer), and merges keep working on the partitioned table."""
    m = model_run(
        PARTITIONED,
        {"x": "k INT, name STRING, ts TIMESTAMP, g INT, seq INT", "y": "k INT, b BIGINT, seq INT"},
    )
    ts = datetime(2026, 1, 2, 3, 4, 5)
    rows = m.step({"x": [(1, "abc", ts, 7, 1)], "y": [(1, 10, 1), (2, 20, 1)]})
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [(1, "abc", 7, 10), (2, None, None, 20)]
    name = f"lw.{m.run.namespace}.m"
    described = [tuple(r) for r in m.run.spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()]
    start = described.index(("# Partitioning", "", ""))
    parts = [r[1] for r in described[start + 1 :] if r[0].startswith("Part ")]
    assert parts == ["bucket(2, k)", "truncate(2, name)", "days(ts)", "g"]
    rows = m.step({"y": [(1, 11, 2)]})
    assert [(r[0], r[4]) for r in rows] == [(1, 11), (2, 20)]
