"""The width benchmark's markdown: compile, planning and steps per shape and engine, and each
figure's growth exponent (log-log slope over the value columns)."""

from __future__ import annotations

import math
from typing import Any

STEP_LABELS = {
    "bootstrap": "bootstrap",
    "one": "1% in one source",
    "all": "1% in every source",
    "noop": "nothing new",
}


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(y) on log(x): the growth exponent (None under 2 points)."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx, my = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
    var = sum((p[0] - mx) ** 2 for p in pts)
    return None if var == 0 else sum((p[0] - mx) * (p[1] - my) for p in pts) / var


def _get(record: dict[str, Any], *path: str) -> float | None:
    value: Any = record
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def figures(engine: str) -> dict[str, tuple[str, ...]]:
    """Label -> path of one engine's figure in a shape's record (CPU seconds)."""
    out: dict[str, tuple[str, ...]] = {
        "render every model (Python CPU)": ("compile", "render_cpu"),
        "compile (Python CPU)": ("compile", engine, "cpu"),
        "compile --all-plans (Python CPU)": ("compile", engine, "all_plans_cpu"),
        "compile --all-plans (bytes)": ("compile", engine, "all_plans_bytes"),
        "plan bootstrap": ("steps", "plan_bootstrap", engine, "bootstrap", "cpu"),
        "plan JOIN rebuild": ("steps", "plan_bootstrap", engine, "join", "cpu"),
        "plan batch, all sources": ("steps", "plan_merges", engine, "batch_all", "cpu"),
        "plan MERGE, all sources": ("steps", "plan_merges", engine, "merge_all", "cpu"),
        "`lakewide run`, nothing new (process CPU)": ("steps", "noop_cli", "cpu"),
    }
    for step, label in STEP_LABELS.items():
        out[label] = ("steps", step, engine, "cpu")
        if step != "noop":
            out[f"JOIN rebuild, {label}"] = ("steps", step, f"join_{engine}", "cpu")
    return out


def growth(result: dict[str, Any], engine: str) -> dict[str, float | None]:
    """Each figure's log-log slope over the value columns, on the shapes of 16 own columns
    and no shared column (the S x 16 series)."""
    series = [r for r in result["shapes"] if r["shape"].endswith("x16")]
    return {
        label: slope([(r["columns"], v) for r in series if (v := _get(r, *path)) is not None])
        for label, path in figures(engine).items()
    }


def markdown(result: dict[str, Any]) -> str:
    """Per engine: a table of every figure by shape (JVM CPU seconds; compile: Python CPU),
    the growth exponent, and whether lakewide's rows equal the JOIN's."""
    shapes = result["shapes"]
    lines = [
        f"# Wide tables at width: {result['keys']} keys",
        "",
        "CPU seconds (JVM; compile: Python; `lakewide run`: its process) per shape"
        " (S sources x C own columns, +N shared);"
        " `slope`: the log-log growth exponent over the value columns of the S x 16 shapes.",
        f"Load at start {_load(result.get('load_start'))}, at end {_load(result.get('load_end'))}.",
    ]
    for engine in result["engines"]:
        header = " | ".join(f"{r['shape']} ({r['columns']} cols)" for r in shapes)
        lines += [
            "",
            f"## {engine}",
            "",
            f"| figure | {header} | slope |",
            "|---|" + "---|" * (len(shapes) + 1),
        ]
        slopes = growth(result, engine)
        for label, path in figures(engine).items():
            values = [_get(r, *path) for r in shapes]
            if all(v is None for v in values):
                continue
            digits = 0 if "bytes" in label else 2
            cells = " | ".join(_num(v, digits) for v in values)
            lines.append(f"| {label} | {cells} | {_num(slopes[label])} |")
        for step, label in STEP_LABELS.items():
            if step == "noop":
                continue
            ratios = [_ratio(r, step, engine) for r in shapes]
            if any(v is not None for v in ratios):
                lines.append(f"| {label}: x the JOIN | {' | '.join(_num(v) for v in ratios)} | |")
        equal = [_equal(r, engine) for r in shapes]
        against = "the JOIN's" if result.get("joins", True) else "a full refresh's, after the runs"
        lines.append(f"| rows equal to {against} | {' | '.join(equal)} | |")
    return "\n".join(lines) + "\n"


def _ratio(record: dict[str, Any], step: str, engine: str) -> float | None:
    ours = _get(record, "steps", step, engine, "cpu")
    theirs = _get(record, "steps", step, f"join_{engine}", "cpu")
    return ours / theirs if ours is not None and theirs else None


def _equal(record: dict[str, Any], engine: str) -> str:
    said = [v[engine] for v in record.get("equal", {}).values() if engine in v]
    over = record.get("over_budget", {}).get(engine)
    text = "–" if not said else ("yes" if all(said) else "**no**")
    return text + (f" (over budget at {over})" if over else "")


def _load(load: Any) -> str:
    return "–" if not load else "/".join(f"{v:.1f}" for v in load)
