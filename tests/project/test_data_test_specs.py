"""Data tests without a JVM: yml parsing and its errors, names, selection, compile output, and
the compiled queries run on sqlglot's Python executor against a plain-Python oracle."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlglot.executor import execute

from lakewide.cli import cli
from lakewide.commands.services.tests import chosen_tests
from lakewide.compiler.queries.data_test_queries import failing_rows
from lakewide.project.data_tests import default_test_name as default_name
from lakewide.project.data_tests import threshold_holds
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import REPO_ROOT, make_project, manifest_of

SOURCES = """\
sources:
  - name: raw
    tables:
      - name: orders
      - name: customers
"""
ORDERS = "{{ config(materialized='table') }}\nSELECT id, customer, status, amount FROM {{ source('raw', 'orders') }}\n"
KEYED = (
    "{{ config(merge_engine='partial_update', primary_key=['id', 'day']) }}\n"
    "SELECT id, day, amount FROM {{ source('raw', 'orders') }}\n"
)
PER_CUSTOMER = "{{ config(materialized='table') }}\nSELECT customer, COUNT(*) AS n FROM {{ ref('orders') }} GROUP BY customer\n"


def project(tmp_path: Path, yml: str, **files: str) -> Path:
    return make_project(
        tmp_path,
        {
            "models/sources.yml": SOURCES,
            "models/orders.sql": ORDERS,
            "models/per_customer.sql": PER_CUSTOMER,
            "models/keyed.sql": KEYED,
            "models/props.yml": yml,
            **files,
        },
    )


ALL_TESTS = """\
models:
  - name: orders
    description: One row per order.
    data_tests:
      - expression_is_true:
          arguments: {expression: "amount >= 0 OR status = 'refund'"}
    columns:
      - name: id
        description: The order id.
        data_tests: [unique, not_null]
      - name: status
        tests:
          - accepted_values:
              values: [new, paid, refund]
              severity: warn
      - name: customer
        data_tests:
          - relationships:
              arguments: {to: "source('raw', 'customers')", field: cid}
              config: {where: "status <> 'new'"}
      - name: amount
        data_tests:
          - expression_is_true:
              arguments: {expression: "< 1000"}
              config: {store_failures: true, error_if: "> 2", warn_if: "> 0"}
