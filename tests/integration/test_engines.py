"""Merge engines on real Spark + Iceberg: deterministic cases from the contract."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from lakewide.state.offsets import MARK, OFFSETS
from tests.integration.conftest import ModelRun

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SG_MODEL = """
{{ config(merge_engine='partial_update', primary_key='k',
          sequence_groups={'g_1': ['a', 'b'], 'g_2': ['c', 'd']}) }}
SELECT k, a, b, g_1, c, d, g_2 FROM {{ source('src', 'sg') }}
"""
SG_SCHEMA = {"sg": "k INT, a INT, b INT, g_1 INT, c INT, d INT, g_2 INT"}


def test_sequence_groups_seed_article(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(SG_MODEL, SG_SCHEMA)
    rows = m.step({"sg": [(1, 1, 1, 1, 1, 1, 1), (1, 2, 2, 2, 2, 2, None)]})
    assert rows == [(1, 2, 2, 2, 1, 1, 1)]
    rows = m.step({"sg": [(1, 3, 3, 1, 3, 3, 3)]})
    assert rows == [(1, 2, 2, 2, 3, 3, 3)]
    rows = m.step(
        {"sg": [(1, 3, 3, 3, 2, 2, None), (1, 4, 4, 4, 2, 2, None), (1, 5, 5, 3, 5, None, 4)]}
    )
    assert rows == [(1, 4, 4, 4, 5, None, 4)]


def test_sequence_groups_bootstrap_of_all_rows_is_the_same(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(SG_MODEL, SG_SCHEMA)
    rows = m.step(
        {
            "sg": [
                (1, 1, 1, 1, 1, 1, 1),
                (1, 2, 2, 2, 2, 2, None),
                (1, 3, 3, 1, 3, 3, 3),
                (1, 3, 3, 3, 2, 2, None),
                (1, 4, 4, 4, 2, 2, None),
                (1, 5, 5, 3, 5, None, 4),
            ]
        }
    )
    assert rows == [(1, 4, 4, 4, 5, None, 4)]


AGG_MODEL = """
{{ config(merge_engine='aggregation', primary_key='k', sequence_field='ts',
          row_kind_column='op',
          aggregates={'total': 'sum', 'biggest': {'function': 'max', 'ignore_retract': true},
                      'last_page': 'last_non_null_value', 'last_any': 'last_value',
                      'pages': {'function': 'listagg', 'delimiter': '|', 'ignore_retract': true},
                      'tags': 'collect', 'flags': 'merge_map', 'factor': 'product',
                      'first_page': {'function': 'first_non_null_value', 'ignore_retract': true},
                      'any_mobile': {'function': 'bool_or', 'ignore_retract': true}}) }}
SELECT k, total, biggest, last_page, last_any, pages, tags, flags, factor, first_page,
       any_mobile, ts, op
