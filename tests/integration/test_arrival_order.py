"""Ties keep arrival order in every plan: a source's rows arrive in the order of the commits
that added them, whatever its history starts with (replace, append), whether its older
snapshots were expired, in format version 2 and 3 (issue 26, item 11).

The source tables are written here with explicit Iceberg commits (not seeds); the expected
tables come from the plain-Python fold of all records in commit order (tests/oracle).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.conftest import ModelRun
from tests.oracle import engines as oracle
from tests.oracle.engines import Spec
from tests.support.inline_rows import values_query, write_rows
from tests.support.suite_profile import examples

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture
def model_run(inline_model_run: Callable[..., ModelRun]) -> Callable[..., ModelRun]:
    """The shared factory, source rows written as inline VALUES (tests.support.inline_rows)."""
    return inline_model_run


SCHEMA = "order_id INT, binlog_time BIGINT, address STRING"
COLUMNS = ["order_id", "binlog_time", "address"]
MODEL = """
{{{{ config(merge_engine='{engine}', primary_key='order_id', sequence_field='binlog_time') }}}}
SELECT order_id, binlog_time, address FROM {{{{ source('src', 'order_address') }}}}
"""
#: how a source table's history starts: a replace (``createOrReplace``: an ``overwrite``
#: snapshot without parent), a replace of an existing table (the history cut), or an append
FIRST = ("replace", "replace_existing", "append")


@dataclass
class Source:
    """The test's writer of ``order_address``: one Iceberg commit per call, one data file."""

    spark: Any
    name: str
    version: int

    def commit(self, rows: list[tuple], first: str | None = None) -> None:
        frame = self.spark.sql(values_query(SCHEMA, rows))  # one data file, in this order
        writer = frame.writeTo(self.name)
        if first is None:
            writer.append()
            return
        if first == "replace_existing":  # an older table of that name, with its own rows
            write_rows(self.spark, self.name, SCHEMA, [(99, 1, "old")], create=True)
        writer = writer.using("iceberg").tableProperty("format-version", str(self.version))
        if first == "append":
            writer.create()
        else:
            writer.createOrReplace()

    def expire_older_snapshots(self) -> None:
        """Keep only the current snapshot (the data files stay; their commits are gone)."""
        self.spark.sql(
            f"CALL lw.system.expire_snapshots(table => '{self.name}', "
            "older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
        ).collect()


def project(
    model_run: Callable[..., ModelRun], engine: str, version: int
) -> tuple[ModelRun, Source]:
    m = model_run(MODEL.format(engine=engine), {"order_address": SCHEMA})
    m.run.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{m.run.seed_schema}")
    return m, Source(m.run.spark, f"lw.{m.run.seed_schema}.order_address", version)


def expected(engine: str, commits: list[list[tuple]]) -> list[tuple]:
    """The plain fold of every record in commit order (the contract's table)."""
    spec = Spec(engine=engine, key=["order_id"], columns=COLUMNS, sequence=["binlog_time"])
    records = [(0, dict(zip(COLUMNS, row))) for rows in commits for row in rows]
    return oracle.as_rows(oracle.bootstrap(spec, records), COLUMNS)


def test_issue_scenario_replace_then_two_appends_with_equal_sequences(
    model_run: Callable[..., ModelRun],
) -> None:
    """The table's history starts with a replace; between two runs, two appends per order
    bring 'First' then 'Second' at the same binlog_time: every plan keeps 'Second'.

    Four orders, each pair in its own two commits: a read whose file order is not commit
    order (Iceberg plans manifests in parallel) keeps some 'First'.
    """
    m, source = project(model_run, "partial_update", 2)
    commits = [[(k, 10, "Start") for k in range(1, 6)]]
    commits += [[(k, 20, label)] for k in range(1, 5) for label in ("First", "Second")]
    source.commit(commits[0], first="replace")
    assert m.step({}) == expected("partial_update", commits[:1])
    for rows in commits[1:]:
        source.commit(rows)
    want = expected("partial_update", commits)
    assert want == [*((k, 20, "Second") for k in range(1, 5)), (5, 10, "Start")]
    assert m.step({}) == want  # incremental
    assert m.last.plan == "incremental"
    assert m.step({}, full_refresh=True) == want  # the bootstrap of the same records
    assert m.last.plan == "full-refresh"


def test_bootstrap_after_the_older_snapshots_expired(model_run: Callable[..., ModelRun]) -> None:
    """No snapshot left to read one by one: the data files' sequence numbers still order them."""
    m, source = project(model_run, "deduplicate", 3)
    commits = [[(1, 1, "a")], [(1, 1, "b"), (2, None, "x")], [(1, 1, "c"), (2, None, "y")]]
    source.commit(commits[0], first="append")
    for rows in commits[1:]:
        source.commit(rows)
    source.expire_older_snapshots()
    assert m.step({}) == expected("deduplicate", commits)
    assert m.last.plan == "bootstrap"


