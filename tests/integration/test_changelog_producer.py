"""A model's own changelog (``changelog_producer``) feeding a downstream ``ref()`` model.

The chain ``wide (merge-on-read) -> by_group (aggregation, sum)`` must stay incremental and
exact across updates and deletes of the wide table: Iceberg's changelog scan refuses
merge-on-read tables, so the downstream reads ``wide__changelog``. References: the downstream
computed in plain Python from the wide table's rows, and ``--full-refresh`` of the downstream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lakewide.vocabulary import faults
from tests.integration.conftest import ModelRun, null_first

pytestmark = [pytest.mark.spark, pytest.mark.slow]

WIDE = """
{{{{ config(merge_engine='partial_update', primary_key='k', remove_record_on_delete=true,
            write_mode='merge-on-read'{extra}) }}}}
SELECT k, g, CAST(NULL AS BIGINT) AS amount FROM {{{{ source('src', 'dim') }}}}
UNION ALL
SELECT k, CAST(NULL AS STRING), amount FROM {{{{ source('src', 'fact') }}}}
"""
BY_GROUP = """
{{ config(merge_engine='aggregation', primary_key='g', aggregates={'total': 'sum', 'n': 'sum'}) }}
SELECT g, amount AS total, CAST(1 AS BIGINT) AS n FROM {{ ref('wide') }} WHERE g IS NOT NULL
"""
SCHEMAS = {"dim": "k INT, g STRING", "fact": "k INT, amount BIGINT"}


def _groups(wide: list[tuple]) -> list[tuple]:
    """The downstream computed directly from the wide table's rows (the oracle)."""
    out: dict[str, list] = {}
    for _, g, amount in wide:
        if g is not None:
            row = out.setdefault(g, [g, None, 0])
            row[1] = amount if row[1] is None else row[1] + (amount or 0)
            row[2] += 1
    return sorted((tuple(r) for r in out.values()), key=null_first)


def _chain(model_run: Callable[..., ModelRun], extra: str = "") -> ModelRun:
    m = model_run(BY_GROUP, SCHEMAS)
    (m.run.root / "models" / "wide.sql").write_text(WIDE.format(extra=extra))
    groups = [f"g{i}" for i in range(10)]
    m.step({"dim": [(k, groups[k % 10]) for k in range(100)], "fact": [(k, k) for k in range(100)]})
    return m


def _wide_range(m: ModelRun) -> dict[str, Any]:
    [found] = [r for r in m.last.ranges if r["relation"].endswith(".wide")]
    return found


def _check(m: ModelRun) -> None:
    wide = m.run.rows("wide")
    rows = m.run.rows("m")
    assert rows == _groups(wide)
    m.run.run("m", full_refresh=True)
    assert m.run.rows("m") == rows


def test_merge_on_read_wide_table_feeds_a_sum_incrementally(
    model_run: Callable[..., ModelRun],
) -> None:
    m = _chain(model_run)
    src = f"lw.{m.run.seed_schema}"
    steps = [
        ({"fact": [(1, 1000)], "dim": [(200, "g1")]}, 1),  # k1 changes; k200 new
        ({"dim": [(2, "g1"), (300, "new")], "fact": [(300, 7), (200, 5)]}, 3),
    ]
    for batch, groups_touched in steps:
        rows = m.step(batch)
        assert m.last.plan == "incremental"
        assert _wide_range(m)["mode"] == "changelog"
        assert "own changelog" in _wide_range(m)["reason"]
        assert _wide_range(m)["keys"] == groups_touched
        assert rows == _groups(m.run.rows("wide"))
    m.run.spark.sql(f"DELETE FROM {src}.dim WHERE k IN (3, 13)")  # removes wide rows 3 and 13
    m.step({"fact": [(4, 40)]})
    assert _wide_range(m)["mode"] == "changelog"
    assert 3 not in {r[0] for r in m.run.rows("wide")}
    _check(m)
    files = m.run.spark.sql(f"SELECT content FROM lw.{m.run.namespace}.wide.files").collect()
    assert any(f.content == 1 for f in files)  # the wide table holds delete files


