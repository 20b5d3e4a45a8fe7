"""Reads of one upstream commit timed side by side: alternated rounds, medians."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.run import Clock


def timed_reads(
    clock: Clock,
    frames: dict[str, Callable[[], Any]],
    rounds: int,
    after_round: Callable[[], None] = lambda: None,
) -> tuple[dict[str, list[dict[str, float]]], dict[str, dict[str, float]]]:
    """Each of ``frames`` built and materialized (``localCheckpoint``, as a run does)
    ``rounds`` times, in alternated order; every measurement, and the medians of wall (``s``)
    and JVM CPU (``cpu``) seconds per frame."""
    names = list(frames)
    seconds: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for round_no in range(rounds):
        for name in names if round_no % 2 == 0 else names[::-1]:
            seconds[name].append(
                clock.measure(lambda name=name: frames[name]().localCheckpoint(eager=True))
            )
        after_round()
    medians = {
        name: {m: statistics.median(r[m] for r in runs) for m in ("s", "cpu")}
        for name, runs in seconds.items()
    }
    return seconds, medians


def one_source(
    out: Path, keys: int, name: str, mode: str, properties: dict[str, str]
) -> tuple[Any, Clock, str, Path]:
    """A session on a fresh one-source project in ``out`` and its source table ``s0`` of
    ``keys`` rows (``generate.py``), created in ``mode``'s namespace with ``properties``; the
    session, its clock, the table's name and the warehouse."""
    from benchmarks import generate
    from benchmarks.cdc_mirrors import namespace
    from benchmarks.run import open_session

    warehouse = out / f"{name}_{keys}"
    shutil.rmtree(warehouse, ignore_errors=True)
    root = out / f"{name}_project_{keys}"
    generate.write_project(root, warehouse, 1, {})
    _, _, spark = open_session(root, f"lakewide-{name}")
    table = f"lw.{namespace(mode)}.s0"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{namespace(mode)}")
    writer = generate.source_frame(spark, 0, keys, 0).writeTo(table).using("iceberg")
    for key, value in properties.items():
        writer = writer.tableProperty(key, value)
    writer.create()
    return spark, Clock(spark), table, warehouse


@dataclass
class Mirror:
    """A mirror table after its commits (``mirrored``): the session and its clock, the table,
    an adapter on the session, the table's relation and metadata, the last commit ``end``, its
    parent ``after``, and what the last commit wrote."""

    spark: Any
    clock: Clock
    table: str
    adapter: Any
    relation: Any
    meta: Any
    end: int
    after: int
    wrote: dict[str, Any]


def mirrored(out: Path, keys: int, name: str, mode: str, commits: int) -> Mirror:
    """``one_source`` in ``mode``, then ``commits`` mirror commits of 1% updated and 0.2%
    deleted (``cdc_mirrors.change_source``); the last is the one to read (its parent has
    deletes, as in a mirror's steady state)."""
    from benchmarks.cdc_mirrors import MODES, change_source, namespace
    from lakewide.project.nodes import Relation
    from lakewide.project.profiles import Output
    from lakewide.spark.adapter import SparkAdapter

    spark, clock, table, warehouse = one_source(out, keys, name, mode, MODES[mode] or {})
    wrote = [change_source(spark, mode, 0, keys, n, True) for n in range(1, commits + 1)]
    adapter = SparkAdapter(Output(catalog="lw", warehouse=str(warehouse)), spark=spark)
    relation = Relation("lw", namespace(mode), "s0")
    meta = adapter.table_meta(relation)
    assert meta is not None
    after = meta.snapshots[meta.current].parent
    assert after is not None
    return Mirror(spark, clock, table, adapter, relation, meta, meta.current, after, wrote[-1])


def main(
    doc: str,
    name: str,
    bench_size: Callable[[Path, int, int], Any],
    markdown: Callable[[list[Any]], str],
) -> None:
    """The command line of a reads benchmark: ``--keys`` sizes, ``--rounds``, ``--out``, and
    ``--results`` (also write ``<results>.json`` and ``<results>.md``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument("--results", type=Path, help="also write the JSON and the table here")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for keys in args.keys:
        results.append(bench_size(args.out, keys, args.rounds))
        (args.out / f"{name}.json").write_text(json.dumps(results, indent=2))
    table = markdown(results)
    if args.results:
        args.results.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
        args.results.with_suffix(".md").write_text(table + "\n")
    print(table)
