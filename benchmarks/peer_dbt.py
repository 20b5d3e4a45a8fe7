"""dbt-spark as a peer: the incremental model a dbt user writes for a wide table.

    pip install -e '.[bench]'     # dbt-core 1.10 and dbt-spark[session], kept out of lakewide

The model is ``materialized='incremental'``, ``incremental_strategy='merge'``,
``unique_key='k'``, ``file_format='iceberg'``: the FULL OUTER JOIN of the sources' latest rows,
where ``is_incremental()`` keeps each source's rows newer than the table's highest sequence.
dbt-spark's ``session`` method takes the running SparkSession (``getOrCreate``), so dbt runs in
this process through ``dbtRunner``, on the benchmark's session. Its semantics differ from
lakewide's and the JOIN's, and the benchmark counts the keys where they do: a key changed in
one source gets NULL in the other sources' columns (dbt's MERGE replaces the whole row), and a
late record (a sequence older than the table's highest) is never read.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import generate
import peer_systems

MISSING = "dbt-spark is not installed (pip install -e '.[bench]'): the dbt_spark peer is skipped"


def available() -> bool:
    """Whether dbt-core and dbt-spark can be imported here."""
    try:
        return all(importlib.util.find_spec(m) for m in ("dbt.cli", "dbt.adapters.spark"))
    except ModuleNotFoundError:  # no dbt package at all
        return False


def model_sql(sources: int) -> str:
    """The incremental model: per source the latest row per key (only the new rows on an
    incremental run), FULL OUTER JOINed on the key."""
    parts = []
    for i in range(sources):
        cols = ", ".join(f"MAX_BY({c}, seq) AS {c}" for c in generate.source_columns(i))
        parts.append(
            f"(SELECT k, {cols}, MAX(seq) AS seq FROM {{{{ source('bench', 's{i}') }}}}\n"
            "{% if is_incremental() %}"
            " WHERE seq > (SELECT MAX(seq) FROM {{ this }}) {% endif %}\n"
            f"GROUP BY k) AS t{i}"
        )
    sql, key = generate.full_outer_joins(parts, "\n")
    columns = ", ".join(f"t{i}.{c}" for i in range(sources) for c in generate.source_columns(i))
    seqs = ", ".join(f"t{i}.seq" for i in range(sources))
    config = (
        "materialized='incremental', incremental_strategy='merge', unique_key='k', "
        "file_format='iceberg'"
    )
    return (
        f"{{{{ config({config}) }}}}\n"
        f"SELECT {key} AS k, {columns}, GREATEST({seqs}) AS seq FROM {sql}\n"
    )


def write_project(root: Path, sources: int, schema: str) -> Path:
    """A dbt project (and its profile, ``method: session``) with the one model ``dbt_spark``."""
    (root / "models").mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(
        "name: peers\nversion: '1.0'\nconfig-version: 2\nprofile: peers\nmodel-paths: [models]\n"
    )
    (root / "profiles.yml").write_text(
        "peers:\n  target: dev\n  outputs:\n    dev:\n      type: spark\n"
        f"      method: session\n      host: localhost\n      schema: {schema}\n"
    )
    tables = "".join(f"      - name: s{i}\n" for i in range(sources))
    (root / "models" / "sources.yml").write_text(
        f"version: 2\nsources:\n  - name: bench\n    schema: bench\n    tables:\n{tables}"
    )
    (root / "models" / "dbt_spark.sql").write_text(model_sql(sources))
    return root


class DbtPeer:
    """``dbt run`` of the incremental model, in this process and session (``--full-refresh``
    for the initial build). dbt resolves ``schema.table`` in the session's current catalog: the
    Iceberg catalog ``catalog`` is made current for the run and the previous one restored."""

    hidden: list[str] = []

    def __init__(self, root: Path, catalog: str, schema: str, sources: int) -> None:
        self.project = write_project(root, sources, schema)
        self.catalog = catalog
        self.table = f"{catalog}.{schema}.dbt_spark"

    def build(self, spark: Any) -> None:
        self._dbt(spark, "--full-refresh")

    def step(self, spark: Any, changed: list[int], round_no: int) -> None:
        self._dbt(spark)

    def maintain(self, spark: Any) -> None:
        """Iceberg's compaction, as for the hand-written MERGEs (dbt has none of its own)."""
        peer_systems.maintain_table(spark, self.table, "iceberg", {})

    def _dbt(self, spark: Any, *extra: str) -> None:
        from dbt.cli.main import dbtRunner

        before = spark.catalog.currentCatalog()
        spark.catalog.setCurrentCatalog(self.catalog)
        try:
            done = dbtRunner().invoke(
                ["--quiet", "run", "--project-dir", str(self.project)]
                + ["--profiles-dir", str(self.project), "--select", "dbt_spark", *extra]
            )
        finally:
            spark.catalog.setCurrentCatalog(before)
        if not done.success:
            raise SystemExit(f"dbt run failed: {done.exception or done.result}")