def test_a_source_whose_snapshot_has_no_data_file(model_run: Callable[..., ModelRun]) -> None:
    """Created without rows (a snapshot, no data file): the bootstrap reads nothing; the next
    run's two appends tie and the later one is kept."""
    m, source = project(model_run, "deduplicate", 2)
    source.commit([], first="replace")
    assert m.step({}) == []
    commits = [[], [(1, 5, "First")], [(1, 5, "Second")]]
    for rows in commits[1:]:
        source.commit(rows)
    assert m.step({}) == expected("deduplicate", commits) == [(1, 5, "Second")]
    assert m.step({}, full_refresh=True) == [(1, 5, "Second")]


def test_a_schema_changed_since_the_snapshot_reads_that_snapshot_s_columns(
    model_run: Callable[..., ModelRun],
) -> None:
    """A column the model reads is dropped after the last data commit: the bootstrap reads
    the pinned snapshot with its own columns, as a snapshot read does (Iceberg reads staged
    tasks with the current schema; docs/concepts/arrival-order.md)."""
    m, source = project(model_run, "deduplicate", 2)
    commits = [[(1, 5, "Start"), (2, 6, "Other")], [(1, 7, "Next")]]
    source.commit(commits[0], first="replace")
    source.commit(commits[1])
    m.run.spark.sql(f"ALTER TABLE {source.name} DROP COLUMN address")
    assert m.step({}) == expected("deduplicate", commits)


@pytest.mark.parametrize("version", [2, 3])
def test_merge_on_read_source_written_by_a_merge(
    model_run: Callable[..., ModelRun], version: int
) -> None:
    """Two appends tie on each of orders 1-4, then a MERGE (merge-on-read: a position delete
    file in v2, a deletion vector in v3) updates order 5: the run reads the changes by row
    position, one commit at a time, so the ties keep their arrival order: it and the
    --full-refresh keep 'Second' and the merged row."""
    m, source = project(model_run, "partial_update", version)
    m.run.spark.sql(
        f"CREATE TABLE {source.name} ({SCHEMA}) USING iceberg TBLPROPERTIES ("
        f"'format-version'='{version}', 'write.merge.mode'='merge-on-read')"
    )
    commits = [[(k, 10, "Start") for k in range(1, 6)]]
    commits += [[(k, 20, label)] for k in range(1, 5) for label in ("First", "Second")]
    source.commit(commits[0])
    m.step({})
    for rows in commits[1:]:
        source.commit(rows)
    m.run.spark.sql(
        f"MERGE INTO {source.name} t USING (SELECT 5 AS order_id) s ON t.order_id = s.order_id "
        "WHEN MATCHED THEN UPDATE SET binlog_time = 30, address = 'Merged'"
    )
    want = [*((k, 20, "Second") for k in range(1, 5)), (5, 30, "Merged")]
    assert want == expected("partial_update", [*commits, [(5, 30, "Merged")]])
    assert m.step({}) == want
    assert [r["mode"] for r in m.last.ranges] == ["positions"]
    assert m.step({}, full_refresh=True) == want


RECORD = st.tuples(
    st.sampled_from([1, 2, 3]), st.sampled_from([None, 1, 2]), st.sampled_from(["a", "b", None])
)


@st.composite
def histories(draw: Any) -> dict[str, Any]:
    """Records split into 2-5 commits (ties within and across them), a run after some."""
    commits = draw(st.lists(st.lists(RECORD, min_size=1, max_size=4), min_size=2, max_size=5))
    runs = [draw(st.booleans()) for _ in commits[:-1]] + [True]
    return {
        "commits": [
            [(k, s, f"{v}{i}" if v else None) for k, s, v in c] for i, c in enumerate(commits)
        ],
        "runs": runs,
        "first": draw(st.sampled_from(FIRST)),
        "engine": draw(st.sampled_from(["deduplicate", "partial_update"])),
        "version": draw(st.sampled_from([2, 3])),
    }


@settings(
    max_examples=examples(6),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=histories())
def test_incremental_and_full_refresh_follow_commit_order(
    model_run: Callable[..., ModelRun], history: dict[str, Any]
) -> None:
    """Random commits with ties, runs between some of them: the incremental table and a
    --full-refresh both equal the fold of all records in commit order."""
    engine, commits = history["engine"], history["commits"]
    m, source = project(model_run, engine, history["version"])
    ran = False
    for i, (rows, run) in enumerate(zip(commits, history["runs"])):
        source.commit(rows, first=history["first"] if i == 0 else None)
        if run:
            assert m.step({}) == expected(engine, commits[: i + 1])
            assert m.last.plan == ("incremental" if ran else "bootstrap")
            ran = True
    assert m.step({}, full_refresh=True) == expected(engine, commits)
