"""Tests in ``lakewide build`` and ``lakewide test`` on real Spark + Iceberg, in-process (the
session's SparkSession): unit tests before each model (a failing one skips the model and its
downstream models), data tests after each model with ``--threads 2``, skip reasons naming the
failing test, audit tables without lakewide's hidden columns."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from lakewide.spark.scratch_catalog import CATALOG_PREFIX
from tests.integration.test_data_tests import (
    csv_rows,
    failing_yml,
    in_process,  # noqa: F401 - fixture
    lakewide,
    run_results,
    shop,
    status_lines,
)

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("in_process")]

# a table downstream of per_customer (itself downstream of orders)
TOP = {
    "models/top_customer.sql": (
        "{{ config(materialized='table') }}\n"
        "SELECT customer FROM {{ ref('per_customer') }} ORDER BY amount DESC LIMIT 1\n"
    )
}
# given rows of per_customer's unit tests: a's amounts add up to 5
GIVEN = [("a", 2), ("a", 3), ("b", 7)]
UNIT_TESTS = f"""\
unit_tests:
  - name: orders_keeps_every_row
    model: orders
    given:
      - input: source('raw', 'orders')
        rows: [{{id: 1, customer: x, amount: 2}}, {{id: 1, customer: y, amount: 4}}]
    expect:
      rows: [{{id: 1, customer: x, amount: 2}}, {{id: 1, customer: y, amount: 4}}]
  - name: per_customer_expects_a_wrong_sum
    model: per_customer
    given:
      - input: ref('orders')
        rows: [{", ".join(f"{{id: {i}, customer: {c}, amount: {a}}}" for i, (c, a) in enumerate(GIVEN))}]
    expect:
      rows: [{{customer: a, amount: 6}}, {{customer: b, amount: 7}}]
"""
NO_DATA_TESTS = "models:\n  - name: orders\n    description: Orders as they arrive.\n"


def position(output: str, needle: str) -> int:
    index = output.find(needle)
    assert index >= 0, f"{needle!r} not in output:\n{output}"
    return index


def session_catalogs(spark: Any) -> list[str]:
    """Catalogs registered in the session's SQL settings."""
    keys = [r[0] for r in spark.sql("SET").collect()]
    return sorted({k.split(".")[3] for k in keys if k.startswith("spark.sql.catalog.")})


def test_build_runs_unit_tests_before_each_model_and_skips_on_failure(
    tmp_path: Path, warehouse: Path, spark: Any
) -> None:
    root, namespace = shop(
        tmp_path, warehouse, NO_DATA_TESTS, **TOP, **{"models/unit.yml": UNIT_TESTS}
    )
    done = lakewide(root, "build")
    assert done.exit_code == 1, done.output
    lines = status_lines(done.output)
    assert lines["orders_keeps_every_row"].startswith("PASS")
    assert "bootstrap" in lines["orders_keeps_every_row"]
    wrong = lines["per_customer_expects_a_wrong_sum"]
    assert wrong.startswith("FAIL") and " per_customer " in wrong
    # the unit test's rows that differ: a's real sum is computed from the given rows
    real = sum(a for c, a in GIVEN if c == "a")
    assert real != 6
    assert re.search(r"- a +\| 6\n", done.output), done.output
    assert re.search(rf"\+ a +\| {real}\n", done.output), done.output
    # each unit test runs before its model
    assert position(done.output, "orders_keeps_every_row") < position(done.output, "SUCCESS orders")
    assert lines["orders"].startswith("SUCCESS") and lines["big_orders"].startswith("SUCCESS")
    skipped = lines["per_customer"]
    assert skipped.startswith("SKIPPED")
    assert skipped.endswith("unit test per_customer_expects_a_wrong_sum failed")
    assert lines["top_customer"].startswith("SKIPPED")
    assert lines["top_customer"].endswith(
        "unit test per_customer_expects_a_wrong_sum failed on upstream per_customer"
    )
    assert not spark.catalog.tableExists(f"lw.{namespace}.per_customer")
    assert not spark.catalog.tableExists(f"lw.{namespace}.top_customer")
    # the unit tests' given rows never reached the warehouse; their catalogs are gone
    raw = namespace.replace("_analytics", "_raw")
    assert spark.table(f"lw.{raw}.orders").count() == len(csv_rows())
    assert spark.table(f"lw.{namespace}.orders").count() == len(csv_rows())
    assert not [c for c in session_catalogs(spark) if c.startswith(CATALOG_PREFIX)]
    results = run_results(root)
    names = list(results)  # each model after its unit tests
    assert names.index("orders_keeps_every_row") < names.index("orders")
    assert names.index("per_customer_expects_a_wrong_sum") < names.index("per_customer")
    unit = results["per_customer_expects_a_wrong_sum"]
    assert (unit["status"], unit["test_type"], unit["resource_type"]) == (
        "fail",
        "unit",
        "unit_test",
    )
    assert results["orders_keeps_every_row"]["status"] == "pass"
    assert results["per_customer"]["status"] == "skipped"
    assert "1 pass, 0 warn, 1 fail" in done.output

    # without unit tests the build goes through
    done = lakewide(root, "build", "--exclude-resource-type", "unit_test")
    assert done.exit_code == 0, done.output
    assert "per_customer_expects_a_wrong_sum" not in done.output
    assert spark.table(f"lw.{namespace}.top_customer").count() == 1
    done = lakewide(root, "build", "--exclude", "test_type:unit", "-s", "orders")
    assert done.exit_code == 0 and "orders_keeps_every_row" not in done.output, done.output


