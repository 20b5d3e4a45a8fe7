"""Reading a copy-on-write upstream's changes: Iceberg's changelog against the floor.

One source table of ``generate.py`` (``keys`` rows, 4 value columns), format 3, copy-on-write,
then one ``MERGE`` that updates 1% of the keys spread over the table and deletes 0.2%: it
rewrites every data file. Then, alternated, ``rounds`` times each, in one session:

* ``iceberg``: ``CALL create_changelog_view`` over that commit, materialized
  (``localCheckpoint``, as a run does): what lakewide reads for a format-2 copy-on-write
  upstream. Iceberg pairs the carried-over rows by shuffling and sorting every row of the
  removed and added files;
* ``lineage``: what lakewide reads for a format-3 one: the commit's files, the changed rows
  told from the carried-over ones by row lineage (lakewide.spark.lineage_changes);
* ``by_key``: Iceberg's changelog with the key as identifier column (sorted by key alone);
* ``hashed``: a pairing by row hash: both sides materialized with a 96-bit hash per row, the
  hashes whose counts differ, the rows with those hashes;
* ``floor``: the rows of the removed and of the added files read once each (every column,
  materialized the same way, no pairing): what any exact read of this commit must at least
  read, since the metadata says only that every file was rewritten;
* ``shuffled``: the floor's rows moved by key (a shuffle, no sort, no comparison): the least a
  pairing without row lineage does that brings each row to its counterpart;
* ``grouped``: an exact pairing without a sort: the floor's rows signed (-1 removed, +1 added)
  and summed per whole row (a hash aggregate), the rows whose sum is not 0;
* ``joined``: an exact pairing where no row repeats on a side (a mirror's rows, one per key):
  a full outer shuffled hash join of the two sides on every column (NULL-safe), the rows
  without a partner;
* ``hash_counts``: the floor's rows reduced to key and 64-bit row hash, moved and counted by
  both (no rows fetched after): the least a pairing by row hash does;
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


def _iceberg(spark: Any, table: str, after: int, end: int, by_key: bool = False) -> Any:
    keys = ", identifier_columns => array('k')" if by_key else ""
    spark.sql(
        f"CALL lw.system.create_changelog_view(table => '{table.removeprefix('lw.')}', "
        f"options => map('start-snapshot-id', '{after}', 'end-snapshot-id', '{end}'), "
        f"changelog_view => 'bench_changes'{keys})"
    )
    return spark.table("bench_changes").drop("_commit_snapshot_id")


def _at(spark: Any, table: str, snapshot: int) -> Any:
    return spark.read.format("iceberg").option("snapshot-id", str(snapshot)).load(table)


def _floor(spark: Any, table: str, after: int, end: int) -> Any:
    return _at(spark, table, after).unionByName(_at(spark, table, end))


def _net(both: Any, by: list[str]) -> Any:
    """``both`` (rows signed in ``__sign``: -1 removed, +1 added) summed per ``by``: the
    groups whose count differs between the sides, the difference in ``__net``."""
    from pyspark.sql import functions as f

    return both.groupBy(*by).agg(f.sum("__sign").alias("__net")).where("__net != 0")


def _shuffled(spark: Any, table: str, after: int, end: int) -> Any:
    return _floor(spark, table, after, end).repartition("k")


def _grouped(spark: Any, table: str, after: int, end: int) -> Any:
    from pyspark.sql import functions as f

    old, new = _at(spark, table, after), _at(spark, table, end)
    both = old.withColumn("__sign", f.lit(-1)).unionByName(new.withColumn("__sign", f.lit(1)))
    net = _net(both, old.columns)
    kind = f.when(f.col("__net") < 0, "DELETE").otherwise("INSERT").alias("_change_type")
    return net.select(*old.columns, kind)


def _joined(spark: Any, table: str, after: int, end: int) -> Any:
    from functools import reduce

    from pyspark.sql import functions as f

    old, new = _at(spark, table, after), _at(spark, table, end)
    names = old.columns
    o = old.select(*[f.col(c).alias(f"o_{c}") for c in names], f.lit(1).alias("__o"))
    n = new.select(*[f.col(c).alias(f"n_{c}") for c in names], f.lit(1).alias("__n"))
    on = reduce(lambda a, b: a & b, [o[f"o_{c}"].eqNullSafe(n[f"n_{c}"]) for c in names])
    pairs = o.hint("shuffle_hash").join(n, on, "full_outer").where("__o IS NULL OR __n IS NULL")
    gone = f.col("__n").isNull()
    return pairs.select(
        *[f.when(gone, f.col(f"o_{c}")).otherwise(f.col(f"n_{c}")).alias(c) for c in names],
        f.when(gone, "DELETE").otherwise("INSERT").alias("_change_type"),
    )


def _hash_counts(spark: Any, table: str, after: int, end: int) -> Any:
    """Key and a 64-bit hash of each row of both sides, signed, summed per (key, hash): the
    (key, hash) pairs whose count differs, without the rows themselves."""
    from pyspark.sql import functions as f

    def side(snapshot: int, sign: int) -> Any:
        frame = _at(spark, table, snapshot)
        row = f.xxhash64(*[f.col(c) for c in frame.columns])
        return frame.select("k", row.alias("__h"), f.lit(sign).alias("__sign"))

    return _net(side(after, -1).unionByName(side(end, 1)), ["k", "__h"])


def _hashed(spark: Any, table: str, after: int, end: int) -> Any:
    """Both sides read once with a 96-bit hash of each row (and its NULL mask), materialized;
    the hashes whose count differs between the sides (a narrow aggregate); the rows with those
    hashes, as DELETE (old side) or INSERT (new side)."""
    from pyspark.sql import functions as f

    def side(snapshot: int, sign: int) -> Any:
        frame = _at(spark, table, snapshot)
        columns = [f.col(c) for c in frame.columns]
        nulls = f.concat(*[f.when(c.isNull(), "1").otherwise("0") for c in columns])
        return frame.select(
            *columns,
            f.xxhash64(*columns, nulls).alias("__h1"),
            f.hash(*columns, nulls).alias("__h2"),
            f.lit(sign).alias("__sign"),
        )

    both = side(after, -1).unionByName(side(end, 1)).localCheckpoint(eager=True)
    changed = _net(both, ["__h1", "__h2"])
    rows = both.join(f.broadcast(changed.select("__h1", "__h2")), ["__h1", "__h2"], "left_semi")
    kind = f.when(f.col("__sign") < 0, "DELETE").otherwise("INSERT").alias("_change_type")
    return rows.select(*[c for c in both.columns if not c.startswith("__")], kind)


def _lineage(mirror: read_rounds.Mirror) -> Any:
    """What lakewide reads for a format-3 upstream: the commit's files, its changed rows
    paired by row lineage (lakewide.spark.lineage_changes), materialized."""
    from pyspark.sql import functions as f

    adapter, columns = mirror.adapter, mirror.spark.table(mirror.table).columns
    parts = adapter._positional_parts(
        mirror.relation, mirror.meta, mirror.after, mirror.end, (columns, columns)
    )
    frame = None
    for part, kind in parts:
        rows = part.select(*columns, f.lit(kind).alias("_change_type"))
        frame = rows if frame is None else frame.unionByName(rows)
    assert frame is not None
    frame = frame.localCheckpoint(eager=True)
    adapter.unstage()  # plan the commit's scans again next round, as a run does
    return frame


def bench_size(out: Path, keys: int, rounds: int) -> dict[str, Any]:
    mirror = read_rounds.mirrored(out, keys, "changes_read", "cow-v3", 1)
    spark, table, after, end_id = mirror.spark, mirror.table, mirror.after, mirror.end
    frames = {
        "iceberg": lambda: _iceberg(spark, table, after, end_id),
        "lineage": lambda: _lineage(mirror),
        "by_key": lambda: _iceberg(spark, table, after, end_id, by_key=True),
        "hashed": lambda: _hashed(spark, table, after, end_id),
        "floor": lambda: _floor(spark, table, after, end_id),
        "shuffled": lambda: _shuffled(spark, table, after, end_id),
        "grouped": lambda: _grouped(spark, table, after, end_id),
        "joined": lambda: _joined(spark, table, after, end_id),
        "hash_counts": lambda: _hash_counts(spark, table, after, end_id),
        "scan": lambda: spark.table(table),
    }
    counts = {name: make().localCheckpoint(eager=True).count() for name, make in frames.items()}
    seconds, medians = read_rounds.timed_reads(mirror.clock, frames, rounds)
    spark.stop()
    return {
        "keys": keys,
        "upstream_merge": mirror.wrote,
        "rows": counts,
        "seconds": seconds,
        "medians": medians,
    }


def markdown(results: list[dict[str, Any]]) -> str:
    """Per size and read: rows, wall s (JVM CPU s), and x Iceberg's changelog (CPU)."""
    lines = ["| keys | read | rows | wall s (JVM CPU s) | x Iceberg's changelog, CPU |"]
    lines.append("|---|---|---|---|---|")
    for r in results:
        ice = r["medians"]["iceberg"]["cpu"]
        for name, m in r["medians"].items():
            lines.append(
                f"| {r['keys']:,} | {name} | {r['rows'][name]:,} | {m['s']:.1f} ({m['cpu']:.1f}) "
                f"| {m['cpu'] / ice:.2f} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    read_rounds.main(__doc__, "changes_read", bench_size, markdown)
