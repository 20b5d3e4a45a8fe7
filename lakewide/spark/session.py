"""One lazily started SparkSession (one per CLI invocation) and the statements run on it.

It takes sqlglot trees and turns them into Spark SQL text right here, at the boundary.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from typing import Any

from sqlglot import exp

from lakewide.project.connect_profile import server_address
from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output
from lakewide.spark.branch_errors import branch_refusal
from lakewide.spark.errors import describe, short
from lakewide.state.metadata import MetadataReader
from lakewide.state.readers import metadata_reader
from lakewide.vocabulary import events
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import (
    ModelRunError,
    RunInterrupted,
    RuntimeSetupError,
    SparkExitedError,
)

_ICEBERG_JAR = re.compile(
    r"iceberg-spark-runtime-[0-9.]+_[0-9.]+[-:]([0-9][0-9A-Za-z.-]*?)(?:\.jar)?(?:,|$)"
)


def iceberg_version(conf: dict[str, str]) -> str:
    """`` (Iceberg 1.10.2)`` from the Iceberg runtime jar the conf names, or "" when it names
    none lakewide recognises."""
    jars = ",".join(conf.get(key, "") for key in ("spark.jars", "spark.jars.packages"))
    found = _ICEBERG_JAR.search(jars)
    return f" (Iceberg {found.group(1)})" if found else ""


class Session:
    """A SparkSession started on first use, and the statements run on it."""

    def __init__(self, output: Output, app_name: str = "lakewide", spark: Any = None) -> None:
        """``spark``: an existing session to use (and not stop); default: start one lazily."""
        self.output = output
        self.app_name = app_name
        self._owns_session = spark is None
        self._spark: Any = spark
        # the line each table is read and written on in place of the output's branch: a
        # model's staging side branch during its run (lakewide.run.models.branch_stage)
        self.lines: dict[Relation, str] = {}
        # None: metadata is read through Spark
        self._metadata = metadata_reader(output, self.line)
        self.java_options: list[str] = []  # added to the JVM's options (lakewide.run.models.jit)
        # whether a table has the output's branch, once known (lakewide.spark.branches)
        self.branched: dict[Relation, bool] = {}
        self._namespaces: set[tuple[str, str]] = set()  # (catalog, namespace) known to exist

    @property
    def spark_version(self) -> str:
        """The Spark version of the session (starts it)."""
        return str(self.spark.version)

    def line(self, relation: Relation) -> str | None:
        """The branch ``relation`` is read and written on where it has it: its staging side
        branch during its model's run on a branch, else the output's branch (None: main)."""
        return self.lines.get(relation, self.output.branch)

    def _reader(self, relation: Relation) -> MetadataReader | None:
        """The reader of ``relation``'s metadata without Spark (lakewide.state.metadata), or None
        when it is read through Spark (another catalog)."""
        if self._metadata is None or relation.catalog != self.output.catalog:
            return None
        return self._metadata

    @property
    def spark(self) -> Any:
        """The SparkSession, started on first use with the profile's catalog and conf."""
        if self._spark is None and self.remote:
            self._spark = self._connect()
        if self._spark is None:
            from lakewide.spark import runtime

            conf = self.conf()
            what = f"Spark {self.output.master}{iceberg_version(conf)}"
            events.emit("SparkStarting", f"starting {what} ...", master=self.output.master)
            began = time.monotonic()
            spark = runtime.create_session(self.app_name, self.output.master, conf)
            runtime.set_catalog_conf(spark, self.output.catalog, self.output.catalog_secrets())
            self._spark = spark
            seconds = time.monotonic() - began
            events.emit("SparkStarted", f"started {what} in {seconds:.1f}s", seconds=seconds)
        return self._spark

    @property
    def remote(self) -> bool:
        """Whether this profile runs on a Spark Connect server (lakewide.spark.connect)."""
        return self.output.connect_url is not None

    def _connect(self) -> Any:
        """A new session on the profile's Spark Connect server, checked (no JVM starts)."""
        from lakewide.spark import connect

        where = server_address(self.output)
        events.emit("SparkStarting", f"connecting to Spark Connect {where} ...")
        began = time.monotonic()
        spark = connect.create_remote(self.output, connect.remote_conf(self.output))
        what = connect.check_server(self.output, spark)
        seconds = time.monotonic() - began
        events.emit("SparkStarted", f"connected to {what} in {seconds:.1f}s", seconds=seconds)
        return spark

    def conf(self) -> dict[str, str]:
        """The Spark conf a session of this profile starts with (``java_options`` included,
        unless the profile's spark_conf sets the JVM's options itself)."""
        from lakewide.project.jdbc import driver_jars
        from lakewide.spark import runtime

        jars = driver_jars(self.output)
        conf = runtime.spark_conf(
            self.output.master,
            self.output.catalog,
            self.output.iceberg_catalog_properties(),
            self.output.spark_conf,
            driver_classpath=jars,
            java_options=self.output.s3_java_options(),
        )
        # executors write the data files: on S3 they need the AWS SDK bundle too (spark.jars
        # ships it to them; the driver already has it on its class path)
        aws = [str(jar) for jar in jars if self.output.uses_s3() and "aws" in jar.name]
        if aws and "spark.jars" in conf and "spark.jars" not in self.output.spark_conf:
            conf["spark.jars"] = ",".join([conf["spark.jars"], *aws])
        if self.java_options and runtime.JAVA_OPTIONS not in self.output.spark_conf:
            conf[runtime.JAVA_OPTIONS] = " ".join([conf[runtime.JAVA_OPTIONS], *self.java_options])
        return conf

    def start(self) -> None:
        """Start the SparkSession now (``debug`` checks that Spark and the jars come up)."""
        _ = self.spark

    @property
    def started(self) -> bool:
        """Whether the SparkSession is running (started here or given)."""
        return self._spark is not None

    def stop(self) -> None:
        """Stop the SparkSession this adapter started (not one it was given).

        A JVM that already exited is not called; after Ctrl-C, stopping is best effort.
        """
        if self._spark is None or not self._owns_session:
            return
        from lakewide.spark import runtime

        spark, self._spark = self._spark, None
        if self.remote:
            with contextlib.suppress(Exception):  # the server is gone: nothing to release
                spark.stop()
            return
        if runtime.jvm_exit_code(spark) is not None:
            return
        try:
            spark.stop()
        except Exception:  # noqa: BLE001
            if not runtime.interrupted() and runtime.jvm_exit_code(spark, wait=2.0) is None:
                raise

    def raise_if_stopped(self, wait: float = 0.0) -> None:
        """RunInterrupted after Ctrl-C; SparkExitedError when the Spark JVM has exited.

        Called between steps and when a step failed (then with ``wait`` seconds for a dying
        JVM to finish exiting), so that neither cause is reported as the failure of each model
        that follows.
        """
        from lakewide.spark import runtime

        if runtime.interrupted():
            raise RunInterrupted("interrupted")
        if self._spark is None:
            return
        if self.remote:
            self._raise_if_server_gone(wait)
            return
        code = runtime.jvm_exit_code(self._spark, wait)
        if code is not None:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
            hint = (
                " (signal 9 is often the kernel's out-of-memory killer: lower "
                "spark.driver.memory or free memory)"
                if code == -9
                else ""
            )
            raise SparkExitedError(
                f"the Spark JVM {how} during the run{hint}; tables keep their last commit "
                "(Iceberg commits are atomic), so `lakewide run` again resumes"
            )

    def _raise_if_server_gone(self, wait: float) -> None:
        """After a failed step (``wait`` > 0): SparkExitedError when the Connect server's port
        no longer answers, so that the run ends now instead of failing every model after it."""
        from lakewide.spark.connect import reachable

        if wait and not reachable(self.output, timeout=wait):
            where = server_address(self.output)
            raise SparkExitedError(
                f"the Spark Connect server {where} went away during the run; tables keep "
                "their last commit (Iceberg commits are atomic, the offsets in the same "
                "commit), so `lakewide run` again once it is back resumes"
            )

    def sql(self, statement: exp.Expression) -> Any:
        """Run one statement; Spark's errors become ModelRunError carrying the SQL."""
        text = to_sql(statement, pretty=False)
        events.emit("SQLQuery", text, "debug", sql=text)
        try:
            return self.spark.sql(text)
        except Exception as err:  # noqa: BLE001 - py4j/analysis errors have many types
            said = describe(self.output, err)
            refused = branch_refusal(self.output, said)
            if refused is not None:
                refused.sql = text
                raise refused from err
            raise ModelRunError(said, sql=text) from err

    def rows(self, statement: exp.Expression) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of a query."""
        frame = self.sql(statement)
        return list(frame.columns), [tuple(r) for r in frame.collect()]

    def ensure_namespace(self, relation: Relation) -> None:
        """Create ``relation``'s namespace when it has a catalog and the namespace is missing
        (one statement per namespace and session: a namespace made or found stays; one
        dropped outside lakewide while the session lives is made again after ``forget_namespaces``,
        which ``run --watch`` calls before every refresh)."""
        if relation.catalog and (relation.catalog, relation.namespace) not in self._namespaces:
            namespace = exp.Table(
                this=exp.to_identifier(relation.namespace), db=exp.to_identifier(relation.catalog)
            )
            self.sql(exp.Create(this=namespace, kind="SCHEMA", exists=True))
            self._namespaces.add((relation.catalog, relation.namespace))

    def forget_namespaces(self) -> None:
        """Check every namespace again at its next ``ensure_namespace`` (a long-lived session:
        another process may have dropped one)."""
        self._namespaces.clear()

    def namespaces(self) -> list[str]:
        """The namespaces of the profile's catalog; a catalog that does not answer is a
        RuntimeSetupError saying what to check."""
        try:
            self.spark.catalog.setCurrentCatalog(self.output.catalog)
            return [d.name for d in self.spark.catalog.listDatabases()]
        except RuntimeSetupError:
            raise
        except Exception as err:  # noqa: BLE001 - py4j errors have many types
            where = self.output.uri or self.output.warehouse
            raise RuntimeSetupError(
                f"catalog {self.output.catalog} ({self.output.catalog_type}, "
                f"{where}) did not answer: {short(err)}; check the "
                "profile's catalog_type, uri and warehouse"
            ) from None

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """This session as the JVM thread's active session meanwhile: ``spark.read`` resolves
        catalog names through the active session (Iceberg's source), not the reader's, so a
        read through an ``isolated`` session (its own catalogs) needs it; SQL sets it itself."""
        if self.remote:  # the server resolves names in the client's own session
            yield
            return
        sessions = self.spark._jvm.org.apache.spark.sql.SparkSession
        previous = sessions.getActiveSession()
        sessions.setActiveSession(self.spark._jsparkSession)
        try:
            yield
        finally:
            if previous.isDefined():
                sessions.setActiveSession(previous.get())
            else:
                sessions.clearActiveSession()

    def refresh(self, relation: Relation) -> None:
        """Forget cached metadata of a table (after an outside writer committed)."""
        self.spark.catalog.refreshTable(str(relation))

    def forget(self, relation: Relation) -> None:
        """Forget cached metadata of a table that may not exist (yet), before planning from
        it: Iceberg's Spark catalog keeps a table as first loaded, blind to other writers'
        commits (a MERGE would read its target as it was). Nothing to forget before Spark
        started, nor on a hadoop warehouse, which has one writer (lakewide.lock)."""
        from lakewide.state.lock import lock_path

        if self._spark is None or lock_path(self.output) is not None:
            return
        try:
            self.refresh(relation)
        except Exception:  # noqa: BLE001 - a missing table: nothing cached
            return
