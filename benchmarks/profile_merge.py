"""Where the time of an incremental run goes: the MERGE's physical plan and operator metrics.

    python benchmarks/profile_merge.py --keys 200000 --variant mor --step one
    python benchmarks/profile_merge.py --keys 200000 --variant mor --step one \
        --conf spark.sql.join.preferSortMergeJoin=false

Builds one benchmark model (``benchmarks/run.py`` VARIANTS, with its session settings), runs
one incremental step, and prints for every SQL execution of that run (staging, counts, the
MERGE) its wall seconds, the JVM CPU seconds around each statement, the MERGE's ``EXPLAIN
FORMATTED`` plan and the per-operator metrics Spark's SQL listener recorded (rows, sort and
shuffle time, bytes). Writes ``benchmarks/out/profile_<variant>_<step>.txt``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402
import run as bench  # noqa: E402

from lakewide.project.manifest import load_manifest  # noqa: E402
from lakewide.project.profiles_file import load_output  # noqa: E402
from lakewide.project.settings import load_project  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.runtime import create_session, spark_conf  # noqa: E402
from lakewide.vocabulary.dialect import to_sql  # noqa: E402


def executions(spark: Any) -> list[Any]:
    """Spark's SQL executions so far (the listener keeps them with UI disabled too)."""
    store = spark._jsparkSession.sharedState().statusStore()
    listed = store.executionsList()
    return [listed.apply(i) for i in range(listed.size())]


def metrics_text(spark: Any, execution: Any) -> list[str]:
    """Operator name, metric name and value of one execution's plan graph."""
    store = spark._jsparkSession.sharedState().statusStore()
    values = store.executionMetrics(execution.executionId())
    graph = store.planGraph(execution.executionId())
    nodes = graph.allNodes()
    lines = []
    for i in range(nodes.size()):
        node = nodes.apply(i)
        metrics = node.metrics()
        shown = []
        for j in range(metrics.size()):
            metric = metrics.apply(j)
            value = values.get(metric.accumulatorId())
            if value.isDefined():
                shown.append(f"{metric.name()}={value.get().replace(chr(10), ' ')}")
        if shown:
            lines.append(f"  [{node.id()}] {node.name()}: " + "; ".join(shown))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--variant", default="mor", choices=list(bench.VARIANTS))
    parser.add_argument("--step", default="one", choices=["one", "all", "clustered"])
    parser.add_argument("--conf", nargs="*", default=[], help="key=value session settings")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    warehouse = out / f"profile_warehouse_{args.keys}"
    shutil.rmtree(warehouse, ignore_errors=True)
    model, session = bench.variant_settings(args.variant)
    project = generate.write_project(
        out / f"profile_project_{args.keys}",
        warehouse,
        args.sources,
        {"wide": generate.wide_model(args.sources, model)},
    )
    output = load_output(project / "profiles.yml", "bench", None, project)
    conf = spark_conf(
        output.master, output.catalog, output.iceberg_catalog_properties(), output.spark_conf
    )
    spark = create_session("lakewide-profile", output.master, conf)
    clock = bench.Clock(spark)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.bench")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.wide")
    manifest = load_manifest(load_project(project), output)
    adapter = SparkAdapter(output, spark=spark)
    for key, value in [*session.items(), *(c.split("=", 1) for c in args.conf)]:
        spark.conf.set(key, value)
    for i in range(args.sources):
        generate.write_source(spark, i, args.keys, 0)
    boot = clock.measure(lambda: bench._run(manifest, "wide", adapter))
    _, changed, clustered = bench.STEPS[args.step]
    for i in range(args.sources) if changed is None else changed:
        generate.write_source(
            spark,
            i,
            args.keys,
            1,
            fraction=bench.CHANGED,
            clustered=clustered,
        )

    report: list[str] = [
        f"keys={args.keys} variant={args.variant} step={args.step} "
        f"conf={args.conf} session={session}",
        f"bootstrap: {boot['s']:.1f} s wall, {boot['cpu']:.1f} s JVM CPU",
    ]
    statements: list[tuple[str, dict[str, float]]] = []
    real_sql, real_commit = adapter.sql, adapter.commit

    def sql(statement: Any) -> Any:
        cost: dict[str, float] = {}
        frame: list[Any] = []
        cost.update(clock.measure(lambda: frame.append(real_sql(statement))))
        statements.append((to_sql(statement, pretty=False)[:160], cost))
        return frame[0]

    def commit(statement: Any, properties: dict[str, str]) -> None:
        text = to_sql(statement, pretty=False)
        report.extend(
            [
                "",
                "MERGE:",
                text,
                "",
                "EXPLAIN FORMATTED:",
                spark.sql("EXPLAIN FORMATTED " + text).collect()[0][0],
            ]
        )
        cost = clock.measure(lambda: real_commit(statement, properties))
        statements.append(("COMMIT " + text[:150], cost))

    adapter.sql, adapter.commit = sql, commit  # type: ignore[method-assign]
    before = len(executions(spark))
    total = clock.measure(lambda: bench._run(manifest, "wide", adapter))
    adapter.sql, adapter.commit = real_sql, real_commit  # type: ignore[method-assign]
    report += [
        "",
        f"incremental run: {total['s']:.1f} s wall, {total['cpu']:.1f} s JVM CPU",
        "",
        "statements (lazy ones cost at their action):",
    ]
    report += [f"  {c['s']:6.2f} s wall {c['cpu']:6.2f} s CPU  {text}" for text, c in statements]
    report += ["", "SQL executions of the incremental run:"]
    for execution in executions(spark)[before:]:
        end = execution.completionTime()
        seconds = (
            (end.get().getTime() - execution.submissionTime()) / 1000 if end.isDefined() else -1
        )
        report.append(
            f"- #{execution.executionId()} {seconds:.2f} s: {execution.description()[:120]!r}"
        )
        report += metrics_text(spark, execution)
    text = "\n".join(report)
    print(text)
    (out / f"profile_{args.variant}_{args.step}.txt").write_text(text)
    spark.stop()


if __name__ == "__main__":
    main()
