"""Freshness on real Spark + Iceberg: lags read from the metadata real runs leave, ``lakewide
freshness`` without a JVM, and ``lakewide run --watch`` as a real process stopped by a signal."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.nodes import Relation
from lakewide.run.maintenance.watch import plan_refresh
from lakewide.spark.adapter import SparkAdapter
from lakewide.state.lag import BEHIND, FRESH, model_lags
from lakewide.state.metadata import HadoopMetadataReader
from lakewide.state.offsets import last_offsets
from tests.integration.conftest import ModelRun, ProjectRun, hadoop_project
from tests.integration.test_cli_runs import lakewide, no_jvm_env
from tests.support.cli_process import quick_jvm

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMAS = {"a": "k INT, clicks BIGINT", "b": "k INT, buys BIGINT"}


def counters(freshness: str) -> str:
    return f"""
{{{{ config(merge_engine='aggregation', primary_key='k', freshness='{freshness}',
          aggregates={{'clicks': 'sum', 'buys': 'sum'}}) }}}}
SELECT k, clicks, CAST(NULL AS BIGINT) AS buys FROM {{{{ source('src', 'a') }}}}
UNION ALL
SELECT k, CAST(NULL AS BIGINT), buys FROM {{{{ source('src', 'b') }}}}
"""


TOTAL = """
{{ config(materialized='table', freshness='1 second') }}
SELECT SUM(clicks) AS clicks, SUM(buys) AS buys FROM {{ ref('m') }}
"""


def snapshot_times(spark: Any, table: str) -> list[tuple[int, float]]:
    """(snapshot id, commit time in epoch ms) of a table, oldest first, as Spark reads them."""
    spark.catalog.refreshTable(table)
    rows = spark.sql(
        f"SELECT snapshot_id, unix_millis(committed_at) AS ms FROM {table}.snapshots "
        "ORDER BY committed_at"
    ).collect()
    return [(r.snapshot_id, r.ms) for r in rows]


def reference(batches: list[dict[str, list[tuple]]]) -> list[tuple]:
    """The model's rows computed in plain Python from every row written."""
    sums: dict[int, list[int | None]] = {}
    for batch in batches:
        for column, table in ((0, "a"), (1, "b")):
            for k, value in batch.get(table, []):
                row = sums.setdefault(k, [None, None])
                row[column] = (row[column] or 0) + value
    return sorted((k, c, b) for k, (c, b) in sums.items())


