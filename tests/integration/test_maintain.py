"""``lakewide maintain`` on real Spark + Iceberg: a downstream model that reads a maintained
table incrementally stays exact; retention drops whole partitions; TTL deletes reach the
downstream as DELETE change rows.

References: the downstream computed in plain Python from its upstream's rows, and a
``--full-refresh`` of the downstream.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lakewide.cli import cli
from lakewide.commands.services.spark_start import shared_session
from lakewide.project.nodes import Relation
from lakewide.run.maintenance.maintain import MAINTENANCE, TableResult, maintain_models
from lakewide.state.metadata import read_table_meta
from lakewide.state.offsets import last_commit, last_offsets
from tests.integration.conftest import ModelRun, null_first
from tests.integration.test_cli_runs import lakewide, no_jvm_env
from tests.support.equality_upsert import java_table

pytestmark = [pytest.mark.spark, pytest.mark.slow]

WIDE = """
{{{{ config(merge_engine='partial_update', primary_key='k', remove_record_on_delete=true,
            maintenance={maintenance}) }}}}
SELECT k, g, CAST(NULL AS BIGINT) AS amount FROM {{{{ source('src', 'dim') }}}}
UNION ALL
SELECT k, CAST(NULL AS STRING), amount FROM {{{{ source('src', 'fact') }}}}
"""
BY_GROUP = """
{{ config(merge_engine='aggregation', primary_key='g', aggregates={'total': 'sum', 'n': 'sum'}) }}
SELECT g, amount AS total, CAST(1 AS BIGINT) AS n FROM {{ ref('wide') }} WHERE g IS NOT NULL
"""
SCHEMAS = {"dim": "k INT, g STRING", "fact": "k INT, amount BIGINT"}
# every snapshot may expire unless something needs it; every small file is compacted
AGGRESSIVE = "{'expire_after': '0 seconds', 'rewrite_options': {'rewrite-all': 'true'}}"


def _groups(wide: list[tuple]) -> list[tuple]:
    """The downstream computed directly from the wide table's rows (the oracle)."""
    out: dict[str, list] = {}
    for _, g, amount in wide:
        if g is not None:
            row = out.setdefault(g, [g, None, 0])
            row[1] = amount if row[1] is None else row[1] + (amount or 0)
            row[2] += 1
    return sorted((tuple(r) for r in out.values()), key=null_first)


def _maintain(m: ModelRun, *names: str) -> list[TableResult]:
    manifest = m.run.manifest()
    results = maintain_models(manifest, list(names), m.run.adapter(manifest))
    assert all(r.status == "success" for r in results), [r.message for r in results]
    return results


def _range(m: ModelRun, table: str) -> dict[str, Any]:
    [found] = [r for r in m.last.ranges if r["relation"].endswith(f".{table}")]
    return found


def _meta(m: ModelRun, table: str, warehouse: Path) -> Any:
    return read_table_meta(warehouse, Relation("lw", m.run.namespace, table))


def _check_downstream(m: ModelRun) -> None:
    rows = m.run.rows("m")
    assert rows == _groups(m.run.rows("wide"))
    m.run.run("m", full_refresh=True)
    assert m.run.rows("m") == rows


