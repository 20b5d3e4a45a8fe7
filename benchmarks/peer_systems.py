"""The peers a team would use instead of lakewide, each written the way its users write it.

Every system builds the same wide table (``k``, the sources' columns, ``seq``) from the same
Iceberg sources (``generate.source_table``) and applies the same steps; ``step`` gets the
sources that changed and the round they changed in.
"""

from __future__ import annotations

from typing import Any

import generate

from lakewide.compiler.queries import build_maintenance
from lakewide.project.nodes import Relation
from lakewide.vocabulary.dialect import to_sql


class NewRows:
    """What a peer has not read yet of each source, the way an Iceberg user reads an
    append-only table incrementally: the snapshots after the last one it read
    (``start-snapshot-id``, exclusive, to the current one). By arrival, not by sequence: a late
    record (an older ``seq``) is read too, and the MERGE's guard decides."""

    def __init__(self, sources: int, view: str, deletes: bool = False) -> None:
        self.sources, self.view, self.deletes = sources, view, deletes
        self.read: dict[int, int | None] = dict.fromkeys(range(sources + deletes))
        self.pending: dict[int, int] = {}

    def reset(self, spark: Any, consumed: bool) -> None:
        """Nothing read yet, or (``consumed``) everything up to the current snapshots."""
        self.read = {i: _current(spark, i) if consumed else None for i in self.read}

    def is_delete_log(self, index: int) -> bool:
        """Whether source ``index`` is the delete log (with ``deletes``, the last source)."""
        return self.deletes and index == self.sources

    def columns(self, index: int) -> list[str]:
        """Source ``index``'s columns: ``k``, its own, ``seq`` (the delete log: ``k``, ``seq``,
        ``op``)."""
        if self.is_delete_log(index):
            return ["k", "seq", "op"]
        return ["k", *generate.source_columns(index), "seq"]

    def rows(self, spark: Any, index: int) -> str:
        """A temporary view of source ``index``'s rows not read yet (``columns``); ``done``
        marks them read."""
        table, current = generate.source_table(index), _current(spark, index)
        reader = spark.read.format("iceberg")
        if self.read[index] is None:
            reader = reader.option("snapshot-id", str(current))
        else:
            reader = reader.option("start-snapshot-id", str(self.read[index]))
            reader = reader.option("end-snapshot-id", str(current))
        name = f"{self.view}_s{index}"
        reader.load(table).select(*self.columns(index)).createOrReplaceTempView(name)
        self.pending[index] = current
        return name

    def done(self, index: int) -> None:
        self.read[index] = self.pending.pop(index)


def _current(spark: Any, index: int) -> int:
    """Source ``index``'s current snapshot id."""
    table = generate.source_table(index)
    [row] = spark.sql(
        f"SELECT snapshot_id FROM {table}.history WHERE is_current_ancestor "
        "ORDER BY made_current_at DESC LIMIT 1"
    ).collect()
    return int(row[0])


