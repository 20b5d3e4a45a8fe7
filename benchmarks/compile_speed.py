"""`lakewide compile` next to its floor, on a generated project of N wide models (no JVM).

Each model reads 4 sources with 3 value columns each (12 in all); half are ``partial_update``,
half ``aggregation`` with a sequence field. In one run this prints, per size:

* CPU (user + system of the child process) and wall of ``lakewide compile --threads 1``:
  cold (no ``target/``, an empty user cache), warm (nothing changed) and with one model
  edited (these two: the median of ``--repeat`` compiles, 3 by default);
* the floor measured the same way: a child process that parses the project (rendering the
  jinja), then parses every model with sqlglot and pretty-prints it once to a file;
* the size of ``target/compiled/`` (files, bytes);
* the start-up of ``lakewide run``: the wall time until it asks for a SparkSession (the
  session is never started: the request raises and ends the command).

    python benchmarks/compile_speed.py --models 50 500 [--name compile_speed]

Results go to ``benchmarks/results/<name>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SOURCES, COLUMNS = 4, 3
RESULTS = Path(__file__).parent / "results"

FLOOR = """
import sys
from pathlib import Path
import sqlglot
from lakewide.vocabulary.dialect import DIALECT, to_sql
from lakewide.project.manifest import load_manifest
from lakewide.project.profiles_file import find_profiles_file, load_output
from lakewide.project.settings import load_project
root = Path(sys.argv[1])
project = load_project(root)
output = load_output(find_profiles_file(root, None), project.profile, None, root)
manifest = load_manifest(project, output)
out = root / "floor"
out.mkdir(exist_ok=True)
for name, node in manifest.models.items():
    (out / f"{name}.sql").write_text(to_sql(sqlglot.parse_one(node.sql, read=DIALECT)))
"""

STARTUP = """
import sys, time
started = time.perf_counter()  # before lakewide is imported: its imports count
from lakewide.spark import adapter
class Asked(BaseException):
    pass
def ask(*args, **kwargs):
    raise Asked(time.perf_counter())
adapter.SparkAdapter.__init__ = ask
from lakewide.cli import main
sys.argv = ["lakewide", "--project-dir", sys.argv[1], "run"]
try:
    main()
except Asked as asked:
    print("ASKED", asked.args[0] - started)