def test_maintenance_between_runs_keeps_the_downstream_chain_exact(
    model_run: Callable[..., ModelRun], warehouse: Path
) -> None:
    m = model_run(BY_GROUP, SCHEMAS)
    (m.run.root / "models" / "wide.sql").write_text(WIDE.format(maintenance=AGGRESSIVE))
    groups = [f"g{i}" for i in range(10)]
    m.step({"dim": [(k, groups[k % 10]) for k in range(60)], "fact": [(k, k) for k in range(60)]})
    for batch in ({"fact": [(1, 100), (70, 7)]}, {"dim": [(2, "g5"), (70, "g7")]}):
        m.step(batch)  # several MERGE commits: delete files and small files to compact
    before = _meta(m, "wide", warehouse)
    consumed = {v for k, v in (last_offsets(_meta(m, "m", warehouse)) or {}).items() if "wide" in k}
    data_dir = warehouse / m.run.namespace / "wide" / "data"
    old, fresh = data_dir / "orphan-old.parquet", data_dir / "orphan-fresh.parquet"
    for orphan in (old, fresh):
        orphan.write_bytes(b"not referenced by any snapshot")
    four_days_ago = time.time() - 4 * 86400
    os.utime(old, (four_days_ago, four_days_ago))
    # per-run tags with a ref age: the first snapshot's tag expires, the other's lives on
    first = min(before.snapshots.values(), key=lambda s: s.timestamp_ms)
    second = sorted(before.snapshots.values(), key=lambda s: s.timestamp_ms)[1]
    # a ref age of one second (SQL's RETAIN counts whole minutes: a minute's wait), through
    # Iceberg's table API; a tag's age is its snapshot's
    table = java_table(m.run.spark, f"lw.{m.run.namespace}.wide")
    table.manageSnapshots().createTag("lw-run-old", first.id).setMaxRefAgeMs(
        "lw-run-old", 1000
    ).commit()
    m.run.sql(
        f"ALTER TABLE {{ns}}.wide CREATE TAG `lw-run-kept` AS OF VERSION {second.id} RETAIN 30 DAYS"
    )
    time.sleep(max(0.0, first.timestamp_ms / 1000 + 2 - time.time()))  # past the 1 second

    [wide_result] = _maintain(m, "wide")

    after = _meta(m, "wide", warehouse)
    done = {s.kind: s for s in wide_result.steps}
    assert done["rewrite_data_files"].counts["rewritten_data_files_count"] > 0
    assert after.snapshots[after.current].operation == "replace"  # the compaction's commit
    # expire_after 0 seconds: every snapshot not needed went, the needed ones stayed
    assert set(before.snapshots) - set(after.snapshots)
    assert consumed and consumed <= set(after.snapshots)
    assert last_commit(after) == last_commit(before)
    assert set(wide_result.protected) <= set(after.snapshots)
    assert not old.exists() and fresh.exists()  # only the orphan older than 3 days went
    refs = {
        r.name
        for r in m.run.spark.sql(f"SELECT name FROM lw.{m.run.namespace}.wide.refs").collect()
    }
    assert refs == {"main", "lw-run-kept"}  # the expired tag was dropped by expire_snapshots
    assert second.id in after.snapshots and first.id not in after.snapshots

    # the run after maintenance: more data, updates and a delete, read incrementally
    m.run.sql("DELETE FROM {ods}.dim WHERE k = 3")
    m.step({"fact": [(4, 40), (80, 8)], "dim": [(80, "g1"), (5, "g9")]})
    assert m.last.plan == "incremental"
    assert _range(m, "wide")["mode"] == "changelog"
    assert "own changelog" in _range(m, "wide")["reason"]
    _check_downstream(m)

    # maintenance of the downstream too, then one more run of the chain
    _maintain(m, "wide", "m")
    m.step({"fact": [(6, 60)]})
    assert _range(m, "wide")["mode"] == "changelog"
    _check_downstream(m)


TTL_UP = """
{{ config(merge_engine='deduplicate', primary_key='k', partition_by=['days(updated_at)'],
          retention={'column': 'updated_at', 'keep': '30 days'},
          ttl={'column': 'seen_at', 'keep': '10 days'}) }}
SELECT k, g, v, updated_at, seen_at FROM {{ source('src', 'events') }}
"""
TTL_DOWN = """
{{ config(merge_engine='aggregation', primary_key='g', aggregates={'total': 'sum', 'n': 'sum'}) }}
SELECT g, v AS total, CAST(1 AS BIGINT) AS n FROM {{ ref('up') }}
"""


