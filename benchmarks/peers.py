"""lakewide against what a team would use instead, on the same data in one Spark session.

    python benchmarks/peer_jars.py                      # Delta's and Paimon's jars, once
    python benchmarks/peers.py --keys 1000000 --warmup 20000

The same generated sources and steps as ``benchmarks/run.py`` (4 sources, 16 value columns;
1% of keys in one source, 1% in every source, one key range), applied to: the FULL OUTER JOIN
rebuild, lakewide (``mor``, the default for key tables), hand-written column-scoped MERGEs
into Iceberg (copy-on-write, Iceberg's default, and merge-on-read) and Delta Lake (with and
without deletion vectors), and a Paimon partial-update table (``benchmarks/peer_systems.py``).
Each step runs the systems in a rotated order and records wall and JVM CPU seconds; after each
step every peer's table is compared with lakewide's (keys whose row differs, counted), and
lakewide's with the JOIN rebuild, and each table is read once, whole (what a reader pays after
that step: the report adds the write and N reads, N = 1, 4, 16). At the end each system runs
its own recommended maintenance (``maintain`` methods: lakewide's ``maintain``, Iceberg's
rewrites, Delta's ``OPTIMIZE``, Paimon's full compaction), and each table is read once more.
Writes ``benchmarks/results/<name>.{json,md}`` (``--name``, default ``peers_<size>``;
rewritten after every step).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402
import peer_dbt  # noqa: E402
import peer_jars  # noqa: E402
import peer_report  # noqa: E402
import peer_systems  # noqa: E402
import run  # noqa: E402

from lakewide.project.manifest import load_manifest  # noqa: E402
from lakewide.project.settings import load_project  # noqa: E402
from lakewide.run.maintenance.maintain import maintain_models  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402

LAKEWIDE_TABLE = "lw.wide.wide_mor"
JOIN_TABLE = "lw.wide.join_rebuild"
PAIMON_EXTENSIONS = "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions"
NAMESPACES = ("lw.bench", "lw.wide", "lw.peers", "spark_catalog.peers", "paimon.peers")
# run.py's steps and a late one: 1% of keys of one source again, with an older sequence
STEPS = {
    **run.STEPS,
    "late": ("late records: 1% of keys in one source, older sequences", [0], False),
    # --deletes: the delete log, source ``sources`` (``generate.delete_frame``)
    "deletes": ("deletes: 1% of keys removed by a CDC log's -D rows", [], False),
}
PEERS = [*peer_systems.peers(1), "dbt_spark"]
#: the peers a run with the deletes step leaves out, and why
NO_DELETES = {
    "dbt_spark": "its model has no delete log (the deletes step)",
    # apache/paimon#4344, fixed in Paimon 1.0 (#4345); the 0.9 jar is the one served here
    "paimon_lookup": "Paimon 0.9's lookup changelog fails on a partial-update table's removed "
    "row (NullPointerException in LookupChangelogMergeFunctionWrapper, apache/paimon#4344)",
}
READ = "read the finished table once"
MAINTAIN = "each system's recommended maintenance"
READ_MAINTAINED = "read the finished table after that maintenance"


def sequence(step: str, round_no: int) -> int:
    """The rows' sequence in a round: 10 x the round, and for late records 15 less (older than
    the round before: newer than some keys' stored sequence, older than others', equal to
    none, so every system has one right answer)."""
    return 10 * round_no - (15 if step == "late" else 0)


class JoinRebuild:
    """The baseline: every step rebuilds the whole table with the FULL OUTER JOIN."""

    hidden: list[str] = []
    table = JOIN_TABLE

    def __init__(self, sources: int, deletes: bool = False) -> None:
        self.sql = generate.join_rebuild("lw", "bench", sources, JOIN_TABLE, deletes)

    def build(self, spark: Any) -> None:
        spark.sql(self.sql).collect()

    def step(self, spark: Any, changed: list[int], round_no: int) -> None:
        self.build(spark)

    def maintain(self, spark: Any) -> None:
        """Nothing: every step writes the table anew, in full files without deletes."""


class Lakewide:
    """``lakewide run`` of the wide model (in this session, as ``benchmarks/run.py`` does)."""

    hidden: list[str] = []
    table = LAKEWIDE_TABLE

    def __init__(self, manifest: Any, adapter: SparkAdapter) -> None:
        self.manifest, self.adapter = manifest, adapter

    def build(self, spark: Any) -> None:
        run._run(self.manifest, "wide_mor", self.adapter)

    def step(self, spark: Any, changed: list[int], round_no: int) -> None:
        self.build(spark)

    def maintain(self, spark: Any) -> None:
        """``lakewide maintain`` of the model, with its defaults (docs/how-to/maintenance.md)."""
        [done] = maintain_models(self.manifest, ["wide_mor"], self.adapter)
        if done.status != "success":
            raise RuntimeError(f"lakewide maintain: {done.status}: {done.message}")


def session_extra(root: Path) -> Any:
    """The settings that add Delta's and Paimon's jars and catalogs to lakewide's session."""
    jars = [str(j) for j in peer_jars.peer_jars()]

    def extra(conf: dict[str, str]) -> dict[str, str]:
        return {
            "spark.jars": ",".join(filter(None, [conf.get("spark.jars", ""), *jars])),
            # Paimon's first: its parser, innermost, then handles only the CALLs Iceberg's
            # (outer) hands on, Paimon's ``sys.compact`` (the other way round, it takes every
            # CALL and refuses Iceberg's procedures)
            "spark.sql.extensions": PAIMON_EXTENSIONS
            + ","
            + conf["spark.sql.extensions"]
            + ",io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "spark.sql.warehouse.dir": str(root / "delta"),
            "spark.sql.catalog.paimon": "org.apache.paimon.spark.SparkCatalog",
            "spark.sql.catalog.paimon.warehouse": str(root / "paimon"),
        }

    return extra