class MergePeer:
    """Hand-written column-scoped MERGE per changed source, into an Iceberg or a Delta table.

    The target keeps each source's latest sequence (``s{i}_seq``): a source's new row updates
    the source's columns only when its sequence is not older than the one already there
    (partial update by hand). The initial build is the FULL OUTER JOIN (the cheapest a user
    has), with the sources' sequences.

    ``versions``: the table keeps lakewide's per-column versions instead (``__lw_v_<column>``,
    the sequence that set the column, as lakewide's table stores them; the first of a source's
    columns is the guard): rows as wide as lakewide's (34 columns, not 22), the MERGE otherwise
    the same (what the width alone costs).

    ``prune``: the MERGE reads its source through ``WHERE k = k``, as lakewide's MERGE does
    (``lakewide.compiler.statements.build_merge.merge_source``): a filter Spark takes as selective,
    so that it builds a runtime Bloom filter of the source's keys and applies it to the target's
    scan (only the matching rows are shuffled and sorted for the join, not the whole table).

    ``deletes``: source ``sources`` is a delete log (``generate.delete_frame``); its new rows
    are applied by a MERGE of their own that deletes a key's row when the delete is not older
    than the row's sequence.
    """

    def __init__(
        self,
        table: str,
        using: str,
        properties: dict[str, str],
        sources: int,
        versions: bool = False,
        prune: bool = False,
        deletes: bool = False,
    ) -> None:
        self.table, self.using, self.properties, self.sources = table, using, properties, sources
        self.versions, self.prune, self.deletes = versions, prune, deletes
        self.new = NewRows(sources, table.rsplit(".", 1)[1], deletes)

    @property
    def hidden(self) -> list[str]:
        return [h for i in range(self.sources) for h in self._own(i)]

    def _own(self, index: int) -> list[str]:
        """The hidden columns source ``index``'s rows set, the guard first."""
        if self.versions:
            return [f"__lw_v_{c}" for c in generate.source_columns(index)]
        return [f"s{index}_seq"]

    def build(self, spark: Any) -> None:
        props = ", ".join(f"'{k}' = '{v}'" for k, v in self.properties.items())
        select = generate.join_select(
            "lw", "bench", self.sources, source_seqs=True, deletes=self.deletes
        )
        if self.versions:  # each column's version: its source's sequence where it has a value
            values = [c for i in range(self.sources) for c in generate.source_columns(i)]
            seqs = [
                f"IF({c} IS NULL, NULL, s{i}_seq) AS __lw_v_{c}"
                for i in range(self.sources)
                for c in generate.source_columns(i)
            ]
            select = f"SELECT k, {', '.join(values)}, seq, {', '.join(seqs)} FROM ({select}) j"
        spark.sql(f"DROP TABLE IF EXISTS {self.table}")
        spark.sql(
            f"CREATE TABLE {self.table} USING {self.using}"
            + (f" TBLPROPERTIES ({props})" if props else "")
            + " AS "
            + select
        )
        self.new.reset(spark, consumed=True)

    def step(self, spark: Any, changed: list[int], round_no: int) -> None:
        for index in changed:
            rows = self.new.rows(spark, index)
            if self.new.is_delete_log(index):
                spark.sql(
                    f"MERGE INTO {self.table} t USING {rows} d ON t.k = d.k "
                    "WHEN MATCHED AND d.seq >= t.seq THEN DELETE"
                )
            else:
                spark.sql(self.merge(index, rows))
            self.new.done(index)

    def maintain(self, spark: Any) -> None:
        """The table format's own recommended compaction: Iceberg's ``rewrite_data_files``,
        ``rewrite_position_delete_files`` and ``rewrite_manifests`` with their defaults (what
        ``lakewide maintain`` calls); Delta's ``OPTIMIZE``, and with deletion vectors
        ``REORG TABLE ... APPLY (PURGE)``, which rewrites the files that have one."""
        maintain_table(spark, self.table, self.using, self.properties)

    def merge(self, index: int, rows: str) -> str:
        """The MERGE of source ``index``'s new rows (the view ``rows``)."""
        everything = [c for i in range(self.sources) for c in generate.source_columns(i)]
        sets = {c: f"s.{c}" for c in generate.source_columns(index)}
        sets.update((h, "s.seq") for h in self._own(index))
        own = self._own(index)[0]
        updates = ", ".join(f"{c} = {v}" for c, v in sets.items())
        values = {**sets, "seq": "s.seq"}
        inserted = [values.get(c, "NULL") for c in [*everything, "seq", *self.hidden]]
        source = f"(SELECT * FROM {rows} WHERE k = k)" if self.prune else rows
        return (
            f"MERGE INTO {self.table} t USING {source} s "
            f"ON t.k = s.k "
            f"WHEN MATCHED AND (t.{own} IS NULL OR s.seq >= t.{own}) THEN UPDATE SET "
            f"{updates}, seq = GREATEST(t.seq, s.seq) "
            f"WHEN NOT MATCHED THEN INSERT (k, {', '.join(everything)}, seq, "
            f"{', '.join(self.hidden)}) VALUES (s.k, {', '.join(inserted)})"
        )


class PaimonPeer:
    """A Paimon primary-key table, ``merge-engine=partial-update`` with ``sequence.field``: each
    source writes only its own columns (the others NULL, which partial update skips). By
    default the table merges on read (and in the compactions its writers trigger); ``options``
    are more table options, e.g. ``deletion-vectors.enabled`` (the writer looks the keys up
    and marks the rows it replaces, readers read without merging: lakewide's contract) or
    ``changelog-producer=lookup`` (a changelog for downstream streams, made at compaction).

    ``deletes``: source ``sources`` is a delete log; the table gets its ``op`` column as the row
    kind (``rowkind.field``) and ``partial-update.remove-record-on-delete``, the other sources
    write ``+I``."""

    hidden: list[str] = []

    def __init__(
        self,
        table: str,
        sources: int,
        buckets: int = 4,
        options: dict[str, str] | None = None,
        deletes: bool = False,
    ) -> None:
        self.table, self.sources, self.buckets = table, sources, buckets
        self.options = dict(options or {})
        if deletes:
            self.options.update(
                {"rowkind.field": "op", "partial-update.remove-record-on-delete": "true"}
            )
        self.deletes = deletes
        self.new = NewRows(sources, table.rsplit(".", 1)[1], deletes)

    def build(self, spark: Any) -> None:
        everything = [c for i in range(self.sources) for c in generate.source_columns(i)]
        spark.sql(f"DROP TABLE IF EXISTS {self.table}")
        spark.sql(
            f"CREATE TABLE {self.table} (k BIGINT, "
            + ", ".join(f"{c} BIGINT" for c in everything)
            + (", seq INT, op STRING)" if self.deletes else ", seq INT)")
            + " TBLPROPERTIES ('primary-key' = 'k', 'merge-engine' = 'partial-update', "
            f"'sequence.field' = 'seq', 'bucket' = '{self.buckets}'"
            + "".join(f", '{k}' = '{v}'" for k, v in self.options.items())
            + ")"
        )
        self.new.reset(spark, consumed=False)
        self.step(spark, list(range(self.sources + self.deletes)), 0)

    def maintain(self, spark: Any) -> None:
        """Paimon's full compaction (``sys.compact``): every bucket's sorted runs merged into
        one, so that a reader reads each key once."""
        catalog, table = self.table.split(".", 1)
        spark.sql(f"CALL {catalog}.sys.compact(table => '{table}')").collect()

    def step(self, spark: Any, changed: list[int], round_no: int) -> None:
        everything = [c for i in range(self.sources) for c in generate.source_columns(i)]
        for index in changed:
            mine = generate.source_columns(index)
            cols = [c if c in mine else f"CAST(NULL AS BIGINT) AS {c}" for c in everything]
            kind = (", op" if self.new.is_delete_log(index) else ", '+I'") if self.deletes else ""
            spark.sql(
                f"INSERT INTO {self.table} SELECT k, {', '.join(cols)}, seq{kind} "
                f"FROM {self.new.rows(spark, index)}"
            )
            self.new.done(index)


