"""Adding a source to an existing wide table: the schema-change plan vs a --full-refresh rebuild.

Two identical wide tables (``--sources`` sources of 4 columns, partial_update, merge-on-read)
are built over the same source tables; then a new source with its whole history appears and
both models gain it as their last UNION ALL branch. One table takes the plan of schema changes
(``ALTER TABLE ... ADD COLUMNS``, then only the new source's history merged), the other is
rebuilt with ``--full-refresh``; both in one Spark session, side by side, wall and JVM CPU
seconds, and the two tables are checked row for row. ``--warmup N`` first does everything once
at N keys (JIT and generated code warm).

    PYTHONPATH=$PWD python benchmarks/add_source.py --keys 200000
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import generate  # noqa: E402
from benchmarks.run import MOR, Clock, same_rows  # noqa: E402
from lakewide.project.manifest import Manifest, load_manifest  # noqa: E402
from lakewide.project.profiles_file import load_output  # noqa: E402
from lakewide.project.settings import load_project  # noqa: E402
from lakewide.run.models.executor import run_models  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.runtime import create_session, spark_conf  # noqa: E402

MODELS = ("wide_added", "wide_rebuilt")


def manifest_for(root: Path, warehouse: Path, sources: int) -> Manifest:
    sql = generate.wide_model(sources, MOR)
    generate.write_project(root, warehouse, sources, dict.fromkeys(MODELS, sql))
    project = load_project(root)
    return load_manifest(project, load_output(root / "profiles.yml", "bench", None, root))


def run(manifest: Manifest, adapter: SparkAdapter, model: str, full_refresh: bool) -> Any:
    [result] = run_models(manifest, [model], adapter, full_refresh=full_refresh)
    if result.status != "success":
        raise SystemExit(result.message)
    return result


def measure(
    spark: Any, clock: Clock, root: Path, warehouse: Path, keys: int, sources: int
) -> dict[str, Any]:
    """One round at ``keys`` keys on fresh tables; the timings of both ways."""
    for namespace in ("lw.bench", "lw.wide"):
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {namespace}")
        for row in spark.sql(f"SHOW TABLES IN {namespace}").collect():
            spark.sql(f"DROP TABLE {namespace}.{row.tableName} PURGE")
    for i in range(sources):
        generate.write_source(spark, i, keys, 0)
        generate.write_source(spark, i, keys, 1, fraction=0.1)
    manifest = manifest_for(root, warehouse, sources)
    adapter = SparkAdapter(manifest.output, spark=spark)
    for model in MODELS:
        run(manifest, adapter, model, full_refresh=False)
    # the new source, with a history of two rounds
    generate.write_source(spark, sources, keys, 0)
    generate.write_source(spark, sources, keys, 1, fraction=0.1)
    manifest = manifest_for(root, warehouse, sources + 1)
    adapter = SparkAdapter(manifest.output, spark=spark)
    outcome: dict[str, Any] = {}
    added = clock.measure(lambda: outcome.update(added=run(manifest, adapter, MODELS[0], False)))
    rebuilt = clock.measure(lambda: outcome.update(rebuilt=run(manifest, adapter, MODELS[1], True)))
    assert outcome["added"].plan == "incremental", outcome["added"].plan
    assert outcome["rebuilt"].plan == "full-refresh", outcome["rebuilt"].plan
    modes = [r["mode"] for r in outcome["added"].ranges]
    assert modes == ["none"] * sources + ["full"], modes
    assert same_rows(spark, f"lw.wide.{MODELS[0]}", f"lw.wide.{MODELS[1]}")
    return {"keys": keys, "sources": sources, "added": added, "rebuilt": rebuilt}


def markdown(result: dict[str, Any]) -> str:
    added, rebuilt = result["added"], result["rebuilt"]
    return "\n".join(
        [
            f"{result['keys']:,} keys, {result['sources']} sources + 1 added (4 columns each), "
            "partial_update, merge-on-read",
            "",
            "| | wall s | JVM CPU s |",
            "|---|---:|---:|",
            f"| add the source (schema-change plan) | {added['s']:.1f} | {added['cpu']:.1f} |",
            f"| `--full-refresh` rebuild | {rebuilt['s']:.1f} | {rebuilt['cpu']:.1f} |",
            f"| ratio (added / rebuilt) | {added['s'] / rebuilt['s']:.2f} | "
            f"{added['cpu'] / rebuilt['cpu']:.2f} |",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--sources", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=None, help="write the table here (.md)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="lakewide-add-source-"))
    warehouse, root = folder / "warehouse", folder / "project"
    generate.write_project(root, warehouse, args.sources, {})
    output = load_output(root / "profiles.yml", "bench", None, root)
    conf = spark_conf(
        output.master, output.catalog, output.iceberg_catalog_properties(), output.spark_conf
    )
    spark = create_session("lakewide-add-source", output.master, conf)
    clock = Clock(spark)
    try:
        if args.warmup:
            measure(spark, clock, root, warehouse, args.warmup, args.sources)
        result = measure(spark, clock, root, warehouse, args.keys, args.sources)
    finally:
        spark.stop()
        shutil.rmtree(folder, ignore_errors=True)
    table = markdown(result)
    print(table, flush=True)
    if args.out:
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
