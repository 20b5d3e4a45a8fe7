"""The Spark adapter: the only place statements meet a SparkSession.

It takes sqlglot trees and turns them into Spark SQL text right here, at the boundary.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from sqlglot import exp

from lakewide.arrival import Read, arrival_reads
from lakewide.compiler import to_sql
from lakewide.errors import CommitConflict, ConfigError, ModelRunError, RunInterrupted, \
    RuntimeSetupError, SparkExitedError
from lakewide.metadata import CorruptMetadataError, MetadataReader, corrupt_metadata, \
    current_metadata_file, metadata_reader, warehouse_path
from lakewide.nodes import Relation
from lakewide.offsets import Snapshot, TableMeta
from lakewide.profiles import Output


SEED_DIGEST = "lakewide.seed-sha256"
LINEAGE_SEQUENCE = "_last_updated_sequence_number"
_METADATA_FILE = re.compile(r"(\S+\.metadata\.json(?:\.gz)?)")


class SparkAdapter:
    """Runs statements on one lazily started SparkSession (one per CLI invocation)."""

    def __init__(self, output: Output, app_name: str = "lakewide", spark: Any = None) -> None:
        """``spark``: an existing session to use (and not stop); default: start one lazily."""
        self.output = output
        self.app_name = app_name
        self._spark: Any = spark
        self._owns_session = spark is None
        self._seed_frames: dict[str, Any] = {}  # checked seed frames by digest
        self._metadata = metadata_reader(output)  # None: metadata is read through Spark

    def _reader(self, relation: Relation) -> MetadataReader | None:
        """The reader of ``relation``'s metadata without Spark (lakewide.metadata), or None
        when it is read through Spark (another catalog)."""
        if self._metadata is None or relation.catalog != self.output.catalog:
            return None
        return self._metadata

    @property
    def spark(self) -> Any:
        if self._spark is None:
            from lakewide.spark import runtime

            runtime.check_catalog_supported(self.output)
            conf = runtime.spark_conf(self.output.master, self.output.catalog,
                                      self.output.iceberg_catalog_properties(),
                                      self.output.spark_conf)
            self._spark = runtime.create_session(self.app_name, self.output.master, conf)
        return self._spark

    def start(self) -> None:
        """Start the SparkSession now (``debug`` checks that Spark and the jars come up)."""
        _ = self.spark

    @property
    def started(self) -> bool:
        return self._spark is not None

    def stop(self) -> None:
        """Stop the SparkSession this adapter started (not one it was given).

        A JVM that already exited is not called; after Ctrl-C, stopping is best effort.
        """
        if self._spark is None or not self._owns_session:
            return
        from lakewide.spark import runtime

        spark, self._spark = self._spark, None
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
        code = runtime.jvm_exit_code(self._spark, wait)
        if code is not None:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
            hint = " (signal 9 is often the kernel's out-of-memory killer: lower " \
                   "spark.driver.memory or free memory)" if code == -9 else ""
            raise SparkExitedError(
                f"the Spark JVM {how} during the run{hint}; tables keep their last commit "
                "(Iceberg commits are atomic), so `lakewide run` again resumes")

    def sql(self, statement: exp.Expression) -> Any:
        """Run one statement; Spark's errors become ModelRunError carrying the SQL."""
        text = to_sql(statement, pretty=False)
        try:
            return self.spark.sql(text)
        except Exception as err:  # noqa: BLE001 - py4j/analysis errors have many types
            raise ModelRunError(_short(err), sql=text) from err

    def stage(self, view: str, query: exp.Expression) -> int:
        """Materialize ``query`` as temporary view ``view``; return its row count.

        The local checkpoint makes the view deterministic for a MERGE source and pins the batch:
        the MERGE sees exactly the rows that were counted.
        """
        frame = self.sql(query)
        try:
            frame = frame.localCheckpoint(eager=True)
            frame.createOrReplaceTempView(view)
            return int(frame.count())
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(_short(err), sql=to_sql(query, pretty=False)) from err

    def column_types(self, query: exp.Expression) -> dict[str, str]:
        """Column name -> Spark type name of a query, from its analysis (no rows are read)."""
        frame = self.sql(query)
        return {f.name: f.dataType.simpleString() for f in frame.schema.fields}

    def rows(self, statement: exp.Expression) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of a query."""
        frame = self.sql(statement)
        return list(frame.columns), [tuple(r) for r in frame.collect()]

    def ensure_namespace(self, relation: Relation) -> None:
        if relation.catalog:
            namespace = exp.Table(this=exp.to_identifier(relation.namespace),
                                  db=exp.to_identifier(relation.catalog))
            self.sql(exp.Create(this=namespace, kind="SCHEMA", exists=True))

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
            raise RuntimeSetupError(f"catalog {self.output.catalog} ({self.output.catalog_type}, "
                                    f"{where}) did not answer: {_short(err)}; check the "
                                    "profile's catalog_type, uri and warehouse") from None

    def table_exists(self, relation: Relation) -> bool:
        """Whether the table exists; CorruptMetadataError when its metadata cannot be read."""
        reader = self._reader(relation)
        if reader is not None:
            return reader.table_meta(relation) is not None
        try:
            return bool(self.spark.catalog.tableExists(str(relation)))
        except Exception as err:  # noqa: BLE001 - py4j errors have many types
            raise self._unreadable(relation, err) from err

    def _unreadable(self, relation: Relation, err: Exception) -> CorruptMetadataError:
        """The error for a table whose metadata Iceberg failed to load, naming the file."""
        top = _short(err)
        found = _METADATA_FILE.search(top)
        detail = _root_cause(err) or _without_packages(top)
        file: Path | str | None = found.group(1) if found else None
        if file is not None:
            detail = detail.replace(f": {file}", "").replace(str(file), "the file")
        elif self.output.catalog_type == "hadoop":
            warehouse = warehouse_path(self.output.warehouse)
            file = None if warehouse is None else current_metadata_file(warehouse, relation)
        return corrupt_metadata(relation, file, detail)

    def snapshot_summary(self, relation: Relation) -> dict[str, str]:
        """Summary of the table's current snapshot (empty when it has none)."""
        reader = self._reader(relation)
        if reader is not None:
            found = reader.table_meta(relation)
            current = None if found is None or found.current is None else \
                found.snapshots.get(found.current)
            return {} if current is None else dict(current.summary)
        meta = relation.metadata_table("snapshots")
        query = exp.select("summary").from_(meta).order_by(exp.column("committed_at").desc()).limit(1)
        _, rows = self.rows(query)
        return dict(rows[0][0]) if rows else {}

    def table_meta(self, relation: Relation) -> TableMeta | None:
        """Snapshots and current snapshot of a table; None when it does not exist."""
        reader = self._reader(relation)
        if reader is not None:
            return reader.table_meta(relation)
        if not self.table_exists(relation):
            return None
        try:
            snapshots = self._snapshots(relation)
        except ModelRunError as err:
            raise self._unreadable(relation, err.__cause__ or err) from err
        refs = exp.select("snapshot_id").from_(relation.metadata_table("refs")) \
            .where(exp.column("name").eq(exp.Literal.string("main")))
        _, current = self.rows(refs)
        return TableMeta(current[0][0] if current else None, snapshots)

    def _snapshots(self, relation: Relation) -> dict[int, Snapshot]:
        reader = self._reader(relation)
        if reader is not None:
            meta = reader.table_meta(relation)
            return {} if meta is None else meta.snapshots
        query = exp.select("snapshot_id", "parent_id", "operation", "summary", "committed_at") \
            .from_(relation.metadata_table("snapshots"))
        _, rows = self.rows(query)
        return {r[0]: Snapshot(r[0], r[1], r[2] or "", dict(r[3] or {}),
                               int(r[4].timestamp() * 1000) if r[4] else 0) for r in rows}

    def register_read(self, view: str, relation: Relation, snapshot: int | None,
                      after: int | None = None, newer_than_sequence: int | None = None,
                      meta: TableMeta | None = None, empty: bool = False) -> None:
        """Temporary view of ``relation`` at ``snapshot``, or of the rows appended after ``after``.

        ``snapshot`` None: the table as it is (it has no snapshot yet). ``meta``: the table's
        snapshots when the caller has read them already (else read here). ``empty``: no rows,
        the table's columns.

        ``newer_than_sequence`` keeps only rows whose row lineage
        (``_last_updated_sequence_number``, format v3) is newer: rows added or updated since.
        """
        try:
            self._catch_up(relation)
            if snapshot is None or empty:
                frame = self.spark.table(str(relation)) if snapshot is None else \
                    self._read(relation, Read(snapshot))
                if empty:
                    frame = frame.limit(0)
                frame.createOrReplaceTempView(view)
                return
            reads = [Read(snapshot, after)] if newer_than_sequence is not None else \
                arrival_reads(TableMeta(snapshot, meta.snapshots if meta is not None
                                        else self._snapshots(relation)), snapshot, after)
            frame = None
            for read in reads:  # oldest commit first: row numbers follow arrival
                part = self._read(relation, read)
                frame = part if frame is None else frame.unionByName(part)
            if newer_than_sequence is not None:
                frame = frame.select("*", LINEAGE_SEQUENCE) \
                    .where(frame[LINEAGE_SEQUENCE] > newer_than_sequence).drop(LINEAGE_SEQUENCE)
            frame.createOrReplaceTempView(view)
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(_short(err)) from err

    def _read(self, relation: Relation, read: Read) -> Any:
        reader = self.spark.read.format("iceberg")
        if read.after is None:
            reader = reader.option("snapshot-id", str(read.snapshot))
        else:
            reader = reader.option("start-snapshot-id", str(read.after)) \
                .option("end-snapshot-id", str(read.snapshot))
        return reader.load(str(relation))

    def _catch_up(self, relation: Relation) -> None:
        """Let Spark see the snapshots lakewide read without it: Spark's catalog keeps a table
        as first loaded, so it would not know a snapshot another process committed since."""
        if self._reader(relation) is not None:
            self.refresh(relation)

    def register_changelog(self, view: str, relation: Relation, after: int, snapshot: int) -> None:
        """Temporary view of ``relation``'s changes after ``after`` up to ``snapshot``.

        Iceberg's ``create_changelog_view`` procedure: every changed row with ``_change_type``
        and ``_change_ordinal``, carry-over rows of copy-on-write rewrites removed.
        """
        def arg(name: str, value: exp.Expression) -> exp.Kwarg:
            return exp.Kwarg(this=exp.var(name), expression=value)

        try:
            self._catch_up(relation)
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(_short(err)) from err
        options = exp.Anonymous(this="map", expressions=[exp.Literal.string(v) for v in (
            "start-snapshot-id", str(after), "end-snapshot-id", str(snapshot))])
        procedure = exp.Anonymous(this="create_changelog_view", expressions=[
            arg("table", exp.Literal.string(str(relation))), arg("options", options),
            arg("changelog_view", exp.Literal.string(view))])
        target = exp.Dot.build([exp.to_identifier(relation.catalog),
                                exp.to_identifier("system"), procedure])
        # sqlglot has no CALL node: the call is built as a tree, rendered here at the boundary
        self.sql(exp.Command(this="CALL", expression=exp.Literal.string(to_sql(target,
                                                                                pretty=False))))

    def _iceberg_table(self, relation: Relation) -> Any:
        jvm = self.spark.sparkContext._jvm
        return jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            self.spark._jsparkSession, str(relation))

    def last_commit_meta(self, relation: Relation, marker: str,
                         keys: tuple[str, ...]) -> TableMeta | None:
        """The current snapshot's ancestors back to the first whose summary holds ``marker``.

        Read without Spark where lakewide.metadata has a reader (then every snapshot, whole);
        else only the summary ``keys``, through Iceberg's Java API (no Spark job, a few
        milliseconds instead of a metadata-table query). None when the table does not exist;
        CorruptMetadataError when its metadata cannot be read.
        """
        reader = self._reader(relation)
        if reader is not None:
            return reader.table_meta(relation)
        if not self.table_exists(relation):
            return None
        try:
            table = self._iceberg_table(relation)
            snapshot = table.currentSnapshot()
            current = None if snapshot is None else int(snapshot.snapshotId())
            found: dict[int, Snapshot] = {}
            while snapshot is not None:
                summary = snapshot.summary()
                values = {k: str(v) for k in (marker, *keys) if (v := summary.get(k)) is not None}
                parent = snapshot.parentId()
                snapshot_id = int(snapshot.snapshotId())
                found[snapshot_id] = Snapshot(snapshot_id, None if parent is None else int(parent),
                                              str(snapshot.operation() or ""), values)
                if marker in values or parent is None:
                    break
                snapshot = table.snapshot(parent)
        except Exception as err:  # noqa: BLE001 - py4j errors have many types
            raise self._unreadable(relation, err) from err
        return TableMeta(current, found)

    def format_version(self, relation: Relation) -> int:
        """The Iceberg format version of a table."""
        reader = self._reader(relation)
        meta = None if reader is None else reader.table_meta(relation)
        if meta is not None and meta.format_version is not None:
            return meta.format_version
        return int(self._iceberg_table(relation).operations().current().formatVersion())

    def sequence_number(self, relation: Relation, snapshot: int) -> int:
        """The data sequence number Iceberg assigned to ``snapshot``."""
        reader = self._reader(relation)
        meta = None if reader is None else reader.table_meta(relation)
        found = None if meta is None else meta.snapshots.get(snapshot)
        if found is not None and found.sequence_number is not None:
            return found.sequence_number
        return int(self._iceberg_table(relation).snapshot(snapshot).sequenceNumber())

    def commit(self, statement: exp.Expression, properties: dict[str, str]) -> None:
        """Run a writing statement whose Iceberg commit carries ``properties``."""
        from lakewide.spark.commit import commit_with_properties

        try:
            commit_with_properties(self.spark, properties, lambda: self.sql(statement))
        except ModelRunError as err:
            if _is_conflict(err.__cause__):
                raise CommitConflict(err.message, sql=err.sql) from err.__cause__
            raise

    def refresh(self, relation: Relation) -> None:
        """Forget cached metadata of a table (after an outside writer committed)."""
        self.spark.catalog.refreshTable(str(relation))

    def load_csv(self, path: Path, relation: Relation, column_types: dict[str, str]) -> int | None:
        """Replace ``relation`` with the CSV's rows (header, inferred types, overrides).

        Returns None (and writes nothing) when the table already holds this exact file, so
        downstream incremental models see no new snapshot. A value that does not fit its
        declared type is a ConfigError raised before the table is touched.
        """
        from lakewide.spark.commit import commit_with_properties

        marker = {SEED_DIGEST: _seed_digest(path, column_types)}
        if self._seed_unchanged(relation, marker[SEED_DIGEST]):
            return None
        frame = self._seed_frame(path, column_types)
        self.ensure_namespace(relation)
        try:
            commit_with_properties(self.spark, marker,
                                   lambda: frame.writeTo(str(relation)).using("iceberg")
                                   .createOrReplace())
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(_short(err), path=path) from err
        return int(self.spark.table(str(relation)).count())

    def check_seed(self, path: Path, relation: Relation, column_types: dict[str, str]) -> None:
        """Raise ConfigError when a value of a changed seed does not fit its declared type
        (one Spark query; ``load_csv`` then reuses the checked frame)."""
        if not self._seed_unchanged(relation, _seed_digest(path, column_types)):
            self._seed_frame(path, column_types)

    def _seed_unchanged(self, relation: Relation, digest: str) -> bool:
        return self.table_exists(relation) and \
            self.snapshot_summary(relation).get(SEED_DIGEST) == digest

    def _seed_frame(self, path: Path, column_types: dict[str, str]) -> Any:
        """The CSV as a DataFrame: inferred types, declared columns read as text and cast.

        Every declared column is checked in one query: a non-empty value whose cast is NULL
        does not fit (a ConfigError naming file, line, column, value and type).
        """
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType, StructField, StructType

        key = _seed_digest(path, column_types)
        if key in self._seed_frames:
            return self._seed_frames[key]
        misfits: dict[str, tuple[int, str]] = {}
        try:
            frame = self.spark.read.csv(str(path), header=True, inferSchema=True)
            if column_types:
                text = StructType([StructField(f.name, StringType()) if f.name in column_types
                                   else f for f in frame.schema.fields])
                frame = self.spark.read.csv(str(path), header=True, schema=text)
                misfits = _misfits(frame, column_types)
                frame = frame.select(*(F.col(_quoted(f.name)).cast(column_types[f.name])
                                       .alias(f.name) if f.name in column_types
                                       else F.col(_quoted(f.name)) for f in frame.schema.fields))
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(_short(err), path=path) from err
        if misfits:
            raise _misfit_error(path, column_types, misfits)
        self._seed_frames[key] = frame
        return frame


