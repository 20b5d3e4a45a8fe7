"""Snapshot models and temporal joins on real Spark + Iceberg, against a plain-Python SCD2 oracle
(``tests/oracle/scd2.py``): a customers dimension whose tier changes over several runs, and an
orders model joined ``FOR SYSTEM_TIME AS OF`` its order time, late orders included."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from lakewide.run.models.executor import run_models
from lakewide.state.offsets import MARK, OFFSETS
from tests.integration.conftest import ModelRun, ProjectRun
from tests.oracle.scd2 import RunTime, Scd2

pytestmark = [pytest.mark.spark, pytest.mark.slow]

CUSTOMERS = "customer_id INT, name STRING, tier STRING, updated_at TIMESTAMP"
ORDERS = "order_id INT, customer_id INT, order_ts TIMESTAMP"
COLUMNS = ("customer_id", "name", "tier", "updated_at")

ORDERS_MODEL = """
{{ config(merge_engine='deduplicate', primary_key='order_id') }}
SELECT o.order_id, o.customer_id, o.order_ts, c.tier
FROM {{ source('src', 'orders') }} AS o
LEFT JOIN {{ ref('customers_snapshot') }} FOR SYSTEM_TIME AS OF o.order_ts AS c
  ON o.customer_id = c.customer_id
