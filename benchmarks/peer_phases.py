"""Where lakewide's time goes on the one-source step, against the hand-written merge-on-read
Iceberg MERGE that beats it there (issue 33).

    PYTHONPATH=$PWD nice -n 5 python benchmarks/peer_phases.py --keys 1000000 --rounds 3

The session, sources and steps of ``benchmarks/peers.py`` (4 sources, 16 value columns; the
step "1% of keys changed in one source", and with ``--steps one late deletes`` the late records
and 1% of keys removed by a delete log's -D rows, as ``peers.py`` runs them), on
lakewide and variants of the hand-written MERGE (``--systems``, default all):

* ``lakewide``: ``lakewide run`` of ``wide_mor`` in this session, timed per plan step kind
  (``step_clock.StepClock``: wall and JVM CPU seconds of its Read, Query, Stage and Commit
  steps, the MERGE statement within the Commit, and what the run spends outside its steps:
  planning, snapshot metadata, the JVM settling after it);
* ``iceberg_merge_mor``: the hand-written column-scoped MERGE (``peer_systems.MergePeer``) as
  ``benchmarks/peers.py`` runs it; its new rows' view (``NewRows.rows``) timed apart;
* ``..._wide``: the same MERGE into a table that stores lakewide's 16 per-column versions
  instead of the 4 source sequences (34 columns, as lakewide's table): the width alone;
* ``..._pruned``: the MERGE reads its source through ``WHERE k = k`` as lakewide's does, so
  that Spark prunes the target's rows by a runtime Bloom filter of the source's keys;
* ``..._pruned_wide``: both, lakewide's MERGE shape without lakewide's run around it.

Every system's tables are bootstrapped once; then ``--rounds`` rounds of the steps, each step
running the systems in a rotated order, each measured with ``run.Clock`` (wall, and JVM CPU
seconds until the JVM is idle again). After every step all tables must hold the same rows
(``peer_systems.differing_keys``), or the script stops. A warm-up first runs everything on
``--warmup`` keys, unmeasured. Writes ``benchmarks/results/peer_phases_<size>.{json,md}``
(medians over the rounds; rewritten after every step).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402
import peer_systems  # noqa: E402
import peers  # noqa: E402
import run  # noqa: E402
import step_clock  # noqa: E402

from lakewide.spark.adapter import SparkAdapter  # noqa: E402

HAND = "iceberg_merge_mor"
# the hand MERGE's variants: name -> (lakewide's versions stored, source filtered by k = k)
VARIANTS = {
    f"{HAND}_wide": (True, False),
    f"{HAND}_pruned": (False, True),
    f"{HAND}_pruned_wide": (True, True),
}
# lakewide's step kinds in the order a run takes them
KINDS = ["Read", "Query", "Stage", "Commit"]
STATEMENT = "MERGE statement"
# lakewide's adapter calls timed apart, within its steps or between them: label -> (method,
# what it is)
CALLS = {
    STATEMENT: ("commit", "the MERGE statement (`SparkAdapter.commit`), within Commit"),
    "ordered reads": (
        "ordered_read",
        "planning the reads in commit order (`ordered_read`: the files of each source at its "
        "snapshot, or appended since), within Read",
    ),
    "metadata": ("table_meta", "the tables' snapshot metadata (`table_meta`), anywhere"),
    "analysis": (
        "column_types",
        "Spark's analysis of queries for their columns' types (`column_types`: the model's "
        "contract against the stored schema), outside the steps",
    ),
}
VIEW = "new rows' view"  # a hand MERGE's NewRows.rows: the source's current snapshot, a view


def systems(
    lakewide: peers.Lakewide, sources: int, names: list[str], deletes: bool
) -> dict[str, Any]:
    """lakewide, the peers' hand MERGE and its variants ``names`` (of ``VARIANTS``);
    ``deletes``: source ``sources`` is a delete log."""
    hand = peer_systems.peers(sources, deletes)[HAND]
    chosen: dict[str, Any] = {"lakewide": lakewide, HAND: hand}
    for name in names:
        versions, prune = VARIANTS[name]
        table = f"lw.peers.{name}"
        chosen[name] = peer_systems.MergePeer(
            table, "iceberg", peer_systems.ICEBERG_MOR, sources, versions, prune, deletes
        )
    return chosen


def rounds(
    spark: Any,
    clock: run.Clock,
    timer: step_clock.StepClock,
    chosen: dict[str, Any],
    args: argparse.Namespace,
    keys: int,
    result: dict[str, Any] | None,
    save: Any,
) -> None:
    """Bootstrap and ``args.rounds`` rounds of ``args.steps`` on fresh sources of ``keys``
    keys; recorded into ``result`` unless None (a warm-up)."""
    columns = ["k", *(c for i in range(args.sources) for c in generate.source_columns(i)), "seq"]
    peers.write_sources(spark, keys, args.sources, "deletes" in args.steps)
    names = list(chosen)
    pairs = {name: (chosen[name].table, peers.LAKEWIDE_TABLE) for name in names[1:]}
    repeat = args.rounds if result is not None else 1
    plan = ["bootstrap", *(s for _ in range(repeat) for s in args.steps if s != "deletes")]
    plan += ["deletes"] * repeat * ("deletes" in args.steps)  # last: no step brings a key back
    for round_no, name in enumerate(plan):
        label, changed = peers.write_step(spark, name, round_no, keys, args.sources)
        shift = round_no % len(names)
        order = names[shift:] + names[:shift]
        entry: dict[str, Any] = {"round": round_no, "order": order}
        for system in order:
            timer.take_all()
            entry[system] = clock.measure(
                lambda p=chosen[system], r=round_no, c=changed: (
                    p.step(spark, c, r) if r else p.build(spark)
                )
            )
            entry[f"{system}_steps"] = timer.take_all()
        entry["differing_keys"] = peer_systems.differing_keys(spark, pairs, columns)
        if any(entry["differing_keys"].values()):
            raise SystemExit(f"the tables differ after {name} (round {round_no}): {entry}")
        if result is not None:
            result["steps"].setdefault(label, []).append(entry)
            result["load_end"] = os.getloadavg()
            print(label, json.dumps(entry), flush=True)
            save(result)


def _cell(values: list[float]) -> str:
    """Median [min-max]."""
    middle = statistics.median(values)
    return (
        f"{middle:.2f} [{min(values):.2f}-{max(values):.2f}]"
        if len(values) > 1
        else f"{middle:.2f}"
    )


def phases(entries: list[dict[str, Any]]) -> dict[str, list[dict[str, float]]]:
    """lakewide's phases in each entry: its step kinds, what the run spent outside its steps
    (whole run less the steps) and the adapter calls timed apart (``CALLS``)."""
    found = {k for e in entries for k in e["lakewide_steps"]}
    kinds = [k for k in KINDS if k in found]
    kinds += sorted(found - {*kinds, *CALLS})
    calls = [c for c in CALLS if c in found]
    out: dict[str, list[dict[str, float]]] = {}
    for entry in entries:
        steps, whole = entry["lakewide_steps"], entry["lakewide"]
        inside = {m: sum(v[m] for k, v in steps.items() if k not in CALLS) for m in ("s", "cpu")}
        for kind in kinds:
            out.setdefault(kind, []).append(steps.get(kind, {"s": 0.0, "cpu": 0.0, "n": 0}))
        out.setdefault("outside", []).append({m: whole[m] - inside[m] for m in ("s", "cpu")})
        for call in calls:
            out.setdefault(call, []).append(steps.get(call, {"s": 0.0, "cpu": 0.0, "n": 0}))
    return out


LABELS = {
    "outside": "outside the steps: planning, snapshot metadata, the JVM settling after the run",
    **{label: what for label, (_, what) in CALLS.items()},
}


def markdown(result: dict[str, Any]) -> str:
    names, count = result["systems"], max(len(e) for e in result["steps"].values())
    loads = [", ".join(f"{x:.2f}" for x in result[k]) for k in ("load_start", "load_end")]
    lines = [
        f"### {result['keys']:,} keys, {result['sources']} sources: lakewide's phases against "
        f"the hand-written merge-on-read Iceberg MERGE, median [min-max] of {count} round(s)",
        "",
        f"Load average (1, 5, 15 min) at the start of the measured rounds: {loads[0]}; at the "
        f"end: {loads[1]} (a shared machine of {os.cpu_count()} cores; this run's own JVM "
        f"counts too). Warm-up on {result['warmup_keys']:,} keys. Versions: "
        + ", ".join(f"{k} {v}" for k, v in result["versions"].items())
        + ".",
        "",
        "| step | system | wall s | JVM CPU s | CPU x hand MERGE |",
        "|---|---|---|---|---|",
    ]
    for label, entries in result["steps"].items():
        hand = statistics.median(e[HAND]["cpu"] for e in entries)
        for name in names:
            cpu = [e[name]["cpu"] for e in entries]
            lines.append(
                f"| {label} | {name} | {_cell([e[name]['s'] for e in entries])} | {_cell(cpu)} "
                f"| {statistics.median(cpu) / hand:.2f} |"
            )
    for label, entries in result["steps"].items():
        lines += [
            "",
            f"{label}: lakewide's run by plan step kind (JVM CPU read before and after each "
            "step, no settling), the hand MERGEs whole:",
            "",
            "| phase | calls | wall s | JVM CPU s |",
            "|---|---|---|---|",
        ]
        for kind, values in phases(entries).items():
            calls = statistics.median_low(v["n"] for v in values) if "n" in values[0] else "-"
            lines.append(
                f"| {LABELS.get(kind, kind)} | {calls} | {_cell([v['s'] for v in values])} "
                f"| {_cell([v['cpu'] for v in values])} |"
            )
        for name in names:
            view = [e.get(f"{name}_steps", {}).get(VIEW) for e in entries]
            rows = [(f"{name}, whole", [e[name] for e in entries])]
            if all(view):
                rows.append((f"of which its {VIEW} (`NewRows.rows`)", view))
            for what, values in rows:
                lines.append(
                    f"| {what} | - | {_cell([v['s'] for v in values])} "
                    f"| {_cell([v['cpu'] for v in values])} |"
                )
    return "\n".join(lines) + "\n"


def bench(args: argparse.Namespace, save: Any) -> dict[str, Any]:
    root = args.out / f"peer_phases_{args.keys}"
    deletes = "deletes" in args.steps
    lakewide, conf, spark = peers.open_bench(root, args.sources, "lakewide-peer-phases", deletes)
    clock = run.Clock(spark, settle=not args.quick)
    timed = {label: (SparkAdapter, method) for label, (method, _) in CALLS.items()}
    timed[VIEW] = (peer_systems.NewRows, "rows")
    timer = step_clock.StepClock(clock.cpu, timed)
    chosen = systems(lakewide, args.sources, args.systems, deletes)
    result: dict[str, Any] = {
        "keys": args.keys,
        "sources": args.sources,
        "rounds": args.rounds,
        "warmup_keys": args.warmup,
        "systems": list(chosen),
        "versions": peers.versions(spark, conf),
        "steps": {},
    }
    if args.warmup:  # every statement once on small tables: JIT and generated code warm
        rounds(spark, clock, timer, chosen, args, args.warmup, None, save)
        peers.drop_tables(spark)
    result["load_start"] = os.getloadavg()
    rounds(spark, clock, timer, chosen, args, args.keys, result, save)
    spark.stop()
    result["load_end"] = os.getloadavg()
    save(result)
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--steps",
        nargs="+",
        choices=["one", "late", "deletes"],
        default=["one"],
        help="the steps of each round; the deletes' rounds come after every other step's",
    )
    parser.add_argument(
        "--systems",
        nargs="*",
        choices=list(VARIANTS),
        default=list(VARIANTS),
        help=f"the hand MERGE's variants run beside lakewide and {HAND}",
    )
    parser.add_argument(
        "--warmup", type=int, default=5000, metavar="KEYS", help="unmeasured first pass (0: none)"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument(
        "--quick", action="store_true", help="a check: no waiting for the JVM to settle"
    )
    args = parser.parse_args(argv)
    args.results.mkdir(parents=True, exist_ok=True)
    stem = args.results / f"peer_phases_{peers.size_name(args.keys)}"

    def save(result: dict[str, Any]) -> None:
        stem.with_suffix(".json").write_text(json.dumps(result, indent=2))
        stem.with_suffix(".md").write_text(markdown(result))

    result = bench(args, save)
    print(markdown(result))
    return result


if __name__ == "__main__":
    main()
