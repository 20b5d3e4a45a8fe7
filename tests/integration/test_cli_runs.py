"""The CLI as users run it: separate processes, the README flow, crashes, the lock, no-op runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lakewide.commands.services.spark_start import shared_session
from lakewide.state.lock import WarehouseLock
from tests.commands.output.test_tables import readme_table
from tests.integration.test_incremental import COUNTERS
from tests.support.cli_process import quick_jvm
from tests.support.project_factory import copy_example_project, make_project, manifest_of

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def lakewide(
    project: Path, *args: str, env: dict[str, str] | None = None, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(project), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=quick_jvm({**os.environ, "COLUMNS": "200", **(env or {})}),
    )


def no_jvm_env(tmp_path: Path) -> dict[str, str]:
    """JAVA_HOME pointing nowhere and a pyspark that cannot be imported."""
    fake = tmp_path / "no_pyspark"
    (fake / "pyspark").mkdir(parents=True, exist_ok=True)
    (fake / "pyspark" / "__init__.py").write_text("raise ImportError('no JVM allowed here')\n")
    return {
        "JAVA_HOME": "/nonexistent",
        "PYTHONPATH": f"{fake}{os.pathsep}" + os.environ.get("PYTHONPATH", ""),
    }


def main_exit_code(*args: str) -> int:
    """``lakewide ARGS`` through the console entry point in this process: its exit code."""
    from lakewide.cli import main

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["lakewide", *args])
        try:
            main()
        except SystemExit as done:
            return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0


@pytest.fixture(scope="module")
def built_example(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Path:
    """A copy of the example after the README's first command's ``lakewide build``, its own
    profile unchanged: in-process, on a session of the test JVM whose catalog ``lw`` is the
    profile's (the project's own ``warehouse``); the README's ``lakewide show`` below is a
    process of its own."""
    project = tmp_path_factory.mktemp("readme") / "example"
    copy_example_project(project)
    output = manifest_of(project).output
    session = spark.newSession()  # its own catalog instances: lw over the project's warehouse
    for key, value in output.iceberg_catalog_properties().items():
        session.conf.set(f"spark.sql.catalog.{output.catalog}.{key}", value)
    with shared_session(session):
        assert main_exit_code("--project-dir", str(project), "build") == 0
    return project


def test_readme_first_command_prints_the_wide_table(built_example: Path) -> None:
    """The README's ``lakewide show user_rec_wide``: a process of its own (the profile's JVM)
    prints the table the build left in the project's warehouse."""
    shown = lakewide(built_example, "show", "user_rec_wide")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout[shown.stdout.index("user_id") :] == readme_table()


def test_noop_run_starts_no_jvm(built_example: Path, tmp_path: Path) -> None:
    done = lakewide(built_example, "run", env=no_jvm_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Nothing to do" in done.stdout
    results = json.loads((built_example / "target" / "run_results.json").read_text())
    assert results["spark_started"] is False
    assert {r["plan"] for r in results["results"]} == {"skipped"}


def test_lineage_reads_metadata_without_jvm(built_example: Path, tmp_path: Path) -> None:
    done = lakewide(built_example, "lineage", "order_detail", env=no_jvm_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "lw.ods.order_info @" in done.stdout and "lw.ods.order_address @" in done.stdout


def test_consistent_pair_without_jvm(built_example: Path, tmp_path: Path) -> None:
    """The build tagged its models; the pair of a model and its downstream table is found
    from metadata alone and carries that tag."""
    done = lakewide(
        built_example,
        "lineage",
        "--consistent",
        "order_detail",
        "order_status_counts",
        env=no_jvm_env(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(tags: lw-run-" in done.stdout and "VERSION AS OF" in done.stdout
    assert "lw.ods.order_info @" in done.stdout


def test_second_process_refuses_a_held_warehouse(built_example: Path) -> None:
    with WarehouseLock(built_example / "warehouse" / ".lakewide.lock", 0):
        done = lakewide(built_example, "--lock-wait", "1", "run")
    assert done.returncode == 2
    assert "another lakewide process" in done.stdout


def test_killed_runs_resume_exactly(
    tmp_path: Path, spark: Any, warehouse: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    """SIGKILL before staging, before and after the run's one commit (both sources' new rows
    merge together). The killed runs are processes of their own; the first run and each
    resume run in-process on the test session (its cached table metadata forgotten first, as
    a fresh process has none)."""
    namespace = "crash_src"
    project = make_project(
        tmp_path / "p",
        {
            "profiles.yml": (
                "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
                f"      catalog_type: hadoop\n      warehouse: {warehouse}\n"
                "      namespace: crash\n"
            ),
            "models/sources.yml": (
                f"sources:\n  - name: src\n    schema: {namespace}\n"
                "    tables:\n      - name: a\n      - name: b\n"
            ),
            "models/m.sql": COUNTERS,
        },
    )
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{namespace}")
    spark.sql(f"CREATE TABLE lw.{namespace}.a (k INT, clicks BIGINT) USING iceberg")
    spark.sql(f"CREATE TABLE lw.{namespace}.b (k INT, buys BIGINT) USING iceberg")
    expected: dict[int, list[int]] = {}

    def append(n: int) -> None:
        spark.sql(f"INSERT INTO lw.{namespace}.a VALUES (1, {n}), ({n + 10}, 1)")
        spark.sql(f"INSERT INTO lw.{namespace}.b VALUES (1, {10 * n})")
        for k, clicks, buys in ((1, n, 10 * n), (n + 10, 1, 0)):
            row = expected.setdefault(k, [0, 0, 0])
            row[0] += clicks
            row[1] += buys
            row[2] += 2 if k == 1 else 1

    def table() -> list[tuple]:
        spark.catalog.refreshTable("lw.crash.m")
        frame = spark.table("lw.crash.m")  # the model's columns, not lakewide's hidden ones
        frame = frame.select(*(c for c in frame.columns if not c.startswith("__lw_")))
        return sorted(tuple(r) for r in frame.collect())

    def reference() -> list[tuple]:
        return sorted((k, c, b or None, e) for k, (c, b, e) in expected.items())

    append(1)
    code, output = cli(project, "run")
    assert code == 0, output
    assert table() == reference()
    # both sources have new rows in every run: they merge in one MERGE, one commit
    for n, point in enumerate(("before-stage:1", "before-commit:1", "after-commit:1"), start=2):
        append(n)
        killed = lakewide(project, "run", env={"LAKEWIDE_CRASH_AT": point})
        assert killed.returncode == -signal.SIGKILL, (point, killed.stdout + killed.stderr)
        spark.catalog.refreshTable("lw.crash.m")
        code, output = cli(project, "run")
        assert code == 0, (point, output)
        assert table() == reference(), point
