"""A delta-join run against the model's rebuild, side by side in one Spark session.

    nice -n 5 python benchmarks/delta_join.py --customers 20000 --orders-per-customer 20

An orders wide table (partial_update, one row per order) joined to a customers dimension with
``joins={'customers': 'delta'}``. After a warm-up round (unmeasured), 1% of the customers
change tier (a copy-on-write UPDATE) and the script measures, on the same data:

* ``delta``: ``lakewide run`` of the model: the dimension's changelog, the orders of the changed
  customers derived again, their tier columns replaced (one MERGE);
* ``rebuild``: ``--full-refresh`` of the same model (the bootstrap over every order).

It checks both tables hold the same rows and prints wall and JVM CPU seconds and their ratios
(read the CPU ratio on a shared machine; ``benchmarks/run.py``'s ``Clock``).

``--cli`` measures instead what a user gets: each run is a ``python -m lakewide run`` of its
own (a fresh JVM, with the JIT lakewide chooses for it: C1 only for the delta run, which only
merges, the tiered default for ``--full-refresh``; ``lakewide.run.models.jit``), ``--rounds`` times,
alternated; it prints each process's wall seconds, JVM start included (the JVM's CPU is not
a child the benchmark can account; a model's own seconds in ``run_results.json`` include the
JVM's start only where the run starts Spark inside the model, as ``--full-refresh`` does).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.run import Clock, same_rows  # noqa: E402
from lakewide.project.manifest import load_manifest  # noqa: E402
from lakewide.project.profiles_file import load_output  # noqa: E402
from lakewide.project.settings import load_project  # noqa: E402
from lakewide.run.models.executor import run_models  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.runtime import create_session, spark_conf  # noqa: E402

MODEL = """\
{{ config(merge_engine='partial_update', primary_key='order_id', sequence_field='ts',
          joins={'customers': 'delta'}) }}
SELECT o.order_id, o.amount, c.tier, c.region, o.ts
FROM {{ source('src', 'orders') }} AS o
LEFT JOIN {{ source('src', 'customers') }} AS c ON o.customer_id = c.customer_id
"""


def _project(root: Path, warehouse: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "b"\n[tool.lakewide]\nprofile = "b"\n')
    (root / "profiles.yml").write_text(
        "b:\n  target: t\n  outputs:\n    t:\n      catalog: lw\n      catalog_type: hadoop\n"
        f"      warehouse: {warehouse}\n      namespace: out\n"
    )
    (root / "models" / "sources.yml").write_text(
        "sources:\n  - name: src\n    schema: src\n    tables:\n"
        "      - name: orders\n      - name: customers\n"
    )
    (root / "models" / "m.sql").write_text(MODEL)


def _run(root: Path, spark: Any, full_refresh: bool) -> Any:
    output = load_output(root / "profiles.yml", "b", None, root)
    manifest = load_manifest(load_project(root), output)
    [result] = run_models(
        manifest, ["m"], SparkAdapter(manifest.output, spark=spark), full_refresh=full_refresh
    )
    assert result.status == "success", result.message
    return result


def _cli(project: Path, *args: str) -> tuple[float, Any]:
    """One ``lakewide run`` process: its wall seconds and the model's result."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lakewide", "run", *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    assert done.returncode == 0, done.stdout + done.stderr
    [result] = json.loads((project / "target" / "run_results.json").read_text())["results"]
    return wall, result


def cli_rounds(project: Path, spark: Any, step: int, rounds: int) -> None:
    """``rounds`` of: 1% of the customers change; ``lakewide run``; ``--full-refresh``."""
    print("| round | delta run s | rebuild s | wall ratio | orders re-derived | same rows |")
    print("|---|---|---|---|---|---|")
    for round_ in range(1, rounds + 1):
        spark.sql(
            f"UPDATE lw.src.customers SET tier = CONCAT(tier, '+') WHERE customer_id % {step} = 0"
        )
        wall, result = _cli(project)
        keys = sum(r["keys"] for r in result["ranges"] if r["relation"].endswith("customers"))
        spark.sql("REFRESH TABLE lw.out.m")
        spark.sql("CREATE OR REPLACE TABLE lw.out.delta_copy USING iceberg AS TABLE lw.out.m")
        full_wall, _ = _cli(project, "--full-refresh")
        spark.sql("REFRESH TABLE lw.out.m")
        same = same_rows(spark, "lw.out.delta_copy", "lw.out.m")
        print(
            f"| {round_} | {wall:.1f} | {full_wall:.1f} | {wall / full_wall:.2f} "
            f"| {keys} | {same} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--customers", type=int, default=20000)
    parser.add_argument("--orders-per-customer", type=int, default=20)
    parser.add_argument("--changed", type=float, default=0.01, help="share of customers changed")
    parser.add_argument("--cli", action="store_true", help="each run a lakewide process")
    parser.add_argument("--rounds", type=int, default=3, help="with --cli")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="lw_delta_join_"))
    warehouse = root / "warehouse"
    spark = create_session(
        "delta-join",
        "local[2]",
        spark_conf(
            "local[2]",
            "lw",
            {"type": "hadoop", "warehouse": str(warehouse)},
            {"spark.sql.shuffle.partitions": "4"},
        ),
    )
    _project(root / "project", warehouse)
    project = root / "project"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.src")
    customers, per = args.customers, args.orders_per_customer
    spark.sql(
        "CREATE TABLE lw.src.customers USING iceberg AS SELECT CAST(id AS INT) AS customer_id, "
        "CONCAT('tier_', id % 5) AS tier, CONCAT('region_', id % 17) AS region "
        f"FROM range({customers})"
    )
    spark.sql(
        "CREATE TABLE lw.src.orders USING iceberg AS SELECT id AS order_id, "
        f"CAST(id % {customers} AS INT) AS customer_id, id * 3 AS amount, id AS ts "
        f"FROM range({customers * per})"
    )
    _run(project, spark, full_refresh=False)  # bootstrap
    clock = Clock(spark)
    step = max(1, round(1 / args.changed))
    print(f"customers {customers}, orders {customers * per}, changed 1 in {step} customers")
    if args.cli:
        cli_rounds(project, spark, step, args.rounds)
        spark.stop()
        return
    print(
        "| round | delta run s | delta CPU s | rebuild s | rebuild CPU s | CPU ratio "
        "| wall ratio | orders re-derived | same rows |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    results: list[Any] = []
    for round_ in ("warm-up", "measured"):
        spark.sql(
            f"UPDATE lw.src.customers SET tier = CONCAT(tier, '+') WHERE customer_id % {step} = 0"
        )
        delta = clock.measure(lambda: results.append(_run(project, spark, full_refresh=False)))
        keys = sum(r["keys"] for r in results[-1].ranges if r["relation"].endswith("customers"))
        spark.sql("CREATE OR REPLACE TABLE lw.out.delta_copy USING iceberg AS TABLE lw.out.m")
        rebuild = clock.measure(lambda: _run(project, spark, full_refresh=True))
        same = same_rows(spark, "lw.out.delta_copy", "lw.out.m")
        print(
            f"| {round_} | {delta['s']:.1f} | {delta['cpu']:.1f} | {rebuild['s']:.1f} "
            f"| {rebuild['cpu']:.1f} | {delta['cpu'] / rebuild['cpu']:.2f} "
            f"| {delta['s'] / rebuild['s']:.2f} | {keys} | {same} |"
        )
    spark.stop()


if __name__ == "__main__":
    main()
