"""A SparkSession in its own process, on a project's catalog, for tests whose catalog the test
session's Spark does not have (a JDBC catalog needs its driver on the JVM's classpath at start).

``SparkWorker(project)`` starts ``python -m tests.integration.spark_worker PROJECT``; ``sql(text)``
sends one statement (a JSON line) and returns its rows (a JSON line back). Iceberg's table cache
is off in this session, so every statement sees the catalog's newest commits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def _pythonpath() -> str:
    """This checkout first, then the caller's PYTHONPATH (e.g. a pinned runtime jar's package)."""
    root = str(Path(__file__).resolve().parents[2])
    return os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)


class SparkWorker:
    """One Spark JVM for the whole test; ``close()`` ends it."""

    def __init__(self, project: Path, log: Path) -> None:
        self.log = log
        self._stderr = log.open("w")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.spark_worker", str(project)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env={**os.environ, "PYTHONPATH": _pythonpath()},
        )

    def sql(self, text: str) -> list[list[Any]]:
        """Run one statement; its rows (lists of plain values; maps as dicts)."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps(text) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the Spark worker ended; see {self.log}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{text}: {answer['error']}")
        rows: list[list[Any]] = answer["rows"]
        return rows

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()
        self._stderr.close()


def main(project_dir: str) -> None:
    from lakewide.project.profiles_file import find_profiles_file, load_output
    from lakewide.project.settings import load_project
    from lakewide.spark.adapter import SparkAdapter

    project = load_project(Path(project_dir))
    output = load_output(find_profiles_file(project.root), project.profile, None, project.root)
    output.spark_conf = {
        **output.spark_conf,
        f"spark.sql.catalog.{output.catalog}.cache-enabled": "false",
    }
    spark = SparkAdapter(output).spark
    for line in sys.stdin:
        try:
            rows = [list(row) for row in spark.sql(json.loads(line)).collect()]
            answer: dict[str, Any] = {"rows": rows}
        except Exception as err:  # noqa: BLE001 - told to the test, which fails on it
            answer = {"error": str(err).strip()[:3000]}
        sys.stdout.write(json.dumps(answer, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