FROM {{ source('src', 'ev') }}
"""
AGG_SCHEMA = {
    "ev": "k INT, total BIGINT, biggest INT, last_page STRING, last_any STRING, "
    "pages STRING, tags ARRAY<STRING>, flags MAP<STRING, INT>, factor DOUBLE, "
    "first_page STRING, any_mobile BOOLEAN, ts INT, op STRING"
}


def _ev(
    k: int,
    total: int | None,
    page: str | None,
    ts: int,
    op: str = "+I",
    tags: list[str] | None = None,
    flags: dict | None = None,
    factor: float | None = None,
    mobile: bool | None = None,
) -> tuple:
    return (k, total, total, page, page, page, tags, flags, factor, page, mobile, ts, op)


def test_aggregation_functions_and_retraction(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(AGG_MODEL, AGG_SCHEMA)
    first = [
        _ev(1, 5, "a", 1, tags=["x"], flags={"p": 1}, factor=2.0, mobile=False),
        _ev(1, 7, None, 2, tags=["y"], flags={"q": 2}, factor=3.0),
        _ev(2, 1, "z", 1, mobile=True),
    ]
    rows = m.step({"ev": first})
    assert rows == [
        (1, 12, 7, "a", None, "a", ["x", "y"], {"p": 1, "q": 2}, 6.0, "a", False, 2),
        (2, 1, 1, "z", "z", "z", None, None, None, "z", True, 1),
    ]
    second = [
        _ev(1, 7, None, 3, op="-U", tags=["y"], flags={"q": 2}, factor=3.0),
        _ev(1, 4, "b", 4, tags=["w"], flags={"p": 9}, factor=0.5, mobile=True),
    ]
    rows = m.step({"ev": second})
    assert rows[0] == (1, 9, 7, "b", "b", "a|b", ["x", "w"], {"p": 9}, 1.0, "a", True, 4)
    assert rows[1] == (2, 1, 1, "z", "z", "z", None, None, None, "z", True, 1)


def test_aggregation_bootstrap_matches_incremental(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(AGG_MODEL, AGG_SCHEMA)
    everything = [
        _ev(1, 5, "a", 1, tags=["x"], flags={"p": 1}, factor=2.0, mobile=False),
        _ev(1, 7, None, 2, tags=["y"], flags={"q": 2}, factor=3.0),
        _ev(2, 1, "z", 1, mobile=True),
        _ev(1, 7, None, 3, op="-U", tags=["y"], flags={"q": 2}, factor=3.0),
        _ev(1, 4, "b", 4, tags=["w"], flags={"p": 9}, factor=0.5, mobile=True),
    ]
    rows = m.step({"ev": everything})
    assert rows[0] == (1, 9, 7, "b", "b", "a|b", ["x", "w"], {"p": 9}, 1.0, "a", True, 4)


DEDUP_MODEL = """
{{ config(merge_engine='deduplicate', primary_key='k', sequence_field='ts',
          row_kind_column='op') }}
SELECT k, v, ts, op FROM {{ source('src', 'd') }}
"""


def test_deduplicate_last_row_wins_and_delete_deletes(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(DEDUP_MODEL, {"d": "k INT, v STRING, ts INT, op STRING"})
    rows = m.step(
        {"d": [(1, "a", 2, "+I"), (1, None, 3, "+U"), (2, "b", 1, "+I"), (3, "c", 1, "+I")]}
    )
    assert rows == [(1, None, 3), (2, "b", 1), (3, "c", 1)]
    rows = m.step({"d": [(1, "late", 1, "+I"), (2, None, 5, "-D"), (4, None, 1, "-D")]})
    assert rows == [(1, None, 3), (3, "c", 1)]


FIRST_MODEL = """
{{ config(merge_engine='first_row', primary_key='k', row_kind_column='op',
          ignore_delete=true) }}
SELECT k, v, op FROM {{ source('src', 'f') }}
"""


def test_first_row_keeps_the_first(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(FIRST_MODEL, {"f": "k INT, v STRING, op STRING"})
    assert m.step({"f": [(1, "a", "+I"), (1, "b", "+I"), (2, "x", "-D")]}) == [(1, "a")]
    assert m.step({"f": [(1, "c", "+I"), (2, "y", "+I")]}) == [(1, "a"), (2, "y")]


REMOVE_MODEL = """
{{ config(merge_engine='partial_update', primary_key='k', sequence_field='ts',
          row_kind_column='op', remove_record_on_delete=true) }}
SELECT k, a, CAST(NULL AS STRING) AS b, ts, op FROM {{ source('src', 'x') }}
UNION ALL
SELECT k, CAST(NULL AS STRING), b, ts, CAST(NULL AS STRING) FROM {{ source('src', 'y') }}
"""


def test_remove_record_on_delete(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(
        REMOVE_MODEL, {"x": "k INT, a STRING, ts INT, op STRING", "y": "k INT, b STRING, ts INT"}
    )
    rows = m.step(
        {
            "x": [(1, "a1", 1, "+I"), (2, "a2", 1, "+I"), (3, "a3", 1, "+I")],
            "y": [(1, "b1", 2), (2, "b2", 2)],
        }
    )
    assert rows == [(1, "a1", "b1", 2), (2, "a2", "b2", 2), (3, "a3", None, 1)]
    # 1: deleted; 2: deleted then re-inserted (b from before the delete is gone); 3: -U ignored
    rows = m.step(
        {
            "x": [(1, None, 5, "-D"), (2, None, 5, "-D"), (2, "new", 6, "+I"), (3, None, 5, "-U")],
            "y": [],
        }
    )
    assert rows == [(2, "new", None, 6), (3, "a3", None, 1)]


FILTERED_LOG_MODEL = """
{{ config(merge_engine='partial_update', primary_key='k', sequence_field='ts',
          row_kind_column='op', remove_record_on_delete=true) }}
