"""``lakewide run --watch``: one SparkSession kept for as long as it runs; every ``--interval``
seconds it reads the models' lags from Iceberg metadata (lakewide.state.lag: metadata files, no
Spark query) and refreshes, in DAG order, the models due to stay within their ``freshness``
target (lakewide.run.maintenance.watch). SIGINT and SIGTERM stop it between model commits, never
inside one; it exits 0 with a one-line summary (1 when a model's last refresh failed). A second
signal stops at once (exit 130; each Iceberg commit is atomic either way).
"""

from __future__ import annotations

import datetime
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from lakewide.commands.output.console import console
from lakewide.commands.output.heartbeat import heartbeat
from lakewide.commands.output.output import loud
from lakewide.commands.output.progress import report
from lakewide.commands.services.context import Options, selected
from lakewide.project.durations import describe
from lakewide.project.manifest import Manifest
from lakewide.run.maintenance.watch import DueModels, plan_refresh, watched
from lakewide.state.lag import model_lags
from lakewide.state.lock import LockBusyError, warehouse_lock
from lakewide.vocabulary.errors import ConfigError

if TYPE_CHECKING:
    from lakewide.run.models.outcomes import ModelResult
    from lakewide.spark.adapter import SparkAdapter

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopFlag:
    """Set by SIGINT/SIGTERM; read between model commits. A second signal raises
    KeyboardInterrupt (the command ends at once, "interrupted", exit 130)."""

    def __init__(self) -> None:
        self.signal: str | None = None
        self._previous: dict[int, Any] = {}

    def __bool__(self) -> bool:
        return self.signal is not None

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.signal is not None:
            raise KeyboardInterrupt
        self.signal = signal.Signals(signum).name

    def install(self, *signums: int) -> None:
        """Handle ``signums`` (the main thread only: Python runs handlers there)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in signums:
            self._previous.setdefault(signum, signal.getsignal(signum))
            signal.signal(signum, self._handle)

    def restore(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when the flag is set meanwhile."""
        deadline = time.monotonic() + seconds
        while not self and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, 0.2))


@dataclass
class WatchStats:
    """What a watch did, for its summary line and exit code."""

    polls: int = 0
    refreshes: int = 0
    runs: int = 0
    failed: set[str] = field(default_factory=set)  # models whose last run failed
    failures: int = 0


def _announce(manifest: Manifest, names: list[str], interval: float) -> None:
    targets = ", ".join(
        f"{n} {describe(float(_target(manifest, n)))}" for n in watched(manifest, names)
    )
    console.print(
        f"Watching {len(names)} model(s) every {describe(interval)}; freshness targets: "
        f"{targets}. SIGINT or SIGTERM stops after the running model commits."
    )


def _target(manifest: Manifest, name: str) -> float:
    from lakewide.state.lag import target_seconds

    return target_seconds(manifest.models[name]) or 0.0


def _refresh(
    manifest: Manifest,
    adapter: SparkAdapter,
    plan: DueModels,
    stop: StopFlag,
    stats: WatchStats,
    lock_wait: float,
    args: dict[str, Any],
) -> None:
    """Run the plan's models one at a time under the warehouse lock, stopping between them."""
    from lakewide.artifacts.run_results import write_run_results
    from lakewide.run.models.executor import run_models
    from lakewide.run.models.outcomes import ModelResult
    from lakewide.state.lease import model_leases

    started, run_id = time.time(), uuid.uuid4().hex
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S")
    listed = ", ".join(f"{n} ({plan.reasons[n]})" for n in plan.names)
    console.print(f"Refresh {stats.refreshes + 1} at {when} UTC: {escape(listed)}")
    results: list[ModelResult] = []
    failed_now: set[str] = set()
    adapter.forget_namespaces()  # another process may have dropped one between polls
    with warehouse_lock(manifest.output, lock_wait):
        leases = model_leases(manifest.output, lock_wait)
        try:
            for index, name in enumerate(plan.names, start=1):
                if stop and index > 1:
                    break  # between model commits (an announced refresh runs its first model)
                failed_up = [r for r in manifest.models[name].refs if r in failed_now]
                if failed_up:  # the next poll tries both again
                    failed_now.add(name)
                    why = f"upstream {failed_up[0]} failed"
                    report(ModelResult(name, "skipped", message=why), index, len(plan.names))
                    continue
                _forget(adapter, manifest, name)
                result = run_models(manifest, [name], adapter, run_id=run_id, leases=leases)[0]
                adapter.raise_if_stopped(wait=2.0 if result.status == "error" else 0.0)
                report(result, index, len(plan.names))
                results.append(result)
                stats.runs += 1
                if result.status == "success":
                    stats.failed.discard(name)
                else:
                    stats.failed.add(name)
                    failed_now.add(name)
                    stats.failures += 1
        finally:
            leases.close()
    stats.refreshes += 1
    write_run_results(manifest.project, results, started, spark_started=True, args=args)


