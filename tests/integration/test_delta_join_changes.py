"""Delta joins where both sides change between runs (fact rows added, updated, re-pointed,
deleted; dimension rows updated, late, deleted), on real Spark + Iceberg, against the plain
join over both inputs' current state folded by the engine oracle
(``tests/oracle/dimension_joins.plain_join``) and against ``--full-refresh``."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lakewide.run.models.executor import run_models
from tests.integration.conftest import ModelRun
from tests.oracle.dimension_joins import Customer, Order, plain_join
from tests.oracle.engines import Spec
from tests.support.suite_profile import examples

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture
def model_run(inline_model_run: Callable[..., ModelRun]) -> Callable[..., ModelRun]:
    """The shared factory, source rows written as inline VALUES (tests.support.inline_rows)."""
    return inline_model_run


SCHEMAS = {
    "orders": "order_id INT, customer_id INT, store_id INT, amount BIGINT, ts BIGINT",
    "customers": "customer_id INT, tier STRING, points BIGINT",
}
JOIN = """
FROM {{ source('src', 'orders') }} AS o
LEFT JOIN {{ source('src', 'customers') }} AS c ON o.customer_id = c.customer_id
"""
PER_ORDER = "SELECT o.order_id, o.store_id, o.amount AS amt, c.tier, c.points AS pts, o.ts"
ORDER_COLUMNS = ["order_id", "store_id", "amt", "tier", "pts", "ts"]


def _per_order(engine: str, options: str = "") -> tuple[str, Spec]:
    """A model keyed by order (sequence ``ts``) and its oracle spec."""
    config = (
        f"{{{{ config(merge_engine='{engine}', primary_key='order_id', sequence_field='ts',"
        f"{options} joins={{'c': 'delta'}}) }}}}"
    )
    spec = Spec(engine, ["order_id"], ORDER_COLUMNS, sequence=["ts"])
    return config + PER_ORDER, spec


ENGINES: dict[str, tuple[str, Spec]] = {
    "partial_update": _per_order("partial_update", " remove_record_on_delete=true,"),
    "aggregation": (
        "{{ config(merge_engine='aggregation', primary_key='store_id',"
        " aggregates={'amt': 'sum', 'pts': 'sum'}, joins={'c': 'delta'}) }}"
        "SELECT o.store_id, o.amount AS amt, c.points AS pts",
        Spec(
            "aggregation",
            ["store_id"],
            ["store_id", "amt", "pts"],
            aggregates={"amt": "sum", "pts": "sum"},
        ),
    ),
    "deduplicate": _per_order("deduplicate"),
    "first_row": (
        "{{ config(merge_engine='first_row', primary_key='order_id', joins={'c': 'delta'}) }}"
        "SELECT o.order_id, o.store_id, o.amount AS amt, c.tier, c.points AS pts",
        Spec("first_row", ["order_id"], ORDER_COLUMNS[:-1]),
    ),
}


class Inputs:
    """Both source tables and their current state, as the oracle reads it."""

    def __init__(self, m: ModelRun, engine: str) -> None:
        self.m, self.engine = m, engine
        self.spec = ENGINES[engine][1]
        self.orders: dict[int, Order] = {}
        self.customers: dict[int, Customer] = {}

    def sql(self, text: str) -> None:
        self.m.run.spark.sql(text.replace("{src}", f"lw.{self.m.run.seed_schema}"))

    def add_orders(self, rows: list[Order]) -> None:
        self.m.write("orders", list(rows))
        self.orders.update({r[0]: r for r in rows})

    def add_customers(self, rows: list[tuple[int, str | None, Any]]) -> None:
        self.m.write("customers", list(rows))
        self.customers.update({c: (t, p) for c, t, p in rows})

    def expected(self) -> list[tuple]:
        return plain_join(self.orders, self.customers, self.spec, self.spec.columns)

    def run(self, full_refresh: bool = False) -> list[tuple]:
        self.m.last = self.m.run.run(full_refresh=full_refresh)["m"]
        return self.m.run.rows("m")


def _start(model_run: Callable[..., ModelRun], engine: str) -> Inputs:
    m = model_run(ENGINES[engine][0] + JOIN, SCHEMAS)
    return Inputs(m, engine)


@pytest.mark.parametrize("engine", ["aggregation", "partial_update"])
def test_the_issues_reproduction_equals_the_plain_join_and_the_rebuild(
    model_run: Callable[..., ModelRun], engine: str
) -> None:
    s = _start(model_run, engine)
    s.add_customers([(1, "gold", 10), (2, "silver", 20)])
    s.add_orders([(1, 1, 1, 5, 1), (2, 2, 1, 3, 2), (3, 2, 2, 7, 3)])
    assert s.run() == s.expected()
    # in one step: a customer's points change, an order of it goes, another moves to a
    # customer that does not exist
    s.sql("UPDATE {src}.customers SET points = 50 WHERE customer_id = 1")
    s.customers[1] = ("gold", 50)
    s.sql("DELETE FROM {src}.orders WHERE order_id = 1")
    del s.orders[1]
    s.sql("UPDATE {src}.orders SET customer_id = 9, ts = 4 WHERE order_id = 3")
    s.orders[3] = (3, 9, 2, 7, 4)
    rows = s.run()
    assert rows == s.expected()
    [delta] = [r for r in s.m.last.ranges if r["relation"].endswith("customers")]
    # derived again: stores 1 and 2 (where orders 1 and 3 were), or order 3 (order 1 is gone)
    assert delta["mode"] == "changelog" and delta["keys"] == (2 if engine == "aggregation" else 1)
    assert "fact updates or deletes (changelog): their keys before and after" in delta["reason"]
    if engine == "aggregation":  # store 1: only order 2 is left (customer 2: 20 points)
        assert (1, 3, 20) in rows
    else:  # order 3's customer is missing: NULL, as a rebuild gives
        assert (3, 2, 7, None, None, 4) in rows
    assert s.run(full_refresh=True) == rows


def test_a_join_key_of_types_spark_cannot_compare_names_the_model_file_and_the_join(
    model_run: Callable[..., ModelRun],
) -> None:
    schemas = {
        **SCHEMAS,
        "orders": SCHEMAS["orders"].replace("customer_id INT", "customer_id DATE"),
    }
    m = model_run(ENGINES["partial_update"][0] + JOIN, schemas)
    m.write("customers", [(1, "gold", 10)])
    m.write("orders", [(1, datetime.date(2024, 1, 1), 1, 5, 1)])
    manifest = m.run.manifest()
    [result] = run_models(manifest, ["m"], m.run.adapter(manifest))
    assert result.status == "error"
    assert result.message.startswith(f"{manifest.models['m'].path}: [join c] the join LEFT JOIN ")
    assert "compares o.customer_id (DATE) with c.customer_id (INT)" in result.message
    assert "line 1 pos" not in result.message


# ------------------------------------------------ property: both sides change, every engine

FactOp = tuple[str, int, int, int, int]  # kind, order_id, customer_id, store_id, amount
DimOp = tuple[str, int, Any]  # kind, customer_id, points (tier derived from it)

FACT_OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "update", "repoint", "delete"]),
        st.integers(0, 5),
        st.integers(0, 5),  # customer 5 is never there at first: a late dimension row
        st.integers(1, 3),
        st.integers(0, 9),
    ),
    max_size=4,
)
DIM_OPS = st.lists(
    st.tuples(
        st.sampled_from(["update", "insert", "delete"]),
        st.integers(0, 5),
        st.one_of(st.none(), st.integers(1, 50)),
    ),
    max_size=3,
)


class Changes(Inputs):
    """Applies generated changes as separate Iceberg commits (appends, copy-on-write updates
    and deletes), keeping the oracle's view of both tables."""

    ts = 0

    def _tick(self) -> int:
        self.ts += 1
        return self.ts

    def fact(self, op: FactOp) -> None:
        kind, order, customer, store, amount = op
        if kind == "add" or self.engine == "first_row":  # first_row keeps first rows: appends
            if order not in self.orders:
                self.add_orders([(order, customer, store, amount, self._tick())])
            return
        if order not in self.orders:
            return
        where = f"WHERE order_id = {order}"
        if kind == "delete":
            self.sql(f"DELETE FROM {{src}}.orders {where}")
            del self.orders[order]
            return
        _, old_customer, old_store, _, _ = self.orders[order]
        ts = self._tick()
        if kind == "update":
            customer, store = old_customer, old_store
        self.sql(
            f"UPDATE {{src}}.orders SET customer_id = {customer}, store_id = {store}, "
            f"amount = {amount}, ts = {ts} {where}"
        )
        self.orders[order] = (order, customer, store, amount, ts)

    def dimension(self, op: DimOp) -> None:
        kind, customer, points = op
        tier = None if points is None else f"t{points % 3}"
        present = customer in self.customers
        if kind == "insert" and not present:
            self.add_customers([(customer, tier, points)])
        elif kind == "delete" and present:
            self.sql(f"DELETE FROM {{src}}.customers WHERE customer_id = {customer}")
            del self.customers[customer]
        elif kind == "update" and present:
            values = "NULL" if points is None else str(points)
            text = "NULL" if tier is None else f"'{tier}'"
            self.sql(
                f"UPDATE {{src}}.customers SET tier = {text}, points = {values} "
                f"WHERE customer_id = {customer}"
            )
            self.customers[customer] = (tier, points)


