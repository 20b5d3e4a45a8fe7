"""``--threads``: wall seconds of one run of a DAG of independent models, one thread vs several.

A synthetic project: ``--models`` key tables (two sources each, partial update) over two
source tables of ``--rows`` keys, and one table model reading them all. Each variant bootstraps
every model in fresh namespaces, then merges one new batch per source (the incremental plan).
After a warm-up run, the variants run in the order 1, N, N, 1 on the one SparkSession, and the
medians are printed side by side.

    PYTHONPATH=$PWD python benchmarks/threads.py --models 4 --threads 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lakewide.project.graph import select  # noqa: E402
from lakewide.run.models.executor import run_models  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.runtime import create_session, spark_conf  # noqa: E402
from tests.integration.conftest import ProjectRun  # noqa: E402
from tests.support.project_factory import make_project  # noqa: E402

MODEL = """\
{{{{ config(merge_engine='partial_update', primary_key=['k']) }}}}
SELECT k, a{i} AS a, CAST(NULL AS BIGINT) AS b FROM {{{{ source('src', 'a') }}}}
UNION ALL
SELECT k, CAST(NULL AS BIGINT), b{i} FROM {{{{ source('src', 'b') }}}}
"""


def project(root: Path, warehouse: Path, n: int, models: int) -> ProjectRun:
    namespace, source = f"th{n}_out", f"th{n}_src"
    files = {
        "profiles.yml": (
            "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
            f"      warehouse: {warehouse}\n      namespace: {namespace}\n"
        ),
        "models/sources.yml": (
            f"sources:\n  - name: src\n    schema: {source}\n"
            "    tables:\n      - name: a\n      - name: b\n"
        ),
        "models/all_wide.sql": "{{ config(materialized='table') }}\n"
        + "\nUNION ALL\n".join(f"SELECT k, a, b FROM {{{{ ref('m{i}') }}}}" for i in range(models)),
    }
    for i in range(models):
        files[f"models/m{i}.sql"] = MODEL.format(i=i)
    return ProjectRun(make_project(root / f"p{n}", files), None, namespace, source)


def write_sources(spark: Any, run: ProjectRun, rows: int, models: int, start: int) -> None:
    for table in ("a", "b"):
        columns = ", ".join(f"id * {i + 1} AS {table}{i}" for i in range(models))
        frame = spark.sql(
            f"SELECT CAST(id AS INT) AS k, {columns} FROM range({start}, {start + rows})"
        )
        name = f"lw.{run.seed_schema}.{table}"
        if spark.catalog.tableExists(name):
            frame.writeTo(name).append()
        else:
            frame.writeTo(name).using("iceberg").create()


def one_variant(
    spark: Any, root: Path, warehouse: Path, n: int, models: int, rows: int, threads: int
) -> tuple[float, float]:
    """Seconds of the bootstrap run and of the incremental run with ``threads``."""
    run = project(root, warehouse, n, models)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{run.seed_schema}")
    write_sources(spark, run, rows, models, 0)
    seconds = []
    for step in range(2):
        if step:
            write_sources(spark, run, rows // 10, models, rows - rows // 20)
        run.spark = spark
        manifest = run.manifest()
        names = select(manifest.models, None, None, manifest.project.root)
        adapter = SparkAdapter(manifest.output, spark=spark)
        started = time.perf_counter()
        results = run_models(manifest, names, adapter, threads=threads)
        seconds.append(time.perf_counter() - started)
        failed = [r.message for r in results if r.status != "success"]
        assert not failed, failed
    return seconds[0], seconds[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, warehouse = Path(tmp), Path(tmp) / "warehouse"
        conf = spark_conf(args.master, "lw", {"type": "hadoop", "warehouse": str(warehouse)}, {})
        spark = create_session("lakewide-threads-bench", args.master, conf)
        one_variant(spark, root, warehouse, 0, args.models, args.rows, 1)  # warm-up
        timings: dict[int, list[tuple[float, float]]] = {1: [], args.threads: []}
        for n, threads in enumerate((1, args.threads, args.threads, 1), start=1):
            timings[threads].append(
                one_variant(spark, root, warehouse, n, args.models, args.rows, threads)
            )
            print(
                f"threads={threads}: bootstrap {timings[threads][-1][0]:.1f}s, "
                f"incremental {timings[threads][-1][1]:.1f}s",
                flush=True,
            )
        spark.stop()
    print(
        f"\n{args.models} independent key tables + 1 table over them, {args.rows} keys, "
        f"{args.master}; medians of 2 runs each (order 1, N, N, 1 after a warm-up)"
    )
    print(f"| run | --threads 1 | --threads {args.threads} | ratio |")
    print("|---|---|---|---|")
    for i, label in enumerate(("bootstrap", "incremental")):
        one = statistics.median(t[i] for t in timings[1])
        many = statistics.median(t[i] for t in timings[args.threads])
        print(f"| {label} | {one:.1f}s | {many:.1f}s | {one / many:.2f}x |")


if __name__ == "__main__":
    main()