def size_name(keys: int) -> str:
    """1000000 -> 1m, 200000 -> 200k, 3000 -> 3k."""
    for unit, suffix in ((1_000_000, "m"), (1_000, "k")):
        if keys >= unit and keys % unit == 0:
            return f"{keys // unit}{suffix}"
    return str(keys)


def versions(spark: Any, conf: dict[str, str]) -> dict[str, str]:
    """What ran: Spark, Java, the table formats' jars and lakewide's commit."""
    import pyspark

    jars = [Path(j).name for j in conf.get("spark.jars", "").split(",") if j]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {
        "spark": pyspark.__version__,
        "java": str(spark.sparkContext._jvm.System.getProperty("java.version")),
        "iceberg": ", ".join(j for j in jars if "iceberg" in j),
        **peer_jars.versions(),
        "lakewide": commit,
    }


def open_bench(
    root: Path, sources: int, app: str, deletes: bool = False
) -> tuple[Lakewide, dict[str, str], Any]:
    """A fresh warehouse and project under ``root`` (lakewide's model ``wide_mor``; with
    ``deletes`` over the delete log too) and a session on them with the peers' catalogs and
    namespaces: lakewide, the Spark settings, the session."""
    shutil.rmtree(root, ignore_errors=True)
    model = generate.wide_model(sources, run.VARIANTS["mor"], deletes=deletes)
    project = generate.write_project(
        root / "project", root / "iceberg", sources + deletes, {"wide_mor": model}
    )
    output, conf, spark = run.open_session(project, app, session_extra(root))
    for namespace in NAMESPACES:
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {namespace}")
    manifest = load_manifest(load_project(project), output)
    return Lakewide(manifest, SparkAdapter(output, spark=spark)), conf, spark


