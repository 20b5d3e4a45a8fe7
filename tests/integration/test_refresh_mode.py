"""refresh_mode: an incremental run reads its sources' changes or folds every source again
into the table's own history, whichever the summaries say costs less (``auto``), or as forced;
the rows and the offsets are those of the other path (lakewide.run.models.refresh_choice)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.state import read_cost
from tests.integration.conftest import ProjectRun, hadoop_project

pytestmark = pytest.mark.spark

DEDUP = """
{{{{ config(merge_engine='deduplicate', primary_key='k'{extra}) }}}}
SELECT k, v FROM {{{{ source('src', 'p') }}}}
"""
PARTIAL = """
{{ config(merge_engine='partial_update', primary_key='k', remove_record_on_delete=true) }}
SELECT k, v FROM {{ source('src', 'p') }}
"""
MODELS = {
    "dd_auto": DEDUP.format(extra=""),
    "dd_inc": DEDUP.format(extra=", refresh_mode='incremental'"),
    "dd_full": DEDUP.format(extra=", refresh_mode='full'"),
    "pu_auto": PARTIAL,
}


@pytest.fixture
def project(tmp_path: Path, spark: Any, warehouse: Path) -> ProjectRun:
    root = tmp_path / "refresh"
    hadoop_project(root, warehouse, "refresh_ns")
    src = "refresh_src"
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: src\n    schema: {src}\n    tables:\n      - name: p\n"
    )
    for name, sql in MODELS.items():
        (root / "models" / f"{name}.sql").write_text(sql)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{src}")
    spark.sql(
        f"CREATE TABLE lw.{src}.p (k INT, v INT) USING iceberg PARTITIONED BY (bucket(8, k)) "
        "TBLPROPERTIES ('write.merge.mode'='copy-on-write', 'write.delete.mode'='copy-on-write')"
    )
    return ProjectRun(root, spark, "refresh_ns", src)


def _source(project: ProjectRun) -> list[tuple]:
    return project.rows("p", schema=project.seed_schema)


def test_auto_refolds_when_every_file_changed_and_reads_a_few_changes(
    project: ProjectRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few KiB here: the least saving a re-fold must make is lowered to a byte."""
    monkeypatch.setattr(read_cost, "MIN_SAVING", 0)
    p = f"lw.{project.seed_schema}.p"
    project.sql(f"INSERT INTO {p} SELECT id, id FROM range(1, 41)")
    assert {r.plan for r in project.run().values()} == {"bootstrap"}

    # every file rewritten (copy-on-write): reading the changelog costs more than a re-fold
    project.sql(f"UPDATE {p} SET v = v + 100")
    project.sql(f"DELETE FROM {p} WHERE k = 3")
    results = project.run()
    plans = {name: r.plan for name, r in results.items()}
    assert plans == {
        "dd_auto": "refold",
        "dd_full": "refold",
        "dd_inc": "incremental",
        "pu_auto": "incremental",
    }
    assert results["dd_auto"].refresh.startswith("rebuilt from every source: it reads ~")
    assert results["dd_auto"].message == results["dd_auto"].refresh
    assert "a rebuild could give other rows" in results["pu_auto"].refresh
    assert {r["mode"] for r in results["dd_auto"].ranges} == {"full"}
    for name in MODELS:
        assert project.rows(name) == _source(project), name

    # one key in one bucket: a few files, the changes are cheaper
    project.sql(f"UPDATE {p} SET v = 0 WHERE k = 7")
    results = project.run()
    assert results["dd_auto"].plan == "incremental"
    assert results["dd_auto"].refresh.startswith("read only what changed (~")
    assert results["dd_full"].plan == "refold"
    for name in MODELS:
        assert project.rows(name) == _source(project), name

    # nothing new: the re-fold's commit carried the offsets
    results = project.run()
    assert {r["mode"] for res in results.values() for r in res.ranges} == {"none"}
    assert results["dd_full"].plan == "incremental" and not results["dd_full"].commits
