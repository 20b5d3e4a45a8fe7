"""``run --restate`` through the command line on real Spark + Iceberg: a dimension fixed after
the fact rows joined it (lookup joins keep what a row joined when it was merged), the keys
restated from every record (a key range, then a partition), the model's changelog carrying the difference to a downstream
sum; bad predicates refused with exit 2 before anything is written."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.integration.conftest import ModelRun, null_first

pytestmark = [pytest.mark.spark, pytest.mark.slow]

WIDE = """
{{ config(merge_engine='partial_update', primary_key='k', joins={'d': 'lookup'},
          partition_by=['g']) }}
SELECT f.k, d.g, f.amount
FROM {{ source('src', 'fact') }} AS f LEFT JOIN {{ source('src', 'dim') }} AS d ON f.k = d.k
"""
BY_GROUP = """
{{ config(merge_engine='aggregation', primary_key='g', aggregates={'total': 'sum', 'n': 'sum'}) }}
SELECT g, amount AS total, CAST(1 AS BIGINT) AS n FROM {{ ref('wide') }} WHERE g IS NOT NULL
"""
PLAIN = "{{ config(materialized='table') }}\nSELECT k FROM {{ source('src', 'fact') }}\n"
SCHEMAS = {"dim": "k INT, g STRING", "fact": "k INT, amount BIGINT"}


def _groups(wide: list[tuple]) -> list[tuple]:
    """The downstream computed from the wide table's rows."""
    out: dict[str, list] = {}
    for _, g, amount in wide:
        if g is not None:
            row = out.setdefault(g, [g, 0, 0])
            row[1] += amount or 0
            row[2] += 1
    return sorted((tuple(r) for r in out.values()), key=null_first)


def _snapshot(m: ModelRun, table: str) -> int:
    """The table's current snapshot id."""
    [row] = m.run.spark.sql(
        f"SELECT snapshot_id FROM lw.{m.run.namespace}.{table}.snapshots "
        "ORDER BY committed_at DESC LIMIT 1"
    ).collect()
    return int(row[0])


def test_restated_keys_reach_a_downstream_sum_through_the_changelog(
    model_run: Callable[..., ModelRun], cli: Callable[..., tuple[int, str]]
) -> None:
    m = model_run(BY_GROUP, SCHEMAS)
    models = m.run.root / "models"
    (models / "wide.sql").write_text(WIDE)
    (models / "plain.sql").write_text(PLAIN)
    m.write("dim", [(k, f"g{k % 10}") for k in range(100)])
    m.write("fact", [(k, k) for k in range(100)])
    code, out = cli(m.run.root, "run")
    assert code == 0, out
    before = m.run.rows("wide")
    # the dimension is fixed after the facts joined it: runs keep what the rows joined
    m.run.spark.sql(f"UPDATE lw.{m.run.seed_schema}.dim SET g = 'fixed' WHERE k < 20")
    m.write("fact", [(100, 100)])  # and a new fact row: the restate's run merges it first
    head = _snapshot(m, "wide")

    refused = [
        ("run", "-s", "wide", "--restate", "amount > 1", "neither in the primary key"),
        ("run", "-s", "wide", "--restate", "k >", "does not parse"),
        ("run", "-s", "wide", "--restate", "k IN (SELECT 1)", "a subquery is not accepted"),
        ("build", "-s", "wide", "--restate", "rand() < 1", "not deterministic"),
        ("run", "-s", "plain", "--restate", "k = 1", "applies to key tables"),
        ("run", "--restate", "k = 1", "needs --select"),
        ("build", "-s", "wide", "--full-refresh", "--restate", "k = 1", "choose one"),
    ]
    for *args, said in refused:
        code, out = cli(m.run.root, *args)
        assert code == 2, (args, out)
        assert "--restate" in out and said in out, (args, out)
    assert _snapshot(m, "wide") == head  # nothing written

    code, out = cli(m.run.root, "run", "-s", "wide", "--restate", "k BETWEEN 10 AND 29")
    assert code == 0, out
    assert "restated 20 keys (0 deleted)" in out
    results = json.loads((m.run.root / "target" / "run_results.json").read_text())
    [wide] = results["results"]
    assert (wide["plan"], wide["restated"], wide["removed"]) == ("restate", 20, 0)
    assert results["args"]["restate"] == "k BETWEEN 10 AND 29"
    rows = m.run.rows("wide")
    expected = {k: g for k, g, _ in before} | {100: None}
    expected |= {k: "fixed" for k in range(10, 20)}  # restated; 0-9 keep what they joined
    assert {k: g for k, g, _ in rows} == expected
    assert {r[0]: r[2] for r in rows} == {k: k for k in range(101)}

    # a partition column: the keys stored in g1 (1, 21, ..., 91; 11 was restated already) and
    # those the fold puts there (21, ..., 91): key 1 leaves the partition, restated too
    code, out = cli(m.run.root, "run", "-s", "wide", "--restate", "g = 'g1'")
    assert code == 0, out
    assert "restated 9 keys (0 deleted)" in out
    rows = m.run.rows("wide")
    assert {k: g for k, g, _ in rows} == expected | {1: "fixed"}

    # each restate commit appended its changes to the model's changelog, which m then reads
    changed = m.run.spark.sql(
        f"SELECT k FROM lw.{m.run.namespace}.wide__changelog "
        "WHERE _change_type = 'UPDATE_AFTER' AND g = 'fixed'"
    ).collect()
    assert sorted(r[0] for r in changed) == [1, *range(10, 20)]
    code, out = cli(m.run.root, "run", "-s", "m")
    assert code == 0, out
    [result] = json.loads((m.run.root / "target" / "run_results.json").read_text())["results"]
    [read] = result["ranges"]
    assert "own changelog" in read["reason"], read
    downstream = m.run.rows("m")
    assert downstream == _groups(rows)
    m.run.run("m", full_refresh=True)
    assert m.run.rows("m") == downstream
