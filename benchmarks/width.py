"""Wide tables at width: how compile, Spark planning and runs grow with the sources.

    python benchmarks/width.py --sources 4,8,16 --keys 20000 --warmup 2
    python benchmarks/width.py --sources 4,8,16,32,64 --shapes 4x250,8x16+4 --keys 200000
    python benchmarks/width.py --sources 4,16 --keys 200000 --bootstraps 2  # least of 2
    python benchmarks/width.py --sources 4,8,16,32,64 --compile-only
    python benchmarks/width.py --sources 4,8,16,32,64 --plan-only --keys 1000 --warmup 2

Per shape (S sources x C own columns, ``+N`` columns fed by every source) and merge engine
(``benchmarks/width_models.py``; models written with ``lakewide.union_sources``):

* compile: Python CPU of rendering the project and compiling the model (``summary.md``, the
  least of 3 compiles; and ``--all-plans``), with the sizes of what it writes (no JVM);
* plan: Spark's planning (analysis, optimization, physical plan: ``EXPLAIN``, nothing runs) of
  lakewide's bootstrap, of its batch and MERGE for one source and for all, and of the FULL
  OUTER JOIN rebuild;
* bootstrap, 1% of keys in one source, 1% in every source, a run with nothing new: lakewide's
  run and the JOIN rebuild, in one Spark session; lakewide's table is compared with the
  JOIN's row for row after every step;
* ``lakewide run`` with nothing new as its own process (the command a user starts; no JVM):
  its CPU seconds.
* ``--plan-only``: the same steps on tiny tables, every statement a run sends planned apart
  (``benchmarks/width_plan_only.py``), next to the JOIN's planning.

Every action records wall and JVM CPU seconds (``benchmarks/run.py``'s Clock; Python CPU for
compile). A step above ``--budget`` seconds ends its engine's series: larger shapes skip it.
The growth exponent of each figure is the log-log slope over the value columns of the shapes
with 16 own columns. Writes ``benchmarks/results/width_<size>.{json,md}`` after every step.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402
import width_models  # noqa: E402
import width_plan_only  # noqa: E402
import width_report  # noqa: E402
from sqlglot import exp  # noqa: E402
from width_models import Shape  # noqa: E402
from width_setup import STEPS, manifest_of, open_spark, start_shape, write_round  # noqa: E402

from lakewide.compiler import compile_model  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.merge_planning import planned_as_merge  # noqa: E402
from lakewide.vocabulary.dialect import to_sql  # noqa: E402


def compile_figures(project: Path, engines: list[str]) -> dict[str, Any]:
    """Python CPU of rendering every model, and per engine of compiling its ``summary.md``
    and its ``--all-plans`` files; the bytes of the rendered model and of what is written."""
    started = time.process_time()
    manifest = manifest_of(project)
    figures: dict[str, Any] = {"render_cpu": round(time.process_time() - started, 3)}
    for engine in engines:
        node = manifest.models[f"wide_{engine}"]
        summary_cpu = float("inf")
        for _ in range(3):  # the least of 3: a garbage collection of earlier work is not its
            gc.collect()
            started = time.process_time()
            summary = compile_model(node).shown()
            summary_cpu = min(summary_cpu, time.process_time() - started)
        gc.collect()
        started = time.process_time()
        files = compile_model(node).shown(all_plans=True)
        figures[engine] = {
            "cpu": round(summary_cpu, 3),
            "all_plans_cpu": round(time.process_time() - started, 3),
            "model_bytes": len(node.sql),
            "summary_bytes": len(summary["summary.md"]),
            "all_plans_bytes": sum(len(t) for t in files.values()),
            "all_plans_files": len(files),
            "bootstrap_bytes": len(files.get("bootstrap.sql", "")),
            "merge_all_bytes": len(files.get("merge_all.sql", "")),
        }
    return figures


def bound(tree: exp.Expr) -> str:
    """A statement's text with its run-time parameters (``:name``, bound by a run) as NULL:
    the plan has their shape, and a view's body may hold no parameter marker."""
    tree = tree.copy()
    for marker in list(tree.find_all(exp.Placeholder)):
        marker.replace(exp.Null())
    return to_sql(tree, pretty=False, copy=False)