def test_lakewide_test_runs_unit_and_data_tests(
    tmp_path: Path, warehouse: Path, spark: Any
) -> None:
    root, _ = shop(tmp_path, warehouse, failing_yml("warn"), **{"models/unit.yml": UNIT_TESTS})
    assert lakewide(root, "seed").exit_code == 0
    assert lakewide(root, "run").exit_code == 0
    done = lakewide(root, "test")
    assert done.exit_code == 1, done.output  # the failing unit test
    lines = status_lines(done.output)
    assert lines["orders_keeps_every_row"].startswith("PASS")
    assert lines["per_customer_expects_a_wrong_sum"].startswith("FAIL")
    assert lines["unique_orders_id"].startswith("WARN")
    # unit tests first, then data tests
    assert position(done.output, "per_customer_expects_a_wrong_sum") < position(
        done.output, "unique_orders_id"
    )
    assert "Tests: 1 pass, 2 warn, 1 fail, 0 error, 0 skipped." in done.output
    kinds = {r["name"]: r["test_type"] for r in run_results(root).values()}
    assert kinds["orders_keeps_every_row"] == "unit" and kinds["unique_orders_id"] == "data"

    for args, shown, hidden, code in (
        (("-s", "test_type:unit"), "per_customer_expects_a_wrong_sum", "unique_orders_id", 1),
        (("--resource-type", "unit_test"), "orders_keeps_every_row", "unique_orders_id", 1),
        (("--resource-type", "test"), "unique_orders_id", "orders_keeps_every_row", 0),
        (("--exclude-resource-type", "unit_test"), "unique_orders_id", "orders_keeps", 0),
        (("-s", "orders_keeps_every_row"), "orders_keeps_every_row", "unique_orders_id", 0),
    ):
        done = lakewide(root, "test", *args)
        assert done.exit_code == code, (args, done.output)
        assert shown in done.output and hidden not in done.output, (args, done.output)
    done = lakewide(root, "test", "-s", "test_type:unit", "--resource-type", "test")
    assert done.exit_code == 0 and "Nothing to do: no tests selected." in done.output


def test_build_with_threads_tests_each_model_after_it(
    tmp_path: Path, warehouse: Path, spark: Any
) -> None:
    """``build --threads 2``: each model's data tests run once it is built (and see its new
    rows, committed from the model's own session), a failing one skips the downstream models
    with a reason naming it; audit tables hold the model's columns, not lakewide's hidden
    ones."""
    latest = (
        "{{ config(merge_engine='partial_update', primary_key='id', sequence_field='amount') }}\n"
        "SELECT id, customer, amount FROM {{ source('raw', 'orders') }}\n"
    )
    yml = failing_yml("error") + (
        "  - name: latest\n"
        "    data_tests:\n"
        "      - expression_is_true:\n"
        '          arguments: {expression: "amount < 9"}\n'
        "          config: {severity: warn, store_failures: true}\n"
    )
    root, namespace = shop(tmp_path, warehouse, yml, **TOP, **{"models/latest.sql": latest})
    done = lakewide(root, "build", "--threads", "2")
    assert done.exit_code == 1, done.output
    lines = status_lines(done.output)
    for test in ("unique_orders_id", "not_null_orders_customer"):
        assert lines[test].startswith("FAIL"), done.output
        assert position(done.output, "SUCCESS orders") < position(done.output, test)
    first_failing = min(
        ("unique_orders_id", "not_null_orders_customer"), key=lambda t: position(done.output, t)
    )
    reason = f"test {first_failing} failed on upstream orders"
    assert lines["per_customer"].startswith("SKIPPED") and lines["per_customer"].endswith(reason)
    assert lines["top_customer"].startswith("SKIPPED") and lines["top_customer"].endswith(reason)
    assert lines["big_orders"].startswith("SUCCESS")
    assert lines["latest"].startswith("SUCCESS")
    # latest: the row of the greatest amount per id (sequence_field amount)
    best: dict[int, dict[str, Any]] = {}
    for row in csv_rows():
        if row["id"] not in best or row["amount"] >= best[row["id"]]["amount"]:
            best[row["id"]] = row
    over = sorted(i for i, r in best.items() if r["amount"] >= 9)
    expression = next(n for n in lines if n.startswith("expression_is_true_latest"))
    assert lines[expression].startswith("WARN") and f"{len(over)} failing" in lines[expression]
    assert position(done.output, "SUCCESS latest") < position(done.output, expression)
    assert any(c.startswith("__lw_") for c in spark.table(f"lw.{namespace}.latest").columns)
    audit = spark.table(f"lw.{namespace}_audit.{expression}")
    assert audit.columns == ["id", "customer", "amount"]
    assert sorted(r["id"] for r in audit.collect()) == over
    results = run_results(root)
    assert results["per_customer"]["message"] == reason

    # the data is fixed: the tests, run from the main session (which has just read the old
    # table), see the tables the models rebuilt from their own sessions
    (root / "seeds" / "orders.csv").write_text("id,customer,amount\n1,c1,10\n2,c2,5\n")
    assert spark.table(f"lw.{namespace}.orders").count() == len(csv_rows())
    done = lakewide(root, "build", "--threads", "2", "--exclude", "latest")
    assert done.exit_code == 0, done.output
    lines = status_lines(done.output)
    assert lines["unique_orders_id"].startswith("PASS")
    assert lines["not_null_orders_customer"].startswith("PASS")
    assert spark.table(f"lw.{namespace}_audit.unique_orders_id").count() == 0
    assert spark.table(f"lw.{namespace}.top_customer").collect()[0]["customer"] == "c1"
