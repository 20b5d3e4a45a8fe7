"""Incremental reads of upstreams changed by more than appends (real Spark + Iceberg).

Copy-on-write updates/deletes are read through Iceberg's changelog; merge-on-read format-v3
upstreams through row lineage; a lakewide model downstream of another runs incrementally.
References: the oracle fed the change stream the test wrote, and ``--full-refresh`` (the
bootstrap path, which never reads a changelog).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lakewide.run.models.executor import run_models
from tests.integration.conftest import ModelRun, null_first
from tests.oracle import engines as oracle

pytestmark = [pytest.mark.spark, pytest.mark.slow]

COUNTS = """
{{ config(merge_engine='aggregation', primary_key='k', aggregates={'clicks': 'sum', 'n': 'sum'}) }}
SELECT k, clicks, CAST(1 AS BIGINT) AS n FROM {{ source('src', 'a') }}
"""
COUNT_SPEC = oracle.Spec(
    "aggregation",
    ["k"],
    ["k", "clicks", "n", "op"],
    aggregates={"clicks": "sum", "n": "sum"},
    row_kind_column="op",
)


def _error(m: ModelRun) -> str:
    manifest = m.run.manifest()
    [result] = [r for r in run_models(manifest, ["m"], m.run.adapter(manifest)) if r.name == "m"]
    assert result.status == "error"
    return result.message


def _refreshed(m: ModelRun) -> list[tuple]:
    """Model ``m`` rebuilt from scratch by the bootstrap plan (the reference), upstream as is."""
    m.run.run("m", full_refresh=True)
    return m.run.rows("m")


def _range(m: ModelRun, table: str) -> dict[str, Any]:
    [found] = [r for r in m.last.ranges if r["relation"].endswith("." + table)]
    return found


def test_sum_retracts_updated_and_deleted_rows_of_a_copy_on_write_source(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(COUNTS, {"a": "k INT, clicks BIGINT"})
    m.step({"a": [(1, 1), (2, 2), (3, 3)] + [(k, 1) for k in range(10, 30)]})
    src = f"lw.{m.run.seed_schema}.a"
    m.run.spark.sql(f"UPDATE {src} SET clicks = 5 WHERE k = 1")
    m.run.spark.sql(f"DELETE FROM {src} WHERE k = 2")
    rows = m.step({"a": [(4, 4)]})
    assert _range(m, "a")["mode"] == "changelog"
    assert _range(m, "a")["keys"] == 3  # k 1, 2, 4: not the 22 rows a full re-read stages
    stream = [
        [
            (0, {"k": k, "clicks": c, "n": 1, "op": "+I"})
            for k, c in [(1, 1), (2, 2), (3, 3)] + [(k, 1) for k in range(10, 30)]
        ],
        [
            (0, {"k": 1, "clicks": 1, "n": 1, "op": "-U"}),
            (0, {"k": 1, "clicks": 5, "n": 1, "op": "+U"}),
            (0, {"k": 2, "clicks": 2, "n": 1, "op": "-D"}),
            (0, {"k": 4, "clicks": 4, "n": 1, "op": "+I"}),
        ],
    ]
    expected = oracle.as_rows(oracle.incremental(COUNT_SPEC, stream), ["k", "clicks", "n"])
    # the model counts the upstream rows of each key: the key whose only row was deleted
    # upstream is removed, as the rebuild does not have it (the row-kind oracle keeps a zero)
    assert rows == sorted((r for r in expected if r[0] != 2), key=null_first)
    assert rows == _refreshed(m)


def test_deduplicate_follows_updates_and_deletes(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(
        """
{{ config(merge_engine='deduplicate', primary_key='k') }}
SELECT k, v FROM {{ source('src', 'd') }}
""",
        {"d": "k INT, v STRING"},
    )
    m.step({"d": [(1, "a"), (2, "b"), (3, "c")]})
    src = f"lw.{m.run.seed_schema}.d"
    m.run.spark.sql(f"UPDATE {src} SET v = 'B' WHERE k = 2")
    m.run.spark.sql(f"DELETE FROM {src} WHERE k = 3")
    m.run.spark.sql(
        f"MERGE INTO {src} t USING (SELECT 1 AS k, 'A' AS v UNION ALL "
        "SELECT 4, 'd') s ON t.k = s.k WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    rows = m.step({})
    assert _range(m, "d")["mode"] == "changelog"
    assert rows == [(1, "A"), (2, "B"), (4, "d")]
    assert rows == _refreshed(m)


PARTIAL = """
{{{{ config(merge_engine='partial_update', primary_key='k'{extra}) }}}}
SELECT k, v, CAST(NULL AS STRING) AS w FROM {{{{ source('src', 'p') }}}}
UNION ALL
SELECT k, CAST(NULL AS STRING), w FROM {{{{ source('src', 'q') }}}}
"""


def test_partial_update_takes_updates_and_refuses_deletes_without_a_policy(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(PARTIAL.format(extra=""), {"p": "k INT, v STRING", "q": "k INT, w STRING"})
    m.step({"p": [(1, "a"), (2, "b")], "q": [(1, "x")]})
    src = f"lw.{m.run.seed_schema}.p"
    m.run.spark.sql(f"UPDATE {src} SET v = 'z' WHERE k = 1")
    assert m.step({}) == [(1, "z", "x"), (2, "b", None)]
    assert _range(m, "p")["mode"] == "changelog"
    m.run.spark.sql(f"DELETE FROM {src} WHERE k = 2")
    message = _error(m)
    for hint in ("deleted 1 row", "ignore_delete", "remove_record_on_delete", "sequence_groups"):
        assert hint in message
    assert m.run.rows("m") == [(1, "z", "x"), (2, "b", None)]  # nothing half-written


def test_partial_update_remove_record_on_delete_removes_the_row(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(
        PARTIAL.format(extra=", remove_record_on_delete=true"),
        {"p": "k INT, v STRING", "q": "k INT, w STRING"},
    )
    m.step({"p": [(1, "a"), (2, "b")], "q": [(1, "x"), (2, "y")]})
    src = f"lw.{m.run.seed_schema}.p"
    m.run.spark.sql(f"UPDATE {src} SET v = 'z' WHERE k = 1")  # an update is no delete
    m.run.spark.sql(f"DELETE FROM {src} WHERE k = 2")
    assert m.step({}) == [(1, "z", "x")]


def test_sum_over_a_merge_on_read_source_retracts_deleted_and_updated_rows(
    model_run: Callable[..., ModelRun],
) -> None:
    """The old images of rows a delete file hides come with the changes: sum retracts them."""
    m = model_run(COUNTS, {"a": "k INT, clicks BIGINT"})
    m.step({"a": [(1, 1), (2, 2), (3, 3)]})
    src = f"lw.{m.run.seed_schema}.a"
    m.run.spark.sql(
        f"ALTER TABLE {src} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read')"
    )
    m.run.spark.sql(f"DELETE FROM {src} WHERE k = 2")
    m.run.spark.sql(f"UPDATE {src} SET clicks = 30 WHERE k = 3")
    rows = m.step({})
    assert _range(m, "a")["mode"] == "positions"
    assert rows == _refreshed(m)


def test_format_v3_merge_on_read_source_reads_only_changed_rows(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(PARTIAL.format(extra=""), {"p": "k INT, v STRING", "q": "k INT, w STRING"})
    src = f"lw.{m.run.seed_schema}.p"
    m.run.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{m.run.seed_schema}")
    m.run.spark.sql(
        f"CREATE TABLE {src} (k INT, v STRING) USING iceberg TBLPROPERTIES ("
        "'format-version'='3', 'write.update.mode'='merge-on-read', "
        "'write.delete.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
    )
    m.step({"p": [(k, "a") for k in range(20)], "q": [(1, "x")]})
    m.run.spark.sql(f"UPDATE {src} SET v = 'z' WHERE k IN (3, 7)")
    rows = m.step({})
    assert _range(m, "p")["mode"] == "positions" and _range(m, "p")["keys"] == 2
    assert rows == _refreshed(m)


WIDE = """
{{ config(merge_engine='partial_update', primary_key='k') }}
SELECT k, g, CAST(NULL AS BIGINT) AS amount FROM {{ source('src', 'dim') }}
UNION ALL
SELECT k, CAST(NULL AS STRING), amount FROM {{ source('src', 'fact') }}
"""
BY_GROUP = """
{{ config(merge_engine='aggregation', primary_key='g', aggregates={'total': 'sum', 'n': 'sum'}) }}
SELECT g, amount AS total, CAST(1 AS BIGINT) AS n FROM {{ ref('wide') }} WHERE g IS NOT NULL
"""


def _groups(wide: list[tuple]) -> list[tuple]:
    """The downstream computed directly from the upstream model's rows."""
    out: dict[str, list] = {}
    for _, g, amount in wide:
        if g is not None:
            row = out.setdefault(g, [g, None, 0])
            row[1] = amount if row[1] is None else row[1] + (amount or 0)
            row[2] += 1
    return sorted((tuple(r) for r in out.values()), key=null_first)


def test_model_on_model_runs_incrementally(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(BY_GROUP, {"dim": "k INT, g STRING", "fact": "k INT, amount BIGINT"})
    (m.run.root / "models" / "wide.sql").write_text(WIDE)
    groups = [f"g{i}" for i in range(10)]
    m.step({"dim": [(k, groups[k % 10]) for k in range(100)], "fact": [(k, k) for k in range(100)]})
    assert m.last.plan == "bootstrap"
    steps = [
        ({"fact": [(1, 1000)], "dim": [(200, "g1")]}, 1),  # k1 changes; k200 lacks amount
        ({"dim": [(2, "g1"), (300, "new")], "fact": [(300, 7), (200, 5)]}, 3),
    ]
    for batch, groups_touched in steps:
        rows = m.step(batch)
        assert m.last.plan == "incremental"
        assert _range(m, "wide")["mode"] == "changelog"
        assert _range(m, "wide")["keys"] == groups_touched  # of 10-11 groups
        assert rows == _groups(m.run.rows("wide"))
    assert rows == _refreshed(m)