def bench(args: argparse.Namespace, save: Any) -> dict[str, Any]:
    root = args.out / f"peers_{args.keys}"
    deletes = "deletes" in args.steps
    lakewide, conf, spark = open_bench(root, args.sources, "lakewide-peers", deletes)
    systems: dict[str, Any] = {"join": JoinRebuild(args.sources, deletes), "lakewide": lakewide}
    chosen = peer_systems.peers(args.sources, deletes)
    if "dbt_spark" in args.peers:
        chosen["dbt_spark"] = peer_dbt.DbtPeer(root / "dbt", "lw", "peers", args.sources)
    systems.update({name: chosen[name] for name in args.peers})
    result: dict[str, Any] = {
        "keys": args.keys,
        "sources": args.sources,
        "warmup_keys": args.warmup,
        "systems": list(systems),
        "versions": versions(spark, conf),
        "steps": {},
        "differing_keys": {},
        "order": {},
        "reads": {},
        "rows": {},
    }
    clock = run.Clock(spark, settle=not args.quick)
    if args.warmup:  # every statement once on small tables: JIT and generated code warm
        _steps(
            spark, clock, systems, args.warmup, args.sources, args.steps, None, save, args.rotate
        )
        drop_tables(spark)
    _steps(spark, clock, systems, args.keys, args.sources, args.steps, result, save, args.rotate)
    spark.stop()
    return result


def drop_tables(spark: Any) -> None:
    """Every table of the benchmark's namespaces (after a warm-up)."""
    for namespace in NAMESPACES:
        for row in spark.sql(f"SHOW TABLES IN {namespace}").collect():
            if not row.isTemporary:  # lakewide's batch views are listed too
                spark.sql(f"DROP TABLE {namespace}.{row.tableName}")


def write_sources(spark: Any, keys: int, sources: int, deletes: bool) -> None:
    """The bootstrap's sources of ``keys`` keys, and with ``deletes`` the delete log (source
    ``sources``), empty."""
    for i in range(sources):
        generate.write_source(spark, i, keys, 0)
    if deletes:
        generate.append(
            spark, generate.delete_frame(spark, keys, 0, 0.0, 0), generate.source_table(sources)
        )


def write_step(
    spark: Any, name: str, round_no: int, keys: int, sources: int
) -> tuple[str, list[int]]:
    """Append step ``name``'s new rows of round ``round_no`` to the sources it changes
    (nothing in round 0, the bootstrap): the step's label and those sources. The deletes go to
    the delete log, source ``sources``."""
    label, changed, clustered = STEPS[name]
    if name == "deletes":
        seq = sequence(name, round_no)
        frame = generate.delete_frame(spark, keys, round_no, run.CHANGED, seq)
        generate.append(spark, frame, generate.source_table(sources))
        return label, [sources]
    changed = list(range(sources)) if changed is None else changed
    for i in changed if round_no else []:
        generate.write_source(
            spark,
            i,
            keys,
            round_no,
            fraction=run.CHANGED,
            clustered=clustered,
            seq=sequence(name, round_no),
        )
    return label, changed


def rotated(names: list[str], shift: int) -> list[str]:
    """``names`` rotated left by ``shift``: who acts first changes from action to action."""
    shift %= len(names)
    return names[shift:] + names[:shift]


def _measure(clock: run.Clock, order: list[str], action: Any) -> dict[str, dict[str, float]]:
    """``action(system)`` of each system in ``order``, timed."""
    return {system: clock.measure(lambda s=system: action(s)) for system in order}


