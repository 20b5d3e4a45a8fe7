"""The peers benchmark's table: seconds, x the JOIN rebuild, x the best peer whose answer equals
lakewide's, and the keys on which each peer's table differs from lakewide's."""

from __future__ import annotations

import math
import textwrap
from typing import Any

BASELINES = ("join", "lakewide")
#: how many reads of the finished table the report adds to each write
READS = (1, 4, 16)


def best_peer(
    result: dict[str, Any], step: str, metric: str, times: dict[str, Any] | None = None
) -> str | None:
    """The cheapest peer on ``step`` whose table equals lakewide's (after that step, or after
    the last step for the final read); ``times`` instead of the step's own, e.g. a write plus
    its reads."""
    diffs = result["differing_keys"]
    same = diffs.get(step) or (diffs[list(diffs)[-1]] if diffs else {})
    times = result["steps"][step] if times is None else times
    equal = [s for s in times if s not in BASELINES and same.get(s, 1) == 0]
    return min(equal, key=lambda s: times[s][metric]) if equal else None


def with_reads(result: dict[str, Any], step: str, reads: int) -> dict[str, dict[str, float]]:
    """Each system's ``step`` (a write) plus ``reads`` reads of its table after it, in seconds
    of each metric."""
    after = result["reads"][step]
    return {
        system: {m: value + reads * after[system][m] for m, value in times.items()}
        for system, times in result["steps"][step].items()
    }


#: a JOIN rebuild's time below this is its doing nothing (its maintenance): no ratio to it
NOTHING = 0.05


def _cell(value: float, join: float, best: float | None) -> str:
    if math.isnan(value):
        return "-"
    ratio = f"{value / best:.2f}" if best else "-"
    versus_join = f"{value / join:.2f}" if join >= NOTHING else "-"
    return f"{value:.1f} ({versus_join}, {ratio})"


def markdown(result: dict[str, Any]) -> str:
    """One table per metric (JVM CPU first), one row per step, and the differing keys."""
    systems = result["systems"]
    versions = ", ".join(f"{k} {v}" for k, v in result["versions"].items())
    lines = [
        f"### {result['keys']:,} keys, {result['sources']} sources, against peers",
        "",
        f"Versions: {versions}.",
    ]
    for metric, what in (("cpu", "JVM CPU seconds"), ("s", "Wall seconds")):
        lines += [
            "",
            f"{what} (x JOIN rebuild, x best peer whose answer equals lakewide's):",
            "",
            "| step | " + " | ".join(systems) + " | best peer |",
            "|---|" + "---|" * (len(systems) + 1),
        ]
        for step, times in result["steps"].items():
            lines.append(_row(result, step, step, times, metric))
    if result.get("reads"):
        lines += [
            "",
            "JVM CPU seconds of the write plus N reads of the table after it (x JOIN rebuild, "
            "x best peer whose answer equals lakewide's):",
            "",
            "| step | " + " | ".join(systems) + " | best peer |",
            "|---|" + "---|" * (len(systems) + 1),
        ]
        for step in result["reads"]:
            for n in READS:
                label = f"{step}, + {n} read{'s' if n > 1 else ''}"
                lines.append(_row(result, label, step, with_reads(result, step, n), "cpu"))
    if result.get("rows"):
        counts = ", ".join(f"{step}: {n:,}" for step, n in result["rows"].items())
        lines += ["", f"Rows of lakewide's table after each step: {counts}."]
    peers = [s for s in systems if s != "join"]
    lines += [
        "",
        "Keys whose row differs from lakewide's table (lakewide: from the JOIN rebuild):",
        "",
        "| step | " + " | ".join(peers) + " |",
        "|---|" + "---|" * len(peers),
    ]
    for step, diffs in result["differing_keys"].items():
        lines.append(f"| {step} | " + " | ".join(str(diffs.get(s, "-")) for s in peers) + " |")
    return "\n".join(lines) + "\n"


def _row(result: dict[str, Any], label: str, step: str, times: dict[str, Any], metric: str) -> str:
    best = best_peer(result, step, metric, times)
    floor = times[best][metric] if best else None
    systems = result["systems"]
    cells = " | ".join(_cell(times[s][metric], times["join"][metric], floor) for s in systems)
    return f"| {label} | {cells} | {best or 'none'} |"


def legend_label(result: dict[str, Any], system: str) -> str:
    """``system``, said to differ where its table differed from lakewide's after any step."""
    differs = any(diffs.get(system, 0) for diffs in result["differing_keys"].values())
    return system + (" (answer differs)" if differs else "")


def chart(result: dict[str, Any], path: Any) -> str:
    """Bars of JVM CPU x the JOIN rebuild per step and system (log scale: Paimon's writes and
    Delta's copy-on-write MERGEs lie two orders of magnitude apart), written to ``path``;
    skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "chart skipped: matplotlib is not installed (pip install -e '.[bench]')"
    systems = result["systems"]
    steps = [s for s, t in result["steps"].items() if t["join"]["cpu"] >= NOTHING]
    width = 0.8 / len(systems)
    fig, ax = plt.subplots(figsize=(12, 5))
    for n, system in enumerate(systems):
        ratios = [
            result["steps"][s][system]["cpu"] / result["steps"][s]["join"]["cpu"] for s in steps
        ]
        label = legend_label(result, system)
        hatch = "//" if label != system else None
        xs = [i + n * width for i in range(len(steps))]
        ax.bar(xs, ratios, width, label=label, color=plt.get_cmap("tab10")(n), hatch=hatch)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(steps))])
    ax.set_xticklabels([textwrap.fill(s, 24) for s in steps], fontsize=7)
    ax.set_ylabel("JVM CPU x the JOIN rebuild (log)")
    ax.set_title(f"{result['keys']:,} keys, {result['sources']} sources: lakewide and its peers")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return f"chart: {path}"


if __name__ == "__main__":  # the docs' charts from the saved results
    import json
    import sys
    from pathlib import Path

    for name in sys.argv[1:]:  # e.g. peers_1m peers_5m
        saved = json.loads((Path(__file__).parent / "results" / f"{name}.json").read_text())
        print(chart(saved, Path(__file__).parents[1] / "docs" / "assets" / f"{name}.png"))
