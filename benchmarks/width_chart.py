"""The width benchmark's growth curve: per engine, CPU seconds of each step against the wide
table's value columns on log-log axes, lakewide beside the JOIN rebuild, with the slope of a
linear cost drawn for reference.

    python benchmarks/width_chart.py width_20k   # benchmarks/results/width_20k.json -> docs/assets/
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from width_report import STEP_LABELS, _get, slope  # noqa: E402

#: (label, path under a shape's record with {engine}, dashed: the JOIN rebuild)
CURVES = (
    *((label, ("steps", step, "{engine}", "cpu"), False) for step, label in STEP_LABELS.items()),
    *(
        (f"JOIN rebuild, {label}", ("steps", step, "join_{engine}", "cpu"), True)
        for step, label in STEP_LABELS.items()
        if step != "noop"
    ),
    ("plan MERGE, all sources", ("steps", "plan_merges", "{engine}", "merge_all", "cpu"), False),
    ("plan JOIN rebuild", ("steps", "plan_bootstrap", "{engine}", "join", "cpu"), True),
)


def series(result: dict[str, Any], engine: str) -> dict[str, list[tuple[int, float]]]:
    """Label -> (value columns, CPU seconds) over the S x 16 shapes that have the figure."""
    shapes = [r for r in result["shapes"] if r["shape"].endswith("x16")]
    out: dict[str, list[tuple[int, float]]] = {}
    for label, path, _ in CURVES:
        resolved = tuple(p.format(engine=engine) for p in path)
        points = [(r["columns"], v) for r in shapes if (v := _get(r, *resolved)) is not None]
        if len(points) >= 2:
            out[label] = points
    return out


def chart(result: dict[str, Any], path: Path) -> str:
    """One log-log panel per engine, written to ``path``; skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "chart skipped: matplotlib is not installed (pip install -e '.[bench]')"
    engines = result["engines"]
    fig, axes = plt.subplots(1, len(engines), figsize=(4.2 * len(engines), 4.2), squeeze=False)
    dashed = {label for label, _, join in CURVES if join}
    pairs = [label for label, _, join in CURVES if not join]  # a JOIN curve takes its pair's
    colours = {label: plt.get_cmap("tab10")(n) for n, label in enumerate(pairs)}
    colours |= {f"JOIN rebuild, {label}": colours[label] for label in STEP_LABELS.values()}
    colours["plan JOIN rebuild"] = colours["plan MERGE, all sources"]
    for ax, engine in zip(axes[0], engines, strict=True):
        for label, points in series(result, engine).items():
            xs, ys = zip(*points, strict=True)
            grown = slope(points)
            text = f"{label} ({grown:.2f})" if grown is not None else label
            style = "--" if label in dashed else "-"
            ax.plot(xs, ys, style, marker="o", markersize=3, label=text, color=colours[label])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(engine, fontsize=9)
        ax.set_xlabel("value columns (S x 16)", fontsize=8)
        ax.set_ylabel("JVM CPU seconds (log)", fontsize=8)
        ax.legend(fontsize=5.5, title="figure (log-log slope)", title_fontsize=6)
    fig.suptitle(f"Wide tables at width, {result['keys']:,} keys: cost against columns")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return f"chart: {path}"


if __name__ == "__main__":
    for name in sys.argv[1:]:
        saved = json.loads((Path(__file__).parent / "results" / f"{name}.json").read_text())
        print(chart(saved, Path(__file__).parents[1] / "docs" / "assets" / f"{name}.png"))