SELECT k, status AS paid_status, ts, op FROM {{ source('src', 'o') }} WHERE status = 'paid'
"""


def test_a_change_log_row_updated_out_of_the_filter_keeps_its_last_values(
    model_run: Callable[..., ModelRun],
) -> None:
    """docs/how-to/cdc-sources.md: the filter keeps a change log's ``-U`` and drops its
    ``+U``; partial_update ignores a ``-U``, so the row stays (a mirror's row would be a
    delete: tests/integration/test_upstream_write_modes.py, model ``even``). The same
    records in one run give the same rows."""
    schema = {"o": "k INT, status STRING, ts INT, op STRING"}
    first = [(1, "paid", 1, "+I"), (2, "paid", 1, "+I"), (3, "open", 1, "+I")]
    then = [(1, "paid", 2, "-U"), (1, "refunded", 2, "+U"), (2, "paid", 2, "-D")]
    stepped = model_run(FILTERED_LOG_MODEL, schema)
    stepped.step({"o": first})
    rows = stepped.step({"o": then})
    assert [r[:2] for r in rows] == [(1, "paid")]
    assert stepped.last.plan != "bootstrap"
    assert model_run(FILTERED_LOG_MODEL, schema).step({"o": first + then}) == rows


def test_null_primary_keys_are_rejected_and_counted(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(
        REMOVE_MODEL.replace(
            "row_kind_column='op', remove_record_on_delete=true",
            "row_kind_column='op', ignore_delete=true",
        ),
        {"x": "k INT, a STRING, ts INT, op STRING", "y": "k INT, b STRING, ts INT"},
    )
    rows = m.step(
        {
            "x": [(1, "a", 1, "+I"), (None, "lost", 1, "+I")],
            "y": [(None, "lost", 1), (None, "lost", 2)],
        }
    )
    assert rows == [(1, "a", None, 1)]
    assert m.last.plan == "bootstrap" and m.last.rejected == 3
    assert "rejected 3 row(s)" in m.last.message
    rows = m.step({"x": [(None, "again", 2, "+I")], "y": [(1, "b", 2)]})
    assert rows == [(1, "a", "b", 2)]
    assert m.last.plan == "incremental" and m.last.rejected == 1


def test_a_run_whose_changes_give_no_row_records_its_offsets(
    model_run: Callable[..., ModelRun],
) -> None:
    """New source rows that all have a NULL key merge nothing; the run still records how far
    it read (a snapshot without data), so the next run has nothing to do and the model is
    not left behind its source."""
    m = model_run(
        "{{ config(merge_engine='partial_update', primary_key='k', sequence_field='ts') }}\n"
        "SELECT k, a, ts FROM {{ source('src', 'x') }}\n",
        {"x": "k INT, a STRING, ts INT"},
    )
    assert m.step({"x": [(1, "a", 1)]}) == [(1, "a", 1)]
    run, spark = m.run, m.run.spark

    def snapshots(table: str) -> list[Any]:
        return spark.sql(
            f"SELECT snapshot_id, operation, summary FROM {table}.snapshots ORDER BY committed_at"
        ).collect()

    target, source = f"lw.{run.namespace}.m", f"lw.{run.seed_schema}.x"
    before = snapshots(target)
    assert m.step({"x": [(None, "lost", 2)]}) == [(1, "a", 1)]
    assert m.last.plan == "incremental" and m.last.rejected == 1
    after = snapshots(target)
    assert len(after) == len(before) + 1
    mark = after[-1]
    assert mark.operation == "append" and mark.summary[MARK] == "offsets"
    assert mark.summary.get("added-records") is None and m.last.commits == [mark.snapshot_id]
    assert json.loads(mark.summary[OFFSETS]) == {"0:" + source: snapshots(source)[-1].snapshot_id}

    assert m.step({}) == [(1, "a", 1)]  # caught up: read nothing, commit nothing
    assert [r["mode"] for r in m.last.ranges] == ["none"] and m.last.commits == []
    assert len(snapshots(target)) == len(after)
