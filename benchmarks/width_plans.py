"""Plan-level cost of lakewide's statements as a wide model grows: S sources x C own columns.

For each S this generates a ``partial_update`` model with a sequence field (source ``i`` owns
``s{i}_c0 .. s{i}_c{C-1}``, every branch carries the key and the sequence), compiles it with
lakewide's compiler (no project, no jinja) and, on temp views of ``--rows`` keys per source in
one local Spark, times per statement:

* ``compile``: building the statement's tree and printing it (CPU of this process), and its
  size in characters;
* ``analyze``: ``spark.sql(text)`` (parsing and analysis), ``optimize``: the optimized plan,
  ``physical``: the executed plan (the three together are the planning);
* ``execute``: the DataFrame written to Spark's ``noop`` sink (plans once more, then runs).

Statements: ``bootstrap`` (the fold of every source, what ``lakewide build`` sends),
``batch`` (the combined batch of every source's new rows, what a run stages before its one
MERGE), ``join`` (the FULL OUTER JOIN rebuild of the same width, the baseline). The log-log
slope of each figure against the column count is printed at the end.

    python benchmarks/width_plans.py --sources 4 8 16 32 [--columns 16] [--rows 2000]

Results go to ``benchmarks/results/<name>.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import generate

from lakewide.compiler.model.wide_model import WideModel, analyze
from lakewide.compiler.statements.build_bootstrap import bootstrap_query
from lakewide.compiler.statements.build_merge import combined_batch
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary.dialect import to_sql

RESULTS = Path(__file__).parent / "results"
STEPS = ("analyze", "optimize", "physical", "execute")


def own(source: int, columns: int) -> list[str]:
    """The columns source ``source`` owns."""
    return [f"s{source}_c{j}" for j in range(columns)]


def model_sql(sources: int, columns: int) -> str:
    """The UNION ALL-with-NULLs model over the views ``src_<i>``."""
    every = [c for i in range(sources) for c in own(i, columns)]
    branches = []
    for i in range(sources):
        mine = set(own(i, columns))
        cols = [c if c in mine else f"CAST(NULL AS BIGINT) AS {c}" for c in every]
        branches.append(f"SELECT k, seq, {', '.join(cols)} FROM src_{i}")
    return "\nUNION ALL\n".join(branches)


def wide(sources: int, columns: int) -> WideModel:
    """The model analyzed as lakewide's compiler sees it."""
    sql = model_sql(sources, columns)
    config = {"merge_engine": "partial_update", "primary_key": "k", "sequence_field": "seq"}
    node = ModelNode(
        name="wide",
        path=Path("models/wide.sql"),
        raw_sql=sql,
        sql=sql,
        config=parse_model_config(config, path="wide.sql"),
        relation=Relation("", "", "wide"),
    )
    return analyze(node)


def join_sql(sources: int, columns: int) -> str:
    """The baseline: latest row per key per source, FULL OUTER JOINed (benchmarks/generate)."""
    parts = []
    for i in range(sources):
        cols = ", ".join(f"MAX_BY({c}, seq) AS {c}" for c in own(i, columns))
        parts.append(f"(SELECT k, {cols}, MAX(seq) AS seq FROM src_{i} GROUP BY k) AS t{i}")
    sql, key = generate.full_outer_joins(parts)
    values = ", ".join(f"t{i}.{c}" for i in range(sources) for c in own(i, columns))
    seqs = ", ".join(f"t{i}.seq" for i in range(sources))
    return f"SELECT {key} AS k, {values}, GREATEST({seqs}) AS seq FROM {sql}"


def statements(sources: int, columns: int) -> dict[str, tuple[str, float]]:
    """Statement name -> (SQL text, compile CPU seconds)."""
    out = {}
    started = time.process_time()
    model = wide(sources, columns)
    analyzed = time.process_time() - started
    for name, build in (
        ("bootstrap", lambda: to_sql(bootstrap_query(model))),
        ("batch", lambda: to_sql(combined_batch(model))),
    ):
        started = time.process_time()
        text = build()
        out[name] = (text, analyzed + time.process_time() - started)
    out["join"] = (join_sql(sources, columns), 0.0)
    return out


def register(spark: Any, sources: int, columns: int, rows: int) -> None:
    """Temp views ``src_<i>``: ``rows`` keys, 2 rows a key, hashed values."""
    from pyspark.sql import functions as F

    for i in range(sources):
        frame = spark.range(rows * 2).select(
            (F.col("id") % rows).alias("k"), F.floor(F.col("id") / rows).cast("int").alias("seq")
        )
        values = [
            (F.abs(F.hash(F.col("k"), F.col("seq"), F.lit(c))) % 1000).cast("bigint").alias(c)
            for c in own(i, columns)
        ]
        frame.select("k", "seq", *values).createOrReplaceTempView(f"src_{i}")


def timed(spark: Any, text: str) -> dict[str, float]:
    """Seconds of each planning step and of the execution."""
    out: dict[str, float] = {}
    started = time.perf_counter()
    frame = spark.sql(text)
    out["analyze"] = time.perf_counter() - started
    execution = frame._jdf.queryExecution()
    started = time.perf_counter()
    execution.optimizedPlan()
    out["optimize"] = time.perf_counter() - started
    started = time.perf_counter()
    execution.executedPlan()
    out["physical"] = time.perf_counter() - started
    started = time.perf_counter()
    frame.write.format("noop").mode("overwrite").save()
    out["execute"] = time.perf_counter() - started
    return out


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(y) against log(x)."""
    pairs = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(pairs) < 2:
        return None
    mx = sum(x for x, _ in pairs) / len(pairs)
    my = sum(y for _, y in pairs) / len(pairs)
    den = sum((x - mx) ** 2 for x, _ in pairs)
    return sum((x - mx) * (y - my) for x, y in pairs) / den if den else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--columns", type=int, default=16)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--skip", nargs="*", default=[], help="statements not to run on Spark")
    parser.add_argument("--name", default="width_plans")
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        # the JOIN rebuild nests one COALESCE per source: past 12 sources it needs more
        .config("spark.sql.analyzer.maxIterations", "1000")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark, 2, 2, 10)
    timed(spark, join_sql(2, 2))  # warm the JVM up
    results: list[dict[str, Any]] = []
    for sources in args.sources:
        register(spark, sources, args.columns, args.rows)
        for name, (text, compile_cpu) in statements(sources, args.columns).items():
            row: dict[str, Any] = {
                "sources": sources,
                "columns": sources * args.columns,
                "statement": name,
                "chars": len(text),
                "compile": compile_cpu,
            }
            if name not in args.skip:
                row.update(timed(spark, text))
                row["plan"] = row["analyze"] + row["optimize"] + row["physical"]
            results.append(row)
            print(json.dumps(row), flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    for name in sorted({r["statement"] for r in results}):
        mine = [r for r in results if r["statement"] == name]
        for metric in ("chars", "compile", "plan", "execute"):
            got = slope([(r["columns"], r[metric]) for r in mine if metric in r])
            if got is not None:
                print(f"slope {name} {metric}: {got:.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
