"""Data tests on real Spark + Iceberg: ``lakewide build`` and ``lakewide test`` in-process (the
session's SparkSession), failing rows stored in audit tables, the example's tests."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from lakewide.cli import cli
from lakewide.run.models.outcomes import ModelResult
from lakewide.run.testing.data_test_runner import run_tests
from lakewide.spark.adapter import SparkAdapter
from tests.integration.conftest import ProjectRun
from tests.support.project_factory import make_project

pytestmark = [pytest.mark.spark]
_counter = itertools.count(1)

ORDERS_CSV = """\
id,customer,amount
1,c1,10
1,c2,20
2,,5
3,c3,7
3,c3,8
4,,1
5,c4,3
"""
MODELS = {
    "models/orders.sql": "{{ config(materialized='table') }}\nSELECT id, customer, amount FROM {{ source('raw', 'orders') }}\n",
    "models/per_customer.sql": "{{ config(materialized='table') }}\nSELECT customer, SUM(amount) AS amount FROM {{ ref('orders') }} GROUP BY customer\n",
    "models/big_orders.sql": "{{ config(materialized='table') }}\nSELECT id FROM {{ source('raw', 'orders') }} WHERE amount > 6\n",
}


def failing_yml(severity: str) -> str:
    return f"""\
models:
  - name: orders
    description: Orders as they arrive.
    columns:
      - name: id
        data_tests:
          - unique:
              config: {{severity: {severity}, store_failures: true}}
      - name: customer
        data_tests:
          - not_null:
              config: {{severity: {severity}, store_failures: true}}
"""


def csv_rows() -> list[dict[str, Any]]:
    return [
        {"id": int(r["id"]), "customer": r["customer"] or None, "amount": int(r["amount"])}
        for r in csv.DictReader(io.StringIO(ORDERS_CSV))
    ]


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch, spark: Any) -> Iterator[None]:
    """CLI commands use the test session's SparkSession (and leave it running)."""
    monkeypatch.setattr(
        "lakewide.spark.adapter.SparkAdapter",
        lambda output, *args, **kwargs: SparkAdapter(output, spark=spark),
    )
    yield


def shop(tmp_path: Path, warehouse: Path, yml: str, **files: str) -> tuple[Path, str]:
    """A project over the seed ``orders``, in its own namespaces; (root, namespace)."""
    n = next(_counter)
    namespace = f"dt{n}_analytics"
    root = make_project(
        tmp_path / f"shop{n}",
        {
            "pyproject.toml": (
                '[project]\nname = "shop"\n\n[tool.lakewide]\nprofile = "shop"\n'
                f'seed-schema = "dt{n}_raw"\n'
            ),
            "profiles.yml": (
                "shop:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
                f"      catalog_type: hadoop\n      warehouse: {warehouse}\n"
                f"      namespace: {namespace}\n"
            ),
            "seeds/orders.csv": ORDERS_CSV,
            "models/sources.yml": (
                f"sources:\n  - name: raw\n    schema: dt{n}_raw\n    tables:\n      - name: orders\n"
            ),
            **MODELS,
            "models/props.yml": yml,
            **files,
        },
    )
    return root, namespace


