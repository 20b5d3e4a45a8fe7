"""The Spark adapter: the only place statements meet a SparkSession.

It takes sqlglot trees and turns them into Spark SQL text right here, at the boundary.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from lakewide.project.nodes import Relation
from lakewide.spark.branch_errors import branch_refusal
from lakewide.spark.branches import BranchWrites
from lakewide.spark.errors import describe, is_conflict, is_state_unknown, short
from lakewide.spark.file_load import FileLoading
from lakewide.spark.file_nulls import FileNulls
from lakewide.spark.ordered_read import OrderedReads
from lakewide.spark.position_changes import PositionChanges
from lakewide.spark.procedures import changelog_view_call
from lakewide.spark.time_travel import in_schema
from lakewide.state.arrival import SnapshotRead, arrival_reads
from lakewide.state.offsets import TableMeta
from lakewide.state.upstream_changes import reads_by_position
from lakewide.vocabulary import events
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import BranchError, CommitConflict, CommitUnknown, ModelRunError


def staged_count(frame: Any) -> int | None:
    """The rows of a lazily local-checkpointed DataFrame, counted by the one job that
    materializes its checkpoint: the job computes the checkpointed RDD's partitions (kept in
    the block manager) and, as every job does at its end, checkpoints that RDD, so later
    reads of ``frame`` read those blocks and never the query again (no second job, no
    aggregation's shuffle). None when the RDD was not checkpointed so (the caller then
    checkpoints eagerly)."""
    count = int(frame._jdf.queryExecution().toRdd().count())
    return count if frame._jdf.queryExecution().analyzed().rdd().isCheckpointed() else None


class SparkAdapter(FileLoading, OrderedReads, BranchWrites, PositionChanges):
    """Runs lakewide's statements on one lazily started SparkSession (lakewide.spark.session):
    staged batches, pinned and incremental reads, commits carrying properties; table metadata
    (lakewide.spark.table_metadata), reads in commit order (lakewide.spark.ordered_read), CSV
    seeds (lakewide.spark.seed_csv) and appended files (lakewide.spark.file_load) come with it."""

    def isolated(self) -> SparkAdapter:
        """An adapter on a new session of this SparkContext, for a model run concurrently with
        others: its own temporary views, SQL settings and catalog instances (so no cached
        table state), the same JVM, jars and executors. Stopping it stops nothing."""
        if self.remote:  # a Connect session of its own (Connect has no newSession)
            adapter = SparkAdapter(self.output, self.app_name)
        else:
            adapter = SparkAdapter(self.output, self.app_name, spark=self.spark.newSession())
        adapter.branched = self.branched  # one view of which tables have the run's branch
        adapter.lines = self.lines  # and of the tables staged on a side branch
        return adapter

    def add_catalog(self, name: str, properties: dict[str, str]) -> None:
        """Make Iceberg catalog ``properties`` answer as ``name`` in this session (a second
        profile output, e.g. ``lakewide diff`` across targets)."""
        from lakewide.spark.runtime import ICEBERG_CATALOG

        prefix = "spark.sql.catalog." + name
        self.spark.conf.set(prefix, ICEBERG_CATALOG)
        for key, value in properties.items():
            self.spark.conf.set(f"{prefix}.{key}", value)

    def register_version(self, view: str, relation: Relation, version: str | None) -> None:
        """Temporary view of ``relation`` as it is, or at snapshot id / tag ``version``."""
        from lakewide.spark.time_travel import at_version

        reader = self.spark.read.format("iceberg")
        if version is not None:
            reader = at_version(self.spark, reader, version)
        try:
            self._catch_up(relation)
            with self.active():
                frame = reader.load(str(relation) if version else self.current_name(relation))
            frame.createOrReplaceTempView(view)
        except Exception as err:  # noqa: BLE001
            said = f"cannot read {relation} at {version or 'its current snapshot'}: {short(err)}"
            raise branch_refusal(self.output, said) or ModelRunError(said) from err

    def stage(self, view: str, query: exp.Expression) -> int:
        """Materialize ``query`` as temporary view ``view``; return its row count.

        The local checkpoint makes the view deterministic for a MERGE source and pins the batch:
        the MERGE sees exactly the rows that were counted. One Spark job materializes and
        counts the batch (``staged_count``), where an eager checkpoint then a count took three.
        """
        frame = self.sql(query)
        try:
            staged, count = frame, None
            if not self.remote:  # Connect has no JVM handle on the plan's RDD
                staged = frame.localCheckpoint(eager=False)
                count = staged_count(staged)
            if count is None:  # eagerly: the rows counted are the rows staged
                staged = frame.localCheckpoint(eager=True)
                count = int(staged.count())
            staged.createOrReplaceTempView(view)
            return count
        except Exception as err:  # noqa: BLE001
            refused = branch_refusal(self.output, short(err))
            raise refused or ModelRunError(short(err), sql=to_sql(query, pretty=False)) from err

    def column_types(self, query: exp.Expression) -> dict[str, str]:
        """Column name -> Spark type name of a query, from its analysis (no rows are read)."""
        return self.types_and_fields(query)[0]

    def types_and_fields(
        self, query: exp.Expression
    ) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        """From one analysis of a query (no rows are read): column name -> Spark type name,
        and for each ``STRUCT`` column its field name -> its Spark type as JSON (the whole type,
        nested nullability included: two fields of the same text have the same type)."""
        from pyspark.sql.types import StructType

        fields = self.sql(query).schema.fields
        structs = {
            f.name: {g.name: g.dataType.json() for g in f.dataType.fields}
            for f in fields
            if isinstance(f.dataType, StructType)
        }
        return {f.name: f.dataType.simpleString() for f in fields}, structs

    def register_read(
        self,
        view: str,
        relation: Relation,
        snapshot: int | None,
        after: int | None = None,
        meta: TableMeta | None = None,
        empty: bool = False,
        ordered: bool = True,
        current_columns: bool = False,
        stats: tuple[str, ...] = (),
    ) -> FileNulls | None:
        """Temporary view of ``relation`` at ``snapshot``, or of the rows appended after ``after``;
        the files it reads where they were planned here (a read in commit order), else None.

        ``snapshot`` None: the table as it is (it has no snapshot yet). ``meta``: the table's
        snapshots when the caller has read them already (else read here, where they are
        needed: lakewide.spark.ordered_read says when). ``empty``: no rows, the table's
        columns. ``ordered``: the rows in commit order, the fold's arrival (lakewide.state.arrival);
        else one plain read. ``stats``: columns whose NULL counts the files planned keep.
        """
        where = "" if snapshot is None else f" @ {snapshot}"
        since = "" if after is None else f" after {after}"
        events.emit("TableRead", f"read {relation}{where}{since} as {view}", "debug")
        files: FileNulls | None = None
        try:
            self._catch_up(relation)
            if snapshot is None:
                frame = self.spark.table(str(relation))
            elif empty or not ordered:
                frame = self._read(relation, SnapshotRead(snapshot))
            else:
                found = self.ordered_read(relation, snapshot, after, stats)
                if found is None:
                    frame = self._by_snapshot(relation, snapshot, after, meta)
                else:
                    frame, files = found
            if empty:
                frame = frame.limit(0)
            if current_columns and snapshot is not None:
                frame = in_schema(frame, self.spark.table(str(relation)).schema)
            frame.createOrReplaceTempView(view)
            return files
        except Exception as err:  # noqa: BLE001
            raise branch_refusal(self.output, short(err)) or ModelRunError(short(err)) from err

    def _by_snapshot(
        self, relation: Relation, snapshot: int, after: int | None, meta: TableMeta | None
    ) -> Any:
        """Where the files cannot be read in commit order (format version 1, a schema changed
        since ``snapshot``): one read per append snapshot, oldest first, where the history
        allows it (lakewide.state.arrival.arrival_reads), else one plain read."""
        snapshots = meta.snapshots if meta is not None else self._snapshots(relation)
        frame = None
        for read in arrival_reads(TableMeta(snapshot, snapshots), snapshot, after):
            part = self._read(relation, read)  # oldest commit first: row numbers follow arrival
            frame = part if frame is None else frame.unionByName(part)
        return frame

    def _catch_up(self, relation: Relation) -> None:
        """Let Spark see the snapshots lakewide read without it: Spark's catalog keeps a table
        as first loaded, so it would not know a snapshot another process committed since."""
        if self._reader(relation) is not None:
            self.refresh(relation)

    def register_changelog(
        self,
        view: str,
        relation: Relation,
        after: int,
        snapshot: int,
        meta: TableMeta | None,
        retracts: tuple[str, ...] | None = None,
    ) -> None:
        """Temporary view of ``relation``'s changes after ``after`` up to ``snapshot``: every
        changed row with ``_change_type`` and ``_change_ordinal``.

        Iceberg's ``create_changelog_view`` procedure (carry-over rows of copy-on-write
        rewrites removed); where delete files came in (merge-on-read), which that procedure
        refuses, the changes by row position (lakewide.spark.position_changes), their old
        images read with only the ``retracts`` columns where the model needs no others (the
        rest NULL; None: every column). Computed once: the run's queries over it (NULL keys,
        deletes, the staged batch) read the materialized changes, not the upstream's files
        again.
        """
        try:
            self._catch_up(relation)
            meta = meta or self.table_meta(relation)
            if meta is not None and reads_by_position(meta, after, snapshot):
                frame = self.position_changes(relation, meta, after, snapshot, retracts)
            else:
                self.sql(changelog_view_call(view, relation, after, snapshot))
                frame = self.spark.table(view)
            frame.localCheckpoint(eager=True).createOrReplaceTempView(view)
            self.unstage()
        except ModelRunError:
            raise
        except Exception as err:  # noqa: BLE001
            raise branch_refusal(self.output, short(err)) or ModelRunError(short(err)) from err

    def mark(self, relation: Relation, properties: dict[str, str]) -> None:
        """Commit a snapshot that changes no row and carries ``properties`` (an empty Iceberg
        append through the table's Java API: SQL has no statement for it)."""
        try:
            if self.remote:
                self._mark_remote(relation, properties)
                return
            table = self._iceberg_table(relation)
            table.refresh()  # from the catalog: the head this run checked, not a cached one
            append = table.newAppend()
            line = self.line(relation)
            if line is not None and table.snapshot(line) is not None:
                append = append.toBranch(line)  # as the run's statements
            for key, value in properties.items():
                append.set(key, value)
            append.commit()
            self.refresh(relation)
        except Exception as err:  # noqa: BLE001 - py4j errors have many types
            if is_conflict(err):
                raise CommitConflict(f"marking {relation}: {short(err)}") from err
            if is_state_unknown(err):
                raise CommitUnknown(f"marking {relation}: {describe(self.output, err)}") from err
            raise ModelRunError(
                f"could not record the offsets of {relation}: {short(err)}"
            ) from err

    def _mark_remote(self, relation: Relation, properties: dict[str, str]) -> None:
        """``mark`` over Spark Connect: an INSERT of no rows, which Iceberg commits as an
        empty append carrying the session's snapshot properties."""
        from lakewide.spark.connect import commit_remote

        table = relation.table()
        nothing = exp.select("*").from_(table).where(exp.false())
        commit_remote(self.spark, properties, lambda: self.sql(exp.insert(nothing, table)))

    def commit(self, statement: exp.Expression, properties: dict[str, str]) -> None:
        """Run a writing statement whose Iceberg commit carries ``properties``."""
        from lakewide.spark.commit import commit_with_properties
        from lakewide.spark.merge_planning import planned_as_merge

        def run() -> Any:
            if isinstance(statement, exp.Merge):
                return planned_as_merge(self.spark, lambda: self.sql(statement))
            return self.sql(statement)

        try:
            commit_with_properties(self.spark, properties, run)
        except BranchError:
            raise  # Iceberg's ValidationException here is a refusal, not a lost race
        except ModelRunError as err:
            if is_conflict(err.__cause__):
                raise CommitConflict(err.message, sql=err.sql) from err.__cause__
            if is_state_unknown(err.__cause__):
                raise CommitUnknown(err.message, sql=err.sql) from err.__cause__
            raise
