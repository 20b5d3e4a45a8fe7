"""Where a wide bootstrap's time goes: its SELECT under settings and rewrites, beside the JOIN.

    python benchmarks/width_bootstrap.py --sources 16 --keys 20000 --engines agg,pu_groups

One shape's sources are written once (every key, as ``width.py``'s bootstrap round). In one
Spark session, per engine and round, each query runs into Spark's ``noop`` sink (it executes
the whole plan and writes nothing), and its wall and JVM CPU seconds are recorded:

* ``join``: the FULL OUTER JOIN rebuild of the same table (``width_models.join_select``);
* ``boot``: lakewide's bootstrap SELECT as compiled, under each ``--variants`` session
  setting (``VARIANTS``);
* a bootstrap that LEFT JOINs its per-source folds to the union of their keys (partial_update
  with a sequence field, deduplicate, first_row), ``one_shuffle``: the same folds and
  per-column assembly, the folds put together with one shuffle as the compiler does for
  aggregation and sequence groups (``folds/one_shuffle.py``);
* a bootstrap put together by one shuffle (aggregation, sequence groups), ``payload``: the same
  union without NULL placeholders, one common payload per branch, and ``typed``: the bootstrap
  as a run sends it, compiled again with its folds' column types (``width_placeholders``).

Each rewrite's rows are compared with the compiled bootstrap's (``EXCEPT ALL`` both ways).
Writes ``benchmarks/results/width_bootstrap_<name or keys>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402
import width_models  # noqa: E402
from sqlglot import exp  # noqa: E402
from width import bound  # noqa: E402
from width_models import Shape  # noqa: E402
from width_placeholders import payload_form, shuffled, typed_form  # noqa: E402
from width_setup import manifest_of, open_spark, start_shape, write_round  # noqa: E402

from lakewide.compiler import analyze, compile_model  # noqa: E402

VARIANTS: dict[str, dict[str, str]] = {
    "base": {},
    # whole-stage codegen off for a stage whose generated method is past HotSpot's JIT limit
    "huge_method_8000": {"spark.sql.codegen.hugeMethodLimit": "8000"},
    # adaptive execution keeps the shuffle's partitions (no single task for the last stage)
    "no_coalesce": {"spark.sql.adaptive.coalescePartitions.enabled": "false"},
}


def variants(spark: Any, node: Any, query: exp.Select) -> dict[str, str]:
    """The bootstrap's rewrites measured beside it: ``one_shuffle`` where it joins its folds,
    else ``payload`` and ``typed`` (the one-shuffle union without NULL placeholders)."""
    if query.args.get("joins"):
        return {"one_shuffle": bound(shuffled(analyze(node), query))}
    return {"payload": bound(payload_form(query)), "typed": bound(typed_form(spark, node, query))}


def noop(spark: Any, sql: str) -> None:
    spark.sql(sql).write.format("noop").mode("overwrite").save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sources", type=int, default=16)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--engines", default="agg,pu_groups")
    parser.add_argument("--variants", default="base", help=",".join(VARIANTS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--name", default="", help="results file name (width_bootstrap_<name>)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/width"))
    args = parser.parse_args()
    shape, engines = Shape(args.sources), args.engines.split(",")
    result: dict[str, Any] = {"keys": args.keys, "load_start": os.getloadavg(), "shapes": []}
    record, project = start_shape(shape, engines, args.out, result, "bootstrap")
    spark = open_spark(project)
    clock, manifest = run.Clock(spark), manifest_of(project)
    write_round(spark, shape, args.keys, "bootstrap")
    stem = Path(__file__).resolve().parent / "results" / f"width_bootstrap_{args.name or args.keys}"
    figures: list[dict[str, Any]] = record["bootstrap"].setdefault("runs", [])
    for engine in engines:
        node = manifest.models[f"wide_{engine}"]
        query = compile_model(node).bootstrap.expression
        boot = bound(query)
        rewrites = variants(spark, node, query)
        queries = {"join": width_models.join_select(engine, shape), **rewrites}
        for round_no in range(args.rounds):
            runs = [("join", "base"), *(("boot", v) for v in args.variants.split(","))]
            runs += [(name, "base") for name in rewrites]
            for what, variant in runs:
                sql = queries.get(what, boot)

                def timed(text: str = sql) -> dict[str, float]:
                    return clock.measure(lambda: noop(spark, text))

                took = run.with_session(spark, VARIANTS[variant], timed)
                row = {"engine": engine, "round": round_no, "query": what, "variant": variant}
                figures.append({**row, **{k: round(v, 2) for k, v in took.items()}})
                print(json.dumps(figures[-1]), flush=True)
                stem.with_suffix(".json").write_text(json.dumps(result, indent=1))
        for name in rewrites:
            a, b = spark.sql(boot), spark.sql(queries[name])
            same = a.exceptAll(b).isEmpty() and b.exceptAll(a).isEmpty()
            record["equal"][f"{engine} {name}"] = same
            print(engine, name, "equal:", same, flush=True)
    result["load_end"] = os.getloadavg()
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1))
    spark.stop()


if __name__ == "__main__":
    main()
