"""lakewide vs the JOIN rebuild, side by side in one Spark session; prints a markdown table.

    python benchmarks/run.py --keys 1000000 --sources 4

Ratios are what to read (absolute seconds drift on shared machines). Each lakewide table is
checked row for row against the JOIN rebuild after every step.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402

from lakewide.engine.adapter import SparkAdapter  # noqa: E402
from lakewide.engine.runtime import create_session, spark_conf  # noqa: E402
from lakewide.executor import run_models  # noqa: E402
from lakewide.manifest import load_manifest  # noqa: E402
from lakewide.profiles import load_output  # noqa: E402
from lakewide.project import load_project  # noqa: E402

VARIANTS = {
    "cow": "merge_engine='partial_update', primary_key='k', sequence_field='seq'",
    "mor": "merge_engine='partial_update', primary_key='k', sequence_field='seq', "
           "write_mode='merge-on-read'",
    "cow_bucket16": "merge_engine='partial_update', primary_key='k', sequence_field='seq', "
                    "partition_by=['bucket(16, k)']",
}


def timed(action: Any) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def same_rows(spark: Any, left: str, right: str) -> bool:
    a, b = spark.table(left), spark.table(right).select(*spark.table(left).columns)
    return a.exceptAll(b).count() == 0 and b.exceptAll(a).count() == 0


def cli_seconds(project: Path, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "lakewide", "--project-dir", str(project), *args],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    return time.perf_counter() - started, done.stdout


def bench_size(out: Path, keys: int, sources: int) -> dict[str, Any]:
    warehouse = out / f"warehouse_{keys}"
    shutil.rmtree(warehouse, ignore_errors=True)
    project = generate.write_project(out / f"project_{keys}", warehouse, sources,
                                     {f"wide_{v}": generate.wide_model(sources, c)
                                      for v, c in VARIANTS.items()})
    manifest_project = load_project(project)
    output = load_output(project / "profiles.yml", "bench", None, project)
    conf = spark_conf(output.master, output.catalog, output.iceberg_catalog_properties(),
                      output.spark_conf)
    spark = create_session("lakewide-bench", output.master, conf)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.bench")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.wide")
    manifest = load_manifest(manifest_project, output)
    adapter = SparkAdapter(output, spark=spark)
    for i in range(sources):
        generate.write_source(spark, f"lw.bench.s{i}", i, keys, 0)
    join_sql = generate.join_rebuild("lw", "bench", sources, "lw.wide.join_rebuild")
    rows: dict[str, dict[str, float]] = {}

    def step(name: str) -> None:
        rows[name] = {}
        for variant in VARIANTS:
            model = f"wide_{variant}"
            seconds = timed(lambda: _run(manifest, model, adapter))
            rows[name][variant] = seconds
        rows[name]["join"] = timed(lambda: spark.sql(join_sql).collect())
        for variant in VARIANTS:
            assert same_rows(spark, f"lw.wide.wide_{variant}", "lw.wide.join_rebuild"), \
                (name, variant)

    step("bootstrap")
    generate.write_source(spark, "lw.bench.s0", 0, keys, 1, fraction=0.01)
    step("1% of keys changed in one source")
    for i in range(sources):
        generate.write_source(spark, f"lw.bench.s{i}", i, keys, 2, fraction=0.01)
    step("1% of keys changed in every source")
    spark.stop()
    noop, said = cli_seconds(project, "run")
    assert "Nothing to do" in said, said
    return {"keys": keys, "sources": sources, "steps": rows, "noop_run_seconds": noop}


def _run(manifest: Any, model: str, adapter: SparkAdapter) -> None:
    [result] = run_models(manifest, [model], adapter)
    if result.status != "success":
        raise SystemExit(result.message)


def compile_many(out: Path, models: int, sources: int) -> float:
    root = out / f"compile_{models}"
    shutil.rmtree(root, ignore_errors=True)
    sql = generate.wide_model(sources, VARIANTS["cow"])
    generate.write_project(root, out / "unused_warehouse", sources,
                           {f"m{i:04d}": sql for i in range(models)})
    seconds, _ = cli_seconds(root, "compile")
    return seconds


def markdown(result: dict[str, Any]) -> str:
    lines = [f"### {result['keys']:,} keys, {result['sources']} sources "
             f"({result['sources'] * generate.COLUMNS} value columns)", "",
             "| step | JOIN rebuild s | " + " | ".join(f"{v} s (x JOIN)" for v in VARIANTS) + " |",
             "|---|---|" + "---|" * len(VARIANTS)]
    for step, times in result["steps"].items():
        join = times["join"]
        cells = " | ".join(f"{times[v]:.1f} ({times[v] / join:.2f})" for v in VARIANTS)
        lines.append(f"| {step} | {join:.1f} | {cells} |")
    lines.append("")
    lines.append(f"no-op `lakewide run`: {result['noop_run_seconds']:.2f} s wall (no JVM)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--compile-models", type=int, default=500)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = [bench_size(args.out, keys, args.sources) for keys in args.keys]
    compile_seconds = compile_many(args.out, args.compile_models, args.sources)
    report = "\n\n".join(markdown(r) for r in results)
    report += f"\n\n`lakewide compile` of {args.compile_models} models: {compile_seconds:.2f} s wall\n"
    print(report)
    (args.out / "results.json").write_text(json.dumps(
        {"sizes": results, "compile_seconds": compile_seconds}, indent=2))
    (args.out / "results.md").write_text(report)


if __name__ == "__main__":
    main()
