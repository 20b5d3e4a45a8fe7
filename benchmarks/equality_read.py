"""Reading an upstream kept by equality deletes (Flink's upsert sink): by key against marked.

One source table of ``generate.py`` (``keys`` rows, 4 value columns), format 2, then two commits
as Flink's Iceberg upsert sink makes them (tests/support/equality_upsert.py): each the new rows
of 1% of the keys spread over the table, and an equality delete file on ``k`` with those keys
and 0.2% more (deleted). The second commit is read (its parent has equality deletes already, as in a
mirror's steady state). Then, alternated, ``rounds`` times each, in one session, each read
materialized (``localCheckpoint``, as a run does):

* ``marked``: what lakewide reads (lakewide.spark.position_changes): the table at the commit
  read whole with Iceberg's ``_deleted`` column (every row, the equality deletes applied), and
  the parent's deleted positions where it has delete files;
* ``by_key``: the alternative measured and not adopted (``by_key_parts`` below): the commit's
  new data file alone (a staged scan, as lakewide reads position deletes), its equality delete
  file, and the parent's rows with those keys (one scan of the parent joined with the keys);
* ``scan``: the table's current rows read once: what the JOIN rebuild reads of this source.

Both reads' rows are compared (they must be equal). Wall and JVM CPU seconds (medians).

    PYTHONPATH=$PWD python benchmarks/equality_read.py --keys 1000000 5000000
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import read_rounds  # noqa: E402
from lakewide.project.nodes import Relation  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.position_changes import _changes_of, types_of  # noqa: E402

MODE = "eq-v2"
#: upsert commits before the read; the read is of the last, whose parent has equality deletes
#: already (a mirror's steady state: the marked read then also scans the parent's deletes)
COMMITS = 2


def by_key_parts(
    adapter: SparkAdapter, relation: Relation, a: int, b: int, columns: list[str]
) -> list[tuple[Any, str]]:
    """Commit ``b``'s changes read from what it wrote, its equality deletes by key: the data
    files it added (staged scan), and the rows of the table at ``a`` whose key one of its
    equality delete files holds (those files read by column name, one key set)."""
    from pyspark.sql import functions as f

    table = adapter._iceberg_table(relation)
    found = table.snapshot(b).addedDeleteFiles(table.io()).iterator()
    paths, ids = [], None
    while found.hasNext():
        delete = found.next()
        if str(delete.content()) == "EQUALITY_DELETES":
            paths.append(str(delete.location()))
            ids = [int(i) for i in delete.equalityFieldIds()]
    assert ids is not None, "a commit with equality deletes"
    names = [str(table.schema().findColumnName(i)) for i in ids]
    keys = adapter.spark.read.parquet(*paths).select(
        *[f.col(n).alias(f"__key{i}") for i, n in enumerate(names)]
    )
    keys = keys.distinct().withColumn("__keyed", f.lit(True))
    planned, new, _ = adapter._files_between(relation, a, b)
    at_a = adapter._at(relation, a).select(*columns)
    on = [f.col(n).eqNullSafe(f.col(f"__key{i}")) for i, n in enumerate(names)]
    condition = on[0]
    for more in on[1:]:
        condition = condition & more
    gone = at_a.join(keys, condition, "left").where(f.col("__keyed").isNotNull())
    return [(adapter.read_files(relation, planned, set(new)), "INSERT"), (gone, "DELETE")]


def _changes(parts: list[tuple[Any, str]], columns: list[str], commit: int) -> Any:
    frame = None
    for part, kind in parts:
        rows = _changes_of(part, columns, kind, 0, commit, types_of(part))
        frame = rows if frame is None else frame.unionByName(rows)
    return frame


def bench_size(out: Path, keys: int, rounds: int) -> dict[str, Any]:
    m = read_rounds.mirrored(out, keys, "equality_read", MODE, COMMITS)
    spark, clock, table, adapter = m.spark, m.clock, m.table, m.adapter
    relation, meta, end, after = m.relation, m.meta, m.end, m.after
    columns = list(spark.table(table).columns)
    frames = {
        "by_key": lambda: _changes(
            by_key_parts(adapter, relation, after, end, columns), columns, end
        ),
        "marked": lambda: _changes(
            adapter._marked_parts(relation, meta, after, end, (columns, columns)), columns, end
        ),
        "scan": lambda: spark.table(table),
    }
    rows = {name: make().localCheckpoint(eager=True) for name, make in frames.items()}
    same = rows["by_key"].exceptAll(rows["marked"]).count() == 0
    same = same and rows["marked"].exceptAll(rows["by_key"]).count() == 0
    counts = {name: frame.count() for name, frame in rows.items()}
    seconds, medians = read_rounds.timed_reads(clock, frames, rounds, adapter.unstage)
    spark.stop()
    return {
        "keys": keys,
        "upstream_commit": m.wrote,
        "rows": counts,
        "equal": same,
        "seconds": seconds,
        "medians": medians,
    }


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "| keys | changed rows | by key s (cpu) | marked s (cpu) | scan of the table s (cpu) "
        "| by key x marked | by key x scan | rows equal |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        m = r["medians"]
        key, marked, scan = m["by_key"], m["marked"], m["scan"]
        lines.append(
            f"| {r['keys']:,} | {r['rows']['by_key']:,} | {key['s']:.1f} ({key['cpu']:.1f}) "
            f"| {marked['s']:.1f} ({marked['cpu']:.1f}) | {scan['s']:.1f} ({scan['cpu']:.1f}) "
            f"| {key['s'] / marked['s']:.2f} ({key['cpu'] / marked['cpu']:.2f}) "
            f"| {key['s'] / scan['s']:.2f} ({key['cpu'] / scan['cpu']:.2f}) | {r['equal']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    read_rounds.main(__doc__, "equality_read", bench_size, markdown)
