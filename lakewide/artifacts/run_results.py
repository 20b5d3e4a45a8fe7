"""``target/run_results.json``: what each model of the last run did."""

from __future__ import annotations

import datetime
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lakewide import __version__
from lakewide.project.settings import Project
from lakewide.vocabulary.errors import UsageError


def write_run_results(
    project: Project,
    results: list[Any],
    started: float,
    *,
    spark_started: bool,
    args: dict[str, Any] | None = None,
) -> Path:
    """Write the run's results (plan, source ranges, rows, commits, seconds, status) and the
    invocation's ``args`` (command, selection, flags: what ``lakewide retry`` repeats)."""
    path = project.target_path / "run_results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "lakewide_version": __version__,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "elapsed_seconds": round(time.time() - started, 3),
        "spark_started": spark_started,
        "args": args or {},
        "results": [asdict(r) for r in results],
    }
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(document, indent=2, default=str), encoding="utf-8")
    tmp.replace(path)
    return path


def read_run_results(project: Project) -> dict[str, Any]:
    """The last run's ``target/run_results.json``; a UsageError saying how to make one when it
    is missing or unreadable."""
    path = project.target_path / "run_results.json"
    shown = project.relative(path)
    if not path.is_file():
        raise UsageError(f"no {shown}: run `lakewide run` (or build) first", path=shown)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        results = document["results"]
        if not isinstance(results, list):
            raise TypeError("results is not a list")
    except (ValueError, KeyError, TypeError) as err:
        raise UsageError(
            f"{shown} is not a run_results.json lakewide wrote ({err}); run `lakewide run` again",
            path=shown,
        ) from None
    return dict(document)
