"""lakewide vs the JOIN rebuild, side by side in one Spark session; prints markdown tables.

    python benchmarks/run.py --keys 1000000 --sources 4
    python benchmarks/run.py --keys 5000000 --variants cow mor --steps bootstrap one

Ratios are what to read (absolute seconds drift on shared machines); next to wall seconds the
runner records the JVM's CPU seconds, which another process's load disturbs far less. Each
lakewide table is checked row for row against the JOIN rebuild after every step. Results are
rewritten after every step (benchmarks/out/results.{json,md,png}), so a long run that is
stopped keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402

from lakewide.project.manifest import load_manifest  # noqa: E402
from lakewide.project.profiles_file import load_output  # noqa: E402
from lakewide.project.settings import load_project  # noqa: E402
from lakewide.run.models.executor import run_models  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.runtime import create_session, spark_conf  # noqa: E402

BASE = "merge_engine='partial_update', primary_key='k', sequence_field='seq'"
# sorted variants: 16 MB files, so a key range maps to a few files that a filter can skip
SMALL_FILES = ", table_properties={'write.target-file-size-bytes': '16777216'}"
VARIANTS = {
    "cow": BASE + ", write_mode='copy-on-write'",
    "mor": BASE + ", write_mode='merge-on-read'",
    "mor_changelog": BASE + ", write_mode='merge-on-read', changelog_producer='lookup'",
    "cow_bucket16": BASE + ", write_mode='copy-on-write', partition_by=['bucket(16, k)']",
    "cow_sorted": BASE + ", write_mode='copy-on-write', sort_by='k'" + SMALL_FILES,
    "cow_sorted_filter": BASE
    + ", write_mode='copy-on-write', sort_by='k', merge_filter=true"
    + SMALL_FILES,
    "mor_sorted_filter": BASE
    + ", write_mode='merge-on-read', sort_by='k', merge_filter=true"
    + SMALL_FILES,
}
MOR = BASE + ", write_mode='merge-on-read'"
# Spark's own values of the settings lakewide's session defaults change so that the MERGE's
# target rows are pruned by a runtime Bloom filter (lakewide.spark.runtime.MERGE_PRUNING_CONF)
NO_BLOOM = {
    "spark.sql.autoBroadcastJoinThreshold": "10MB",
    "spark.sql.adaptive.autoBroadcastJoinThreshold": "10MB",
    "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold": "10GB",
    "spark.sql.optimizer.runtime.bloomFilter.creationSideThreshold": "10MB",
}
# storage-partitioned join settings (Spark 3.5 + Iceberg)
SPJ = {
    "spark.sql.sources.v2.bucketing.enabled": "true",
    "spark.sql.sources.v2.bucketing.pushPartValues.enabled": "true",
    "spark.sql.sources.v2.bucketing.partiallyClusteredDistribution.enabled": "true",
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
    "spark.sql.iceberg.planning.preserve-data-grouping": "true",
}
VARIANTS.update(
    {
        "mor_no_bloom": MOR,
        "mor_changelog_no_bloom": MOR + ", changelog_producer='lookup'",
        "mor_shj": MOR,
        "mor_dist_none": MOR + ", table_properties={'write.merge.distribution-mode': 'none'}",
        "mor_v3": MOR + ", format_version=3",
        "mor_bucket16_spj": MOR + ", partition_by=['bucket(16, k)']",
        "mor_bucket16_spj_one_side": MOR + ", partition_by=['bucket(16, k)']",
        "mor_bucket16_spj_sorting": MOR + ", partition_by=['bucket(16, k)']",
        "mor_again": MOR,  # the default again, measured after the others: what the order costs
        "mor_snappy": MOR + ", table_properties={'write.parquet.compression-codec': 'snappy'}",
    }
)
# variant -> Spark session settings set for its runs only (restored afterwards)
SESSION: dict[str, dict[str, str]] = {
    "mor_no_bloom": NO_BLOOM,
    "mor_changelog_no_bloom": NO_BLOOM,
    "mor_shj": {"spark.sql.join.preferSortMergeJoin": "false"},
    "mor_bucket16_spj": SPJ,
    # Spark 4 only: shuffle only the side that is not storage-partitioned (the batch)
    "mor_bucket16_spj_one_side": {**SPJ, "spark.sql.sources.v2.bucketing.shuffle.enabled": "true"},
    # Spark 4 only: a sort by the source's reported partition columns may skip its shuffle
    "mor_bucket16_spj_sorting": {**SPJ, "spark.sql.sources.v2.bucketing.sorting.enabled": "true"},
}


def variant_settings(variant: str) -> tuple[str, dict[str, str]]:
    """The model config of a variant and the session settings its runs use."""
    return VARIANTS[variant], SESSION.get(variant, {})


def with_session(spark: Any, settings: dict[str, str], action: Callable[[], Any]) -> Any:
    """Run ``action`` with ``settings`` set in the session, then restore what was there."""
    before = {k: spark.conf.get(k, None) for k in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        return action()
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


# step -> (label, which sources change, clustered key range)
STEPS = {
    "bootstrap": ("bootstrap (all rows)", [], False),
    "one": ("1% of keys changed in one source", [0], False),
    "all": ("1% of keys changed in every source", None, False),
    "clustered": ("1% of keys, one contiguous key range, in one source", [0], True),
}
CHANGED = 0.01
# issue #10's goals, x the JOIN rebuild (drawn on the chart)
GOALS = [
    (0.7, "orange", "bootstrap"),
    (0.35, "purple", "1% in every source"),
    (0.20, "red", "1% in one source, 5M"),
    (0.05, "brown", "one key range, 5M"),
]


class Clock:
    """Wall seconds and the JVM's CPU seconds (user + system) of one action."""

    def __init__(self, spark: Any, settle: bool = True) -> None:
        self.jvm, self.settle = self._java_pid(), settle

    @staticmethod
    def _java_pid() -> str | None:
        for pid in filter(str.isdigit, os.listdir("/proc") if Path("/proc").is_dir() else []):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                if (
                    int(stat[1]) == os.getpid()
                    and b"java" in Path(f"/proc/{pid}/cmdline").read_bytes()
                ):
                    return pid
            except (OSError, ValueError, IndexError):
                continue
        return None

    def cpu(self) -> float:
        if self.jvm is None:
            return float("nan")
        stat = Path(f"/proc/{self.jvm}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")

    def measure(self, action: Callable[[], Any]) -> dict[str, float]:
        """Wall seconds of ``action``; JVM CPU seconds until the JVM is idle again after it,
        so that an action pays for its own background work (JIT compilation, concurrent GC)
        instead of the action measured after it (unless ``settle`` is off: a quick check)."""
        wall, cpu = time.perf_counter(), self.cpu()
        action()
        wall = time.perf_counter() - wall
        return {"s": wall, "cpu": (self.quiet() if self.settle else self.cpu()) - cpu}

    def quiet(self, interval: float = 0.25, idle: float = 0.02, limit: float = 20.0) -> float:
        """The JVM's CPU seconds once it used less than ``idle`` s in an ``interval`` (or
        after ``limit`` seconds)."""
        last, waited = self.cpu(), 0.0
        while waited < limit:
            time.sleep(interval)
            waited += interval
            now = self.cpu()
            if now - last < idle:
                return now
            last = now
        return last


