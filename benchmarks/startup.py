"""Command start-up: ``lakewide`` with a local JVM beside ``lakewide`` as a Spark Connect client.

    /work/venv4/bin/python benchmarks/startup.py --rounds 5 [--name startup_connect]

Run it with a Python that has pyspark 4.x (the Connect server is started from that pyspark's
jars with ``tests/support/connect_server.py``, plus Iceberg's Spark 4 runtime from ``~/.m2`` as
``.ci/run`` fetches it). It copies the example project (models, macros, seeds, data tests) into a
temporary folder with two targets on separate hadoop warehouses:

* ``local``: ``local[2]``, the client process starts its own JVM (driver memory 2g);
* ``connect``: ``connect_url`` of the loopback server; the client process has no ``java`` on its
  PATH and no JAVA_HOME (the same environment as ``tests/connect``).

Each target is seeded and run once (not timed). Then one warm-up round (not counted) and
``--rounds`` rounds, the targets' order alternating round by round; per round and target:

1. a batch of one row is appended to the source ``ods.clicks`` (through a Connect session of
   this script, on that target's warehouse): one model (``user_rec_wide``) has new input;
2. ``lakewide run``: one model merges the batch, the others find nothing new;
3. ``lakewide run`` again: nothing new anywhere;
4. ``lakewide show user_rec_wide``: ten rows of the model.

Each command is a fresh process; its wall time is taken to its first non-empty output line, to
its ``Done.`` line (``run`` only) and to its exit, with the 1-minute load average before it;
and the CPU seconds (user + system) the lakewide process itself had used when its first line
arrived (read from ``/proc``): the part of the first line's wait that load cannot inflate.
Results go to ``benchmarks/results/<name>.json`` (every command) and ``.md`` (medians).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.connect_server import ICEBERG, start_connect  # noqa: E402
from tests.support.project_factory import no_java_env  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
TARGETS = ("local", "connect")
CONNECT_VARIABLES = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE")
# per command: its arguments and a line start its output must have (the work was the one meant)
COMMANDS = {
    "run, one model changed": (["run"], "Done."),
    "run, nothing new": (["run"], "Nothing to do"),
    "show": (["show", "user_rec_wide"], ""),
}

PROFILES = """\
startup:
  target: local
  outputs:
    local:
      master: local[2]
      catalog: lw
      catalog_type: hadoop
      warehouse: {local}
      namespace: analytics
      spark_conf:
        spark.driver.memory: 2g
    connect:
      connect_url: {url}
      catalog: lw
      catalog_type: hadoop
      warehouse: {connect}
      namespace: analytics
"""

PYPROJECT = """\
[project]
name = "startup"

[tool.lakewide]
profile = "startup"
seed-schema = "ods"
"""


def make_project(root: Path, url: str) -> dict[str, Path]:
    """The example project under ``root/project``; each target's warehouse folder."""
    project = root / "project"
    for folder in ("models", "macros", "seeds", "data-tests"):
        shutil.copytree(REPO / folder, project / folder)
    (project / "pyproject.toml").write_text(PYPROJECT)
    warehouses = {target: root / f"warehouse-{target}" for target in TARGETS}
    (project / "profiles.yml").write_text(PROFILES.format(url=url, **warehouses))
    return warehouses


def client_env(target: str) -> dict[str, str]:
    """The lakewide process's environment: as this one, or with no Java for ``connect``.

    Without the variables this script's own Connect session set (they would make a local
    session a Connect one)."""
    env = no_java_env() if target == "connect" else {**os.environ, "PYTHONPATH": str(REPO)}
    return {k: v for k, v in env.items() if k not in CONNECT_VARIABLES}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process ``pid`` has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(project: Path, target: str, args: list[str], expect: str) -> dict[str, Any]:
    """Run ``lakewide ARGS --target TARGET``: seconds to first line, ``Done.`` line and exit.

    Stops the benchmark unless it exits 0 with a line starting with ``expect``."""
    command = [sys.executable, "-m", "lakewide", "--project-dir", str(project), *args]
    load = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--target", target],
        env=client_env(target),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    first = done = None
    lines = []
    for line in process.stdout:
        now = time.perf_counter() - started
        if first is None and line.strip():
            first = (now, line.strip(), cpu_seconds(process.pid))
        if done is None and line.startswith("Done."):
            done = now
        lines.append(line)
    process.wait()
    exit_s = time.perf_counter() - started
    if process.returncode != 0 or not any(x.startswith(expect) for x in lines):
        raise SystemExit(f"{' '.join(args)} --target {target} failed:\n{''.join(lines)}")
    return {
        "first_s": round(first[0], 3),
        "first_line": first[1][:100],
        "first_cpu_s": first[2],
        "done_s": None if done is None else round(done, 3),
        "exit_s": round(exit_s, 3),
        "load_1m": round(load, 2),
        "done_line": next((x.strip() for x in lines if x.startswith("Done.")), None),
        "output": [x.rstrip() for x in lines[:12]],
    }


