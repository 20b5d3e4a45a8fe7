"""The two reads of a merge-on-read commit's changes give the same rows.

lakewide.spark.position_changes reads a commit from the files it wrote (its new data files
alone, and the old images of the rows its deletes hide, by position); a commit that wrote
equality deletes (and every commit over Spark Connect) is read whole with Iceberg's
``_deleted`` column instead: the marked read. Here both reads run on the same real commits
(format 2 position deletes, format 3 deletion vectors; updates, deletes, an insert-only
commit, a copy-on-write rewrite and a compaction among them) and must agree; the commits'
rows are also checked against what the table held before and after each commit, and so are
the marked reads of two commits with equality deletes as Flink's upsert sink writes them
(tests/support/equality_upsert.py).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output
from lakewide.spark.adapter import SparkAdapter
from lakewide.spark.position_changes import COMMIT
from lakewide.state.upstream_changes import data_commits, equality_deletes_added
from tests.support.equality_upsert import upsert

pytestmark = [pytest.mark.spark]

STEPS = [
    "MERGE INTO {t} x USING (SELECT id AS k, 'u1' AS v FROM range(0, 400, 7)) u ON x.k = u.k "
    "WHEN MATCHED THEN UPDATE SET v = u.v",
    "DELETE FROM {t} WHERE k % 11 = 0",
    "INSERT INTO {t} SELECT id, 'new' FROM range(400, 420)",
    "ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode' = 'copy-on-write')",
    "DELETE FROM {t} WHERE k % 13 = 0",
    "ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
    "CALL lw.system.rewrite_data_files(table => '{name}', options => map('min-input-files', '1'))",
    "MERGE INTO {t} x USING (SELECT id AS k, 'u2' AS v FROM range(0, 420, 5)) u ON x.k = u.k "
    "WHEN MATCHED AND u.k % 2 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = u.v",
    # Flink's upsert sink: new rows and an equality delete on k (keys new, kept and deleted)
    "EQ SELECT id AS k, 'e1' AS v FROM range(0, 430, 3) | SELECT id AS k FROM range(1, 60, 4)",
    "DELETE FROM {t} WHERE k % 17 = 0",
    "EQ SELECT id AS k, 'e2' AS v FROM range(0, 430, 9) | SELECT id AS k FROM range(2, 90, 6)",
]


@pytest.mark.parametrize("version", ["2", "3"])
def test_a_commit_read_from_its_files_equals_the_marked_read(
    spark: Any, warehouse: Path, version: str
) -> None:
    name = f"position_reads.t{version}"
    table = f"lw.{name}"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.position_reads")
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    mor = ", ".join(f"'write.{w}.mode' = 'merge-on-read'" for w in ("merge", "update", "delete"))
    spark.sql(
        f"CREATE TABLE {table} (k BIGINT, v STRING) USING iceberg "
        f"TBLPROPERTIES ('format-version' = '{version}', {mor})"
    )
    spark.range(0, 400).selectExpr("id AS k", "CAST(id AS STRING) AS v").repartition(3).writeTo(
        table
    ).append()
    first = spark.sql(f"SELECT snapshot_id FROM {table}.snapshots").collect()[0][0]
    for step in STEPS:
        if step.startswith("EQ "):
            rows, deleted = step[3:].split(" | ")
            upsert(spark, table, spark.sql(rows), spark.sql(deleted), "k")
        else:
            spark.sql(step.format(t=table, name=name))
    adapter = SparkAdapter(Output(catalog="lw", warehouse=str(warehouse)), spark=spark)
    relation = Relation("lw", "position_reads", f"t{version}")
    meta = adapter.table_meta(relation)
    assert meta is not None
    columns = ["k", "v"]
    commits = data_commits(meta, first, meta.current)
    # the compaction is skipped, the property changes commit nothing
    assert len(commits) == 8
    equality = [b for _, b in commits if equality_deletes_added(meta, b)]
    assert len(equality) == 2, equality
    for a, b in commits:
        both = (columns, columns)
        reads = {"marked": adapter._marked_parts(relation, meta, a, b, both)}
        if b not in equality:  # a commit with equality deletes is read by marking only
            reads["files"] = adapter._positional_parts(relation, meta, a, b, both)
        read: dict[str, Counter[tuple[Any, ...]]] = {}
        for name_, parts in reads.items():
            rows: Counter[tuple[Any, ...]] = Counter()
            for part, kind in parts:
                rows.update((k, v, kind) for k, v in part.select("k", "v").collect())
            read[name_] = rows
        assert read.get("files", read["marked"]) == read["marked"], (a, b)
        # against the table itself: what left it and what came into it (a copy-on-write
        # rewrite reads as its carried-over rows deleted and inserted again: they cancel)
        at = {
            s: Counter(tuple(r) for r in adapter._at(relation, s).select("k", "v").collect())
            for s in (a, b)
        }
        kinds = {
            kind: Counter({(k, v): n for (k, v, c), n in read["marked"].items() if c == kind})
            for kind in ("INSERT", "DELETE")
        }
        assert kinds["DELETE"] - kinds["INSERT"] == at[a] - at[b], (a, b)
        assert kinds["INSERT"] - kinds["DELETE"] == at[b] - at[a], (a, b)
        assert at[a] != at[b]
    # the old images with the key alone (what partial_update takes of a delete; the name as a
    # model may spell it): the same rows and kinds per commit, the other columns NULL where
    # the old images were read by position or marking (those paired by lineage are compared
    # whole, so they keep theirs)
    full = adapter.position_changes(relation, meta, first, meta.current)
    narrow = adapter.position_changes(relation, meta, first, meta.current, retracts=("K",))
    assert narrow.schema == full.schema

    def keys(frame: Any) -> Counter[tuple[Any, ...]]:
        return Counter(tuple(r) for r in frame.select("k", "_change_type", COMMIT).collect())

    assert keys(narrow) == keys(full)
    paired = {
        b for a, b in commits if adapter._paired(meta, b, adapter._files_between(relation, a, b)[2])
    }
    old = narrow.where("_change_type = 'DELETE'")
    kept = {r[0] for r in old.where("v IS NOT NULL").select(COMMIT).distinct().collect()}
    assert kept <= paired and old.where("v IS NULL").count() > 0
    assert full.where("_change_type = 'DELETE' AND v IS NULL").count() == 0
    adapter.unstage()


COW = ", ".join(f"'write.{w}.mode' = 'copy-on-write'" for w in ("merge", "update", "delete"))
COW_STEPS = [
    # updates (half of them to the value a row already holds), deletes and new keys at once
    "MERGE INTO {t} x USING (SELECT id AS k, CASE WHEN id % 2 = 0 THEN 'u1' "
    "ELSE CAST(id AS STRING) END AS v, id % 5 = 0 AS d FROM range(0, 460, 3)) u ON x.k = u.k "
    "WHEN MATCHED AND u.d THEN DELETE WHEN MATCHED THEN UPDATE SET v = u.v "
    "WHEN NOT MATCHED THEN INSERT (k, v) VALUES (u.k, u.v)",
    "UPDATE {t} SET v = NULL WHERE k % 7 = 0",
    "DELETE FROM {t} WHERE k < 100",  # removes a whole file and rewrites the others
    "UPDATE {t} SET v = v WHERE k % 4 = 0",  # rewrites rows unchanged: no change at all
]


@pytest.mark.parametrize("upgraded", [False, True])
def test_copy_on_write_commits_paired_by_row_lineage_equal_icebergs_changelog(
    spark: Any, warehouse: Path, upgraded: bool
) -> None:
    """A format-3 copy-on-write commit read from its files, its rows paired by row lineage
    (lakewide.spark.lineage_changes), gives the rows Iceberg's changelog gives for it: every
    commit, both reads (from the files, and marked). ``upgraded``: the rows were written
    before the table became format 3 (no ids on them): read through Iceberg's changelog."""
    name = f"position_reads.cow{int(upgraded)}"
    table = f"lw.{name}"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lw.position_reads")
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    version = "2" if upgraded else "3"
    spark.sql(
        f"CREATE TABLE {table} (k BIGINT, v STRING) USING iceberg "
        f"TBLPROPERTIES ('format-version' = '{version}', {COW})"
    )
    spark.range(0, 400).selectExpr("id AS k", "CAST(id AS STRING) AS v").repartition(3).writeTo(
        table
    ).append()
    if upgraded:
        spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('format-version' = '3')")
    first = spark.sql(f"SELECT snapshot_id FROM {table}.snapshots").collect()[0][0]
    for step in COW_STEPS:
        spark.sql(step.format(t=table))
    adapter = SparkAdapter(Output(catalog="lw", warehouse=str(warehouse)), spark=spark)
    relation = Relation("lw", "position_reads", f"cow{int(upgraded)}")
    meta = adapter.table_meta(relation)
    assert meta is not None and meta.format_version == 3
    commits = data_commits(meta, first, meta.current)
    assert len(commits) == len(COW_STEPS)
    for a, b in commits:
        view = f"cow_changes_{int(upgraded)}"
        spark.sql(
            f"CALL lw.system.create_changelog_view(table => '{name}', options => "
            f"map('start-snapshot-id', '{a}', 'end-snapshot-id', '{b}'), changelog_view => "
            f"'{view}')"
        )
        oracle = Counter(
            tuple(r) for r in spark.table(view).select("k", "v", "_change_type").collect()
        )
        for read in (adapter._positional_parts, adapter._marked_parts):
            rows: Counter[tuple[Any, ...]] = Counter()
            for part, kind in read(relation, meta, a, b, (["k", "v"], ["k", "v"])):
                rows.update((k, v, kind) for k, v in part.select("k", "v").collect())
            assert rows == oracle, (read.__name__, a, b)
        if b == commits[-1][1]:  # the unchanged rewrite: nothing changed
            assert not oracle
    adapter.unstage()
