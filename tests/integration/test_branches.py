"""Environments on Iceberg branches on real Spark + Iceberg (issue 32, second Done-when
bullet): a production build; new source rows built on a branch while production readers see no
change; a failing data test makes ``publish`` refuse with main untouched; once the branch is
fixed, ``publish`` (killed with SIGKILL after its first fast-forward, then run again)
fast-forwards main model by model; the next production run continues exactly-once from the
published offsets.
"""

from __future__ import annotations

import itertools
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.nodes import Relation
from lakewide.state.metadata import read_table_meta
from tests.integration.conftest import hadoop_project, null_first
from tests.integration.test_pull_request import WIDE  # key table over orders and customers
from tests.support.inline_rows import write_rows
from tests.support.killed_process import killed_at

pytestmark = [pytest.mark.spark]

_counter = itertools.count(1)
TOTAL = "SELECT COUNT(*) AS n, SUM(amount) AS amount FROM {{ ref('wide') }}"
# the data test publish runs: a row it returns is a failure
NO_BIG_AMOUNT = "SELECT id, amount FROM {{ ref('wide') }} WHERE amount > 1000"
MODELS = ("wide", "total")


def _project(root: Path, warehouse: Path, namespace: str, src: str) -> None:
    hadoop_project(root, warehouse, namespace)
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: src\n    schema: {src}\n    tables:\n"
        "      - name: orders\n      - name: customers\n"
    )
    (root / "models" / "wide.sql").write_text(WIDE)
    (root / "models" / "total.sql").write_text(TOTAL)
    (root / "data-tests").mkdir()
    (root / "data-tests" / "no_big_amount.sql").write_text(NO_BIG_AMOUNT)


def _heads(warehouse: Path, namespace: str, branch: str = "main") -> dict[str, int | None]:
    """Each model table's head on ``branch``, read from its metadata file (no Spark cache)."""
    heads = {}
    for name in MODELS:
        meta = read_table_meta(warehouse, Relation("lw", namespace, name))
        assert meta is not None, name
        heads[name] = meta.branches.get(branch)
    return heads


def _expected(orders: list[tuple], customers: list[tuple]) -> list[tuple]:
    """partial_update by ts: each column's value of the key's latest row that sets it."""
    latest: dict[int, dict[str, tuple[int, Any]]] = {}
    for rows, column in ((orders, "amount"), (customers, "name")):
        for key, value, ts in rows:
            seen = latest.setdefault(key, {})
            if value is not None and (column not in seen or ts >= seen[column][0]):
                seen[column] = (ts, value)
    return sorted(
        (
            (k, c.get("amount", (0, None))[1], c.get("name", (0, None))[1])
            for k, c in latest.items()
        ),
        key=null_first,
    )


def _rows(spark: Any, table: str) -> list[tuple]:
    spark.catalog.refreshTable(table.split(".branch_")[0])
    frame = spark.read.table(table)
    return sorted((tuple(r)[:3] for r in frame.collect()), key=null_first)


