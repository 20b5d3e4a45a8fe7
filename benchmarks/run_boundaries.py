"""Do results depend on how records were split into runs? Counts differing keys per run.

    python benchmarks/run_boundaries.py --keys 400 --runs 4

Two models over random out-of-order records with NULLs (the scenario of the run-boundaries
contract): a 3-source partial_update with a sequence field, and a 2-source aggregation with
``last_non_null_value`` and a table-level sequence. After each run the incremental table is
compared with a ``--full-refresh`` of the same model over the same records and with a plain
Python fold of all records in place order ``(sequence, source, arrival)``; it prints, per
run, the number of keys where they differ (0 is the contract).
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path
from typing import Any

from lakewide.project.manifest import load_manifest
from lakewide.project.profiles_file import load_output
from lakewide.project.settings import load_project
from lakewide.run.models.executor import run_models
from lakewide.spark.adapter import SparkAdapter
from lakewide.spark.runtime import create_session, spark_conf

COLUMNS = {0: ["a", "b"], 1: ["b", "c"], 2: ["c", "d"]}
MODELS = {
    "pu": ("merge_engine='partial_update', primary_key='k', sequence_field='seq'", 3),
    "agg": (
        "merge_engine='aggregation', primary_key='k', sequence_field='seq', "
        "default_aggregate='last_non_null_value'",
        2,
    ),
}


def model_sql(config: str, sources: int) -> str:
    names = sorted({c for s in range(sources) for c in COLUMNS[s]})
    branches = []
    for s in range(sources):
        cols = [c if c in COLUMNS[s] else f"CAST(NULL AS INT) AS {c}" for c in names]
        branches.append(f"SELECT k, {', '.join(cols)}, seq FROM {{{{ source('src', 't{s}') }}}}")
    return f"{{{{ config({config}) }}}}\n" + "\nUNION ALL\n".join(branches) + "\n"


def records(rng: random.Random, keys: int, sources: int, n: int) -> list[tuple[int, dict]]:
    out = []
    for _ in range(n):
        s = rng.randrange(sources)
        rec = {"k": rng.randrange(keys), "seq": rng.choice([None, *range(8)])}
        rec.update({c: rng.choice([None, rng.randrange(100)]) for c in COLUMNS[s]})
        out.append((s, rec))
    return out


def ordered_fold(recs: list[tuple[int, dict]], names: list[str]) -> dict[int, tuple]:
    """Every record in place order; a non-null value overwrites (both models' rule)."""

    def place(i: int) -> tuple:
        s, r = recs[i]
        return ((0,) if r["seq"] is None else (1, r["seq"]), s, i)

    table: dict[int, dict] = {}
    for i in sorted(range(len(recs)), key=place):
        s, r = recs[i]
        row = table.setdefault(r["k"], dict.fromkeys([*names, "seq"]))
        for c in [*COLUMNS[s], "seq"]:
            if r[c] is not None:
                row[c] = r[c]
    return {k: tuple(row[c] for c in [*names, "seq"]) for k, row in table.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=400)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="lw_boundaries_"))
    warehouse = root / "warehouse"
    spark = create_session(
        "run-boundaries",
        "local[2]",
        spark_conf(
            "local[2]",
            "lw",
            {"type": "hadoop", "warehouse": str(warehouse)},
            {"spark.sql.shuffle.partitions": "4"},
        ),
    )
    (root / "models").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "b"\n[tool.lakewide]\nprofile = "b"\n')
    print("| model | run | keys | differ from full refresh | differ from ordered fold |")
    print("|---|---|---|---|---|")
    for name, (config, sources) in MODELS.items():
        (root / "profiles.yml").write_text(
            f"b:\n  target: t\n  outputs:\n    t:\n      catalog: lw\n"
            f"      catalog_type: hadoop\n      warehouse: {warehouse}\n"
            f"      namespace: out_{name}\n"
        )
        (root / "models" / "sources.yml").write_text(
            f"sources:\n  - name: src\n    schema: src_{name}\n    tables:\n"
            + "".join(f"      - name: t{s}\n" for s in range(sources))
        )
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.src_{name}")
        for model in ("m", "r"):
            (root / "models" / f"{model}.sql").write_text(model_sql(config, sources))
        names = sorted({c for s in range(sources) for c in COLUMNS[s]})
        rng, everything = random.Random(args.seed), []
        for run in range(args.runs):
            batch = records(rng, args.keys, sources, args.keys * 2)
            everything += batch
            for s in range(sources):
                cols = ["k", *COLUMNS[s], "seq"]
                rows = [tuple(r[c] for c in cols) for src, r in batch if src == s]
                frame = spark.createDataFrame(rows, ", ".join(f"{c} INT" for c in cols))
                target = f"lw.src_{name}.t{s}"
                if spark.catalog.tableExists(target):
                    frame.coalesce(1).writeTo(target).append()
                else:
                    frame.coalesce(1).writeTo(target).using("iceberg").create()
            manifest = load_manifest(
                load_project(root), load_output(root / "profiles.yml", "b", None, root)
            )
            adapter = SparkAdapter(manifest.output, spark=spark)
            # m runs incrementally; r, the same model, is rebuilt from all records every run
            for model, full in (("m", False), ("r", True)):
                [result] = run_models(manifest, [model], adapter, full_refresh=full)
                assert result.status == "success", result.message
            incremental = _table(spark, f"out_{name}.m", names)
            refreshed = _table(spark, f"out_{name}.r", names)
            expected = ordered_fold(everything, names)
            print(
                f"| {name} | {run + 1} | {len(expected)} | {_differ(incremental, refreshed)} "
                f"| {_differ(incremental, expected)} |"
            )
    spark.stop()


def _table(spark: Any, model: str, names: list[str]) -> dict[int, tuple]:
    rows = spark.table(f"lw.{model}").select("k", *names, "seq").collect()
    return {r[0]: tuple(r[1:]) for r in rows}


def _differ(a: dict, b: dict) -> int:
    return sum(1 for k in a.keys() | b.keys() if a.get(k) != b.get(k))


if __name__ == "__main__":
    main()
