"""Two Spark versions side by side: ``run.py`` under each side's Python, processes alternated.

    python benchmarks/side_by_side.py --keys 1000000 --rounds 2 \\
        --side 3.5=/work/venv/bin/python --side 4.1=/work/venv4/bin/python

Each round runs ``run.py`` once per side, in the order given, one process at a time (the sides
never share the machine's cores with each other). ``run.py`` generates its data
deterministically (Murmur3 hashes of key, column and round), so every process writes the same
source rows; the row count and xxhash64 fingerprint of the JOIN rebuild after every step are
recorded and must agree across sides, else this script stops. Writes <name>.{json,md} with,
per step, each side's ratio to its own JOIN rebuild and the ratio of the sides' seconds.
``--combine`` only rebuilds the report from the per-process JSON files already written.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def run_side(python: str, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One ``run.py`` process under ``python``; its single size's result."""
    command = [python, str(HERE / "run.py"), "--keys", str(args.keys), "--compile-models", "0"]
    command += ["--variants", *args.variants, "--steps", *args.steps, "--out", str(out)]
    command += ["--warmup", str(args.warmup), "--name", "results"]
    subprocess.run(command, check=True, env={**os.environ, "PYTHONPATH": str(HERE.parent)})
    [size] = json.loads((out / "results.json").read_text())["sizes"]
    return dict(size)


def median_ratio(runs: list[dict[str, Any]], step: str, item: str, metric: str) -> float:
    """Median over ``runs`` of ``item``'s seconds / the JOIN rebuild's in ``step``."""
    return statistics.median(
        r["steps"][step][item][metric] / r["steps"][step]["join"][metric] for r in runs
    )


def median_seconds(runs: list[dict[str, Any]], step: str, item: str, metric: str) -> float:
    return statistics.median(r["steps"][step][item][metric] for r in runs)


def report(sides: dict[str, list[dict[str, Any]]]) -> str:
    """Markdown: per step and metric, each side's x JOIN and the last side / the first side."""
    names = list(sides)
    first, last = names[0], names[-1]
    runs = sides[first]
    variants = runs[0]["variants"]
    lines = [f"### {runs[0]['keys']:,} keys, {runs[0]['sources']} sources", ""]
    for name, side in sides.items():
        loads = [f"{r['load_start'][0]:.1f} -> {r['load_end'][0]:.1f}" for r in side]
        lines.append(
            f"* Spark {name}: Spark {side[0]['spark']}, {', '.join(side[0]['iceberg_runtime'])}; "
            f"{len(side)} process(es), load average (1 min) start -> end: {'; '.join(loads)}"
        )
    for metric, what in (("cpu", "JVM CPU seconds"), ("s", "Wall seconds")):
        head = ["step", "item"] + [f"{n} s" for n in names] + [f"{n} x JOIN" for n in names]
        head.append(f"{last} / {first}")
        lines += ["", f"{what}, median of the processes:", "", "| " + " | ".join(head) + " |"]
        lines.append("|" + "---|" * len(head))
        for step in runs[0]["steps"]:
            for item in ["join", *variants]:
                secs = [median_seconds(sides[n], step, item, metric) for n in names]
                ratios = [
                    "1" if item == "join" else f"{median_ratio(sides[n], step, item, metric):.2f}"
                    for n in names
                ]
                cells = [step, "JOIN rebuild" if item == "join" else item]
                cells += [f"{s:.1f}" for s in secs] + ratios + [f"{secs[-1] / secs[0]:.2f}"]
                lines.append("| " + " | ".join(cells) + " |")
    noop = [
        f"{n} {statistics.median(r['noop_run_seconds'] for r in sides[n]):.2f} s" for n in names
    ]
    lines += ["", f"no-op `lakewide run` (no JVM), median wall: {', '.join(noop)}"]
    return "\n".join(lines) + "\n"


def check_same_data(sides: dict[str, list[dict[str, Any]]]) -> None:
    """Stop unless every process rebuilt the same rows after every step."""
    prints = {json.dumps(r["fingerprint"], sort_keys=True) for side in sides.values() for r in side}
    if len(prints) != 1:
        raise SystemExit(f"the sides rebuilt different data: {sorted(prints)}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--side", action="append", required=True, metavar="NAME=PYTHON")
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--variants", nargs="+", default=["mor"])
    parser.add_argument("--steps", nargs="+", default=["bootstrap", "one", "all", "clustered"])
    parser.add_argument("--warmup", type=int, default=0, metavar="KEYS")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "side_by_side")
    parser.add_argument("--name", type=Path, default=HERE / "out" / "side_by_side" / "report")
    parser.add_argument("--combine", action="store_true", help="only rebuild the report")
    args = parser.parse_args()
    pythons = dict(side.split("=", 1) for side in args.side)
    sides: dict[str, list[dict[str, Any]]] = {name: [] for name in pythons}
    for round_no in range(args.rounds):
        for name, python in pythons.items():
            out = args.out / f"{name}_r{round_no}"
            if not args.combine:
                run_side(python, out, args)
            sides[name].append(json.loads((out / "results.json").read_text())["sizes"][0])
            args.name.with_suffix(".json").write_text(json.dumps(sides, indent=2))
            if all(sides.values()):
                check_same_data(sides)
                args.name.with_suffix(".md").write_text(report(sides))
    print(args.name.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