def _seed_digest(path: Path, column_types: dict[str, str]) -> str:
    data = path.read_bytes() + repr(sorted(column_types.items())).encode()
    return hashlib.sha256(data).hexdigest()


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _misfits(frame: Any, column_types: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Per declared column: (rows that do not fit, the first such value in file order)."""
    from pyspark.sql import functions as F

    row = "__lakewide_row"
    framed = frame.withColumn(row, F.monotonically_increasing_id())
    aggregates = []
    for column, type_name in column_types.items():
        value = F.col(_quoted(column))
        bad = value.isNotNull() & value.cast(type_name).isNull()
        aggregates += [F.count(F.when(bad, 1)), F.min_by(value, F.when(bad, F.col(row)))]
    found = framed.agg(*aggregates).collect()[0]
    return {column: (found[2 * i], found[2 * i + 1])
            for i, column in enumerate(column_types) if found[2 * i]}


def _misfit_error(path: Path, column_types: dict[str, str],
                  misfits: dict[str, tuple[int, str]]) -> ConfigError:
    """One line per column whose values do not fit its declared type."""
    from lakewide.seeds import line_of_value

    shown = _shown(path)
    lines = []
    for column, (count, value) in misfits.items():
        line = line_of_value(path, column, value)
        where = f"{shown}:{line}" if line else shown
        more = f" ({count} rows do not fit)" if count > 1 else ""
        lines.append(f"{where}: [{column}] value '{value}' is not a valid "
                     f"{column_types[column]}{more}; fix the value or the type declared for "
                     "this column in the seed types file")
    return ConfigError("\n".join(lines))


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _without_packages(text: str) -> str:
    """``org.apache.iceberg.exceptions.RuntimeIOException: x`` -> ``RuntimeIOException: x``."""
    return re.sub(r"^(?:[a-z_$][\w$]*\.)+(?=[A-Z])", "", text)


def _root_cause(err: Exception) -> str:
    """First line of the innermost Java cause of a py4j error ('' for Python errors)."""
    java = getattr(err, "java_exception", None)
    if java is None:
        return ""
    while java.getCause() is not None and java.getCause() != java:
        java = java.getCause()
    text = str(java.toString()).strip()
    return _without_packages(text.splitlines()[0])[:300] if text else ""


#: Iceberg's exceptions for a commit another writer got in first
CONFLICTS = ("org.apache.iceberg.exceptions.CommitFailedException",
             "org.apache.iceberg.exceptions.ValidationException")


def _is_conflict(err: BaseException | None) -> bool:
    """Whether a failed statement's Java exception (or one of its causes) is a commit
    conflict, told by exception class."""
    java = getattr(err, "java_exception", None) or getattr(err, "_origin", None)
    seen = 0
    while java is not None and seen < 20:
        if str(java.getClass().getName()) in CONFLICTS:
            return True
        cause = java.getCause()
        java = None if cause is None or cause == java else cause
        seen += 1
    return False


def _short(err: Exception) -> str:
    """One line saying what failed: the Java exception for py4j errors, else the message."""
    java = getattr(err, "java_exception", None)
    text = str(java.toString()) if java is not None else str(err).strip()
    first = text.splitlines()[0] if text else type(err).__name__
    return first[:2000]