def explain(spark: Any, clock: run.Clock, sql: str) -> dict[str, Any]:
    """Spark's planning of one statement, nothing executed: ``EXPLAIN`` analyzes, optimizes
    and plans it (wall and JVM CPU seconds)."""
    said: list[Any] = []
    figures = clock.measure(lambda: said.extend(spark.sql("EXPLAIN " + sql).collect()))
    text = said[0][0] if said else ""
    if "Error occurred during query planning" in text:  # EXPLAIN says so instead of raising
        print(f"EXPLAIN failed: {text[:1000]!r} for {sql[:300]}", flush=True)
        return {**rounded(figures), "error": text[:1000]}
    return rounded(figures)


def rounded(figures: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 3) for k, v in figures.items()}


def least(kept: dict[str, float] | None, took: dict[str, float]) -> dict[str, float]:
    """Of two measurements of one action, the one of less JVM CPU."""
    return took if kept is None or took["cpu"] < kept["cpu"] else kept


def plan_bootstrap(
    spark: Any, clock: run.Clock, manifest: Any, engines: list[str], shape: Shape
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for engine in engines:
        compiled = compile_model(manifest.models[f"wide_{engine}"])
        out[engine] = {
            "bootstrap": explain(spark, clock, bound(compiled.bootstrap)),
            "join": explain(spark, clock, width_models.join_select(engine, shape)),
        }
    return out


def plan_merges(spark: Any, clock: run.Clock, manifest: Any, engines: list[str]) -> dict[str, Any]:
    """Planning of each engine's batch and MERGE, for one source and for every source. The
    MERGE reads its batch staged as a run stages it (``SparkAdapter.stage``: a local
    checkpoint), so its figure is the MERGE's own planning, not the batch's once more."""
    out: dict[str, Any] = {}
    for engine in engines:
        compiled = compile_model(manifest.models[f"wide_{engine}"])
        figures: dict[str, Any] = {}
        for label, merge in (("one", compiled.merges[0]), ("all", compiled.combined)):
            if merge is None:
                continue
            batch = bound(merge.batch)
            figures[f"batch_{label}"] = explain(spark, clock, batch)
            # the view the MERGE reads, materialized as a run's Stage step does
            spark.sql(batch).localCheckpoint(eager=True).createOrReplaceTempView(merge.batch_view)
            clock.quiet()  # the checkpoint's garbage collected before the MERGE is planned
            statement = bound(merge.statement)

            def plan(text: str = statement) -> dict[str, Any]:
                return explain(spark, clock, text)

            figures[f"merge_{label}"] = planned_as_merge(spark, plan)  # as a run plans it
        out[engine] = figures
    return out


def refreshed(spark: Any, adapter: SparkAdapter, manifest: Any, engine: str) -> bool:
    """Whether lakewide's table after its runs holds the rows of a full refresh: the table
    copied aside, dropped, bootstrapped again from every source's rows and compared with the
    copy (a merge engine's result does not depend on run boundaries)."""
    table, kept = f"lw.wide.wide_{engine}", f"lw.wide.runs_{engine}"
    spark.sql(f"CREATE OR REPLACE TABLE {kept} USING iceberg AS SELECT * FROM {table}")
    spark.sql(f"DROP TABLE {table} PURGE")
    run._run(manifest, f"wide_{engine}", adapter)
    return run.same_rows(spark, table, kept)


def noop_cli(project: Path, engines: list[str], runs: int = 3) -> dict[str, Any]:
    """``lakewide run`` of the engines' models as its own process when none has new input
    (what a user starts): its CPU seconds (user + system; it starts no JVM) and wall seconds,
    the median of ``runs`` after one not counted (it fills the user's caches)."""
    cpu: list[float] = []
    wall: list[float] = []
    for i in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds, out = run.cli_seconds(
            project, "run", "--select", " ".join(f"wide_{e}" for e in engines)
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if "Nothing to do" not in out:  # a model had input: the process ran it with Spark
            return {"error": out[-500:]}
        if i:
            used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            cpu.append(used)
            wall.append(seconds)
    return {"cpu": round(statistics.median(cpu), 3), "s": round(statistics.median(wall), 3)}


def bench_shape(
    shape: Shape,
    engines: list[str],
    keys: int,
    out: Path,
    budget: float,
    result: dict[str, Any],
    save: Callable[[], None],
    bootstraps: int = 1,
    joins: bool = True,
) -> list[str]:
    """Every step of ``shape``; returns the engines that stayed within the budget.
    ``bootstraps``: rounds of the bootstrap step (lakewide's table dropped and built again,
    the JOIN's replaced), the least JVM CPU of each kept: the first round of a shape pays
    the JVM's warm-up for its data, and lakewide's run goes first. Without ``joins``
    lakewide runs alone (a width whose JOIN rebuild this machine cannot hold) and its table
    is compared once, after the last step, with a full refresh of it (:func:`refreshed`)."""
    record, project = start_shape(shape, engines, out, result, "steps")
    record["compile"] = compile_figures(project, engines)
    save()
    spark = open_spark(project)
    clock = run.Clock(spark)
    manifest = manifest_of(project)
    adapter = SparkAdapter(manifest.output, spark=spark)
    live = list(engines)
    write_round(spark, shape, keys, "bootstrap")
    record["steps"]["plan_bootstrap"] = plan_bootstrap(spark, clock, manifest, live, shape)
    save()
    for step in STEPS:
        if step != "bootstrap":
            write_round(spark, shape, keys, step)
        times: dict[str, Any] = {}
        again = step == "noop"  # a run with nothing new renders the project again
        for engine in list(live):
            join = (
                f"CREATE OR REPLACE TABLE lw.wide.join_{engine} USING iceberg AS "
                + width_models.join_select(engine, shape)
            )
            for round_no in range(bootstraps if step == "bootstrap" else 1):
                if round_no:  # built again from nothing: the JVM warmed by the first round
                    spark.sql(f"DROP TABLE lw.wide.wide_{engine} PURGE")
                took = rounded(
                    clock.measure(
                        lambda e=engine, a=again: run._run(
                            manifest_of(project) if a else manifest, f"wide_{e}", adapter
                        )
                    )
                )
                times[engine] = least(times.get(engine), took)
                if step != "noop" and joins:
                    took = rounded(clock.measure(lambda j=join: spark.sql(j).collect()))
                    times[f"join_{engine}"] = least(times.get(f"join_{engine}"), took)
            if joins:
                record["equal"].setdefault(step, {})[engine] = run.same_rows(
                    spark, f"lw.wide.wide_{engine}", f"lw.wide.join_{engine}"
                )
            elif step == list(STEPS)[-1]:
                record["equal"].setdefault("refresh", {})[engine] = refreshed(
                    spark, adapter, manifest, engine
                )
            if times[engine]["s"] > budget:
                live.remove(engine)
                record.setdefault("over_budget", {})[engine] = step
        record["steps"][step] = times
        if step == "noop" and live:
            record["steps"]["noop_cli"] = noop_cli(project, live)
        if step == "bootstrap":
            record["steps"]["plan_merges"] = plan_merges(spark, clock, manifest, live)
        print(width_report.markdown(result), flush=True)
        save()
    spark.stop()
    return live


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sources", default="4,8,16", help="S values of S x 16 shapes")
    parser.add_argument("--shapes", default="", help="more shapes, e.g. 4x250,8x16+4")
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--engines", default=",".join(width_models.ENGINES))
    parser.add_argument("--budget", type=float, default=600.0, help="seconds a step may take")
    parser.add_argument(
        "--warmup", type=int, default=0, help="sources of a shape run first, not recorded"
    )
    parser.add_argument("--compile-only", action="store_true", help="the compile step only")
    parser.add_argument(
        "--plan-only",
        action="store_true",
        help="planning of every statement on tiny tables (--keys 200): width_plan_only",
    )
    parser.add_argument("--repeat", type=int, default=2, help="--plan-only: plans per statement")
    parser.add_argument(
        "--bootstraps", type=int, default=1, help="rounds of the bootstrap step, least kept"
    )
    parser.add_argument(
        "--no-join",
        action="store_true",
        help="lakewide alone, compared with a full refresh after its last step",
    )
    parser.add_argument(
        "--steps",
        default=",".join(width_plan_only.STEPS),
        help="--plan-only: the steps run (the first of bootstrap,one,all,noop)",
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/width"))
    parser.add_argument("--name", default="", help="results file name (width_<name>)")
    args = parser.parse_args()
    shapes = [Shape(int(s)) for s in args.sources.split(",") if s]
    shapes += [Shape.parse(s) for s in args.shapes.split(",") if s]
    engines = args.engines.split(",")
    name = args.name or (
        "compile"
        if args.compile_only
        else f"plans_{run_size(args.keys)}"
        if args.plan_only
        else run_size(args.keys)
    )
    stem = Path(__file__).resolve().parent / "results" / f"width_{name}"
    result: dict[str, Any] = {
        "keys": args.keys,
        "engines": engines,
        "budget": args.budget,
        "bootstraps": args.bootstraps,
        "joins": not args.no_join,
        "load_start": os.getloadavg(),
        "shapes": [],
    }
    report = width_plan_only.markdown if args.plan_only else width_report.markdown
    if args.plan_only:
        result["repeat"] = args.repeat

    def save() -> None:
        stem.with_suffix(".json").write_text(json.dumps(result, indent=1))
        stem.with_suffix(".md").write_text(report(result))

    args.out.mkdir(parents=True, exist_ok=True)
    cold = args.warmup and not (args.compile_only or args.plan_only)
    if cold:  # the first shape would pay for a cold JVM
        scratch = {**result, "shapes": []}
        bench_shape(Shape(args.warmup), engines, 1000, args.out, args.budget, scratch, lambda: None)
    if args.plan_only:
        if args.warmup:  # the same, plan only
            scratch = {**result, "shapes": []}
            width_plan_only.plan_shape(
                Shape(args.warmup), engines, args.keys, args.out, 1, scratch, lambda: None
            )
        for shape in shapes:
            steps = tuple(args.steps.split(","))
            width_plan_only.plan_shape(
                shape, engines, args.keys, args.out, args.repeat, result, save, steps
            )
            print(report(result), flush=True)
        shapes = []
    for shape in shapes:
        if args.compile_only:
            project = width_models.write_project(
                args.out / f"project_{shape.name}", args.out / "unused", shape, engines
            )
            result["shapes"].append(
                {
                    "shape": shape.name,
                    "sources": shape.sources,
                    "columns": shape.width,
                    "compile": compile_figures(project, engines),
                }
            )
            save()
            continue
        if not engines:
            break
        engines = bench_shape(
            shape,
            engines,
            args.keys,
            args.out,
            args.budget,
            result,
            save,
            args.bootstraps,
            joins=not args.no_join,
        )
    result["load_end"] = os.getloadavg()
    save()
    print(f"wrote {stem}.json and .md")


def run_size(keys: int) -> str:
    for unit, suffix in ((1_000_000, "m"), (1_000, "k")):
        if keys >= unit and keys % unit == 0:
            return f"{keys // unit}{suffix}"
    return str(keys)


if __name__ == "__main__":
    main()
