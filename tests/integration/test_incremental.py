"""Incremental, exactly-once runs on real Spark + Iceberg (in-process)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from lakewide import __version__
from lakewide.state.offsets import OFFSETS, RUN_ID, VERSION
from lakewide.vocabulary import faults
from tests.integration.conftest import ModelRun

pytestmark = [pytest.mark.spark, pytest.mark.slow]

COUNTERS = """
{{ config(merge_engine='aggregation', primary_key='k',
          aggregates={'clicks': 'sum', 'buys': 'sum', 'events': 'sum'}) }}
SELECT k, clicks, CAST(NULL AS BIGINT) AS buys, CAST(1 AS BIGINT) AS events
FROM {{ source('src', 'a') }}
UNION ALL
SELECT k, CAST(NULL AS BIGINT), buys, CAST(1 AS BIGINT) FROM {{ source('src', 'b') }}
"""
SCHEMAS = {"a": "k INT, clicks BIGINT", "b": "k INT, buys BIGINT"}


def totals(batches: list[dict[str, list[tuple]]]) -> list[tuple]:
    """The counters computed directly from every row ever appended."""
    out: dict[int, list] = {}
    for batch in batches:
        for table, column in (("a", 1), ("b", 2)):
            for k, value in batch.get(table, []):
                row = out.setdefault(k, [k, None, None, 0])
                row[column] = (row[column] or 0) + value
                row[3] += 1
    return sorted(tuple(r) for r in out.values())


def snapshots(m: ModelRun) -> list[Any]:
    name = f"lw.{m.run.namespace}.m.snapshots"
    return m.run.spark.sql(
        f"SELECT snapshot_id, summary FROM {name} ORDER BY committed_at"
    ).collect()


def test_each_run_reads_only_new_rows_and_counts_exactly(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    batches = [
        {"a": [(1, 2), (2, 1)], "b": [(1, 5)]},
        {"a": [(1, 3)], "b": []},
        {"a": [], "b": [(2, 7), (3, 1), (3, 1)]},
    ]
    m.step(batches[0])
    assert m.last.plan == "bootstrap"
    for n in (1, 2):
        rows = m.step(batches[n])
        assert m.last.plan == "incremental"
        read = {r["relation"].rsplit(".", 1)[1]: r for r in m.last.ranges}
        appended_a, appended_b = len(batches[n]["a"]), len(batches[n]["b"])
        assert read["a"]["mode"] == ("incremental" if appended_a else "none")
        assert read["b"]["mode"] == ("incremental" if appended_b else "none")
        # keys staged = distinct keys among only the appended rows
        assert read["a"]["keys"] == len({k for k, _ in batches[n]["a"]})
        assert read["b"]["keys"] == len({k for k, _ in batches[n]["b"]})
        assert rows == totals(batches[: n + 1])
    # a run with nothing new commits nothing and changes nothing
    before = snapshots(m)
    assert m.step({}) == totals(batches) and m.last.statements == 0
    assert snapshots(m) == before


def test_commits_carry_offsets_run_id_and_version(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    m.step({"a": [(1, 1)], "b": [(1, 1)]})
    m.step({"a": [(1, 1)], "b": []})
    spark = m.run.spark
    source_snapshot = spark.sql(
        f"SELECT snapshot_id FROM lw.{m.run.seed_schema}.a.snapshots "
        "ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0][0]
    summary = snapshots(m)[-1][1]
    offsets = json.loads(summary[OFFSETS])
    assert offsets[f"0:lw.{m.run.seed_schema}.a"] == source_snapshot
    assert f"1:lw.{m.run.seed_schema}.b" in offsets
    assert summary[VERSION] == __version__ and len(summary[RUN_ID]) == 32


def test_resume_skips_maintenance_commits(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    m.step({"a": [(1, 1), (2, 2)], "b": [(1, 1)]})
    table = f"lw.{m.run.namespace}.m"
    m.run.spark.sql(
        f"CALL lw.system.rewrite_data_files(table => '{table}', "
        "options => map('rewrite-all', 'true'))"
    ).collect()
    assert OFFSETS not in snapshots(m)[-1][1]  # a maintenance commit without lakewide state
    rows = m.step({"a": [(1, 10)], "b": []})
    assert rows == totals([{"a": [(1, 1), (2, 2)], "b": [(1, 1)]}, {"a": [(1, 10)]}])


def test_aggregation_refolds_over_a_replaced_source_or_refuses_it(
    model_run: Callable[..., ModelRun],
) -> None:
    """A replaced source's changes cannot be read and re-reading it would count twice: the
    sums re-fold every source (refresh_mode='auto'), or, kept incremental, refuse."""
    m = model_run(COUNTERS, SCHEMAS)
    m.step({"a": [(1, 1)], "b": [(1, 1)]})
    m.run.spark.sql(
        f"CREATE OR REPLACE TABLE lw.{m.run.seed_schema}.a USING iceberg "
        "AS SELECT 1 AS k, CAST(5 AS BIGINT) AS clicks"
    )
    from lakewide.run.models.executor import run_models

    manifest = m.run.manifest()
    [result] = run_models(manifest, ["m"], m.run.adapter(manifest))
    assert result.plan == "refold" and "can no longer be read" in result.refresh, result
    assert m.run.rows("m") == [(1, 5, 1, 2)]  # the fold of the sources as they are

    model = m.run.root / "models" / "m.sql"
    model.write_text(
        model.read_text().replace(
            "primary_key='k',", "primary_key='k', refresh_mode='incremental',"
        )
    )
    m.run.spark.sql(
        f"CREATE OR REPLACE TABLE lw.{m.run.seed_schema}.a USING iceberg "
        "AS SELECT 1 AS k, CAST(7 AS BIGINT) AS clicks"
    )
    manifest = m.run.manifest()
    [result] = run_models(manifest, ["m"], m.run.adapter(manifest))
    assert result.status == "error"
    assert "no longer descends" in result.message and "--full-refresh" in result.message


PARTIAL = """
{{ config(merge_engine='partial_update', primary_key='k') }}
SELECT k, v FROM {{ source('src', 'p') }}
"""


def test_partial_update_reads_updates_and_rereads_a_replaced_source(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(PARTIAL, {"p": "k INT, v STRING"})
    m.step({"p": [(1, "a"), (2, "b")]})
    m.run.spark.sql(f"UPDATE lw.{m.run.seed_schema}.p SET v = 'z' WHERE k = 2")
    assert m.step({}) == [(1, "a"), (2, "z")]
    assert m.last.ranges[0]["mode"] == "changelog" and m.last.ranges[0]["keys"] == 1
    m.run.spark.sql(
        f"CREATE OR REPLACE TABLE lw.{m.run.seed_schema}.p USING iceberg AS SELECT 3 AS k, 'c' AS v"
    )
    assert m.step({}) == [(1, "a"), (2, "z"), (3, "c")]  # replaced: re-read, harmless here
    assert m.last.ranges[0]["mode"] == "full"


def test_outside_writer_committing_during_a_run_is_retried(
    model_run: Callable[..., ModelRun], monkeypatch: pytest.MonkeyPatch, warehouse: Any
) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    m.step({"a": [(1, 1)], "b": [(1, 1)]})
    spark = m.run.spark
    # a second catalog over the same warehouse: a writer lakewide's cached table does not see
    spark.conf.set("spark.sql.catalog.outside", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.outside.type", "hadoop")
    spark.conf.set("spark.sql.catalog.outside.warehouse", str(warehouse))
    table = f"outside.{m.run.namespace}.m"
    fired: list[str] = []

    def outside_writer(point: str) -> None:
        if point == "before-commit" and not fired:
            fired.append(point)  # another writer updates the same row, then our MERGE commits
            spark.sql(f"UPDATE {table} SET clicks = clicks + 100 WHERE k = 1")

    monkeypatch.setattr(faults, "checkpoint", outside_writer)
    rows = m.step({"a": [(1, 5)], "b": []})
    assert fired
    assert rows == [(1, 106, 1, 3)]