def lakewide(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project-dir", str(root), *args])


def run_results(root: Path) -> dict[str, dict[str, Any]]:
    document = json.loads((root / "target" / "run_results.json").read_text())
    return {r["name"]: r for r in document["results"]}


def status_lines(output: str) -> dict[str, str]:
    """The printed status lines by their second word (a model's or a test's name); a model's
    progress line loses its "N of M " prefix; the summary table's rows are left out."""
    lines = [re.sub(r"^\s*\d+ of \d+ ", "", line) for line in output.splitlines()]
    return {line.split()[1]: line for line in lines if len(line.split()) > 1 and line[:1].isalpha()}


def test_failing_tests_fail_the_build_and_skip_downstream(
    tmp_path: Path, warehouse: Path, spark: Any, in_process: None
) -> None:
    root, namespace = shop(tmp_path, warehouse, failing_yml("error"))
    done = lakewide(root, "build")
    assert done.exit_code == 1, done.output
    rows = csv_rows()
    ids = [r["id"] for r in rows]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    no_customer = sorted(r["id"] for r in rows if r["customer"] is None)
    audit = f"lw.{namespace}_audit"
    lines = status_lines(done.output)
    unique = lines["unique_orders_id"]
    assert unique.startswith("FAIL") and " orders " in unique
    assert f"{len(duplicated)} failing" in unique and f"{audit}.unique_orders_id" in unique
    not_null = lines["not_null_orders_customer"]
    assert not_null.startswith("FAIL") and f"{len(no_customer)} failing" in not_null
    assert f"{audit}.not_null_orders_customer" in not_null
    assert (
        lines["per_customer"].startswith("SKIPPED") and "upstream orders" in lines["per_customer"]
    )
    assert lines["big_orders"].startswith("SUCCESS")  # not downstream of orders
    # the failing rows, as the audit tables keep them
    stored = spark.table(f"{audit}.unique_orders_id").collect()
    assert sorted((r["id"], r["n_records"]) for r in stored) == [
        (i, ids.count(i)) for i in duplicated
    ]
    stored = spark.table(f"{audit}.not_null_orders_customer").collect()
    assert sorted(r["id"] for r in stored) == no_customer
    assert not spark.catalog.tableExists(f"lw.{namespace}.per_customer")
    results = run_results(root)
    assert results["unique_orders_id"]["status"] == "fail"
    assert results["unique_orders_id"]["failures"] == len(duplicated)
    assert results["unique_orders_id"]["stored_in"] == f"{audit}.unique_orders_id"
    assert results["per_customer"]["status"] == "skipped"

    # the data is fixed: the next build passes and replaces the audit tables' rows
    (root / "seeds" / "orders.csv").write_text("id,customer,amount\n1,c1,10\n2,c2,5\n")
    done = lakewide(root, "build")
    assert done.exit_code == 0, done.output
    assert spark.table(f"{audit}.unique_orders_id").count() == 0
    assert spark.table(f"lw.{namespace}.per_customer").count() == 2


def test_warn_severity_warns_and_builds_downstream(
    tmp_path: Path, warehouse: Path, spark: Any, in_process: None
) -> None:
    root, namespace = shop(tmp_path, warehouse, failing_yml("warn"))
    done = lakewide(root, "build")
    assert done.exit_code == 0, done.output
    lines = status_lines(done.output)
    assert lines["unique_orders_id"].startswith("WARN")
    assert lines["not_null_orders_customer"].startswith("WARN")
    assert "configured to warn if != 0" in lines["unique_orders_id"]
    assert lines["per_customer"].startswith("SUCCESS")
    customers = {r["customer"] for r in csv_rows()}
    assert spark.table(f"lw.{namespace}.per_customer").count() == len(customers)
    assert "2 warn" in done.output


def test_lakewide_test_thresholds_where_singular_and_views(
    tmp_path: Path, warehouse: Path, spark: Any, in_process: None
) -> None:
    yml = """\
    models:
      - name: orders
        data_tests:
          - expression_is_true:
              arguments: {expression: "amount < 9"}
              config: {warn_if: "> 0", error_if: "> 2"}
        columns:
          - name: id
            data_tests:
              - unique:
                  config: {where: "customer IS NOT NULL AND id <> 1"}
              - accepted_values:
                  arguments: {values: [1, 2, 3, 4], quote: false}
              - relationships:
                  arguments: {to: "ref('big_orders')", field: id}
      - name: recent
        columns:
          - name: id
            data_tests: [not_null]
    """
    root, namespace = shop(
        tmp_path,
        warehouse,
        yml,
        **{
            "models/recent.sql": "{{ config(materialized='view') }}\nSELECT * FROM {{ ref('orders') }} WHERE amount < 6\n",
            "data-tests/customers_spend_little.sql": (
                "SELECT customer FROM {{ ref('per_customer') }} WHERE amount > 20\n"
            ),
        },
    )
    assert lakewide(root, "seed").exit_code == 0
    unbuilt = lakewide(root, "test", "-s", "orders")
    assert unbuilt.exit_code == 1, unbuilt.output
    assert "model orders was never built" in status_lines(unbuilt.output)["unique_orders_id"]
    assert lakewide(root, "run", "-s", "orders big_orders per_customer").exit_code == 0
    done = lakewide(root, "test")
    assert done.exit_code == 1, done.output
    rows = csv_rows()
    lines = status_lines(done.output)
    over = sum(r["amount"] >= 9 for r in rows)  # 2: warn (> 0) but not error (> 2)
    assert over == 2 and lines["expression_is_true_orders__amount_9"].startswith("WARN")
    assert lines["unique_orders_id"].startswith("FAIL")  # id 3, twice with a customer
    assert "1 failing" in lines["unique_orders_id"]
    outside = {r["id"] for r in rows} - {1, 2, 3, 4}
    assert lines["accepted_values_orders_id__1__2__3__4"].startswith("FAIL")
    assert f"{len(outside)} failing" in lines["accepted_values_orders_id__1__2__3__4"]
    big = {r["id"] for r in rows if r["amount"] > 6}
    missing = [r for r in rows if r["id"] not in big]
    relationships = next(v for k, v in lines.items() if k.startswith("relationships_orders"))
    assert f"{len(missing)} failing" in relationships
    spend: dict[str | None, int] = {}
    for r in rows:
        spend[r["customer"]] = spend.get(r["customer"], 0) + r["amount"]
    big_spenders = sum(v > 20 for v in spend.values())
    assert lines["customers_spend_little"].startswith("FAIL" if big_spenders else "PASS")
    assert f"{big_spenders} failing" in lines["customers_spend_little"]
    assert lines["not_null_recent_id"].startswith("PASS")  # a session view, created for it
    results = run_results(root)
    assert {r["status"] for r in results.values()} == {"pass", "warn", "fail"}
    assert all(r["test_type"] == "data" for r in results.values())

    only = lakewide(root, "test", "-s", "recent")
    assert only.exit_code == 0, only.output
    assert "not_null_recent_id" in only.output and "unique_orders_id" not in only.output
    none = lakewide(root, "test", "-s", "test_type:unit")
    assert none.exit_code == 0 and "no tests selected" in none.output


def test_the_examples_data_tests_pass(built: tuple[ProjectRun, dict[str, ModelResult]]) -> None:
    example, _ = built  # seeded and built
    manifest = example.manifest()
    results = run_tests(manifest, example.adapter(manifest), list(manifest.data_tests.values()))
    assert [(r.name, r.message) for r in results if r.status != "pass"] == []
    tested = {r.model for r in results}
    assert {"user_rec_wide", "order_detail", "user_activity"} <= tested
