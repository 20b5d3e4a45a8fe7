"""A writer that loses a race re-plans from fresh metadata: no batch applied twice.

Another writer is played by a whole run of the same model made at the loser's crash point
(``lakewide.vocabulary.faults``), between its planning and its commit, in the test session's
Spark on the hadoop catalog: no lease is involved (``lakewide.state.lease``), so these show the
checks at commit time alone. The reference: the counters computed from every appended row (an oracle).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lakewide.run.models.executor import ATTEMPTS, run_models
from lakewide.state.offsets import CHANGELOG_OF
from lakewide.vocabulary import faults
from tests.integration.conftest import ModelRun
from tests.integration.test_changelog_producer import BY_GROUP, SCHEMAS, WIDE, _groups
from tests.integration.test_incremental import COUNTERS, totals

pytestmark = [pytest.mark.spark, pytest.mark.slow]
COUNTER_SCHEMAS = {"a": "k INT, clicks BIGINT", "b": "k INT, buys BIGINT"}


def other_writer(
    monkeypatch: pytest.MonkeyPatch, point: str, write: Callable[[], None], times: int = 1
) -> list[str]:
    """At the first ``times`` checkpoints ``point`` of the run under test, ``write`` runs to
    its end first (its own checkpoints pass). Returns the points seen."""
    seen: list[str] = []
    busy = [False]

    def checkpoint(name: str) -> None:
        if busy[0]:
            return
        seen.append(name)
        if name == point and seen.count(point) <= times:
            busy[0] = True
            try:
                write()
            finally:
                busy[0] = False

    monkeypatch.setattr(faults, "checkpoint", checkpoint)
    return seen


def commits(m: ModelRun, table: str = "m") -> list[Any]:
    return m.run.spark.sql(
        f"SELECT snapshot_id, summary FROM lw.{m.run.namespace}.{table}.snapshots"
    ).collect()


def test_the_loser_of_a_merge_race_replans_and_applies_nothing_twice(
    model_run: Callable[..., ModelRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    m = model_run(COUNTERS, COUNTER_SCHEMAS)
    batches = [{"a": [(1, 5), (2, 7)], "b": [(1, 10)]}, {"a": [(1, 1), (3, 2)], "b": [(3, 30)]}]
    m.step(batches[0])
    for table, rows in batches[1].items():
        m.write(table, rows)
    seen = other_writer(monkeypatch, "before-commit", lambda: m.run.run("m"))
    result = m.run.run("m")["m"]
    assert m.run.rows("m") == totals(batches)  # each batch once: no sum doubled
    assert seen.count("before-commit") == 1  # the re-plan found nothing left to merge
    assert result.plan == "incremental" and result.commits == []
    assert len(commits(m)) == 2  # the bootstrap and the other writer's MERGE


def test_a_bootstrap_race_leaves_one_table_and_the_loser_goes_incremental(
    model_run: Callable[..., ModelRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    m = model_run(COUNTERS, COUNTER_SCHEMAS)
    batch = {"a": [(1, 5), (2, 7)], "b": [(1, 10)]}
    for table, rows in batch.items():
        m.write(table, rows)
    other_writer(monkeypatch, "before-commit", lambda: m.run.run("m"))
    result = m.run.run("m")["m"]
    assert result.plan == "incremental" and result.commits == []
    assert m.run.rows("m") == totals([batch])
    assert len(commits(m)) == 1


def test_changes_a_competitor_completed_are_not_written_twice(
    model_run: Callable[..., ModelRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    m = model_run(BY_GROUP, SCHEMAS)
    (m.run.root / "models" / "wide.sql").write_text(WIDE.format(extra=""))
    m.step({"dim": [(k, f"g{k % 3}") for k in range(10)], "fact": [(k, k) for k in range(10)]})
    m.write("fact", [(1, 100), (20, 5)])
    # the other writer, started after this run's MERGE, writes that MERGE's missing changes
    other_writer(monkeypatch, "before-changelog", lambda: m.run.run("wide"))
    m.run.run("wide")
    monkeypatch.undo()
    of = [r.summary.get(CHANGELOG_OF) for r in commits(m, "wide__changelog")]
    recorded = [c for c in of if c is not None]
    assert len(recorded) == len(set(recorded)) == 1
    m.run.run("m")
    assert m.run.rows("m") == _groups(m.run.rows("wide"))


def test_a_writer_that_always_loses_stops_with_a_clear_message(
    model_run: Callable[..., ModelRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    m = model_run(COUNTERS, COUNTER_SCHEMAS)
    batches = [{"a": [(1, 5)], "b": [(1, 10)]}]
    m.step(batches[0])

    def competitor() -> None:
        """Before each of our commits: merges everything, then a new batch arrives (our
        next plan has work again)."""
        m.run.run("m")
        batch = {"a": [(len(batches) + 1, 1)], "b": []}
        batches.append(batch)
        m.write("a", batch["a"])

    m.write("a", [(9, 9)])
    batches.append({"a": [(9, 9)], "b": []})
    other_writer(monkeypatch, "before-commit", competitor, times=ATTEMPTS)
    manifest = m.run.manifest()
    [result] = run_models(manifest, ["m"], m.run.adapter(manifest))
    assert result.status == "error"
    assert f"another writer committed to lw.{m.run.namespace}.m during each of" in result.message
    assert "Run again" in result.message
    monkeypatch.undo()
    # the competitor's commits hold every batch but the one that arrived last
    assert m.run.rows("m") == totals(batches[:-1])
    m.step({})
    assert m.run.rows("m") == totals(batches)
