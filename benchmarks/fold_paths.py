"""The bootstrap and the every-source step of a narrow model, by the two folds lakewide has.

    python benchmarks/fold_paths.py --keys 1000000 --sources 4 [--columns 4]

Two copies of the benchmark's partial_update model over the same sources (``--sources`` x
``--columns`` value columns): ``prefolds``, as lakewide compiles it (each source folded on its
own, the folds put together in one shuffle: ``lakewide.compiler.folds.build_prefolds``), and
``union``, the same model with ``prefolds()`` answered False for its runs (the UNION ALL of
every branch, each carrying the other sources' NULL columns, folded per key). lakewide's own
bootstrap takes the union up to ``UNION_BOOTSTRAP_COLUMNS`` stored columns; here the
``prefolds`` copy bootstraps from the pre-folds at every width (``bootstraps_apart`` answered by
``prefolds``), so that the two folds are compared at any shape.
The JOIN rebuild beside them. Two bootstrap rounds (the first in the order prefolds, union,
JOIN; the second reversed), then two steps of 1% of the keys in every source, alternated; the
two tables compared row for row at the end. Writes
``benchmarks/results/fold_paths_<keys>_<sources>x<columns>.json``.
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
import peers  # noqa: E402
import run  # noqa: E402

from lakewide.compiler.folds.build_prefolds import prefolds  # noqa: E402
from lakewide.compiler.statements import build_bootstrap, build_merge  # noqa: E402
from lakewide.project.manifest import load_manifest  # noqa: E402
from lakewide.project.settings import load_project  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402

MODELS = {"prefolds": "wide_prefolds", "union": "wide_union"}


def _never(model: object) -> bool:
    """The answer that keeps a model's runs on the UNION ALL fold."""
    return False


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--columns", type=int, default=generate.COLUMNS, help="per source")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args(argv)
    sources, keys = args.sources, args.keys
    generate.COLUMNS = args.columns
    shape = f"{sources}x{args.columns}"
    root = args.out / f"fold_paths_{keys}_{shape}"
    shutil.rmtree(root, ignore_errors=True)
    model = generate.wide_model(sources, run.VARIANTS["mor"])
    project = generate.write_project(
        root / "project", root / "iceberg", sources, dict.fromkeys(MODELS.values(), model)
    )
    output, _, spark = run.open_session(project, "fold_paths")
    for namespace in ("lw.bench", "lw.wide"):
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {namespace}")
    manifest = load_manifest(load_project(project), output)
    adapter = SparkAdapter(output, spark=spark)
    clock = run.Clock(spark)
    shipped = (build_bootstrap.bootstraps_apart, build_merge.prefolds)
    forced = {"prefolds": (prefolds, prefolds), "union": (_never, _never)}
    join = peers.JoinRebuild(sources)

    def act(path: str) -> None:
        if path == "join":
            join.build(spark)
            return
        build_bootstrap.bootstraps_apart, build_merge.prefolds = forced[path]
        try:
            run._run(manifest, MODELS[path], adapter)
        finally:
            build_bootstrap.bootstraps_apart, build_merge.prefolds = shipped

    result: dict[str, Any] = {
        "keys": keys,
        "sources": sources,
        "columns": args.columns,
        "bootstrap": {},
        "every": {},
    }
    for i in range(sources):
        generate.write_source(spark, i, keys, 0)
    for round_no, order in enumerate(
        [["prefolds", "union", "join"], ["join", "union", "prefolds"]]
    ):
        for table in MODELS.values():
            spark.sql(f"DROP TABLE IF EXISTS lw.wide.{table}")
        for path in order:
            result["bootstrap"].setdefault(path, []).append(clock.measure(lambda p=path: act(p)))
        print("bootstrap", round_no, {p: result["bootstrap"][p][-1] for p in order}, flush=True)
    for round_no, order in enumerate([["prefolds", "union"], ["union", "prefolds"]], start=1):
        for i in range(sources):
            generate.write_source(spark, i, keys, round_no, fraction=run.CHANGED)
        for path in order:
            result["every"].setdefault(path, []).append(clock.measure(lambda p=path: act(p)))
        print("every source", round_no, {p: result["every"][p][-1] for p in order}, flush=True)
    a, b = (f"lw.wide.{t}" for t in MODELS.values())
    [(differ,)] = spark.sql(
        f"SELECT COUNT(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b})"
    ).collect()
    result["rows_differ"] = int(differ)
    spark.stop()
    args.results.mkdir(parents=True, exist_ok=True)
    path = args.results / f"fold_paths_{peers.size_name(keys)}_{shape}.json"
    path.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