def test_changelog_rows_are_before_and_after_images(model_run: Callable[..., ModelRun]) -> None:
    m = _chain(model_run)
    m.step({"fact": [(1, 11), (500, 5)], "dim": [(2, "g2")]})  # k2 unchanged: no change row
    changes = m.run.spark.sql(
        f"SELECT k, g, amount, _change_type FROM lw.{m.run.namespace}.wide__changelog"
    ).collect()
    assert sorted(tuple(r) for r in changes) == [
        (1, "g1", 1, "UPDATE_BEFORE"),
        (1, "g1", 11, "UPDATE_AFTER"),
        (500, None, 5, "INSERT"),
    ]


def test_a_run_stopped_before_the_changelog_is_completed_by_the_next(
    model_run: Callable[..., ModelRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    m = _chain(model_run)

    def stop(point: str) -> None:
        if point == "before-changelog":
            raise KeyboardInterrupt  # the process stops between the MERGE and its changelog

    monkeypatch.setattr(faults, "checkpoint", stop)
    m.write("fact", [(5, 500), (6, 600)])
    with pytest.raises(KeyboardInterrupt):
        m.run.run("wide")
    monkeypatch.undo()
    m.step({"fact": [(7, 700)]})
    assert _wide_range(m)["mode"] == "changelog"
    _check(m)
    ofs = m.run.spark.sql(
        f"SELECT summary['lakewide.changelog-of'] AS c FROM "
        f"lw.{m.run.namespace}.wide__changelog.snapshots"
    ).collect()
    recorded = [r.c for r in ofs if r.c is not None]
    assert len(recorded) == len(set(recorded)) == 2  # each MERGE's changes exactly once


def test_without_a_changelog_a_merge_on_read_upstream_feeds_a_sum_by_row_position(
    model_run: Callable[..., ModelRun],
) -> None:
    """No ``<model>__changelog``: the sum reads the wide table's changes by row position (its
    delete files mark the old images), and subtracts the old amounts as it would from one."""
    m = _chain(model_run, ", changelog_producer='none'")
    m.step({"fact": [(1, 5), (300, 7)], "dim": [(300, "new")]})
    assert _wide_range(m)["mode"] == "positions"
    assert m.run.rows("m") == _groups(m.run.rows("wide"))
    _check(m)
    assert not m.run.spark.catalog.tableExists(f"lw.{m.run.namespace}.wide__changelog")


def test_a_model_keeping_a_changelog_takes_a_new_and_a_removed_column_in_place(
    model_run: Callable[..., ModelRun],
) -> None:
    """The wide model gains a column (its changelog table gains it in the same run, the changes
    of the re-read source appended by name), then loses it (the wide table keeps it under
    append_new_columns, the changelog stops recording it): no rebuild, the sum downstream
    follows every change, and equals its own --full-refresh."""
    m = _chain(model_run)
    plain = WIDE.format(extra="")
    noted = plain.replace("AS amount FROM", "AS amount, CAST(NULL AS STRING) AS note FROM")
    noted = noted.replace("amount FROM {{ source", "amount, 'n' FROM {{ source")
    wide, changelog = (f"lw.{m.run.namespace}.{t}" for t in ("wide", "wide__changelog"))
    for sql, batch in ((noted, {"fact": [(1, 1000)]}), (plain, {"fact": [(2, 7)]})):
        (m.run.root / "models" / "wide.sql").write_text(sql)
        results = m.run.run()
        assert {r.plan for r in results.values()} == {"incremental"}, results
        m.step(batch)
        assert m.run.rows("m") == _groups([w[:3] for w in m.run.rows("wide")])
        if sql == noted:  # the re-read fact source: its 100 keys, then key 1 again
            found = m.run.spark.sql(
                f"SELECT count(*) FROM {changelog} WHERE note = 'n' AND _change_type = "
                "'UPDATE_AFTER'"
            ).first()[0]
            assert found == 101, found
    assert "note" in m.run.spark.table(wide).columns  # kept
    assert "note" not in m.run.spark.table(changelog).columns
    rows = m.run.rows("m")
    m.run.run("m", full_refresh=True)
    assert m.run.rows("m") == rows
