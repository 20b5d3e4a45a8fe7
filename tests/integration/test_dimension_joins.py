"""Dimension joins on real Spark + Iceberg: ``lookup`` keeps what a row joined when it was
merged, ``delta`` re-derives the fact rows of changed dimension keys; each compared with a
plain-Python computation of the same semantics (``tests/oracle/dimension_joins.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.conftest import ModelRun
from tests.oracle.dimension_joins import Fact, expected
from tests.support.suite_profile import examples

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture
def model_run(inline_model_run: Callable[..., ModelRun]) -> Callable[..., ModelRun]:
    """The shared factory, source rows written as inline VALUES (tests.support.inline_rows)."""
    return inline_model_run


SCHEMAS = {
    "orders": "order_id INT, customer_id INT, amount BIGINT, ts BIGINT",
    "customers": "customer_id INT, tier STRING, points BIGINT",
}
MODELS = {
    "partial_update": """
{{ config(merge_engine='partial_update', primary_key='order_id', sequence_field='ts',
          joins={'customers': 'SEMANTICS'}) }}
SELECT o.order_id, o.amount, c.tier, o.ts
FROM {{ source('src', 'orders') }} AS o
LEFT JOIN {{ source('src', 'customers') }} AS c ON o.customer_id = c.customer_id
""",
    "aggregation": """
{{ config(merge_engine='aggregation', primary_key='order_id', sequence_field='ts',
          aggregates={'points': 'sum'}, joins={'c': 'SEMANTICS'}) }}
SELECT o.order_id, o.amount, c.points, o.ts
FROM {{ source('src', 'orders') }} AS o
LEFT JOIN {{ source('src', 'customers') }} AS c ON o.customer_id = c.customer_id
""",
}


class Scenario:
    """Writes facts and dimension changes, runs the model, keeps what the oracle needs."""

    def __init__(self, m: ModelRun, engine: str) -> None:
        self.m, self.engine = m, engine
        self.dimension: dict[int, tuple[str, int]] = {}
        self.runs: list[tuple[list[Fact], dict[int, Any]]] = []

    def customers(self, rows: list[tuple[int, str, int]]) -> None:
        self.m.write("customers", rows)
        self.dimension.update({c: (t, p) for c, t, p in rows})

    def sql(self, text: str) -> None:
        self.m.run.spark.sql(text.replace("{src}", f"lw.{self.m.run.seed_schema}"))

    def step(self, facts: list[Fact]) -> list[tuple]:
        rows = self.m.step({"orders": facts} if facts else {})
        column = 0 if self.engine == "partial_update" else 1
        self.runs.append((facts, {c: v[column] for c, v in self.dimension.items()}))
        return rows

    def commits(self) -> list[dict[str, str]]:
        return [
            dict(r.summary)
            for r in self.m.run.spark.sql(
                f"SELECT summary FROM lw.{self.m.run.namespace}.m.snapshots ORDER BY committed_at"
            ).collect()
        ]


ORDERS: list[Fact] = [(n, n % 4, 100 + n, n) for n in range(1, 13)]  # customers 0-3, 3 each


@pytest.mark.parametrize("engine", ["partial_update", "aggregation"])
@pytest.mark.parametrize("semantics", ["lookup", "delta"])
def test_a_tier_change_reaches_exactly_that_customers_orders(
    model_run: Callable[..., ModelRun], semantics: str, engine: str
) -> None:
    m = model_run(MODELS[engine].replace("SEMANTICS", semantics), SCHEMAS)
    s = Scenario(m, engine)
    s.customers([(0, "basic", 1), (1, "gold", 10), (2, "silver", 5), (3, "bronze", 2)])
    assert s.step(ORDERS) == expected(s.runs, semantics, engine)
    assert m.last.plan == "bootstrap"
    before = m.run.rows("m")

    # customer 2 changes tier (a copy-on-write UPDATE: read through Iceberg's changelog)
    s.sql("UPDATE {src}.customers SET tier = 'platinum', points = 50 WHERE customer_id = 2")
    s.dimension[2] = ("platinum", 50)
    commits_before = len(s.commits())
    rows = s.step([])
    assert rows == expected(s.runs, semantics, engine)
    changed = {r[0] for r in set(rows) ^ set(before)}
    if semantics == "lookup":
        assert changed == set() and m.last.statements == 0
        assert len(s.commits()) == commits_before
    else:
        customer_2 = {o for o, c, _, _ in ORDERS if c == 2}
        assert changed == customer_2
        [summary] = s.commits()[commits_before:]  # one commit, rewriting only those rows
        assert int(summary["added-records"]) == len(customer_2)
        delta = [r for r in m.last.ranges if r["relation"].endswith("customers")]
        assert [(d["mode"], d["keys"]) for d in delta] == [("changelog", len(customer_2))]

    # new orders and a deleted customer (its orders' tier turns NULL, as a rebuild gives)
    # and a customer appended whose order arrived before it
    s.sql("DELETE FROM {src}.customers WHERE customer_id = 3")
    del s.dimension[3]
    new: list[Fact] = [(13, 1, 113, 13), (2, 2, 202, 14), (14, 7, 114, 15)]
    assert s.step(new) == expected(s.runs, semantics, engine)
    s.customers([(7, "gold", 10)])
    assert s.step([(15, 7, 115, 16)]) == expected(s.runs, semantics, engine)
    if semantics == "delta":  # and a rebuild gives the same table
        rows = m.run.rows("m")
        m.last = m.run.run(full_refresh=True)["m"]
        assert m.run.rows("m") == rows


# ---------------------------------------------------------------- property: delta == rebuild

FACTS = st.lists(
    st.tuples(
        st.integers(0, 5),  # order_id
        st.integers(0, 4),  # customer_id
        st.one_of(st.none(), st.integers(0, 9)),  # amount
        st.integers(0, 5),  # ts: late records and ties across runs
    ).map(lambda t: (t[0], t[1], t[2], t[3])),
    max_size=6,
)
CHANGES = st.lists(
    st.tuples(st.integers(0, 4), st.one_of(st.none(), st.integers(1, 3))), max_size=3
)  # (customer, None: delete | points)


@settings(
    max_examples=examples(3),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    engine=st.sampled_from(["partial_update", "aggregation"]),
    first=FACTS,
    runs=st.lists(st.tuples(FACTS, CHANGES), min_size=1, max_size=3),
)
def test_delta_equals_the_oracle_whatever_the_changes_and_run_split(
    model_run: Callable[..., ModelRun], engine: str, first: list[Fact], runs: list[Any]
) -> None:
    m = model_run(MODELS[engine].replace("SEMANTICS", "delta"), SCHEMAS)
    s = Scenario(m, engine)
    s.customers([(c, f"t{c}", c) for c in range(3)])
    m.write("orders", [])  # the table exists (and has a snapshot) from the first run on
    assert s.step(first) == expected(s.runs, "delta", engine)
    for facts, changes in runs:
        for customer, points in changes:
            if customer in s.dimension:
                s.sql(f"DELETE FROM {{src}}.customers WHERE customer_id = {customer}")
                del s.dimension[customer]
            if points is not None:
                s.customers([(customer, f"t{points}", points)])
        assert s.step(facts) == expected(s.runs, "delta", engine)
