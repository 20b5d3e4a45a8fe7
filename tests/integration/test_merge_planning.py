"""A run's MERGE is planned without the optimizer rules ``lakewide.spark.merge_planning``
excludes (they cost most of a wide MERGE's planning and change nothing in it), its rows the
same, and the session's own setting is back afterwards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlglot
from sqlglot import exp

from lakewide.spark.merge_planning import EXCLUDED, MERGE_EXCLUDED_RULES
from lakewide.vocabulary.dialect import DIALECT
from tests.integration.conftest import ModelRun

MODEL = (
    "{{ config(merge_engine='partial_update', primary_key='k', sequence_field='seq') }}\n"
    "SELECT k, seq, a, b FROM {{ source('src', 's0') }}"
)
SCHEMA = "k BIGINT, seq BIGINT, a STRING, b STRING"


def rules_run(spark: Any, action: Callable[[], Any]) -> set[str]:
    """The analyzer and optimizer rules Spark ran (in this JVM) during ``action``."""
    executor = spark._jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor
    executor.resetMetrics()
    action()
    return {line.split()[0] for line in executor.dumpTimeSpent().splitlines() if line[:4] == "org."}


def test_the_merge_of_a_run_is_planned_without_the_excluded_rules(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(MODEL, {"s0": SCHEMA})
    m.step({"s0": [(1, 1, "a1", "b1"), (2, 1, "a2", "b2")]})
    spark = m.run.spark
    spark.conf.set(EXCLUDED, "org.apache.spark.sql.catalyst.optimizer.ConstantFolding")
    try:
        m.write("s0", [(1, 2, "a1'", None), (3, 1, "a3", "b3")])
        manifest = m.run.manifest()
        adapter = m.run.adapter(manifest)
        table = f"lw.{m.run.namespace}.scratch"
        spark.sql(f"CREATE TABLE {table} USING iceberg AS SELECT 1L AS k, 'a' AS a")
        merge = sqlglot.parse_one(
            f"MERGE INTO {table} AS t USING (SELECT 1 AS k, 'x' AS a) AS s ON t.k = s.k "
            "WHEN MATCHED THEN UPDATE SET t.a = s.a",
            read=DIALECT,
        )
        assert isinstance(merge, exp.Merge)
        plain = rules_run(spark, lambda: adapter.sql(merge))  # not through a commit
        assert set(MERGE_EXCLUDED_RULES) <= plain
        committed = rules_run(spark, lambda: adapter.commit(merge, {}))
        assert not set(MERGE_EXCLUDED_RULES) & committed
        assert "org.apache.spark.sql.catalyst.optimizer.ConstantFolding" not in committed
        assert spark.table(table).collect() == [(1, "x")]
        # the run's own MERGE: the same rows as ever, the session's setting kept
        assert m.step({}) == [(1, 2, "a1'", "b1"), (2, 1, "a2", "b2"), (3, 1, "a3", "b3")]
        assert spark.conf.get(EXCLUDED) == (
            "org.apache.spark.sql.catalyst.optimizer.ConstantFolding"
        )
    finally:
        spark.conf.unset(EXCLUDED)
