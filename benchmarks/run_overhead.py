"""The fixed cost of a one-source incremental run, before and after its cuts, side by side.

Three sources of ``--keys`` keys each (``k``, a value, ``seq``) feed two copies of one
three-source ``partial_update`` model (tests/integration/test_run_fixed_cost.py's): ``before``
pins every upstream by a read planned in commit order (``KeyTableRun.pin_all(ordered=True)``,
as every run did until the incremental run pinned plainly), ``after`` runs today's code. Then
``--runs`` rounds: ``--changed`` keys of source ``a`` appended, and both models run on those
same rows, in an order alternating per round. Per run: wall and JVM CPU seconds (the JVM
settled after each), the Spark jobs it sent (the DAG scheduler's job ids), its reads planned in
commit order (``ordered_read``) and analyses of a query's columns (``column_types``) with their
wall seconds, and the seconds spent in Python (the process's own CPU). After every round both
tables must hold the same rows. Medians over all rounds but the first (JIT warm-up).

    PYTHONPATH=$PWD python benchmarks/run_overhead.py --keys 200000 --runs 7
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.run import Clock  # noqa: E402
from lakewide.run.models.executor import run_models  # noqa: E402
from lakewide.run.models.key_table_run import KeyTableRun  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.runtime import create_session, spark_conf  # noqa: E402
from tests.integration.conftest import ProjectRun, hadoop_project  # noqa: E402
from tests.integration.test_run_fixed_cost import SCHEMAS, THREE  # noqa: E402

WATCHED = ("ordered_read", "column_types", "commit")
VARIANTS = ("before", "after")


class Meter:
    """Calls and wall seconds of watched adapter methods (outermost calls only)."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.wall: dict[str, float] = {}
        self._depth = 0

    def wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def measured(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            self._depth += 1
            try:
                return method(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.calls[name] = self.calls.get(name, 0) + 1
                    self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - started

        return measured


@contextmanager
def ordered_pins() -> Iterator[None]:
    """``before``: every pin read in commit order, as before incremental runs pinned plainly."""
    pin_all = KeyTableRun.pin_all
    KeyTableRun.pin_all = lambda self, ordered=True: pin_all(self, True)  # type: ignore[method-assign]
    try:
        yield
    finally:
        KeyTableRun.pin_all = pin_all  # type: ignore[method-assign]


def jobs_submitted(spark: Any) -> int:
    """Spark jobs submitted so far (the DAG scheduler's next job id)."""
    return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())


def project(folder: Path, warehouse: Path, spark: Any) -> ProjectRun:
    """Models ``before`` and ``after`` (the same SQL) over sources ``src.a``, ``b``, ``c``."""
    root = folder / "project"
    hadoop_project(root, warehouse, "ns")
    tables = "".join(f"      - name: {t}\n" for t in SCHEMAS)
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: src\n    schema: src\n    tables:\n{tables}"
    )
    for name in VARIANTS:
        (root / "models" / f"{name}.sql").write_text(THREE)
    return ProjectRun(root, spark, "ns", "src")


def write(spark: Any, table: str, keys: range, value: int, seq: int) -> None:
    """Append one row per key of ``keys`` to source ``table`` (one file)."""
    frame = spark.range(keys.start, keys.stop).selectExpr(
        "CAST(id AS INT) AS k", f"id * 7 + {value} AS {table}1", f"CAST({seq} AS BIGINT) AS seq"
    )
    name = f"lw.src.{table}"
    if spark.catalog.tableExists(name):
        frame.coalesce(1).writeTo(name).append()
    else:
        frame.repartition(4).writeTo(name).using("iceberg").create()


def measure(p: ProjectRun, name: str, clock: Clock, meter: Meter, spark: Any) -> dict[str, float]:
    """One run of model ``name``: its clock, jobs, watched calls and Python seconds."""
    meter.calls.clear()
    meter.wall.clear()
    manifest = p.manifest()
    adapter = SparkAdapter(manifest.output, spark=spark)
    jobs, python = jobs_submitted(spark), time.process_time()
    timed = clock.measure(lambda: run_models(manifest, [name], adapter))
    row = {"wall": timed["s"], "cpu": timed["cpu"], "python": time.process_time() - python}
    row["jobs"] = jobs_submitted(spark) - jobs
    for call in WATCHED:
        row[f"{call}_n"] = meter.calls.get(call, 0)
        row[f"{call}_s"] = meter.wall.get(call, 0.0)
    return row


def differing(spark: Any) -> int:
    """Rows of one model's table that the other's lacks, both ways (the model's columns)."""
    columns = "k, a1, b1, c1, seq"
    one, two = (f"SELECT {columns} FROM lw.ns.{v}" for v in VARIANTS)
    query = f"SELECT COUNT(*) FROM (({one} EXCEPT ALL {two}) UNION ALL ({two} EXCEPT ALL {one}))"
    return int(spark.sql(query).collect()[0][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--changed", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="lakewide-overhead-"))
    warehouse = folder / "warehouse"
    conf = spark_conf("local[2]", "lw", {"type": "hadoop", "warehouse": str(warehouse)}, {})
    spark = create_session("lakewide-overhead", "local[2]", conf)
    clock = Clock(spark)
    p = project(folder, warehouse, spark)
    for i, table in enumerate(SCHEMAS):
        write(spark, table, range(args.keys), i, 1)
    p.run(*VARIANTS)  # bootstrap both
    meter = Meter()
    for call in WATCHED:
        setattr(SparkAdapter, call, meter.wrap(call, getattr(SparkAdapter, call)))
    rows: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    step = max(1, args.keys // args.changed)
    for i in range(args.runs):
        write(spark, "a", range(i, args.keys, step), 1000 + i, 10 + i)
        order = VARIANTS if i % 2 == 0 else VARIANTS[::-1]
        for name in order:
            if name == "before":
                with ordered_pins():
                    row = measure(p, name, clock, meter, spark)
            else:
                row = measure(p, name, clock, meter, spark)
            rows[name].append(row)
            print(f"run {i} {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()))
        assert differing(spark) == 0, f"the tables differ after run {i}"
    spark.stop()
    print(f"medians of {args.runs - 1} runs (the first left out), {args.keys:,} keys:")
    print("| | " + " | ".join(rows["before"][0]) + " |")
    print("|---" * (len(rows["before"][0]) + 1) + "|")
    for name in VARIANTS:
        warm = rows[name][1:] or rows[name]
        cells = [f"{statistics.median(r[k] for r in warm):.3f}" for k in warm[0]]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
