"""Property: ``run --restate`` equals a full refresh of the same input, for every engine.

Every example (the generators of ``test_properties``: 1-3 sources, 1-4 keys, 2-3 batches)
runs one model: the first batch bootstraps it; then the keys the predicate matches are damaged
by writes no run reads (rows copied under ``k + 100``, a key no source gives; even keys
deleted; odd keys' values set NULL: only folding the keys again repairs them); the second
batch is appended and ``run --restate "k BETWEEN lo AND hi OR k > 100"`` runs (its incremental
step merges the batch, then the matched keys are folded again from every record). Then:

* the matched keys equal the plain fold of every record written so far (``oracle.bootstrap``,
  which ``test_properties`` holds the bootstrap and ``--full-refresh`` to): damaged keys
  restored, the copies deleted;
* the other keys hold what their runs made of the two batches (each batch merged once: the
  restate records the offsets its incremental step reached), and the restate commit changed
  none of their rows (the table at its parent vs after it);
* exactly-once after it: the third batch, merged by a plain run, lands once on every key.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.integration.test_properties import (
    SETTINGS,
    Case,
    Harness,
    _counter,
    _diff,
    _examples,
    _mixed,
    _normal,
    aggregation_cases,
    deduplicate_cases,
    first_row_cases,
    partial_update_cases,
    row_kind_cases,
    sequence_group_cases,
)
from tests.oracle import engines as oracle

pytestmark = [pytest.mark.spark, pytest.mark.slow]

FAMILIES = {
    "partial_update": partial_update_cases(),
    "sequence_groups": st.one_of(sequence_group_cases(), sequence_group_cases(row_kinds=True)),
    "row_kinds": row_kind_cases(),
    "aggregation": aggregation_cases(),
    "deduplicate": deduplicate_cases(),
    "first_row": first_row_cases(),
}


@pytest.fixture(scope="module")
def harness(spark: Any, warehouse: Path) -> Iterator[Harness]:
    yield Harness(spark, warehouse, Path(tempfile.mkdtemp(prefix="lw-restate-")))


def _run(harness: Harness, root: Any, restate: str | None = None) -> Any:
    from lakewide.run.models.executor import run_models
    from lakewide.spark.adapter import SparkAdapter
    from tests.support.project_factory import manifest_of

    manifest = manifest_of(root)
    adapter = SparkAdapter(manifest.output, spark=harness.spark)
    [result] = run_models(manifest, ["m"], adapter, restate=restate)
    assert result.status == "success", result.message
    return result


def _at(harness: Harness, case: Case, table: str, snapshot: int) -> dict:
    frame = harness.spark.read.option("snapshot-id", snapshot).table(table)
    return {
        tuple(r[k] for k in case.spec.key): {c: r[c] for c in case.spec.stored}
        for r in (row.asDict() for row in frame.collect())
    }


def _parent(harness: Harness, table: str, snapshot: int) -> int:
    [row] = harness.spark.sql(
        f"SELECT parent_id FROM {table}.snapshots WHERE snapshot_id = {snapshot}"
    ).collect()
    return int(row[0])


def _inside(key: tuple, low: int, high: int) -> bool:
    return low <= key[0] <= high or key[0] > 100


def _split(rows: dict, low: int, high: int) -> tuple[dict, dict]:
    """The rows of the keys the predicate matches, and the others (normalized)."""
    inside = {k: v for k, v in rows.items() if _inside(k, low, high)}
    return _normal(inside), _normal({k: v for k, v in rows.items() if k not in inside})


def _expected(case: Case, batches: list[list]) -> dict:
    """The table after runs of ``batches`` (the first a bootstrap): the plain fold of every
    record, the per-run rule for the columns whose value follows run boundaries by contract."""
    per_run = oracle.incremental(case.spec, batches)
    if not case.coincide:
        return per_run
    return _mixed(
        oracle.bootstrap(case.spec, [r for b in batches for r in b]), per_run, case.per_run
    )


def _damage(harness: Harness, case: Case, table: str, low: int, high: int) -> None:
    """Writes no run reads, on the keys the predicate matches: a copy of each odd key's row
    under ``k + 100`` (a key no source gives), even keys deleted, odd keys' values NULL."""
    spark = harness.spark
    columns = spark.table(table).columns
    copied = ", ".join("k + 100 AS k" if c == "k" else c for c in columns)
    spark.sql(f"INSERT INTO {table} SELECT {copied} FROM {table} WHERE k % 2 = 1")
    spark.sql(f"DELETE FROM {table} WHERE k % 2 = 0 AND k BETWEEN {low} AND {high}")
    values = [c for c in case.spec.stored if c not in case.spec.key]
    if values:
        nulls = ", ".join(f"{c} = NULL" for c in values)
        spark.sql(f"UPDATE {table} SET {nulls} WHERE k % 2 = 1 AND k BETWEEN {low} AND {high}")


def _compare(what: str, actual: dict, expected: dict) -> None:
    if _normal(actual) != _normal(expected):
        raise AssertionError(_diff(what, actual, expected, "full refresh / incremental runs"))


def check_restate(harness: Harness, case: Case, low: int, high: int) -> None:
    root, namespace, src = harness.project(case, f"pp{next(_counter)}_restate")
    table = f"lw.{namespace}.m"
    first, middle = case.batches[0], case.batches[1:2]
    last = case.batches[2] if len(case.batches) > 2 else None
    harness.write_sources(case, src, first, create=True)
    _run(harness, root)
    _damage(harness, case, table, low, high)
    for batch in middle:
        harness.write_sources(case, src, batch, create=False)
    predicate = f"k BETWEEN {low} AND {high} OR k > 100"
    result = _run(harness, root, restate=predicate)
    assert result.plan == "restate"
    written = [r for b in [first, *middle] for r in b]
    # restated keys: the fold of every record; the others: what their runs made of them
    restated, _ = _split(oracle.bootstrap(case.spec, written), low, high)
    _, untouched = _split(_expected(case, [first, *middle]), low, high)
    _compare("after the restate", harness.table(case, namespace), {**restated, **untouched})
    if result.restated or result.removed:  # the restate commit left every other row alone
        restate = result.commits[-1]
        _, before = _split(_at(harness, case, table, _parent(harness, table, restate)), low, high)
        _, after = _split(_at(harness, case, table, restate), low, high)
        assert after == before
    if last is None:
        return
    # exactly-once: a plain run after the restate merges the next batch once, on every key
    harness.write_sources(case, src, last, create=False)
    assert _run(harness, root).plan == "incremental"
    restated, _ = _split(_expected(case, [written, last]), low, high)
    _, untouched = _split(_expected(case, [first, *middle, last]), low, high)
    _compare("a run after the restate", harness.table(case, namespace), {**restated, **untouched})


@pytest.mark.parametrize("family", list(FAMILIES))
def test_restate_equals_a_full_refresh(harness: Harness, family: str) -> None:
    @settings(max_examples=_examples(1), **SETTINGS)
    @given(case=FAMILIES[family], low=st.integers(1, 4), width=st.integers(0, 2))
    def restated(case: Case, low: int, width: int) -> None:
        assume(len(case.batches) > 1)  # a batch for the restate's run to merge first
        check_restate(harness, case, low, low + width)

    restated()
