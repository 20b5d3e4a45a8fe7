"""Reading a copy-on-write upstream's changes: Iceberg's changelog against the floor.

One source table of ``generate.py`` (``keys`` rows, 4 value columns), copy-on-write, then one
``MERGE`` that updates 1% of the keys spread over the table and deletes 0.2%: it rewrites
every data file. Then, alternated, ``rounds`` times each, in one session:

* ``iceberg``: ``CALL create_changelog_view`` over that commit, materialized
  (``localCheckpoint``, as a run does): what lakewide reads for a copy-on-write upstream.
  Iceberg pairs the carried-over rows by shuffling and sorting every row of the removed and
  added files;
* ``floor``: the rows of the removed and of the added files read once each (every column,
  materialized the same way, no pairing): what any exact read of this commit must at least
  read, since the metadata says only that every file was rewritten;
* ``scan``: the table's current rows read once: what the JOIN rebuild reads of this source.

Wall and JVM CPU seconds (medians) and the ratios.

    PYTHONPATH=$PWD python benchmarks/changes_read.py --keys 1000000 5000000
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import read_rounds  # noqa: E402
from benchmarks.cdc_mirrors import COW, change_source  # noqa: E402


def _iceberg(spark: Any, table: str, after: int, end: int) -> Any:
    spark.sql(
        f"CALL lw.system.create_changelog_view(table => '{table.removeprefix('lw.')}', "
        f"options => map('start-snapshot-id', '{after}', 'end-snapshot-id', '{end}'), "
        "changelog_view => 'bench_changes')"
    )
    return spark.table("bench_changes").drop("_commit_snapshot_id")


def _floor(spark: Any, table: str, after: int, end: int) -> Any:
    def at(snapshot: int) -> Any:
        return spark.read.format("iceberg").option("snapshot-id", str(snapshot)).load(table)

    return at(after).unionByName(at(end))


def bench_size(out: Path, keys: int, rounds: int) -> dict[str, Any]:
    mode = "cow"
    properties = {"format-version": "2", **COW}
    spark, clock, table, _ = read_rounds.one_source(out, keys, "changes_read", mode, properties)
    after = spark.sql(f"SELECT snapshot_id FROM {table}.snapshots").collect()[-1][0]
    wrote = change_source(spark, mode, 0, keys, 1, True)
    end = spark.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at").collect()
    end_id = end[-1][0]
    frames = {
        "iceberg": lambda: _iceberg(spark, table, after, end_id),
        "floor": lambda: _floor(spark, table, after, end_id),
        "scan": lambda: spark.table(table),
    }
    counts = {name: make().localCheckpoint(eager=True).count() for name, make in frames.items()}
    seconds, medians = read_rounds.timed_reads(clock, frames, rounds)
    spark.stop()
    return {
        "keys": keys,
        "upstream_merge": wrote,
        "rows": counts,
        "seconds": seconds,
        "medians": medians,
    }


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "| keys | changelog rows | Iceberg changelog s (cpu) | floor: both sides read once "
        "| scan of the table | changelog x floor | changelog x scan |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        m = r["medians"]
        ice, floor, scan = m["iceberg"], m["floor"], m["scan"]
        lines.append(
            f"| {r['keys']:,} | {r['rows']['iceberg']:,} | {ice['s']:.1f} ({ice['cpu']:.1f}) "
            f"| {floor['s']:.1f} ({floor['cpu']:.1f}) | {scan['s']:.1f} ({scan['cpu']:.1f}) "
            f"| {ice['s'] / floor['s']:.2f} | {ice['s'] / scan['s']:.2f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    read_rounds.main(__doc__, "changes_read", bench_size, markdown)