@pytest.mark.parametrize("engine", list(ENGINES))
@settings(
    max_examples=examples(2),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    first=FACT_OPS,
    runs=st.lists(st.tuples(FACT_OPS, DIM_OPS), min_size=1, max_size=3),
)
@example(  # the issue's shape: a customer changes, its order goes, another moves to no customer
    first=[("add", 3, 1, 1, 4)],
    runs=[([("delete", 0, 0, 0, 0), ("repoint", 2, 5, 3, 7)], [("update", 0, 5)])],
)
def test_delta_joins_equal_the_plain_join_when_both_sides_change(
    model_run: Callable[..., ModelRun], engine: str, first: list[FactOp], runs: list[Any]
) -> None:
    s = Changes(model_run(ENGINES[engine][0] + JOIN, SCHEMAS), engine)
    s.add_customers([(c, f"t{c}", 10 * c) for c in range(4)])
    s.add_orders([(n, n % 4, 1 + n % 3, n, s._tick()) for n in range(3)])
    for op in first:
        s.fact(op)
    assert s.run() == s.expected()
    for facts, dimension in runs:
        for dim_op in dimension:
            s.dimension(dim_op)
        for fact_op in facts:
            s.fact(fact_op)
        assert s.run() == s.expected(), (facts, dimension)
    assert s.run(full_refresh=True) == s.expected()