def _forget(adapter: SparkAdapter, manifest: Manifest, name: str) -> None:
    """Let Spark see the model's table as it is now: another lakewide process may have
    committed to it between polls (the warehouse lock is held only while refreshing)."""
    relation = manifest.models[name].relation
    if relation.catalog and adapter.started:
        try:
            adapter.refresh(relation)
        except Exception:  # noqa: BLE001 - not built yet: nothing cached
            return


def watch_models(
    options: Options,
    select: tuple[str, ...],
    exclude: tuple[str, ...],
    interval: float,
    args: dict[str, Any],
) -> None:
    """``run --watch``: poll, refresh what is due, sleep; exit on SIGINT/SIGTERM (see module)."""
    from lakewide.commands.services.spark_start import _given, check_output, spark_log
    from lakewide.spark.adapter import SparkAdapter

    manifest = options.manifest()
    names = selected(manifest, select, exclude)
    if not watched(manifest, names):
        raise ConfigError(
            "run --watch refreshes models by their freshness target, and none of the selected "
            f"models ({', '.join(names)}) sets one: add e.g. freshness='5 minutes' to a model's "
            "config(), or select one that has it",
            key="freshness",
        )
    check_output(manifest.output, writes=True)
    stop, stats, began = StopFlag(), WatchStats(), time.monotonic()
    stop.install(signal.SIGTERM)  # SIGINT: once Spark's own handler is in place
    adapter = (
        SparkAdapter(manifest.output, spark=_given[-1]) if _given else SparkAdapter(manifest.output)
    )
    spark_log(adapter, manifest)
    try:
        adapter.start()  # the one JVM of the whole watch
        stop.install(signal.SIGINT)
        _announce(manifest, names, interval)
        while not stop:
            stats.polls += 1
            # adapter.table_meta reads metadata files with pyiceberg on hadoop and JDBC catalogs
            lags = model_lags(manifest, names, adapter.table_meta, int(time.time() * 1000))
            plan = plan_refresh(manifest, names, {lag.name: lag for lag in lags}, interval)
            if plan.names:
                try:
                    _refresh(manifest, adapter, plan, stop, stats, options.lock_wait, args)
                except LockBusyError as busy:
                    console.print(f"[yellow]waiting:[/yellow] {escape(str(busy))}")
            heartbeat.idle()  # waiting on purpose until the next poll
            stop.sleep(interval)
        adapter.raise_if_stopped()
    except Exception:
        adapter.raise_if_stopped(wait=2.0)
        raise
    finally:
        stop.restore()
        adapter.stop()
    failed = f", failing: {', '.join(sorted(stats.failed))}" if stats.failed else ""
    with loud():
        console.print(
            f"Watch stopped by {stop.signal}: {stats.polls} poll(s), {stats.refreshes} "
            f"refresh(es), {stats.runs} model run(s), {stats.failures} failed{failed} in "
            f"{time.monotonic() - began:.1f}s."
        )
    sys.exit(1 if stats.failed else 0)