"""


def day(month: int, d: int) -> dt.datetime:
    return dt.datetime(2024, month, d)


@dataclass
class Dimension:
    """A project with a customers source, its snapshot model and the orders model."""

    model: ModelRun
    oracle: Scd2
    windows: list[tuple[dt.datetime, dt.datetime]] = field(default_factory=list)
    expected: list[tuple] = field(default_factory=list)  # orders as the oracle joins them

    @property
    def run(self) -> ProjectRun:
        return self.model.run

    def sql(self, text: str) -> None:
        self.run.sql(text)

    def write(self, table: str, rows: list[tuple]) -> None:
        self.model.write(table, rows)

    def customers(self) -> list[dict[str, Any]]:
        frame = self.run.spark.table(f"lw.{self.run.seed_schema}.customers")
        return [r.asDict() for r in frame.collect()]

    def step(self, *, full: bool, appended: list[tuple] | None = None, orders: list | None = None):
        """Run every model; tell the oracle what the snapshot read (``appended`` rows, or the
        whole input when ``full``)."""
        self.write("orders", orders or [])
        started = dt.datetime.now()
        results = self.run.run()
        self.windows.append((started, dt.datetime.now()))
        read = self.customers() if full else [dict(zip(COLUMNS, r)) for r in appended or []]
        self.oracle.run(read, RunTime(len(self.windows)), full=full)
        # an order takes the version valid at its time in the history of the run that reads it
        for order_id, customer, ts in orders or []:
            version = self.oracle.valid_at(customer, ts)
            tier = None if version is None else version["tier"]
            self.expected.append((order_id, customer, ts, tier))
        return results

    def run_time(self, value: Any) -> Any:
        """A timestamp written by run n (its wall clock) as ``RunTime(n)``."""
        if isinstance(value, dt.datetime) and value.year >= 2025:
            # the run whose window holds it; else (clock rounding) the nearest within 1 s:
            # back-to-back runs of a warm JVM are less than a second apart
            def distance(window: tuple[dt.datetime, dt.datetime]) -> dt.timedelta:
                low, high = window
                return max(low - value, value - high, dt.timedelta(0))

            n, nearest = min(enumerate(self.windows, start=1), key=lambda w: distance(w[1]))
            if distance(nearest) <= dt.timedelta(seconds=1):
                return RunTime(n)
            raise AssertionError(f"{value} is no run's time: {self.windows}")
        return value

    def history(self) -> list[tuple]:
        deleted = self.oracle.hard_deletes == "new_record"
        names = [*COLUMNS, "dbt_valid_from", "dbt_valid_to"]
        names += ["dbt_is_deleted"] if deleted else []
        frame = self.run.spark.table(f"lw.{self.run.namespace}.customers_snapshot")
        rows = []
        for r in frame.select(*names).collect():
            values = [self.run_time(v) for v in r]
            flag = values.pop() == "True" if deleted else False
            rows.append((*values, flag))
        return sorted(rows, key=repr)

    def expected_orders(self) -> list[tuple]:
        return sorted(self.expected)


def dimension(model_run: Callable[..., ModelRun], snapshot_config: str, oracle: Scd2) -> Dimension:
    """Model ``m``, the orders, over sources ``customers`` and ``orders`` and the snapshot."""
    m = model_run(ORDERS_MODEL, {"customers": CUSTOMERS, "orders": ORDERS})
    (m.run.root / "models" / "customers_snapshot.sql").write_text(
        f"{{{{ config(materialized='snapshot', unique_key='customer_id', {snapshot_config}) }}}}\n"
        "SELECT customer_id, name, tier, updated_at FROM {{ source('src', 'customers') }}\n"
    )
    return Dimension(m, oracle)


@pytest.mark.parametrize("hard_deletes", ["invalidate", "new_record"])
def test_timestamp_snapshot_of_an_updated_dimension(
    model_run: Callable[..., ModelRun], hard_deletes: str
) -> None:
    oracle = Scd2("customer_id", "timestamp", "updated_at", hard_deletes=hard_deletes)
    d = dimension(
        model_run,
        f"strategy='timestamp', updated_at='updated_at', hard_deletes='{hard_deletes}'",
        oracle,
    )
    cust = f"lw.{d.run.seed_schema}.customers"
    d.write(
        "customers",
        [
            (1, "ann", "silver", day(1, 1)),
            (2, "bob", "gold", day(1, 1)),
            (3, "cy", "bronze", day(1, 1)),
        ],
    )
    results = d.step(full=True, orders=[(100, 1, day(1, 5)), (101, 2, day(1, 6))])
    assert results["customers_snapshot"].plan == "bootstrap"
    assert d.history() == oracle.rows()
    # a tier change (copy-on-write UPDATE of the dimension): the whole input is read
    d.sql(
        f"UPDATE {cust} SET tier = 'gold', updated_at = TIMESTAMP '2024-02-01' WHERE customer_id = 1"
    )
    results = d.step(full=True, orders=[(102, 1, day(2, 10))])
    assert results["customers_snapshot"].ranges[0]["mode"] == "full"
    assert d.history() == oracle.rows()
    # customer 3 leaves; a late order of customer 1 from before the change, one of customer 3
    d.sql(f"DELETE FROM {cust} WHERE customer_id = 3")
    d.step(full=True, orders=[(103, 1, day(1, 20)), (104, 3, day(3, 1))])
    assert d.history() == oracle.rows()
    # nothing new: no commit, the same history
    before = d.history()
    results = d.step(full=True)
    assert results["customers_snapshot"].statements == 0 and d.history() == before
    # customer 3 comes back with a new row; customer 2 changes
    d.write("customers", [(3, "cy", "gold", day(4, 1))])
    d.sql(
        f"UPDATE {cust} SET tier = 'silver', updated_at = TIMESTAMP '2024-03-15' WHERE customer_id = 2"
    )
    d.step(full=True, orders=[(105, 3, day(4, 2)), (106, 2, day(3, 20)), (107, 2, day(3, 10))])
    assert d.history() == oracle.rows()
    assert d.run.rows("m") == d.expected_orders()
    tiers = {r[0]: r[3] for r in d.run.rows("m")}
    assert tiers[103] == "silver" and tiers[102] == "gold"  # the late order: its own time


def test_appended_change_feed_with_late_versions_and_check_strategy(
    model_run: Callable[..., ModelRun],
) -> None:
    oracle = Scd2("customer_id", "check", "updated_at", check_cols=["tier"])
    d = dimension(
        model_run,
        "strategy='check', check_cols=['tier'], updated_at='updated_at'",
        oracle,
    )
    batches = [
        [(1, "ann", "silver", day(1, 1)), (2, "bob", "gold", day(1, 1))],
        # a rename only (tier unchanged: no version), a real change, two versions in one batch
        [
            (1, "ann b.", "silver", day(1, 10)),
            (2, "bob", "silver", day(2, 1)),
            (2, "bob", "bronze", day(3, 1)),
        ],
        # a late version of customer 1, between its first version and now
        [(1, "ann", "gold", day(1, 15)), (1, "ann", "platinum", day(2, 15))],
    ]
    orders = [
        [(100, 1, day(1, 12)), (101, 2, day(2, 5))],
        [(102, 2, day(3, 2)), (103, 1, day(1, 20))],
        [(104, 1, day(2, 1)), (105, 2, day(1, 2)), (106, 1, day(3, 1))],
    ]
    for n, (batch, order_batch) in enumerate(zip(batches, orders)):
        d.write("customers", batch)
        results = d.step(full=n == 0, appended=batch, orders=order_batch)
        if n:
            assert results["customers_snapshot"].ranges[0]["mode"] == "incremental"
        assert d.history() == oracle.rows(), n
    assert d.run.rows("m") == d.expected_orders()
    # order 103 (Jan 20) was joined before the late Jan 15 version arrived: it keeps 'silver'
    assert {r[0]: r[3] for r in d.run.rows("m")}[103] == "silver"
    # --full-refresh keeps the snapshot's history and re-derives the orders from it
    before = d.history()
    results = d.run.run(full_refresh=True)
    assert results["customers_snapshot"].plan == "incremental" and d.history() == before
    rejoined = []
    for order_id, customer, ts, _ in d.expected:
        version = oracle.valid_at(customer, ts)
        rejoined.append((order_id, customer, ts, None if version is None else version["tier"]))
    assert d.run.rows("m") == sorted(rejoined)
    assert {r[0]: r[3] for r in rejoined}[103] == "gold"
    # an edited snapshot is refused, never rebuilt
    path = d.run.root / "models" / "customers_snapshot.sql"
    path.write_text(path.read_text().replace("FROM", "FROM ").rstrip() + " WHERE tier <> 'x'\n")
    manifest = d.run.manifest()
    [result] = run_models(manifest, ["customers_snapshot"], d.run.adapter(manifest))
    assert result.status == "error" and "DROP TABLE" in result.message
    assert d.history() == before


def test_check_strategy_at_run_time_with_deletion_records(
    model_run: Callable[..., ModelRun],
) -> None:
    """Without updated_at a version starts at the run that sees it (processing time)."""
    checked = ["name", "tier", "updated_at"]  # check_cols='all': every column but the key
    oracle = Scd2("customer_id", "check", None, check_cols=checked, hard_deletes="new_record")
    d = dimension(
        model_run,
        "strategy='check', check_cols='all', hard_deletes='new_record'",
        oracle,
    )
    cust = f"lw.{d.run.seed_schema}.customers"
    d.write("customers", [(1, "ann", "silver", None), (2, "bob", "gold", None)])
    d.step(full=True)
    d.sql(f"UPDATE {cust} SET tier = 'gold' WHERE customer_id = 1")
    d.sql(f"UPDATE {cust} SET updated_at = TIMESTAMP '2024-05-01' WHERE customer_id = 2")
    d.step(full=True)  # customer 2: only updated_at changed, a checked column: a version
    d.sql(f"DELETE FROM {cust} WHERE customer_id = 1")
    d.step(full=True)
    d.step(full=True)  # still deleted: no second deletion record
    d.write("customers", [(1, "ann", "gold", None)])
    d.sql(f"UPDATE {cust} SET name = 'bob' WHERE customer_id = 2")  # no change: no version
    d.step(full=True)
    history = d.history()
    assert history == oracle.rows()
    # customer 1: silver, gold, deleted, back (each from the run that saw it)
    ann = sorted((r for r in history if r[0] == 1), key=lambda r: r[4])
    assert [(r[2], r[4], r[5], r[-1]) for r in ann] == [
        ("silver", RunTime(1), RunTime(2), False),
        ("gold", RunTime(2), RunTime(3), False),
        ("gold", RunTime(3), RunTime(5), True),
        ("gold", RunTime(5), None, False),
    ]


def test_a_run_without_new_versions_records_its_offsets(
    model_run: Callable[..., ModelRun],
) -> None:
    """Appended rows whose checked columns did not change give no version; the run still
    records how far it read (a snapshot without data), so the next run has nothing to do."""
    oracle = Scd2("customer_id", "check", "updated_at", check_cols=["tier"])
    d = dimension(
        model_run, "strategy='check', check_cols=['tier'], updated_at='updated_at'", oracle
    )
    first = [(1, "ann", "silver", day(1, 1))]
    d.write("customers", first)
    d.step(full=True)
    table = f"lw.{d.run.namespace}.customers_snapshot"
    source = f"lw.{d.run.seed_schema}.customers"

    def snapshots(name: str) -> list[Any]:
        return d.run.spark.sql(
            f"SELECT snapshot_id, operation, summary FROM {name}.snapshots ORDER BY committed_at"
        ).collect()

    before = snapshots(table)
    renamed = [(1, "ann b.", "silver", day(1, 10))]  # a rename only: tier unchanged
    d.write("customers", renamed)
    results = d.step(full=False, appended=renamed)
    ran = results["customers_snapshot"]
    assert ran.plan == "incremental" and ran.ranges[0]["mode"] == "incremental"
    after = snapshots(table)
    assert len(after) == len(before) + 1
    mark = after[-1]
    assert mark.operation == "append" and mark.summary[MARK] == "offsets"
    assert mark.summary.get("added-records") is None
    offsets = json.loads(mark.summary[OFFSETS])
    assert list(offsets.values()) == [snapshots(source)[-1].snapshot_id]
    assert d.history() == oracle.rows()

    caught_up = d.run.run()["customers_snapshot"]  # nothing new: read nothing, commit nothing
    assert [r["mode"] for r in caught_up.ranges] == ["none"] and caught_up.commits == []
    assert len(snapshots(table)) == len(after)