def same_rows(spark: Any, left: str, right: str) -> bool:
    """Equal as multisets: same row count and nothing of ``left`` missing from ``right``."""
    columns = [c for c in spark.table(left).columns if not c.startswith("__lw_")]  # hidden
    a, b = spark.table(left).select(*columns), spark.table(right).select(*columns)
    return a.count() == b.count() and a.exceptAll(b).isEmpty()


def fingerprint(spark: Any, table: str) -> list[int]:
    """Row count and XOR of every row's xxhash64: equal on two Spark versions iff (almost
    surely) they generated and rebuilt the same data."""
    row = spark.sql(f"SELECT COUNT(*), BIT_XOR(XXHASH64(*)) FROM {table}").collect()[0]
    return [int(row[0]), int(row[1])]


def cli_seconds(project: Path, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(project), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    return time.perf_counter() - started, done.stdout


def table_files(spark: Any, table: str) -> dict[str, int]:
    """Data and delete files of a table's current snapshot (layout after a step)."""
    rows = spark.sql(f"SELECT content, COUNT(*) FROM {table}.files GROUP BY content").collect()
    counts = {int(r[0]): int(r[1]) for r in rows}
    return {"data_files": counts.get(0, 0), "delete_files": counts.get(1, 0) + counts.get(2, 0)}


def open_session(
    project: Path, app: str, extra: Callable[[dict[str, str]], dict[str, str]] | None = None
) -> tuple[Any, dict[str, str], Any]:
    """The bench profile's output of ``project``, its Spark settings and a session on them;
    ``extra`` returns settings added to (or replacing) lakewide's (a peer's jars and catalogs)."""
    output = load_output(project / "profiles.yml", "bench", None, project)
    conf = spark_conf(
        output.master, output.catalog, output.iceberg_catalog_properties(), output.spark_conf
    )
    if extra is not None:
        conf.update(extra(conf))
    return output, conf, create_session(app, output.master, conf)


def bench_size(
    out: Path,
    keys: int,
    sources: int,
    variants: list[str],
    steps: list[str],
    save: Callable[[dict[str, Any]], None],
    warmup: int = 0,
) -> dict[str, Any]:
    warehouse = out / f"warehouse_{keys}"
    shutil.rmtree(warehouse, ignore_errors=True)
    project = generate.write_project(
        out / f"project_{keys}",
        warehouse,
        sources,
        {f"wide_{v}": generate.wide_model(sources, VARIANTS[v]) for v in variants},
    )
    manifest_project = load_project(project)
    output, conf, spark = open_session(project, "lakewide-bench")
    clock = Clock(spark)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.bench")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.wide")
    manifest = load_manifest(manifest_project, output)
    adapter = SparkAdapter(output, spark=spark)
    result: dict[str, Any] = {
        "keys": keys,
        "sources": sources,
        "variants": variants,
        "warmup_keys": warmup,
        "spark": spark.version,
        "iceberg_runtime": [Path(j).name for j in conf.get("spark.jars", "").split(",") if j],
        "load_start": os.getloadavg(),
        "steps": {},
        "fingerprint": {},
        "files": {},
        "conf": {k: v for k, v in conf.items() if "jars" not in k},
        "variant_settings": {
            v: {"model": variant_settings(v)[0], "session": variant_settings(v)[1]}
            for v in variants
        },
    }
    if warmup:  # every statement once on small tables: JIT and generated code are then warm
        _steps(spark, clock, manifest, adapter, warmup, sources, variants, steps, None, save)
        for namespace in ("lw.bench", "lw.wide"):
            for row in spark.sql(f"SHOW TABLES IN {namespace}").collect():
                spark.sql(f"DROP TABLE {namespace}.{row.tableName} PURGE")
    _steps(spark, clock, manifest, adapter, keys, sources, variants, steps, result, save)
    spark.stop()
    result["load_end"] = os.getloadavg()
    noop, said = cli_seconds(project, "run")
    assert "Nothing to do" in said, said
    result["noop_run_seconds"] = noop
    save(result)
    return result