def maintain_table(spark: Any, table: str, using: str, properties: dict[str, str]) -> None:
    """The recommended compaction of an Iceberg or a Delta table (``MergePeer.maintain``)."""
    if using == "delta":
        spark.sql(f"OPTIMIZE {table}").collect()
        if properties.get("delta.enableDeletionVectors") == "true":
            spark.sql(f"REORG TABLE {table} APPLY (PURGE)").collect()
        return
    relation = Relation(*table.split("."))
    for statement in (  # what ``lakewide maintain`` sends for a table without ``sort_by``
        build_maintenance.rewrite_data_files(relation, sort=False, options={}),
        build_maintenance.rewrite_position_delete_files(relation),
        build_maintenance.rewrite_manifests(relation),
    ):
        spark.sql(to_sql(statement, pretty=False)).collect()


#: the merge-on-read Iceberg MERGE peers' table properties
ICEBERG_MOR = {"write.merge.mode": "merge-on-read", "write.update.mode": "merge-on-read"}


def peers(sources: int, deletes: bool = False) -> dict[str, Any]:
    """Name -> peer, on the session set up by ``peers.session_conf`` (``deletes``: source
    ``sources`` is a delete log)."""
    dv = {"deletion-vectors.enabled": "true"}
    lookup = {"changelog-producer": "lookup"}
    delta_dv = {"delta.enableDeletionVectors": "true"}
    return {
        "iceberg_merge": MergePeer(
            "lw.peers.iceberg_merge", "iceberg", {}, sources, deletes=deletes
        ),
        "iceberg_merge_mor": MergePeer(
            "lw.peers.iceberg_merge_mor", "iceberg", ICEBERG_MOR, sources, deletes=deletes
        ),
        "delta_merge": MergePeer(
            "spark_catalog.peers.delta_merge", "delta", {}, sources, deletes=deletes
        ),
        "delta_merge_dv": MergePeer(
            "spark_catalog.peers.delta_merge_dv", "delta", delta_dv, sources, deletes=deletes
        ),
        "paimon": PaimonPeer("paimon.peers.paimon", sources, deletes=deletes),
        "paimon_dv": PaimonPeer("paimon.peers.paimon_dv", sources, options=dv, deletes=deletes),
        "paimon_lookup": PaimonPeer(
            "paimon.peers.paimon_lookup", sources, options=lookup, deletes=deletes
        ),
    }


def differing_keys(
    spark: Any, pairs: dict[str, tuple[str, str]], columns: list[str]
) -> dict[str, int]:
    """Name -> keys whose row differs between the two tables of ``pairs[name]``, all in one
    query: per table and key a fingerprint (row count and the rows' ``xxhash64`` over
    ``columns``, each with its null flag, so that a value moved to another column or a
    duplicated key shows), compared key by key."""
    tables = {t for pair in pairs.values() for t in pair}
    row = ", ".join(f"{c}, ISNULL({c})" for c in columns)
    rows = " UNION ALL ".join(
        f"SELECT '{t}' AS t, k, XXHASH64({row}) AS h FROM {t}" for t in tables
    )
    counts = ", ".join(
        f"SUM(IF(m['{a}'] <=> m['{b}'], 0, 1)) AS `{name}`" for name, (a, b) in pairs.items()
    )
    [found] = spark.sql(
        f"WITH p AS (SELECT t, k, STRUCT(COUNT(*) AS n, MIN(h) AS lo, MAX(h) AS hi) AS f "
        f"FROM ({rows}) GROUP BY t, k), "
        "m AS (SELECT MAP_FROM_ENTRIES(COLLECT_LIST(STRUCT(t, f))) AS m FROM p GROUP BY k) "
        f"SELECT {counts} FROM m"
    ).collect()
    return {name: int(found[name] or 0) for name in pairs}
