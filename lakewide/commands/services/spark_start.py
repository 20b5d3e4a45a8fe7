"""Starting the one SparkSession of a command that needs Spark, after the checks made before it."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lakewide.commands.output.console import console
from lakewide.commands.services.context import Options
from lakewide.project.manifest import Manifest
from lakewide.project.profiles import Output, check_warehouse_writable
from lakewide.vocabulary.errors import LakewideError

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


_given: list[Any] = []  # a SparkSession commands of this process use instead of their own


@contextlib.contextmanager
def shared_session(spark: Any) -> Iterator[None]:
    """Commands run meanwhile in this process use ``spark`` (and leave it running) instead of
    starting their own: the CLI run in-process on a test's session."""
    _given.append(spark)
    try:
        yield
    finally:
        _given.remove(spark)


def spark_log(adapter: SparkAdapter, manifest: Manifest) -> Path:
    """Send the Spark JVM's log (Java traces included) to ``target/spark.log`` of the project
    (lakewide/spark/log4j2.properties; stderr gets records below ERROR, one line each)."""
    path = manifest.project.target_path / "spark.log"
    text = str(path.resolve())
    adapter.java_options.append(
        f'-Dlakewide.spark.log="{text}"' if " " in text else f"-Dlakewide.spark.log={text}"
    )
    return path


def log_note(path: Path, since: float) -> str | None:
    """Where the Java traces of a failed command are: ``path`` when Spark wrote it since
    ``since`` (a ``time.time()``), else None."""
    try:
        fresh = path.stat().st_mtime >= since - 1 and path.stat().st_size > 0
    except OSError:
        return None
    return f"Spark's log, with the Java traces: {path}" if fresh else None


def check_output(output: Output, writes: bool) -> None:
    """Profile settings Spark would fail on late: a missing JDBC driver jar and (for writing
    commands) a local warehouse that cannot be written. No JVM needed."""
    from lakewide.project.jdbc import driver_jars

    driver_jars(output)
    if writes:
        check_warehouse_writable(output)


def with_adapter(
    options: Options,
    body: Callable[[Manifest, SparkAdapter], int],
    *,
    check: Callable[[Manifest], Any] | None = None,
    precheck: Callable[[Manifest], bool] | None = None,
    writes: bool = True,
) -> None:
    """Run ``body`` with one SparkSession, holding the warehouse lock on hadoop catalogs, and
    exit with the code it returns.

    ``check`` raises on bad input before anything is locked, written or started; ``precheck``
    true (under the lock) ends the command with code 0 before Spark starts.
    """
    from lakewide.state.lock import warehouse_lock

    manifest = options.manifest()
    if check is not None:
        check(manifest)
    output = manifest.output
    check_output(output, writes)
    # hadoop catalogs: plain paths and file: URIs share one lock (lakewide.state.lock.lock_path)
    lock: Any = warehouse_lock(output, options.lock_wait) if writes else contextlib.nullcontext()
    with lock:
        if precheck is not None and precheck(manifest):
            sys.exit(0)
        from lakewide.spark.adapter import SparkAdapter  # not for a run with nothing to do

        adapter = SparkAdapter(output, spark=_given[-1]) if _given else SparkAdapter(output)
        log, began = spark_log(adapter, manifest), time.time()
        try:
            code = body(manifest, adapter)
            adapter.raise_if_stopped()
        except LakewideError as err:
            adapter.raise_if_stopped(wait=2.0)  # Ctrl-C or a dead JVM caused it: say so
            note = log_note(log, began) if err.exit_code == 1 else None
            if note:
                err.message = f"{err.message}\n{note}"
            raise
        except Exception:
            adapter.raise_if_stopped(wait=2.0)
            raise
        finally:
            adapter.stop()
    note = log_note(log, began) if code == 1 else None
    if note:
        console.print(note, soft_wrap=True)
    sys.exit(code)