def append_batch(spark: Any, target: str, warehouse: Path, number: int) -> None:
    """One new row in ``ods.clicks`` of ``target``'s hadoop warehouse ``warehouse``.

    A catalog name per warehouse: a session keeps a catalog once it is loaded."""
    catalog = f"spark.sql.catalog.feed_{target}"
    spark.conf.set(catalog, "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set(f"{catalog}.type", "hadoop")
    spark.conf.set(f"{catalog}.warehouse", str(warehouse))
    table = spark.table(f"feed_{target}.ods.clicks")
    row = ("user_101", f"prod_9{number:04d}", number + 1)
    spark.createDataFrame([row], table.schema).writeTo(f"feed_{target}.ods.clicks").append()


def one_round(spark: Any, project: Path, warehouses: dict[str, Path], number: int) -> list[Any]:
    """Every target (order alternating with ``number``) through the commands; their rows."""
    rows = []
    order = TARGETS if number % 2 == 0 else TARGETS[::-1]
    for target in order:
        append_batch(spark, target, warehouses[target], number)
        for name, (args, expect) in COMMANDS.items():
            row = {
                "round": number,
                "target": target,
                "command": name,
                **timed(project, target, args, expect),
            }
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def setup(project: Path) -> None:
    """Seed and run every target once (not timed)."""
    for target in TARGETS:
        for args in (["seed"], ["run"]):
            print(f"setting up: lakewide {args[0]} --target {target}", flush=True)
            command = [sys.executable, "-m", "lakewide", "--project-dir", str(project), *args]
            subprocess.run(
                [*command, "--target", target],
                env=client_env(target),
                check=True,
                capture_output=True,
            )


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float | None]]]:
    """Per command and target: the medians, minima and maxima of the figures."""
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for name in COMMANDS:
        for target in TARGETS:
            mine = [r for r in rows if r["command"] == name and r["target"] == target]
            figures: dict[str, float | None] = {"n": len(mine)}
            for key in ("first_s", "first_cpu_s", "done_s", "exit_s", "load_1m"):
                values = [r[key] for r in mine if r.get(key) is not None]
                figures[key] = statistics.median(values) if values else None
                figures[f"{key}_min"] = min(values) if values else None
                figures[f"{key}_max"] = max(values) if values else None
            out.setdefault(name, {})[target] = figures
    return out


def cell(figures: dict[str, float | None], key: str) -> str:
    """``median (min-max)`` of one figure, or a dash."""
    if figures[key] is None:
        return "-"
    return f"{figures[key]:.2f} ({figures[f'{key}_min']:.2f}-{figures[f'{key}_max']:.2f})"


def report(result: dict[str, Any]) -> str:
    """The Markdown table: per command, both targets' medians and Connect / local at exit."""
    lines = [
        f"Spark {result['spark']} (Iceberg {result['iceberg']}), Python {result['python']}, "
        f"{result['rounds']} rounds (after one warm-up round), the targets alternated; "
        f"seconds, median (min-max); load average (1 min) before the commands: "
        f"median {result['load_median']:.1f}, {result['load_min']:.1f}-{result['load_max']:.1f}.",
        "",
        "| command | client | first line s | client CPU s to it | `Done.` s | exit s "
        "| connect / local (exit) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, targets in result["summary"].items():
        ratio = targets["connect"]["exit_s"] / targets["local"]["exit_s"]
        for target in TARGETS:
            client = "local JVM" if target == "local" else "Connect, no Java"
            figures = targets[target]
            cells = [name, client, cell(figures, "first_s"), cell(figures, "first_cpu_s")]
            cells.append(cell(figures, "done_s"))
            cells += [cell(figures, "exit_s"), f"{ratio:.2f}" if target == "connect" else ""]
            lines.append("| " + " | ".join(cells) + " |")
    firsts = {r["target"]: r["first_line"] for r in result["rows"] if r["command"] == "show"}
    lines += ["", "First lines: " + "; ".join(f"{t}: `{line}`" for t, line in firsts.items())]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--name", default="startup_connect")
    args = parser.parse_args()
    import pyspark
    from pyspark.sql import SparkSession

    with tempfile.TemporaryDirectory(prefix="lw-startup-") as tmp:
        root = Path(tmp)
        server = start_connect(root / "server.log")
        try:
            project = root / "project"
            warehouses = make_project(root, server.url)
            setup(project)
            spark = SparkSession.builder.remote(server.url).create()
            try:
                one_round(spark, project, warehouses, 0)  # warm-up, not counted
                rows = []
                for number in range(1, args.rounds + 1):
                    rows += one_round(spark, project, warehouses, number)
            finally:
                spark.stop()  # before the server: else its client retries at exit
        finally:
            server.stop()
    loads = [r["load_1m"] for r in rows]
    result = {
        "spark": pyspark.__version__,
        "iceberg": ICEBERG,
        "python": platform.python_version(),
        "rounds": args.rounds,
        "load_median": statistics.median(loads),
        "load_min": min(loads),
        "load_max": max(loads),
        "summary": summary(rows),
        "rows": rows,
    }
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / f"{args.name}.md").write_text(report(result))
    print(report(result))


if __name__ == "__main__":
    main()
