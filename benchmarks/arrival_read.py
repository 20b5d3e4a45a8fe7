"""What reading a source in commit order costs: the ordered read against one plain read.

    python benchmarks/arrival_read.py --rows 2000000 --commits 100 --rounds 3

A table whose history starts with a replace, then ``--commits`` appends (one data file each),
``--rows`` rows in all. Each round reads it at its current snapshot both ways (alternating which
goes first), numbers the rows as a bootstrap does (``monotonically_increasing_id``) and
aggregates them, so that every row is read; it prints the seconds of each read and of the
ordered read's planning (the files planned through Iceberg's Java API, ordered in Python).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from lakewide.project.nodes import Relation
from lakewide.project.profiles_file import load_output
from lakewide.spark.adapter import SparkAdapter
from lakewide.spark.runtime import create_session, spark_conf
from lakewide.state.arrival import SnapshotRead

DEFAULTS = {"rows": 2_000_000, "commits": 100, "rounds": 3}
PROFILES = "b:\n  target: t\n  outputs:\n    t:\n      catalog: lw\n      catalog_type: hadoop\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in DEFAULTS.items():
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args()
    warehouse = Path(tempfile.mkdtemp(prefix="lw-arrival-"))
    profiles = warehouse / "profiles.yml"
    profiles.write_text(PROFILES + f"      warehouse: {warehouse}\n      namespace: b\n")
    output = load_output(profiles, "b", None, warehouse)
    catalog = {"type": "hadoop", "warehouse": str(warehouse)}
    spark = create_session("arrival-bench", "local[2]", spark_conf("local[2]", "lw", catalog, {}))
    adapter = SparkAdapter(output, spark=spark)
    relation = Relation("lw", "b", "src")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.b")
    per_commit = args.rows // (args.commits + 1)
    for n in range(args.commits + 1):
        frame = spark.range(n * per_commit, (n + 1) * per_commit).selectExpr(
            "id % 100000 AS k", "id AS seq", "CAST(id AS STRING) AS v"
        )
        writer = frame.coalesce(1).writeTo(str(relation))
        if n == 0:
            writer.using("iceberg").createOrReplace()
        else:
            writer.append()
    snapshot = adapter.current_snapshot(relation)
    assert snapshot is not None
    seconds: dict[str, list[float]] = {"plain": [], "ordered": [], "planning": []}

    def timed(name: str) -> None:
        started = time.perf_counter()
        if name == "plain":
            frame = adapter._read(relation, SnapshotRead(snapshot))
        else:
            frame = adapter.ordered_read(relation, snapshot, None)
            seconds["planning"].append(time.perf_counter() - started)
        frame.selectExpr("k", "monotonically_increasing_id() AS r").groupBy("k").max("r").count()
        seconds[name].append(time.perf_counter() - started)

    for i in range(args.rounds):
        for name in ("plain", "ordered") if i % 2 == 0 else ("ordered", "plain"):
            timed(name)
    print(f"{args.rows} rows, {args.commits + 1} commits (one file each), {args.rounds} rounds")
    for name, values in seconds.items():
        print(f"{name:9} median {statistics.median(values):6.2f} s  all {values}")
    spark.stop()


if __name__ == "__main__":
    main()
