"""What both width benchmarks (``width.py``'s steps and ``width_plan_only.py``'s planning) set
up: the steps' source writes, a shape's project over an empty warehouse, its Spark session."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import generate
import run
import width_models
from width_models import Shape

from lakewide.project.manifest import load_manifest
from lakewide.project.profiles_file import load_output
from lakewide.project.settings import load_project

STEPS = {  # step -> sources changed (None: every source), round
    "bootstrap": (None, 0),
    "one": ([0], 1),
    "all": (None, 2),
    "noop": ([], 3),
}
CHANGED = 0.01
# the JOIN rebuild of 16 sources (15 nested COALESCE keys) needs more than the analyzer's 100
# iterations of its Resolution batch, its CREATE TABLE ... AS of 64 sources more than 1,000;
# only a limit, the same for lakewide's statements
ANALYZER = {"spark.sql.analyzer.maxIterations": "10000"}


def manifest_of(project: Path) -> Any:
    """The project's manifest, rendered as ``lakewide compile`` renders it."""
    settings = load_project(project)
    return load_manifest(settings, load_output(project / "profiles.yml", "bench", None, project))


def write_round(spark: Any, shape: Shape, keys: int, step: str) -> None:
    changed, round_no = STEPS[step]
    for i in range(shape.sources) if changed is None else changed:
        fraction = 1.0 if step == "bootstrap" else CHANGED
        frame = width_models.source_frame(spark, shape, i, keys, round_no, fraction)
        generate.append(spark, frame, generate.source_table(i))


def start_shape(
    shape: Shape, engines: list[str], out: Path, result: dict[str, Any], kind: str
) -> tuple[dict[str, Any], Path]:
    """A shape's record (its figures go under ``kind``), added to ``result``, and its project
    over an empty warehouse (both named for ``kind`` and the shape)."""
    record: dict[str, Any] = {
        "shape": shape.name,
        "sources": shape.sources,
        "columns": shape.width,
        kind: {},
        "equal": {},
    }
    result["shapes"].append(record)
    tag = "" if kind == "steps" else f"{kind}_"
    warehouse = out / f"warehouse_{tag}{shape.name}"
    shutil.rmtree(warehouse, ignore_errors=True)
    project = width_models.write_project(
        out / f"project_{tag}{shape.name}", warehouse, shape, engines
    )
    return record, project


def open_spark(project: Path) -> Any:
    """A Spark session on the project's profile, its namespaces created."""
    _output, _conf, spark = run.open_session(project, "lakewide-width", lambda conf: ANALYZER)
    for namespace in ("lw.bench", "lw.wide"):
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {namespace}")
    return spark