"""


def model_sql(number: int) -> str:
    """Model ``number``: UNION ALL of its 4 sources, each owning 3 of the 12 columns."""
    columns = [f"s{i}_c{j}" for i in range(SOURCES) for j in range(COLUMNS)]
    if number % 2:
        aggregates = ", ".join(
            f"'{c}': '{'sum' if n % 3 == 0 else 'max' if n % 3 == 1 else 'last_value'}'"
            for n, c in enumerate(columns)
        )
        config = (
            "merge_engine='aggregation', primary_key='k', sequence_field='seq', "
            f"aggregates={{{aggregates}}}"
        )
    else:
        config = "merge_engine='partial_update', primary_key=['k'], sequence_field='seq'"
    branches = []
    for i in range(SOURCES):
        mine = {f"s{i}_c{j}" for j in range(COLUMNS)}
        cols = [c if c in mine else f"CAST(NULL AS BIGINT) AS {c}" for c in columns]
        branches.append(
            f"SELECT k, {', '.join(cols)}, seq FROM {{{{ source('raw', 'm{number}_s{i}') }}}}"
        )
    return f"{{{{ config({config}) }}}}\n" + "\nUNION ALL\n".join(branches) + "\n"


def write_project(root: Path, models: int) -> None:
    """The generated project: ``models`` models over ``4 * models`` sources."""
    (root / "models").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bench"\n\n[tool.lakewide]\nprofile = "bench"\n'
    )
    (root / "profiles.yml").write_text(
        "bench:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
        f"      catalog_type: hadoop\n      warehouse: {root / 'warehouse'}\n"
        "      namespace: wide\n"
    )
    tables = "".join(f"      - name: m{n}_s{i}\n" for n in range(models) for i in range(SOURCES))
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: raw\n    schema: raw\n    tables:\n{tables}"
    )
    for n in range(models):
        (root / "models" / f"m{n}.sql").write_text(model_sql(n))


def child(args: list[str], cache: Path) -> dict[str, Any]:
    """Run ``args`` with ``cache`` as the user's cache folder and Python's bytecode kept (as
    an installed package has it); its CPU (user + system) and wall seconds."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CACHE_HOME"] = str(cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu": round(cpu, 2), "wall": round(wall, 2), "stdout": done.stdout}


def folder_size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median wall time."""
    return sorted(runs, key=lambda r: r["wall"])[len(runs) // 2]


def measure(models: int, extra: list[str], repeat: int) -> dict[str, Any]:
    """Every figure of one project size; warm and edited compiles: the median of ``repeat``
    (each edit touches another model). Cold: an empty user cache, no ``target/``."""
    root = Path(tempfile.mkdtemp(prefix=f"lw-compile-{models}-"))
    cache = Path(tempfile.mkdtemp(prefix="lw-cache-"))
    try:
        write_project(root, models)
        compile_ = [sys.executable, "-m", "lakewide", "--project-dir", str(root), "compile"]
        compile_ += ["--threads", "1", *extra]
        child([sys.executable, "-c", "import lakewide.cli"], cache)  # bytecode written once
        floor = child([sys.executable, "-c", FLOOR, str(root)], cache)
        cold = child(compile_, cache)
        files, size = folder_size(root / "target" / "compiled")
        warm = median([child(compile_, cache) for _ in range(repeat)])
        edits = []
        for number in range(repeat):
            edited_model = root / "models" / f"m{number}.sql"
            text = edited_model.read_text().replace("SELECT k,", "SELECT k ,", 1)
            edited_model.write_text(text)
            edits.append(child(compile_, cache))
        edited = median(edits)
        startup = child([sys.executable, "-c", STARTUP, str(root)], cache)
        asked = next(
            (float(line.split()[1]) for line in startup["stdout"].splitlines() if "ASKED" in line),
            None,
        )
        return {
            "models": models,
            "floor": {k: floor[k] for k in ("cpu", "wall")},
            "cold": {k: cold[k] for k in ("cpu", "wall")},
            "warm": {k: warm[k] for k in ("cpu", "wall")},
            "edited": {k: edited[k] for k in ("cpu", "wall")},
            "files": files,
            "bytes": size,
            "run_startup": None if asked is None else round(asked, 2),
            "run_startup_process": startup["wall"],
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| models | floor CPU | cold CPU (x floor) | warm CPU / wall | one edited CPU / wall "
        "| output | `run` before Spark |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = r["cold"]["cpu"] / r["floor"]["cpu"] if r["floor"]["cpu"] else 0.0
        lines.append(
            f"| {r['models']} | {r['floor']['cpu']:.1f} s | {r['cold']['cpu']:.1f} s "
            f"({ratio:.1f}x) | {r['warm']['cpu']:.2f} s / {r['warm']['wall']:.2f} s "
            f"| {r['edited']['cpu']:.2f} s / {r['edited']['wall']:.2f} s "
            f"| {r['files']:,} files, {r['bytes'] / 1e6:.2f} MB | {r['run_startup']} s |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--name", default="compile_speed")
    parser.add_argument("--compile-arg", action="append", default=[], help="extra compile option")
    parser.add_argument("--repeat", type=int, default=3, help="warm and edited compiles")
    args = parser.parse_args()
    rows = []
    for models in args.models:
        rows.append(measure(models, args.compile_arg, args.repeat))
        print(json.dumps(rows[-1]), flush=True)
    text = table(rows)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(rows, indent=2) + "\n")
    (RESULTS / f"{args.name}.md").write_text(text)


if __name__ == "__main__":
    main()