def _steps(
    spark: Any,
    clock: Clock,
    manifest: Any,
    adapter: SparkAdapter,
    keys: int,
    sources: int,
    variants: list[str],
    steps: list[str],
    result: dict[str, Any] | None,
    save: Callable[[dict[str, Any]], None],
) -> None:
    """Every step on fresh source tables of ``keys`` keys; recorded into ``result`` unless None
    (a warm-up)."""
    for i in range(sources):
        generate.write_source(spark, i, keys, 0)
    join_sql = generate.join_rebuild("lw", "bench", sources, "lw.wide.join_rebuild")
    for round_no, name in enumerate(steps):
        label, changed, clustered = STEPS[name]
        for i in range(sources) if changed is None else changed:
            generate.write_source(
                spark,
                i,
                keys,
                round_no,
                fraction=CHANGED,
                clustered=clustered,
            )
        times = {"join": clock.measure(lambda: spark.sql(join_sql).collect())}
        for variant in variants:
            settings, model = variant_settings(variant)[1], f"wide_{variant}"
            times[variant] = clock.measure(
                lambda s=settings, m=model: with_session(
                    spark, s, lambda: _run(manifest, m, adapter)
                )
            )
        for variant in variants:
            assert same_rows(spark, f"lw.wide.wide_{variant}", "lw.wide.join_rebuild"), (
                name,
                variant,
                keys,
            )
        if result is None:
            continue
        result["steps"][label] = times
        result["fingerprint"][label] = fingerprint(spark, "lw.wide.join_rebuild")
        result["files"][label] = {v: table_files(spark, f"lw.wide.wide_{v}") for v in variants}
        print(markdown_size(result), flush=True)
        save(result)


