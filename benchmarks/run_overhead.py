"""JVM CPU of a small incremental run, split into the MERGE and everything else.

A two-source model (tests/integration/test_incremental.py's COUNTERS) is built, then run
``--runs`` times with one new row in one source each time. Prints, per run and as medians over
all runs but the first (JIT warm-up), the JVM CPU seconds of the whole run, of the MERGE commit
and of the adapter's metadata reads, and the wall seconds spent in those reads (Python side
included). Then times ``--noop`` no-op ``lakewide run`` processes on the same project.

    PYTHONPATH=$PWD python benchmarks/run_overhead.py
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.run import Clock  # noqa: E402
from lakewide.run.models.executor import run_models  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.runtime import create_session, spark_conf  # noqa: E402
from tests.integration.conftest import ModelRun, ProjectRun  # noqa: E402
from tests.integration.test_incremental import COUNTERS, SCHEMAS  # noqa: E402

METADATA = (
    "table_meta",
    "last_commit_meta",
    "table_exists",
    "format_version",
    "sequence_number",
    "snapshot_summary",
)
WATCHED = (*METADATA, "commit")


class Meter:
    """JVM CPU and wall seconds of the outermost calls of watched adapter methods."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}
        self._depth = 0

    def wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def measured(*args: Any, **kwargs: Any) -> Any:
            cpu, wall = self.clock.cpu(), time.perf_counter()
            self._depth += 1
            try:
                return method(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:  # nested metadata calls are not counted twice
                    self.cpu[name] = self.cpu.get(name, 0.0) + self.clock.cpu() - cpu
                    self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - wall

        return measured


def project(folder: Path, warehouse: Path, spark: Any) -> ModelRun:
    root = folder / "project"
    (root / "models").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "t"\n\n[tool.lakewide]\nprofile = "t"\n'
    )
    (root / "profiles.yml").write_text(
        "t:\n  target: b\n  outputs:\n    b:\n      catalog: lw\n      catalog_type: hadoop\n"
        f"      warehouse: {warehouse}\n      namespace: ns\n"
    )
    (root / "models" / "sources.yml").write_text(
        "sources:\n  - name: src\n    schema: src\n    tables:\n      - name: a\n      - name: b\n"
    )
    (root / "models" / "m.sql").write_text(COUNTERS)
    return ModelRun(ProjectRun(root, spark, "ns", "src"), SCHEMAS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--noop", type=int, default=7)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="lakewide-overhead-"))
    warehouse = folder / "warehouse"
    conf = spark_conf("local[2]", "lw", {"type": "hadoop", "warehouse": str(warehouse)}, {})
    spark = create_session("lakewide-overhead", "local[2]", conf)
    clock = Clock(spark)
    m = project(folder, warehouse, spark)
    m.step({"a": [(1, 2)], "b": [(1, 5)]})  # bootstrap
    meter = Meter(clock)
    for name in WATCHED:
        setattr(SparkAdapter, name, meter.wrap(name, getattr(SparkAdapter, name)))
    rows: list[dict[str, float]] = []
    for i in range(args.runs):
        m.write("a", [(i, 1)])
        meter.cpu.clear()
        meter.wall.clear()
        manifest = m.run.manifest()
        adapter = SparkAdapter(manifest.output, spark=spark)
        run = clock.measure(lambda m=manifest, a=adapter: run_models(m, ["m"], a))
        merge = meter.cpu.get("commit", 0.0)
        row = {
            "wall": run["s"],
            "cpu": run["cpu"],
            "merge": merge,
            "outside": run["cpu"] - merge,
            "metadata": sum(meter.cpu.get(n, 0.0) for n in METADATA),
            "metadata_wall": sum(meter.wall.get(n, 0.0) for n in METADATA),
        }
        print(f"run {i}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()), flush=True)
        rows.append(row)
    spark.stop()
    warm = rows[1:] or rows
    print(
        f"median of {len(warm)} (JVM CPU s unless wall): "
        + ", ".join(f"{k} {statistics.median(r[k] for r in warm):.3f}" for k in rows[0])
    )
    noop = []
    for _ in range(args.noop):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "lakewide", "--project-dir", str(m.run.root), "run"],
            capture_output=True,
            text=True,
        )
        noop.append(time.perf_counter() - started)
        assert "Nothing to do" in done.stdout, done.stdout + done.stderr
    print(
        f"no-op lakewide run: median {statistics.median(noop):.2f} s wall "
        f"(min {min(noop):.2f}, max {max(noop):.2f}, n={len(noop)})"
    )


if __name__ == "__main__":
    main()
