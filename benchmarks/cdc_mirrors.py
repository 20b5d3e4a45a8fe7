"""lakewide over CDC-mirror upstreams vs the JOIN rebuild, per upstream write mode.

The 4-source data of ``generate.py``, but each source is kept as a *mirror* of an OLTP table:
after the bootstrap, a step changes 1% of the keys (spread over the table) with

    MERGE INTO src USING changes ON k
    WHEN MATCHED AND op = 'D' THEN DELETE
    WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *

in one source or in every source. Upstream write modes (one set of source tables each):

* ``append``: the changed rows appended (``run.py``'s benchmark, the reference);
* ``cow``: format v2, copy-on-write merge/update/delete (Iceberg's default);
* ``cow-v3``: format v3, copy-on-write (rows paired by row lineage, lakewide.spark.lineage_changes);
* ``mor-v2``: format v2, merge-on-read (position delete files);
* ``mor-v3``: format v3, merge-on-read (deletion vectors).

* ``eq-v2``: format v2, kept as Flink's Iceberg upsert sink keeps a table: per step one commit
  of the new rows and an equality delete file on ``k`` (written through Iceberg's Java API,
  tests/support/equality_upsert.py: Spark SQL never writes equality deletes).

Per (mode, step): ``lakewide run`` of the model in-process vs the FULL OUTER JOIN rebuild over
the same tables, wall and JVM CPU seconds, their order alternated step by step, rows compared;
the read mode of every source (``SourceRange.mode``), what the upstream MERGE wrote (its
snapshot summary) and the run's seconds per plan step kind (read/stage vs MERGE commit): wall
(``lakewide_steps``) and JVM CPU (``lakewide_steps_cpu``); inside the read of changes by position
or lineage, both for the data files listed, staged and paired (``lakewide_read_parts``).

    PYTHONPATH=$PWD python benchmarks/cdc_mirrors.py --keys 200000 --warmup 20000
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import generate  # noqa: E402
from benchmarks.run import BASE, Clock, open_session, same_rows  # noqa: E402
from benchmarks.step_clock import StepClock  # noqa: E402
from lakewide.project.manifest import load_manifest  # noqa: E402
from lakewide.project.settings import load_project  # noqa: E402
from lakewide.run.models.executor import run_models  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.position_changes import PositionChanges  # noqa: E402
from lakewide.spark.staged_scan import StagedScans  # noqa: E402
from tests.support.equality_upsert import upsert  # noqa: E402

SOURCES = 4
CHANGED = 0.01
DELETED = 0.002  # of the keys, deleted in every source by the delete step
# a delete removes the row: the JOIN rebuild's answer when a key leaves every source
MODEL = BASE + ", remove_record_on_delete=true"
COW = {"write.merge.mode": "copy-on-write", "write.update.mode": "copy-on-write"}
COW["write.delete.mode"] = "copy-on-write"
MOR = {key: "merge-on-read" for key in COW}
# mode -> table properties of its source tables (None: appended, not merged)
MODES: dict[str, dict[str, str] | None] = {
    "append": None,
    "cow": {"format-version": "2", **COW},
    "cow-v3": {"format-version": "3", **COW},
    "mor-v2": {"format-version": "2", **MOR},
    "mor-v3": {"format-version": "3", **MOR},
    "eq-v2": {"format-version": "2", **MOR},
}
#: modes whose steps are committed as Flink's upsert sink commits them (equality deletes)
EQUALITY = {"eq-v2"}
# step -> (label, sources changed (None: every one), with deletes)
STEPS = {
    "one": ("1% updated in one source", [0], False),
    "all": ("1% updated in every source", None, False),
    "delete": ("1% updated + 0.2% deleted in every source", None, True),
}
SUMMARY = (
    "added-data-files",
    "deleted-data-files",
    "added-files-size",
    "removed-files-size",
    "added-delete-files",
    "added-position-delete-files",
    "added-dvs",
    "added-position-deletes",
    "added-equality-delete-files",
    "added-equality-deletes",
    "added-records",
    "deleted-records",
)


def namespace(mode: str) -> str:
    return "m_" + mode.replace("-", "_")


def bootstrap_source(spark: Any, mode: str, index: int, keys: int) -> None:
    table = f"lw.{namespace(mode)}.s{index}"
    writer = generate.source_frame(spark, index, keys, 0).writeTo(table).using("iceberg")
    for key, value in (MODES[mode] or {}).items():
        writer = writer.tableProperty(key, value)
    writer.create()


def change_source(
    spark: Any, mode: str, index: int, keys: int, round_no: int, deletes: bool
) -> dict[str, Any]:
    """One step's change to one source; what it wrote (summary) and its seconds."""
    from pyspark.sql import functions as F

    table = f"lw.{namespace(mode)}.s{index}"
    changes = generate.source_frame(spark, index, keys, round_no, fraction=CHANGED)
    changes = changes.withColumn("op", F.lit("U"))
    if deletes:  # the same keys in every source (index not hashed): the row leaves the table
        bucket = F.abs(F.hash(F.col("k"), F.lit(round_no), F.lit("delete"))) % 10_000
        deleted = spark.range(keys).withColumnRenamed("id", "k").where(bucket < DELETED * 10_000)
        gone = generate.source_frame(spark, index, keys, round_no).join(deleted, "k", "left_semi")
        changes = changes.join(deleted, "k", "left_anti").unionByName(
            gone.withColumn("op", F.lit("D"))
        )
    started = time.perf_counter()
    if MODES[mode] is None:
        if deletes:
            raise ValueError("an appended upstream takes no deletes")
        changes.drop("op").writeTo(table).append()
    elif mode in EQUALITY:
        upserts = changes.where("op <> 'D'").drop("op")
        upsert(spark, table, upserts, changes.where("op = 'D'").select("k"), "k")
    else:
        changes.createOrReplaceTempView("changes")
        columns = ["k", "seq", *generate.source_columns(index)]
        spark.sql(
            f"MERGE INTO {table} t USING changes c ON t.k = c.k "
            "WHEN MATCHED AND c.op = 'D' THEN DELETE "
            f"WHEN MATCHED THEN UPDATE SET {', '.join(f'{x} = c.{x}' for x in columns)} "
            f"WHEN NOT MATCHED AND c.op <> 'D' THEN INSERT ({', '.join(columns)}) "
            f"VALUES ({', '.join(f'c.{x}' for x in columns)})"
        )
    seconds = time.perf_counter() - started
    [row] = spark.sql(
        f"SELECT operation, summary FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()
    summary = {k: int(row.summary[k]) for k in SUMMARY if k in row.summary}
    return {"operation": row.operation, "seconds": round(seconds, 2), **summary}


def run_model(manifest: Any, adapter: SparkAdapter, model: str, into: dict[str, Any]) -> None:
    [result] = run_models(manifest, [model], adapter)
    if result.status != "success":
        raise RuntimeError(result.message)
    into["ranges"] = [
        {"branch": r["branch"], "mode": r["mode"], "reason": r["reason"]} for r in result.ranges
    ]
    into["plan"] = result.plan


def steps(
    spark: Any,
    clock: Clock,
    keys: int,
    modes: list[str],
    step_names: list[str],
    manifest: Any,
    adapter: SparkAdapter,
    result: dict[str, Any] | None,
    save: Any,
) -> None:
    """Bootstrap and every step on fresh tables; recorded into ``result`` unless None."""
    for mode in modes:
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{namespace(mode)}")
        for i in range(SOURCES):
            bootstrap_source(spark, mode, i, keys)
    # per plan step kind, and inside the Read step the parts of a read by position or lineage
    parts = {
        "files listed": (PositionChanges, "_files_between"),
        "files staged": (StagedScans, "read_files"),
        "pairs told": (PositionChanges, "_lineage_or_changelog"),
    }
    timer = StepClock(cpu=clock.cpu, also=parts)
    for round_no, name in enumerate(["bootstrap", *step_names]):
        label, changed, deletes = STEPS.get(name, ("bootstrap (all rows)", [], False))
        for mode in modes:
            if deletes and MODES[mode] is None:
                continue
            entry: dict[str, Any] = {"writes": {}}
            for i in range(SOURCES) if changed is None else changed:
                entry["writes"][f"s{i}"] = change_source(spark, mode, i, keys, round_no, deletes)
            wide, join_table = f"wide_{namespace(mode)}", f"lw.wide.join_{namespace(mode)}"
            join_sql = generate.join_rebuild("lw", namespace(mode), SOURCES, join_table)
            outcome: dict[str, Any] = {}
            actions = [
                ("join", lambda s=join_sql: spark.sql(s).collect()),
                ("lakewide", lambda m=wide, o=outcome: run_model(manifest, adapter, m, o)),
            ]
            timer.take()
            for what, action in actions if round_no % 2 else reversed(actions):
                entry[what] = clock.measure(action)
                taken = timer.take_all()  # wall and JVM CPU seconds
                steps_taken = {kind: t for kind, t in taken.items() if kind not in parts}
                entry[f"{what}_steps"] = {kind: round(t["s"], 2) for kind, t in steps_taken.items()}
                entry[f"{what}_steps_cpu"] = {
                    kind: round(t["cpu"], 2) for kind, t in steps_taken.items()
                }
                entry[f"{what}_read_parts"] = {k: v for k, v in taken.items() if k in parts}
            entry.update(outcome)
            entry["equal"] = same_rows(spark, f"lw.wide.{wide}", join_table)
            if result is not None:
                result["steps"].setdefault(label, {})[mode] = entry
                print(label, mode, json.dumps(entry), flush=True)
                save(result)


def bench(out: Path, keys: int, warmup: int, modes: list[str], names: list[str]) -> dict:
    warehouse = out / f"cdc_warehouse_{keys}"
    shutil.rmtree(warehouse, ignore_errors=True)
    root = out / f"cdc_project_{keys}"
    models = {
        f"wide_{namespace(m)}": generate.wide_model(SOURCES, MODEL, namespace(m)) for m in modes
    }
    generate.write_project(root, warehouse, SOURCES, models)
    tables = "".join(f"      - name: s{i}\n" for i in range(SOURCES))
    (root / "models" / "sources.yml").write_text(
        "sources:\n"
        + "".join(
            f"  - name: {namespace(m)}\n    schema: {namespace(m)}\n    tables:\n{tables}"
            for m in modes
        )
    )
    output, _, spark = open_session(root, "lakewide-cdc-bench")
    clock = Clock(spark)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.wide")
    manifest = load_manifest(load_project(root), output)
    adapter = SparkAdapter(output, spark=spark)
    result: dict[str, Any] = {"keys": keys, "sources": SOURCES, "modes": modes, "steps": {}}
    path = out / f"cdc_mirrors_{keys}.json"

    def save(partial: dict[str, Any]) -> None:
        path.write_text(json.dumps(partial, indent=2))

    if warmup:
        steps(spark, clock, warmup, modes, names, manifest, adapter, None, save)
        for ns in ["wide", *(namespace(m) for m in modes)]:
            for row in spark.sql(f"SHOW TABLES IN lw.{ns}").collect():
                spark.sql(f"DROP TABLE lw.{ns}.{row.tableName} PURGE")
    steps(spark, clock, keys, modes, names, manifest, adapter, result, save)
    spark.stop()
    return result


def _ratios(runs: list[dict[str, Any]], metric: str) -> list[float]:
    return sorted(e["lakewide"][metric] / e["join"][metric] for e in runs)


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _written(entry: dict[str, Any]) -> str:
    writes = entry["writes"].values()
    total = {k: sum(w.get(k, 0) for w in writes) for k in SUMMARY}
    return (
        f"{total['deleted-data-files']}/{total['added-data-files']} files, "
        f"{total['removed-files-size'] / 2**20:.1f}/{total['added-files-size'] / 2**20:.1f} MiB"
        f", {total['added-delete-files']} delete files ({total['added-dvs']} DVs)"
    )


def _cells(runs: list[dict[str, Any]]) -> list[str]:
    """One (step, mode) of every run: the cell of each table."""
    wall, cpu = _ratios(runs, "s"), _ratios(runs, "cpu")
    spread = f" [{wall[0]:.2f}-{wall[-1]:.2f}]" if len(runs) > 1 else ""
    flag = "" if all(e["equal"] for e in runs) else " !="
    read = sorted({r["mode"] for r in runs[0]["ranges"]} - {"none"}) or ["none"]
    steps = [e["lakewide_steps"] for e in runs]
    stage = _median([st.get("Stage", 0) for st in steps])
    commit = _median([st.get("Commit", 0) for st in steps])
    other = _median([sum(st.values()) - st.get("Stage", 0) - st.get("Commit", 0) for st in steps])
    upstream = _median([sum(w["seconds"] for w in e["writes"].values()) for e in runs])
    return [
        f"{_median(wall):.2f} ({_median(cpu):.2f}){spread}{flag}",
        f"{_median([e['join']['s'] for e in runs]):.1f} / "
        f"{_median([e['lakewide']['s'] for e in runs]):.1f} / {upstream:.1f}",
        ", ".join(read),
        _written(runs[0]) if runs[0]["writes"] else "-",
        f"{stage:.1f} / {commit:.1f} / {other:.1f}",
    ]


def markdown(results: list[dict[str, Any]]) -> str:
    """Tables of runs of one size (medians over the runs): x JOIN (wall, CPU), read modes,
    what the upstream MERGEs wrote, where the run's seconds went."""
    modes, first = results[0]["modes"], results[0]
    head = ["| step | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
    tables: dict[str, list[str]] = {
        "lakewide / JOIN rebuild, wall (JVM CPU) [wall range]; `!=`: rows differ from the "
        "rebuild": [],
        "seconds: JOIN rebuild / lakewide run / the upstream MERGEs of the step": [],
        "read mode of the changed sources": [],
        "upstream MERGEs: data files removed/added, MiB removed/added, delete files": [],
        "lakewide run seconds: Stage (read + pre-reduce) / Commit (MERGE) / other": [],
    }
    rows = list(tables.values())
    for step in first["steps"]:
        cells: list[list[str]] = [[] for _ in rows]
        for mode in modes:
            runs = [r["steps"][step][mode] for r in results if mode in r["steps"].get(step, {})]
            for column, cell in zip(cells, _cells(runs) if runs else ["n/a"] * len(rows)):
                column.append(cell)
        for row, c in zip(rows, cells):
            row.append(f"| {step} | " + " | ".join(c) + " |")
    out = [
        f"### {first['keys']:,} keys, {first['sources']} sources x 4 value columns, "
        f"median of {len(results)} run(s)"
    ]
    for title, body in tables.items():
        out += ["", f"{title}:", "", *head, *body]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--warmup", type=int, default=20_000, help="unmeasured first pass")
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--steps", nargs="+", choices=list(STEPS), default=list(STEPS))
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument(
        "--report", type=Path, nargs="+", metavar="JSON", help="only print their tables (medians)"
    )
    args = parser.parse_args()
    if args.report:
        print(markdown([json.loads(path.read_text()) for path in args.report]))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    print(markdown([bench(args.out, args.keys, args.warmup, args.modes, args.steps)]))


if __name__ == "__main__":
    main()