def _run(manifest: Any, model: str, adapter: SparkAdapter) -> None:
    [result] = run_models(manifest, [model], adapter)
    if result.status != "success":
        raise SystemExit(result.message)


def compile_many(out: Path, models: int, sources: int) -> float:
    root = out / f"compile_{models}"
    shutil.rmtree(root, ignore_errors=True)
    sql = generate.wide_model(sources, VARIANTS["cow"])
    generate.write_project(
        root, out / "unused_warehouse", sources, {f"m{i:04d}": sql for i in range(models)}
    )
    seconds, _ = cli_seconds(root, "compile")
    return seconds


def markdown_size(result: dict[str, Any]) -> str:
    variants = result["variants"]
    lines = [
        f"### {result['keys']:,} keys, {result['sources']} sources "
        f"({result['sources'] * generate.COLUMNS} value columns)",
        "",
        "Wall seconds (x JOIN):",
        "",
        "| step | JOIN rebuild s | " + " | ".join(f"{v} s (x JOIN)" for v in variants) + " |",
        "|---|---|" + "---|" * len(variants),
    ]
    cpu_lines = list(lines[-2:])
    for step, times in result["steps"].items():
        for metric, target in (("s", lines), ("cpu", cpu_lines)):
            join = times["join"][metric]
            cells = " | ".join(
                f"{times[v][metric]:.1f} ({times[v][metric] / join:.2f})" for v in variants
            )
            target.append(f"| {step} | {join:.1f} | {cells} |")
    lines += ["", "JVM CPU seconds (x JOIN):", "", *cpu_lines]
    if "noop_run_seconds" in result:
        lines += ["", f"no-op `lakewide run`: {result['noop_run_seconds']:.2f} s wall (no JVM)"]
    return "\n".join(lines)