def test_branch_environment_published_after_its_tests(
    tmp_path: Path,
    spark: Any,
    warehouse: Path,
    cli: Callable[..., tuple[int, str]],
) -> None:
    n = next(_counter)
    namespace, src = f"br{n}_prod", f"br{n}_src"
    orders = [(1, 5, 1), (2, 50, 1)]
    customers = [(1, "a", 2), (3, "c", 2)]

    def append(table: str, rows: list[tuple], schema: str) -> None:
        name = f"lw.{src}.{table}"
        write_rows(spark, name, schema, rows, create=not spark.catalog.tableExists(name))

    def add(new_orders: list[tuple], new_customers: list[tuple]) -> None:
        if new_orders:
            append("orders", new_orders, "id bigint, amount bigint, ts bigint")
            orders.extend(new_orders)
        if new_customers:
            append("customers", new_customers, "id bigint, name string, ts bigint")
            customers.extend(new_customers)

    append("orders", orders, "id bigint, amount bigint, ts bigint")
    append("customers", customers, "id bigint, name string, ts bigint")
    project = tmp_path / "project"
    _project(project, warehouse, namespace, src)
    code, output = cli(project, "build")
    assert code == 0, output
    production = _heads(warehouse, namespace)
    wide = f"lw.{namespace}.wide"
    seen_by_production = _rows(spark, wide)
    assert seen_by_production == _expected(orders, customers)

    # bad inputs: exit 2, naming what is wrong
    code, output = cli(project, "run", "--branch", "main")
    assert code == 2 and "main is the production line" in output, output
    code, output = cli(project, "run", "--branch", "no-dash")
    assert code == 2 and "invalid branch name 'no-dash'" in output, output
    code, output = cli(project, "publish", "--branch", "dev")
    assert code == 2 and "table lw." in output and "has no branch dev" in output, output

    # the branch: new rows, one of them too big for the data test
    add([(2, 5000, 3), (4, 7, 3)], [(4, "d", 3)])
    code, output = cli(project, "run", "--branch", "dev")
    assert code == 0, output
    assert _heads(warehouse, namespace) == production  # main did not move
    assert _rows(spark, wide) == seen_by_production  # production readers see no change
    assert _rows(spark, f"{wide}.branch_dev") == _expected(orders, customers)
    code, output = cli(project, "branch", "list")
    assert code == 0 and "dev" in output and "ahead of main" in output, output

    code, output = cli(project, "publish", "--branch", "dev")
    assert code == 1 and "data test(s) failed on branch dev" in output, output
    assert _heads(warehouse, namespace) == production

    # the fix arrives in the source; the branch build continues from the branch's offsets
    # (and loads no seed: seed tables are production's)
    add([(2, 60, 4)], [])
    (project / "seeds").mkdir()
    (project / "seeds" / "regions.csv").write_text("region\neu\n")
    code, output = cli(project, "build", "--branch", "dev")
    assert code == 0 and "Seeds not loaded on branch dev" in output, output
    assert not spark.catalog.tableExists(f"lw.{namespace}.regions")
    branch_heads = _heads(warehouse, namespace, "dev")
    assert _rows(spark, f"{wide}.branch_dev") == _expected(orders, customers)
    assert _heads(warehouse, namespace) == production

    # publish, killed after its first fast-forward: each table at main's old head or the
    # branch's; the next publish finishes
    killed = killed_at(project, "after-forward", "publish", "--branch", "dev", timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    halfway = _heads(warehouse, namespace)
    assert halfway == {"wide": branch_heads["wide"], "total": production["total"]}
    code, output = cli(project, "publish", "--branch", "dev")
    assert code == 0 and "1 table(s) fast-forwarded, 1 up to date" in output, output
    assert _heads(warehouse, namespace) == branch_heads
    assert _rows(spark, wide) == _expected(orders, customers)

    # production continues exactly-once from the published offsets
    add([(5, 9, 5), (1, 6, 5)], [(2, "b", 5)])
    code, output = cli(project, "run")
    assert code == 0, output
    assert _rows(spark, wide) == _expected(orders, customers)
    total = _rows(spark, f"lw.{namespace}.total")
    expected = _expected(orders, customers)
    assert total == [(len(expected), sum(r[1] or 0 for r in expected))]

    # the next cycle: the branch, behind main now, catches up and takes a new batch; then
    # another writer commits to main, so the lines diverge and publish refuses, moving nothing
    add([(6, 8, 6)], [])
    code, output = cli(project, "run", "--branch", "dev")
    assert code == 0, output
    assert _rows(spark, f"{wide}.branch_dev") == _expected(orders, customers)
    spark.sql(f"INSERT INTO lw.{namespace}.total VALUES (0, 0)")
    moved = _heads(warehouse, namespace)
    code, output = cli(project, "publish", "--branch", "dev")
    assert code == 1 and "model total: main of lw." in output, output
    assert "moved since branch dev was made" in " ".join(output.split()), output
    assert _heads(warehouse, namespace) == moved