def test_lags_follow_the_snapshots_runs_consumed(
    model_run: Callable[..., ModelRun], warehouse: Path, tmp_path: Path
) -> None:
    mr = model_run(counters("10 minutes"), SCHEMAS)
    (mr.run.root / "models" / "total.sql").write_text(TOTAL)
    ns, src = mr.run.namespace, mr.run.seed_schema
    mr.write("a", [(1, 5)])
    mr.write("b", [(1, 7)])
    mr.run.run()
    manifest = mr.run.manifest()
    reader = HadoopMetadataReader(warehouse)
    now = int(time.time() * 1000)
    lags = {lag.name: lag for lag in model_lags(manifest, ["m", "total"], reader.table_meta, now)}
    assert {n: (lag.state, lag.lag) for n, lag in lags.items()} == {
        "m": (FRESH, 0.0),
        "total": (FRESH, 0.0),
    }

    consumed = snapshot_times(mr.run.spark, f"lw.{src}.a")[-1][0]
    mr.write("a", [(2, 1)])
    mr.write("a", [(1, 1)])
    new = [s for s in snapshot_times(mr.run.spark, f"lw.{src}.a") if s[0] != consumed]
    now = int(time.time() * 1000) + 5000
    lags = {lag.name: lag for lag in model_lags(manifest, ["m", "total"], reader.table_meta, now)}
    first_new = min(ms for _, ms in new)  # the oldest change m has not taken in
    assert lags["m"].state == BEHIND and lags["m"].own
    assert lags["m"].lag == pytest.approx((now - first_new) / 1000, abs=0.002)
    assert lags["m"].behind == (f"lw.{src}.a",)
    assert lags["m"].within_target  # 10 minutes
    # total reads m, which has not taken the change in: total lags as much, through m
    assert lags["total"].lag == lags["m"].lag and not lags["total"].own
    assert lags["total"].behind == ("via m",) and lags["total"].within_target is False
    # a poll would refresh total (due) and m (upstream of it, and behind), in DAG order
    plan = plan_refresh(manifest, ["m", "total"], lags, interval=1.0)
    assert plan.names == ["m", "total"]
    assert plan.reasons["m"] == "upstream of total"
    assert plan.reasons["total"].startswith("lag ") and "over target 1s" in plan.reasons["total"]

    # lakewide freshness tells the same without a JVM: total is over its target (exit 1) once
    # the oldest unconsumed change is older than total's 1 s target
    time.sleep(max(0.0, first_new / 1000 + 1.5 - time.time()))
    done = lakewide(mr.run.root, "--log-format", "json", "freshness", env=no_jvm_env(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    results = {
        e["data"]["node_info"]["node_name"]: e["data"]
        for e in map(json.loads, done.stdout.splitlines())
        if e["info"]["name"] == "LogFreshnessResult"
    }
    assert {n: (d["status"], d["state"]) for n, d in results.items()} == {
        "m": ("pass", BEHIND),
        "total": ("error", BEHIND),
    }
    assert results["total"]["target_seconds"] == 1.0 and results["m"]["lag_seconds"] > 0
    assert set(results["m"]["upstream_lag_seconds"]) == {f"lw.{src}.a"}
    # a watch polls through its adapter's metadata reads: they start no Spark
    idle = SparkAdapter(manifest.output)
    polled = model_lags(manifest, ["m", "total"], idle.table_meta, now)
    assert [p.lag for p in polled] == [lags["m"].lag, lags["total"].lag]
    assert not idle.started

    mr.run.run("m")  # m catches up; total now lags behind m's new commit only
    m_commit = snapshot_times(mr.run.spark, f"lw.{ns}.m")[-1][1]
    now = int(time.time() * 1000)
    lags = {lag.name: lag for lag in model_lags(manifest, ["m", "total"], reader.table_meta, now)}
    assert lags["m"].state == FRESH
    assert lags["total"].own and lags["total"].behind == (f"lw.{ns}.m",)
    assert lags["total"].lag == pytest.approx((now - m_commit) / 1000, abs=0.002)
    plan = plan_refresh(manifest, ["m", "total"], lags, interval=1.0)
    assert plan.names == ["total"]

    mr.run.run("total")
    done = lakewide(mr.run.root, "freshness", env=no_jvm_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 of 2 model(s) with a target within it" in done.stdout


class Watch:
    """``lakewide run --watch`` as a real process; its output lines read as they come."""

    def __init__(self, project: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lakewide", "--project-dir", str(project), "run", "--watch"]
            + list(args),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=quick_jvm({**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}),
        )
        self.lines: list[str] = []
        self.signalled_at = 0
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.proc.poll() is None:  # the test failed before stopping it
            self.proc.kill()
            self.proc.wait(timeout=30)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, timeout: float = 300.0) -> str:
        """The next line matching ``pattern``; fails with the output so far after ``timeout``."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
            if re.search(pattern, line):
                return line
        self.proc.kill()
        pytest.fail(f"no line matching {pattern!r}; output:\n" + "\n".join(self.lines))

    def stop(self, signum: int, timeout: float = 120.0) -> int:
        """Send ``signum``; the exit code (the rest of the output read into ``lines``).
        ``signalled_at``: how many lines had been printed when the signal was sent."""
        while not self._queue.empty() and (line := self._queue.get()) is not None:
            self.lines.append(line)
        self.signalled_at = len(self.lines)
        self.proc.send_signal(signum)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        while (line := self._queue.get(timeout=10)) is not None:
            self.lines.append(line)
        return code


BOOTSTRAPPED = r"1 of 1 SUCCESS\s+m\s+bootstrap"


@pytest.fixture(scope="module")
def sigint_watch(
    tmp_path_factory: pytest.TempPathFactory, spark: Any
) -> Iterator[tuple[ModelRun, Watch]]:
    """The SIGINT test's model (an hour's freshness target) and its watch (polls every 2 s),
    started with the module's first watch test so that the two watch processes' JVMs start
    side by side; the SIGINT test stops it. Its warehouse is its own (so is its lock: the
    other watch never waits for it), read and written on a session of the test JVM whose
    catalog ``lw`` is that warehouse."""
    folder = tmp_path_factory.mktemp("sigint")
    root, own = folder / "project", folder / "warehouse"
    namespace, source = "watch_sigint", "watch_sigint_src"
    hadoop_project(root, own, namespace)
    session = spark.newSession()  # its own catalog instances
    session.conf.set("spark.sql.catalog.lw.warehouse", str(own))
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: src\n    schema: {source}\n    tables:\n      - name: a\n"
        "      - name: b\n"
    )
    (root / "models" / "m.sql").write_text(counters("1 hour"))
    mr = ModelRun(ProjectRun(root, session, namespace, source), SCHEMAS)
    mr.write("a", [(1, 5)])
    mr.write("b", [(1, 7)])
    with Watch(mr.run.root, "--interval", "2") as watch:
        yield mr, watch


@pytest.mark.usefixtures("sigint_watch")  # the other watch starts beside this one
def test_watch_refreshes_after_appends_and_stops_on_sigterm(
    model_run: Callable[..., ModelRun], warehouse: Path
) -> None:
    mr = model_run(counters("1 second"), SCHEMAS)
    first = {"a": [(1, 5), (2, 1)], "b": [(1, 7)]}
    for table, rows in first.items():
        mr.write(table, rows)
    relation = Relation("lw", mr.run.namespace, "m")
    reader = HadoopMetadataReader(warehouse)
    with Watch(mr.run.root, "--interval", "1") as watch:
        watch.wait_for(r"^Watching 1 model\(s\) every 1s; freshness targets: m 1s")
        assert "not built yet" in watch.wait_for(r"^Refresh 1 at .* UTC: m \(")
        watch.wait_for(BOOTSTRAPPED)
        assert mr.run.rows("m") == reference([first])

        second = {"a": [(1, 3), (3, 9)]}
        mr.write("a", second["a"])
        appended = snapshot_times(mr.run.spark, f"lw.{mr.run.seed_schema}.a")[-1][0]
        assert re.search(r"m \(lag .* target 1s\)", watch.wait_for(r"^Refresh 2 at "))
        # SIGTERM while the refresh runs: it stops after the model's commit, not inside it
        code = watch.stop(signal.SIGTERM)
    output = "\n".join(watch.lines)
    assert code == 0, output
    done = [
        i for i, line in enumerate(watch.lines) if re.search(r"SUCCESS\s+m\s+incremental", line)
    ]
    assert done and done[0] >= watch.signalled_at, output  # the signal came during the refresh
    summary = watch.lines[-1]
    assert re.match(r"Watch stopped by SIGTERM: \d+ poll\(s\), 2 refresh\(es\), 2 model", summary)
    assert "0 failed" in summary, output
    assert "Traceback" not in output and "interrupted" not in output
    meta = reader.table_meta(relation)
    assert appended in (last_offsets(meta) or {}).values()  # the append was consumed
    mr.run.spark.catalog.refreshTable(str(relation))
    assert mr.run.rows("m") == reference([first, second])
    assert not (warehouse / ".lakewide.lock").exists() or _lock_free(warehouse)


def _lock_free(warehouse: Path) -> bool:
    from lakewide.state.lock import WarehouseLock

    with WarehouseLock(warehouse / ".lakewide.lock", 0):
        return True


def test_watch_stops_on_sigint_between_polls(sigint_watch: tuple[ModelRun, Watch]) -> None:
    mr, watch = sigint_watch
    if not any(re.search(BOOTSTRAPPED, line) for line in watch.lines):
        watch.wait_for(BOOTSTRAPPED)
    mr.write("a", [(1, 1)])  # within its hour: no refresh
    time.sleep(3)
    code = watch.stop(signal.SIGINT)
    output = "\n".join(watch.lines)
    assert code == 0, output
    assert re.match(r"Watch stopped by SIGINT: \d+ poll\(s\), 1 refresh\(es\)", watch.lines[-1])
    assert "Refresh 2" not in output
    assert mr.run.rows("m") == [(1, 5, 7)]
