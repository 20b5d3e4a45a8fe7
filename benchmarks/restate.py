"""``run --restate`` of 1% of the keys (one key range) vs ``--full-refresh``, side by side.

    python benchmarks/restate.py --keys 1000000 --sources 4 --repeat 3

One Spark session: the benchmark's sources (``generate``: every key in every source, then a
1% round in each), a bootstrap, then restate, full refresh and a run with nothing new (the
floor of any run) alternated ``--repeat`` times, each restate a different key range of
``--fraction`` of the keys. Wall and JVM CPU seconds per action (``run.Clock``; a first
restate warms the JIT and is not counted), the commit's files, and a check after the last
restate that the table equals the JOIN rebuild. Writes ``--out`` (JSON) after every action.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402
import run as bench  # noqa: E402

from lakewide.project.manifest import load_manifest  # noqa: E402
from lakewide.project.settings import load_project  # noqa: E402
from lakewide.run.models.executor import run_models  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402


def _summary(spark: Any, table: str) -> dict[str, str]:
    [row] = spark.sql(
        f"SELECT summary FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()
    keep = ("added-data-files", "deleted-data-files", "added-delete-files", "added-records")
    return {k: v for k, v in row[0].items() if k in keep}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--variant", choices=list(bench.VARIANTS), default="mor")
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / "out" / "restate")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "restate_1m.json"
    )
    args = parser.parse_args()
    warehouse = args.work / "warehouse"
    shutil.rmtree(warehouse, ignore_errors=True)
    config = bench.VARIANTS[args.variant]
    project = generate.write_project(
        args.work / "project",
        warehouse,
        args.sources,
        {"wide": generate.wide_model(args.sources, config)},
    )
    output, conf, spark = bench.open_session(project, "lakewide-bench-restate")
    clock = bench.Clock(spark)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.bench")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.wide")
    manifest = load_manifest(load_project(project), output)
    adapter = SparkAdapter(output, spark=spark)
    log: dict[str, Any] = {
        "keys": args.keys,
        "sources": args.sources,
        "fraction": args.fraction,
        "variant": args.variant,
        "model": config,
        "actions": [],
    }

    def save() -> None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(log, indent=2) + "\n")

    for round_no, fraction in ((0, 1.0), (1, 0.01)):
        for i in range(args.sources):
            generate.write_source(spark, i, args.keys, round_no, fraction=fraction)

    def run(label: str, **options: Any) -> dict[str, Any]:
        results: list[Any] = []
        taken = clock.measure(
            lambda: results.extend(run_models(manifest, ["wide"], adapter, **options))
        )
        [result] = results
        assert result.status == "success", result.message
        entry = {
            "action": label,
            "wall_s": round(taken["s"], 2),
            "jvm_cpu_s": round(taken["cpu"], 2),
            "plan": result.plan,
            "message": result.message,
            "commit": _summary(spark, "lw.wide.wide"),
        }
        log["actions"].append(entry)
        save()
        print(json.dumps(entry), flush=True)
        return entry

    run("bootstrap")
    width = int(args.keys * args.fraction)
    # warm-up (not counted): the restate's statements compiled by the JIT once
    run("warm-up restate", restate=f"k >= 0 AND k < {width}")
    for n in range(1, args.repeat + 1):
        low = (n * 7919 * width) % (args.keys - width)
        run(f"restate k in [{low}, {low + width})", restate=f"k >= {low} AND k < {low + width}")
        run("full refresh", full_refresh=True)
        run("run, nothing new")  # the floor: what any run of the model costs
    rebuild = generate.join_rebuild("lw", "bench", args.sources, "lw.wide.join_rebuild")
    spark.sql(rebuild)
    low = ((args.repeat + 1) * 7919 * width) % (args.keys - width)
    run(f"restate k in [{low}, {low + width})", restate=f"k >= {low} AND k < {low + width}")
    log["equals_join_rebuild_after_restate"] = bench.same_rows(
        spark, "lw.wide.wide", "lw.wide.join_rebuild"
    )
    counted = log["actions"][2:-1]
    restates = [a for a in counted if a["plan"] == "restate"]
    fulls = [a for a in counted if a["action"] == "full refresh"]
    floors = [a for a in counted if a["action"] == "run, nothing new"]
    for key in ("wall_s", "jvm_cpu_s"):
        mean = {
            name: round(sum(a[key] for a in chosen) / len(chosen), 2)
            for name, chosen in (("restate", restates), ("full", fulls), ("floor", floors))
        }
        log[f"mean_{key}"] = mean
        log[f"restate_vs_full_{key}"] = round(mean["restate"] / mean["full"], 3)
    save()
    spark.stop()


if __name__ == "__main__":
    main()