"""


def test_properties_and_tests_are_read(tmp_path: Path) -> None:
    manifest = manifest_of(project(tmp_path, ALL_TESTS))
    props = manifest.properties["orders"]
    assert props.description == "One row per order."
    assert props.columns["id"].description == "The order id."
    tests = manifest.data_tests
    assert set(tests) == {
        "expression_is_true_orders__amount_0_OR_status_refund",
        "unique_orders_id",
        "not_null_orders_id",
        "accepted_values_orders_status__new__paid__refund",
        "relationships_orders_customer__cid__source_raw_customers",
        "expression_is_true_orders_amount__1000",
        "unique_keyed_id__day",  # implied by the key table's primary key
        "not_null_keyed_id__day",
    }
    status = tests["accepted_values_orders_status__new__paid__refund"]
    assert status.config.severity == "warn"  # config next to the arguments (dbt before 1.8)
    amount = tests["expression_is_true_orders_amount__1000"]
    assert amount.config.store_failures and amount.config.error_if == "> 2"
    assert tests["unique_keyed_id__day"].implied
    assert tests["relationships_orders_customer__cid__source_raw_customers"].depends_on == (
        "orders",
    )


def test_declared_key_test_replaces_the_implied_one(tmp_path: Path) -> None:
    yml = """\
    models:
      - name: keyed
        data_tests:
          - unique:
              name: unique_keyed_id__day
              column_name: "id || '-' || day"
              config: {severity: warn}
    """
    tests = manifest_of(project(tmp_path, yml)).data_tests
    assert tests["unique_keyed_id__day"].config.severity == "warn"
    assert not tests["unique_keyed_id__day"].implied
    assert tests["not_null_keyed_id__day"].implied


@pytest.mark.parametrize(
    ("yml", "key", "words"),
    [
        ("models:\n  - name: order\n", "models[0].name", ["'order' names no model", "orders"]),
        (
            "models:\n  - name: orders\n    columns:\n      - name: id\n        data_tests: [uniqe]\n",
            "models[0].columns[0].data_tests[0]",
            ["unknown data test 'uniqe'", "Did you mean 'unique'", "accepted_values"],
        ),
        (
            "models:\n  - name: orders\n    columns:\n      - name: s\n        data_tests:\n"
            "          - accepted_values: {value: [a]}\n",
            "models[0].columns[0].data_tests[0].accepted_values.value",
            ["unknown key 'value'", "Did you mean 'values'"],
        ),
        (
            "models:\n  - name: orders\n    columns:\n      - name: s\n        data_tests:\n"
            "          - accepted_values: {quote: false}\n",
            "models[0].columns[0].data_tests[0].accepted_values.values",
            ["Field required"],
        ),
        (
            "models:\n  - name: orders\n    columns:\n      - name: s\n        data_tests:\n"
            "          - not_null: {config: {severity: fatal}}\n",
            "models[0].columns[0].data_tests[0].not_null.config.severity",
            ["'warn' or 'error'"],
        ),
        (
            "models:\n  - name: orders\n    columns:\n      - name: s\n        data_tests:\n"
            "          - not_null: {warn_if: many}\n",
            "models[0].columns[0].data_tests[0].not_null.config.warn_if",
            ["'!= 0'"],
        ),
        (
            "models:\n  - name: orders\n    columns:\n      - name: s\n        data_tests:\n"
            "          - relationships: {to: \"ref('nope')\", field: id}\n",
            "models[0].columns[0].data_tests[0].relationships.to",
            ["ref('nope') names no model"],
        ),
        (
            "models:\n  - name: orders\n    columns:\n      - name: s\n        data_tests:\n"
            "          - relationships: {to: customers, field: id}\n",
            "models[0].columns[0].data_tests[0].relationships.to",
            ["ref('model') or source('source', 'table')", "raw.customers"],
        ),
        (
            "models:\n  - name: orders\n    data_tests:\n      - expression_is_true: {expression: 'a >'}\n",
            "models[0].data_tests[0].expression_is_true.expression",
            ["does not parse as SQL"],
        ),
        (
            "models:\n  - name: orders\n    data_tests: [unique]\n",
            "models[0].data_tests[0].unique",
            ["needs 'column_name'"],
        ),
        (
            "models:\n  - name: orders\n    columns:\n      - name: id\n        data_tests: [unique]\n"
            "        tests: [not_null]\n",
            "models[0].columns[0]",
            ["not both"],
        ),
        (
            "models:\n  - name: orders\n    colums: []\n",
            "models[0].colums",
            ["Did you mean 'columns'"],
        ),
        (
            "models:\n  - name: orders\n    columns:\n      - name: id\n        data_tests:\n"
            "          - unique: {}\n            not_null: {}\n",
            "models[0].columns[0].data_tests[0]",
            ["mapping of one test name"],
        ),
    ],
)
def test_bad_properties_name_file_key_and_what_is_accepted(
    tmp_path: Path, yml: str, key: str, words: list[str]
) -> None:
    with pytest.raises(ConfigError) as err:
        manifest_of(project(tmp_path, yml))
    assert str(err.value.path) == "models/props.yml"
    assert err.value.key == key
    for word in words:
        assert word in err.value.message


def test_tests_on_sources_are_refused_not_ignored(tmp_path: Path) -> None:
    root = project(tmp_path, "models: []\n")
    (root / "models" / "sources.yml").write_text(
        SOURCES.replace(
            "      - name: customers\n",
            "      - name: customers\n        columns:\n"
            "          - name: cid\n            data_tests: [unique]\n",
        )
    )
    with pytest.raises(ConfigError, match="not on sources") as err:
        manifest_of(root)
    assert err.value.key == "sources[0].tables[1].columns[0].data_tests"
    assert str(err.value.path) == "models/sources.yml"


def test_two_tests_of_one_name_are_refused(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        "models:\n  - name: orders\n    columns:\n      - name: id\n        data_tests: [unique]\n",
        **{"data-tests/unique_orders_id.sql": "SELECT 1 AS x WHERE 1 = 0\n"},
    )
    with pytest.raises(ConfigError, match="two data tests are named 'unique_orders_id'"):
        manifest_of(root)


def test_singular_tests_render_refs_and_config(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        "models: []\n",
        **{
            "data-tests/sub/big_customers.sql": (
                "{{ config(severity='warn') }}\n"
                "SELECT customer FROM {{ ref('per_customer') }} WHERE n > 100;\n"
            ),
            "checks/other.sql": "SELECT 1 AS x\n",  # not in test-paths
        },
    )
    tests = manifest_of(root).data_tests
    singular = tests["big_customers"]
    assert singular.test == "singular" and singular.config.severity == "warn"
    assert singular.depends_on == ("per_customer",)
    assert "analytics.per_customer" in failing_rows(singular.spec).sql("spark")
    assert "other" not in tests
    (root / "pyproject.toml").write_text(
        (root / "pyproject.toml").read_text() + 'test-paths = ["checks"]\n'
    )
    assert "other" in manifest_of(root).data_tests
    (root / "checks" / "bad.sql").write_text("DELETE FROM x\n")
    with pytest.raises(ConfigError, match="one query") as err:
        manifest_of(root)
    assert str(err.value.path) == "checks/bad.sql"


def test_default_names_are_short_enough_for_a_table() -> None:
    long = default_name("accepted_values", "orders", "status", ["v" * 30, "w" * 30])
    assert len(long) == 63
    assert long != default_name("accepted_values", "orders", "status", ["v" * 30, "x" * 30])
    assert default_name("not_null", "orders", "id", []) == "not_null_orders_id"


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        ("!= 0", [1, 3, 5]),
        ("> 2", [3, 5]),
        (">=3", [3, 5]),
        ("<1", [0]),
        ("= 1", [1]),
        ("<> 1", [0, 3, 5]),
    ],
)
def test_thresholds(condition: str, holds: list[int]) -> None:
    assert [n for n in (0, 1, 3, 5) if threshold_holds(condition, n)] == holds


def test_selection_of_tests(tmp_path: Path) -> None:
    manifest = manifest_of(project(tmp_path, ALL_TESTS))

    def names(select: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> set[str]:
        return {t.name for t in chosen_tests(manifest, select, exclude)}

    everything = set(manifest.data_tests)
    assert names() == everything
    assert names(("keyed",)) == {"unique_keyed_id__day", "not_null_keyed_id__day"}
    assert names(("test_name:unique",)) == {"unique_orders_id", "unique_keyed_id__day"}
    assert names(("unique_orders_id",)) == {"unique_orders_id"}
    assert names(("test_type:data",)) == everything
    assert names(("test_type:unit",)) == set()
    assert names((), ("orders",)) == {"unique_keyed_id__day", "not_null_keyed_id__day"}
    assert names(("keyed test_type:data",), ("test_name:not_null",)) == {"unique_keyed_id__day"}
    with pytest.raises(ConfigError, match="names no model and no test"):
        names(("nope",))
    with pytest.raises(ConfigError, match="test_type:data, test_type:unit"):
        names(("test_type:schema",))


def test_compile_writes_the_tests(tmp_path: Path) -> None:
    root = project(tmp_path, ALL_TESTS)
    result = CliRunner().invoke(cli, ["--project-dir", str(root), "compile"])
    assert result.exit_code == 0, result.output
    folder = root / "target" / "compiled" / "tests"
    written = {p.stem for p in folder.glob("*.sql")}
    assert written == set(manifest_of(root).data_tests)
    assert "8 data test(s)" in result.output
    text = (folder / "not_null_orders_id.sql").read_text()
    assert "analytics.orders" in text and "IS NULL" in text


def test_the_example_ships_tests_for_its_wide_models() -> None:
    manifest = manifest_of(REPO_ROOT)
    for model in ("user_rec_wide", "order_detail", "order_groups", "user_activity"):
        declared = [t for t in manifest.data_tests.values() if t.model == model and not t.implied]
        assert declared, model
        assert manifest.properties[model].description


# The compiled queries on sqlglot's Python executor against a plain-Python oracle.

STATUSES = ["new", "paid", "refund", "lost", None]


def _random_orders(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    orders = [
        {
            "id": rng.choice([1, 2, 3, 4, 5, 6, None]),
            "customer": rng.choice(["c1", "c2", "c3", "c9", None]),
            "status": rng.choice(STATUSES),
            "amount": rng.choice([-5, 0, 10, 999, 1000, 5000, None]),
        }
        for _ in range(rng.randint(0, 12))
    ]
    customers = [{"cid": c} for c in ("c1", "c2", "c3") if rng.random() < 0.8]
    return orders, customers


def _oracle(test: str, orders: list[dict[str, Any]], customers: list[dict[str, Any]]) -> int:
    """Failing rows of each test of ALL_TESTS, computed in plain Python."""
    ids = [o["id"] for o in orders if o["id"] is not None]
    if test == "unique_orders_id":  # one row per duplicated value
        return len({i for i in ids if ids.count(i) > 1})
    if test == "not_null_orders_id":
        return sum(o["id"] is None for o in orders)
    if test == "accepted_values_orders_status__new__paid__refund":  # one row per value
        return len(
            {o["status"] for o in orders if o["status"] not in (None, "new", "paid", "refund")}
        )
    if test == "relationships_orders_customer__cid__source_raw_customers":
        known = {c["cid"] for c in customers}
        return sum(
            o["customer"] is not None and o["customer"] not in known
            for o in orders
            if o["status"] is not None and o["status"] != "new"
        )
    if test == "expression_is_true_orders_amount__1000":
        return sum(o["amount"] is not None and not o["amount"] < 1000 for o in orders)
    assert test == "expression_is_true_orders__amount_0_OR_status_refund"

    def false(o: dict[str, Any]) -> bool:  # SQL three-valued logic: NULL is not a failure
        ge = None if o["amount"] is None else o["amount"] >= 0
        refund = None if o["status"] is None else o["status"] == "refund"
        if ge is True or refund is True:
            return False
        return ge is False and refund is False

    return sum(false(o) for o in orders)


@pytest.mark.parametrize("seed", range(25))
def test_compiled_queries_find_the_failing_rows(tmp_path: Path, seed: int) -> None:
    manifest = manifest_of(project(tmp_path, ALL_TESTS))
    orders, customers = _random_orders(seed)
    columns = ["id", "customer", "status", "amount"]
    tables = {
        "lw": {
            "analytics": {"orders": orders or [dict.fromkeys(columns)][:0]},
            "raw": {"customers": customers},
        }
    }
    schema = {
        "lw": {
            "analytics": {
                "orders": {c: "VARCHAR" if c in ("customer", "status") else "INT" for c in columns}
            },
            "raw": {"customers": {"cid": "VARCHAR"}},
        }
    }
    for test in manifest.data_tests.values():
        if test.model != "orders":
            continue
        found = execute(failing_rows(test.spec), schema=schema, tables=tables)
        assert len(found.rows) == _oracle(test.name, orders, customers), (test.name, orders)