def test_retention_drops_partitions_and_ttl_deletes_reach_the_downstream(
    model_run: Callable[..., ModelRun], warehouse: Path
) -> None:
    m = model_run(
        TTL_DOWN, {"events": "k INT, g STRING, v BIGINT, updated_at TIMESTAMP, seen_at TIMESTAMP"}
    )
    (m.run.root / "models" / "up.sql").write_text(TTL_UP)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    ages = [0, 2, 12, 29, 31, 32, 45, 60]  # days
    m.step(
        {
            "events": [
                (
                    k,
                    f"g{k % 3}",
                    k * 10,
                    now - timedelta(days=ages[k % 8], hours=1),
                    now - timedelta(days=k % 20, hours=12),
                )
                for k in range(40)
            ]
        }
    )
    m.step({"events": [(100, "g0", 5, now, now), (1, "g1", 11, now - timedelta(days=1), now)]})
    before = m.run.rows("up")

    [result] = _maintain(m, "up")

    done = {s.kind: s for s in result.steps}
    retention, ttl = done["retention"], done["ttl"]
    meta = _meta(m, "up", warehouse)
    dropped = meta.snapshots[retention.snapshot]
    assert dropped.operation == "delete"
    assert dropped.summary[MAINTENANCE] == "retention"
    assert int(dropped.summary["deleted-data-files"]) > 0
    assert "added-data-files" not in dropped.summary  # whole files dropped, none rewritten
    assert "added-delete-files" not in dropped.summary
    # oracle: the partition boundary is the UTC day of now - 30 days; TTL: seen_at >= now - 10d
    boundary = (now - timedelta(days=30)).replace(hour=0, minute=0, second=0, microsecond=0)
    expected = [r for r in before if r[3] >= boundary and r[4] >= now - timedelta(days=10)]
    assert m.run.rows("up") == expected
    assert ttl.snapshot is not None
    assert meta.snapshots[ttl.snapshot].summary[MAINTENANCE] == "ttl"

    m.step({"events": [(200, "g2", 2, now, now)]})
    assert _range(m, "up")["mode"] == "changelog"  # the deletes came as DELETE change rows
    rows = m.run.rows("m")
    oracle: dict[str, list[int]] = {}
    for _, g, v, _, _ in m.run.rows("up"):
        oracle.setdefault(g, [0, 0])
        oracle[g][0] += v
        oracle[g][1] += 1
    assert [r for r in rows if r[2]] == sorted((g, t, n) for g, (t, n) in oracle.items())
    m.run.run("m", full_refresh=True)
    assert [r for r in m.run.rows("m") if r[2]] == [r for r in rows if r[2]]


def test_cli_maintain_and_dry_run(
    model_run: Callable[..., ModelRun], warehouse: Path, spark: Any, tmp_path: Path
) -> None:
    m = model_run(BY_GROUP, SCHEMAS)
    (m.run.root / "models" / "wide.sql").write_text(WIDE.format(maintenance="{'retain_last': 2}"))
    m.step({"dim": [(1, "g1"), (2, "g2")], "fact": [(1, 10)]})
    m.step({"fact": [(2, 20)]})
    # dry run: a separate process that cannot start a JVM (metadata is read with pyiceberg)
    dry = lakewide(m.run.root, "maintain", "--dry-run", "-s", "wide", env=no_jvm_env(tmp_path))
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "CALL lw.system.expire_snapshots(table => '`" in dry.stdout
    assert "retain_last => 2" in dry.stdout
    assert "consumed by m" in dry.stdout
    assert "nothing changed" in dry.stdout
    before = _meta(m, "wide", warehouse)
    with shared_session(spark):
        done = CliRunner().invoke(cli, ["--project-dir", str(m.run.root), "maintain", "-s", "wide"])
    assert done.exit_code == 0, done.output
    assert "SUCCESS wide" in done.output and "rewrite_manifests" in done.output
    assert "Done. 1 maintained, 0 failed, 0 skipped." in done.output
    assert _meta(m, "wide", warehouse).current != before.current
