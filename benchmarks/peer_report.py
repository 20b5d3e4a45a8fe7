"""The peers benchmark's table: seconds, x the JOIN rebuild, x the best peer whose answer equals
lakewide's, and the keys on which each peer's table differs from lakewide's."""

from __future__ import annotations

import math
from typing import Any

BASELINES = ("join", "lakewide")


def best_peer(result: dict[str, Any], step: str, metric: str) -> str | None:
    """The cheapest peer on ``step`` whose table equals lakewide's (after that step, or after
    the last step for the final read)."""
    diffs = result["differing_keys"]
    same = diffs.get(step) or (diffs[list(diffs)[-1]] if diffs else {})
    times = result["steps"][step]
    equal = [s for s in times if s not in BASELINES and same.get(s, 1) == 0]
    return min(equal, key=lambda s: times[s][metric]) if equal else None


def _cell(value: float, join: float, best: float | None) -> str:
    ratio = f"{value / best:.2f}" if best else "-"
    return f"{value:.1f} ({value / join:.2f}, {ratio})" if join and not math.isnan(value) else "-"


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
            best = best_peer(result, step, metric)
            floor = times[best][metric] if best else None
            cells = " | ".join(
                _cell(times[s][metric], times["join"][metric], floor) for s in systems
            )
            lines.append(f"| {step} | {cells} | {best or 'none'} |")
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