def chart(results: list[dict[str, Any]], path: Path) -> str:
    """Bars of x JOIN per step and variant, one panel per size; skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "chart skipped: matplotlib is not installed (pip install -e '.[bench]')"
    colors = {v: plt.get_cmap("tab10")(n) for n, v in enumerate(VARIANTS)}
    fig, axes = plt.subplots(2, len(results), figsize=(7 * len(results), 9), squeeze=False)
    for row, (metric, what) in enumerate((("s", "wall seconds"), ("cpu", "JVM CPU seconds"))):
        for ax, result in zip(axes[row], results):
            steps, variants = list(result["steps"]), result["variants"]
            width = 0.8 / max(1, len(variants))
            for n, variant in enumerate(variants):
                ratios = [
                    result["steps"][s][variant][metric] / result["steps"][s]["join"][metric]
                    for s in steps
                ]
                ax.bar(
                    [i + n * width for i in range(len(steps))],
                    ratios,
                    width,
                    label=variant,
                    color=colors[variant],
                )
            ax.axhline(1.0, color="black", linewidth=0.8)
            for goal, color, goal_label in GOALS:
                ax.axhline(
                    goal,
                    color=color,
                    linestyle="--",
                    linewidth=0.8,
                    label=f"goal {goal:.2f} ({goal_label})",
                )
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(steps))])
            ax.set_xticklabels(
                [s.replace(" in ", "\nin ").replace(", ", ",\n") for s in steps], fontsize=7
            )
            ax.set_ylabel(f"{what} / JOIN rebuild {what}", fontsize=8)
            ax.set_title(f"{result['keys']:,} keys, {result['sources']} sources: {what}")
            ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"chart: {path}"


def combine(files: list[Path], stem: Path) -> None:
    """One report from several runs (e.g. 1M and 5M keys measured by separate processes)."""
    runs = [json.loads(f.read_text()) for f in files]
    sizes = sorted((size for run in runs for size in run["sizes"]), key=lambda r: r["keys"])
    compiled = [
        (run["compile_seconds"], run.get("compile_models", 500))
        for run in runs
        if run.get("compile_seconds") is not None
    ]
    report = "\n\n".join(markdown_size(r) for r in sizes)
    if compiled:
        report += (
            f"\n\n`lakewide compile` of {compiled[0][1]} models: {compiled[0][0]:.2f} s wall\n"
        )
    stem.with_suffix(".json").write_text(
        json.dumps(
            {"sizes": sizes, "compile_seconds": compiled[0][0] if compiled else None}, indent=2
        )
    )
    stem.with_suffix(".md").write_text(report)
    print(report)
    print(chart(sizes, stem.with_suffix(".png")))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument(
        "--steps",
        nargs="+",
        choices=list(STEPS),
        default=list(STEPS),
        help="bootstrap always runs first; skipped steps append no data",
    )
    parser.add_argument("--compile-models", type=int, default=500, help="0 skips it")
    parser.add_argument(
        "--warmup",
        type=int,
        default=0,
        metavar="KEYS",
        help="first run every step on KEYS keys, unmeasured, so that no "
        "variant pays the JVM's and Spark's warm-up (0: none)",
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument("--name", default="results", help="output file stem")
    parser.add_argument(
        "--combine",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="only write <name>.{json,md,png} from earlier runs' JSON files",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.combine:
        combine(args.combine, args.out / args.name)
        return
    steps = ["bootstrap"] + [s for s in args.steps if s != "bootstrap"]
    document: dict[str, Any] = {
        "sizes": [],
        "compile_seconds": None,
        "compile_models": args.compile_models,
    }

    def save(partial: dict[str, Any] | None = None) -> None:
        sizes = document["sizes"] + ([partial] if partial is not None else [])
        report = "\n\n".join(markdown_size(r) for r in sizes)
        if document["compile_seconds"] is not None:
            report += (
                f"\n\n`lakewide compile` of {args.compile_models} models: "
                f"{document['compile_seconds']:.2f} s wall\n"
            )
        (args.out / f"{args.name}.json").write_text(
            json.dumps({**document, "sizes": sizes}, indent=2)
        )
        (args.out / f"{args.name}.md").write_text(report)
        print(chart([r for r in sizes if r["steps"]], args.out / f"{args.name}.png"), flush=True)

    for keys in args.keys:
        document["sizes"].append(
            bench_size(args.out, keys, args.sources, args.variants, steps, save, args.warmup)
        )
    if args.compile_models:
        document["compile_seconds"] = compile_many(args.out, args.compile_models, args.sources)
    save()
    print((args.out / f"{args.name}.md").read_text())


if __name__ == "__main__":
    main()
