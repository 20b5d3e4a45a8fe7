"""Where a wide bootstrap's time goes: its SELECT under settings and rewrites, beside the JOIN.

    python benchmarks/width_bootstrap.py --sources 16 --keys 20000 --engines agg,pu_groups

One shape's sources are written once (every key, as ``width.py``'s bootstrap round). In one
Spark session, per engine and round, each query runs into Spark's ``noop`` sink (it executes
the whole plan and writes nothing), and its wall and JVM CPU seconds are recorded:

* ``join``: the FULL OUTER JOIN rebuild of the same table (``width_models.join_select``);
* ``boot``: lakewide's bootstrap SELECT as compiled (the per-source pre-folds LEFT JOINed to
  the union of their keys), under each ``--variants`` session setting (``VARIANTS``);
* ``one_shuffle``: the same folds and the same per-column assembly, but the folds put
  together with one shuffle (``one_shuffle``): a UNION ALL of ``(key, STRUCT(fold's
  columns))`` with one struct column per source, grouped by key.

The rewrite's rows are compared with the compiled bootstrap's (``EXCEPT ALL`` both ways).
Writes ``benchmarks/results/width_bootstrap_<keys>.json``.
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
from width_setup import manifest_of, open_spark, start_shape, write_round  # noqa: E402

from lakewide.compiler import compile_model  # noqa: E402
from lakewide.dialect import to_sql  # noqa: E402

VARIANTS: dict[str, dict[str, str]] = {
    "base": {},
    # whole-stage codegen off for a stage whose generated method is past HotSpot's JIT limit
    "huge_method_8000": {"spark.sql.codegen.hugeMethodLimit": "8000"},
    # adaptive execution keeps the shuffle's partitions (no single task for the last stage)
    "no_coalesce": {"spark.sql.adaptive.coalescePartitions.enabled": "false"},
}


def one_shuffle(query: exp.Select) -> str:
    """The compiled bootstrap ``query`` (``WITH folds SELECT ... FROM keys LEFT JOIN folds``)
    with its folds put together by one shuffle: each fold's rows as ``(k, STRUCT(columns))``
    in its own struct column (NULL in the other sources' rows), UNION ALL, grouped by ``k``
    with ``FIRST(struct, TRUE)`` per source; a fold's column ``f.c`` becomes ``s.c``."""
    q = query.copy()
    ctes = q.args["with_"].expressions
    folds = [cte.alias for cte in ctes]
    union: exp.Query | None = None
    for i, cte in enumerate(ctes):
        names = [e.alias_or_name for e in cte.this.expressions if e.alias_or_name != "k"]
        row = exp.Struct(expressions=[exp.alias_(exp.column(n), n) for n in names])
        structs = [exp.alias_(row if j == i else exp.Null(), f"__s{j}") for j in range(len(folds))]
        branch = exp.select(exp.column("k"), *structs).from_(folds[i])
        union = branch if union is None else exp.union(union, branch, distinct=False)
    assert union is not None
    firsts = [
        exp.alias_(exp.func("FIRST", exp.column(f"__s{j}"), exp.true()), f"__s{j}")
        for j in range(len(folds))
    ]
    grouped = exp.select(exp.column("k"), *firsts).from_(union.subquery("u")).group_by("k")
    for column in list(q.find_all(exp.Column)):
        if column.table in folds:
            struct = exp.column(f"__s{folds.index(column.table)}", table="__lw_keys")
            column.replace(exp.Dot(this=struct, expression=exp.to_identifier(column.name)))
    q.set("joins", None)
    q.set("from_", exp.From(this=grouped.subquery("__lw_keys")))
    return to_sql(q, pretty=False)


def noop(spark: Any, sql: str) -> None:
    spark.sql(sql).write.format("noop").mode("overwrite").save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sources", type=int, default=16)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--engines", default="agg,pu_groups")
    parser.add_argument("--variants", default="base", help=",".join(VARIANTS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/width"))
    args = parser.parse_args()
    shape, engines = Shape(args.sources), args.engines.split(",")
    result: dict[str, Any] = {"keys": args.keys, "load_start": os.getloadavg(), "shapes": []}
    record, project = start_shape(shape, engines, args.out, result, "bootstrap")
    spark = open_spark(project)
    clock, manifest = run.Clock(spark), manifest_of(project)
    write_round(spark, shape, args.keys, "bootstrap")
    stem = Path(__file__).resolve().parent / "results" / f"width_bootstrap_{args.keys}"
    figures: list[dict[str, Any]] = record["bootstrap"].setdefault("runs", [])
    for engine in engines:
        query = compile_model(manifest.models[f"wide_{engine}"]).bootstrap.expression
        boot = bound(query)
        queries = {
            "join": width_models.join_select(engine, shape),
            "one_shuffle": one_shuffle(query),
        }
        for round_no in range(args.rounds):
            runs = [("join", "base"), *(("boot", v) for v in args.variants.split(","))]
            runs.append(("one_shuffle", "base"))
            for what, variant in runs:
                sql = queries.get(what, boot)

                def timed(text: str = sql) -> dict[str, float]:
                    return clock.measure(lambda: noop(spark, text))

                took = run.with_session(spark, VARIANTS[variant], timed)
                row = {"engine": engine, "round": round_no, "query": what, "variant": variant}
                figures.append({**row, **{k: round(v, 2) for k, v in took.items()}})
                print(json.dumps(figures[-1]), flush=True)
                stem.with_suffix(".json").write_text(json.dumps(result, indent=1))
        a, b = spark.sql(boot), spark.sql(queries["one_shuffle"])
        record["equal"][engine] = a.exceptAll(b).isEmpty() and b.exceptAll(a).isEmpty()
        print(engine, "equal:", record["equal"][engine], flush=True)
    result["load_end"] = os.getloadavg()
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1))
    spark.stop()


if __name__ == "__main__":
    main()
