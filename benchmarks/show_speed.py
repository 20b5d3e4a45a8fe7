"""``lakewide show`` of the example's table, read with pyiceberg in a process without Java.

    python benchmarks/show_speed.py --rounds 5 [--name show_speed]

It copies the example project into a temporary folder (its own hadoop warehouse), builds it
once with Spark (not timed), then runs ``lakewide show user_rec_wide`` ``--rounds`` times (after
one warm-up run, not counted), each a fresh process with no ``java`` on its PATH and no
JAVA_HOME (as ``tests/connect``): the wall time to its exit and the CPU seconds (user +
system) of the process, with the 1-minute load average before it. The output must be the
table alone (its header line first). Results go to ``benchmarks/results/<name>.json`` (every
run) and ``.md`` (medians).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.project_factory import copy_example_project, no_java_env  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
COMMAND = ["show", "user_rec_wide"]


def lakewide(project: Path, args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one ``lakewide`` process; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(project), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"lakewide {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return wall, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--name", default="show_speed")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        project = copy_example_project(Path(folder) / "example")
        with_java = {**os.environ, "PYTHONPATH": str(REPO), "LAKEWIDE_WAREHOUSE": "warehouse"}
        lakewide(project, ["build"], with_java)
        env = {**no_java_env(), "LAKEWIDE_WAREHOUSE": "warehouse"}
        lakewide(project, COMMAND, env)  # warm-up: the file cache, Python's bytecode
        runs = []
        for _ in range(options.rounds):
            load = os.getloadavg()[0]
            wall, cpu, shown = lakewide(project, COMMAND, env)
            assert shown.split()[:2] == ["user_id", "item_id"], shown
            runs.append({"wall": round(wall, 3), "cpu": round(cpu, 3), "load": load})
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{options.name}.json").write_text(json.dumps(runs, indent=1) + "\n")
    wall = statistics.median(r["wall"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    loads = [r["load"] for r in runs]
    (RESULTS / f"{options.name}.md").write_text(
        f"`lakewide {' '.join(COMMAND)}` of the example, no Java, {len(runs)} runs: median "
        f"{wall:.2f} s wall, {cpu:.2f} s CPU (load average {min(loads):.1f}-{max(loads):.1f} "
        "on 2 cores).\n"
    )
    print((RESULTS / f"{options.name}.md").read_text(), end="")


if __name__ == "__main__":
    main()
