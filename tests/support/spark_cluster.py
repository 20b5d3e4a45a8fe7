"""A Spark standalone cluster for the test session: one master and two workers started from
pyspark's own ``bin/spark-class`` (no Spark download), bound to 127.0.0.1 on free ports.

API:

* ``spark_cluster`` (pytest fixture, session scope; tests/cluster/conftest.py imports it): a
  running ``StandaloneCluster`` whose workers have all registered with the master; stopped at
  the end of the session. Skipped locally (with the reason) when it cannot start, failed when
  the environment variable ``CI`` is set.
* ``StandaloneCluster``: ``master_url`` (``spark://127.0.0.1:PORT``), ``status()`` (the
  master's web UI JSON: workers, apps), ``executor_dirs(app_id)`` (each executor's folder in
  the workers' work dirs: the jars it fetched, its ``stderr``), ``stop()``.
* ``start_cluster(base, workers=2)``: start one outside pytest (call ``stop()`` when done).
* ``cluster_missing()``: why no cluster can start here, or None.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.postgres_server import free_port, missing_prerequisite

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
HOST = "127.0.0.1"
WORKER_CORES = 1
WORKER_MEMORY = "1g"  # Spark's default spark.executor.memory (1g) fits one executor per worker
DAEMON_MEMORY = "256m"  # heap of the master and worker daemons themselves
START_TIMEOUT = 120.0  # seconds for the master to come up and every worker to register


def spark_home() -> Path:
    """The installed pyspark package: its ``bin/spark-class`` starts masters and workers."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("pyspark is not installed: pip install -e '.[test]'")
    return Path(next(iter(spec.submodule_search_locations)))


def cluster_missing() -> str | None:
    """Why a standalone cluster cannot start here (what to install), or None."""
    from lakewide.spark.java import find_java
    from lakewide.vocabulary.errors import RuntimeSetupError

    try:
        spark_class = spark_home() / "bin" / "spark-class"
        find_java()
    except (FileNotFoundError, RuntimeSetupError) as exc:
        return str(exc)
    if not os.access(spark_class, os.X_OK):
        return f"{spark_class} is missing or not executable; reinstall pyspark"
    return None


def _daemon_env() -> dict[str, str]:
    """Environment of the daemons: pyspark as SPARK_HOME, the Java lakewide would use, every
    address (RPC and web UIs) on 127.0.0.1, small daemon heaps."""
    from lakewide.spark.java import find_java

    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
    }
    java = find_java()
    if java.home is not None and not env.get("JAVA_HOME"):
        env["JAVA_HOME"] = str(java.home)
    return env


@dataclass
class StandaloneCluster:
    """A running master and its workers; see the module docstring."""

    master_url: str
    webui_url: str
    base: Path
    work_dirs: list[Path]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def status(self) -> dict[str, Any]:
        """The master's state as its web UI serves it (``/json``)."""
        with urllib.request.urlopen(self.webui_url + "/json", timeout=10) as answer:
            state: dict[str, Any] = json.load(answer)
            return state

    def alive_workers(self) -> int:
        return sum(1 for w in self.status().get("workers", []) if w.get("state") == "ALIVE")

    def app_ids(self) -> set[str]:
        """Ids of every application the master has seen (running or finished)."""
        state = self.status()
        return {a["id"] for key in ("activeapps", "completedapps") for a in state.get(key, [])}

    def executor_dirs(self, app_id: str) -> list[Path]:
        """Each executor's folder of ``app_id`` in the workers' work dirs (jars, stderr)."""
        return sorted(p for d in self.work_dirs for p in (d / app_id).glob("*") if p.is_dir())

    def log_tail(self, lines: int = 15) -> str:
        parts = []
        for log in self.logs:
            text = log.read_text(errors="replace").splitlines() if log.exists() else []
            parts.append(f"--- {log.name}\n" + "\n".join(text[-lines:]))
        return "\n".join(parts)

    def stop(self) -> None:
        """Stop the workers (they stop their executors), then the master."""
        for proc in reversed(self.processes):
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(self.processes):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        self.processes.clear()


def _launch(cluster: StandaloneCluster, name: str, args: list[str], env: dict[str, str]) -> None:
    log = cluster.base / f"{name}.log"
    cluster.logs.append(log)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(spark_home() / "bin" / "spark-class"), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cluster.base,
            start_new_session=True,  # its own process group: stop() ends it and its children
        )
    cluster.processes.append(proc)


def _wait_for(cluster: StandaloneCluster, workers: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        dead = [p.args for p in cluster.processes if p.poll() is not None]
        if dead:
            raise RuntimeError(f"a cluster daemon exited while starting: {dead}")
        with contextlib.suppress(OSError, ValueError):
            if cluster.alive_workers() >= workers:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{workers} workers did not register within {timeout:.0f} s")
        time.sleep(0.5)


def start_cluster(
    base: Path, workers: int = 2, timeout: float = START_TIMEOUT
) -> StandaloneCluster:
    """Start a master and ``workers`` workers (1 core, 1g each) under ``base``; return once every
    worker has registered. RuntimeError (with the daemons' log tails) when that fails."""
    base.mkdir(parents=True, exist_ok=True)
    env = _daemon_env()
    port, webui = free_port(), free_port()
    cluster = StandaloneCluster(
        master_url=f"spark://{HOST}:{port}",
        webui_url=f"http://{HOST}:{webui}",
        base=base,
        work_dirs=[base / f"worker{n}" for n in range(1, workers + 1)],
    )
    try:
        master = [MASTER_CLASS, "--host", HOST, "--port", str(port), "--webui-port", str(webui)]
        _launch(cluster, "master", master, env)
        for n, work_dir in enumerate(cluster.work_dirs, 1):
            work_dir.mkdir()
            worker = [WORKER_CLASS, "--host", HOST, "--port", "0", "--webui-port", "0"]
            worker += ["--cores", str(WORKER_CORES), "--memory", WORKER_MEMORY]
            worker += ["--work-dir", str(work_dir), cluster.master_url]
            _launch(cluster, f"worker{n}", worker, env)
        _wait_for(cluster, workers, timeout)
    except BaseException as exc:  # Ctrl-C too: never leave daemons behind
        tail = cluster.log_tail()
        cluster.stop()
        if not isinstance(exc, Exception):
            raise
        raise RuntimeError(f"Spark standalone cluster did not start: {exc}\n{tail}") from exc
    return cluster


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A standalone master with two registered workers for the whole test session."""
    missing = cluster_missing()
    if missing:
        missing_prerequisite(f"no Spark standalone cluster: {missing}")
    try:
        cluster = start_cluster(tmp_path_factory.mktemp("spark-cluster"))
    except RuntimeError as exc:
        missing_prerequisite(str(exc))
        raise  # missing_prerequisite always raises; this keeps type checkers informed
    try:
        yield cluster
    finally:
        cluster.stop()