def _steps(
    spark: Any,
    clock: run.Clock,
    systems: dict[str, Any],
    keys: int,
    sources: int,
    steps: list[str],
    result: dict[str, Any] | None,
    save: Any,
    rotate: int = 0,
) -> None:
    """Every step on fresh sources of ``keys`` keys, each followed by one read of every table;
    then each system's recommended maintenance and one more read; recorded into ``result``
    unless None (a warm-up)."""
    columns = ["k", *(c for i in range(sources) for c in generate.source_columns(i)), "seq"]
    write_sources(spark, keys, sources, "deletes" in steps)
    names = list(systems)
    pairs = {  # lakewide against the JOIN rebuild, every peer against lakewide
        system: (systems[system].table, JOIN_TABLE if system == "lakewide" else LAKEWIDE_TABLE)
        for system in names
        if system != "join"
    }
    every = f"SUM(HASH({', '.join(columns)}))"  # reads every column of every row

    def read(system: str) -> None:
        spark.sql(f"SELECT COUNT(*), {every} FROM {systems[system].table}").collect()

    def record(label: str, order: list[str], times: dict[str, Any], diffs: Any = None) -> None:
        if result is not None:
            result["steps"][label] = {s: times[s] for s in names}
            result["order"][label] = order
            if diffs is not None:
                result["differing_keys"][label] = diffs
            save(result)

    for round_no, name in enumerate(["bootstrap", *steps]):
        label, changed = write_step(spark, name, round_no, keys, sources)
        order = rotated(names, round_no + rotate)

        def act(system: str, round_no: int = round_no, changed: list[int] = changed) -> None:
            if round_no:
                systems[system].step(spark, changed, round_no)
            else:
                systems[system].build(spark)

        times = _measure(clock, order, act)
        diffs = peer_systems.differing_keys(spark, pairs, columns)
        reads = _measure(clock, rotated(names, round_no + rotate + 1), read)
        if result is not None:
            result["reads"][label] = {s: reads[s] for s in names}
            [(rows,)] = spark.sql(f"SELECT COUNT(*) FROM {LAKEWIDE_TABLE}").collect()
            result["rows"][label] = int(rows)  # lakewide's, equal to every other's
        record(label, order, times, diffs)
    last = len(steps) + 1 + rotate
    record(READ, rotated(names, last), reads)  # the read after the last step
    order = rotated(names, last)
    times = _measure(clock, order, lambda system: systems[system].maintain(spark))
    record(MAINTAIN, order, times, peer_systems.differing_keys(spark, pairs, columns))
    order = rotated(names, last + 1)
    record(READ_MAINTAINED, order, _measure(clock, order, read))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--sources", type=int, default=4)
    steps = [s for s in STEPS if s != "bootstrap"]
    parser.add_argument(
        "--steps",
        nargs="+",
        choices=steps,
        default=[s for s in steps if s != "deletes"],
        help="the steps after the bootstrap (default: all but deletes); deletes always runs "
        "last, and with it every system reads the delete log from the bootstrap on",
    )
    parser.add_argument("--peers", nargs="+", choices=PEERS, default=PEERS)
    parser.add_argument(
        "--warmup",
        type=int,
        default=0,
        metavar="KEYS",
        help="first run every step on KEYS keys, unmeasured (0: none)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "out", help="where the warehouses go"
    )
    parser.add_argument(
        "--rotate",
        type=int,
        default=0,
        help="who runs first: the systems' order is rotated by step number + ROTATE",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a check, not a measurement: no waiting for the JVM to settle after each action",
    )
    parser.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--name", help="the results' file name (default: peers_<size>)")
    args = parser.parse_args(argv)
    args.steps.sort(key=lambda step: step == "deletes")  # no step may bring a deleted key back
    if "dbt_spark" in args.peers and not peer_dbt.available():
        print(peer_dbt.MISSING, flush=True)
        args.peers.remove("dbt_spark")
    for peer, why in NO_DELETES.items():
        if peer in args.peers and "deletes" in args.steps:
            print(f"the {peer} peer is skipped: {why}", flush=True)
            args.peers.remove(peer)
    args.results.mkdir(parents=True, exist_ok=True)
    stem = args.results / (args.name or f"peers_{size_name(args.keys)}")

    def save(result: dict[str, Any]) -> None:
        stem.with_suffix(".json").write_text(json.dumps(result, indent=2))
        stem.with_suffix(".md").write_text(peer_report.markdown(result))

    result = bench(args, save)
    print(peer_report.markdown(result))
    return result


if __name__ == "__main__":
    main()
