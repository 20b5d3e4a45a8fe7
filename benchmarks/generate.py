"""Deterministic benchmark data and projects: K keys, S sources of C columns each.

Source ``s{i}`` has columns ``k``, ``seq`` and ``s{i}_c{j}``; every value is a hash of
(key, column, round), so a given seed and size always produce the same tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLUMNS = 4


def source_table(index: int) -> str:
    """Source ``index``'s Iceberg table (a run with deletes: source ``sources`` is the delete
    log, ``delete_frame``'s rows)."""
    return f"lw.bench.s{index}"


def source_columns(index: int) -> list[str]:
    return [f"s{index}_c{j}" for j in range(COLUMNS)]


def source_frame(
    spark: Any,
    index: int,
    keys: int,
    round_no: int,
    fraction: float = 1.0,
    seed: int = 7,
    clustered: bool = False,
    seq: int | None = None,
) -> Any:
    """One round of source ``index`` as a DataFrame: all keys (round 0) or ``fraction`` of them.

    ``seq``: the rows' sequence (default: the round); a late record's is older than the round.

    ``clustered``: the changed keys are one contiguous key range (recent keys, a day of
    orders) instead of being spread uniformly over the whole key space.
    """
    from pyspark.sql import functions as F

    frame = spark.range(keys).withColumnRenamed("id", "k")
    if clustered:
        start = (round_no * 7919 * keys // 100) % max(1, keys - int(fraction * keys))
        frame = frame.where((F.col("k") >= start) & (F.col("k") < start + int(fraction * keys)))
    elif fraction < 1.0:
        bucket = F.abs(F.hash(F.col("k"), F.lit(round_no), F.lit(index), F.lit(seed))) % 10_000
        frame = frame.where(bucket < int(fraction * 10_000))
    values = [
        (F.abs(F.hash(F.col("k"), F.lit(c), F.lit(round_no), F.lit(seed))) % 1_000_000)
        .cast("bigint")
        .alias(c)
        for c in source_columns(index)
    ]
    sequence = F.lit(round_no if seq is None else seq).cast("int").alias("seq")
    return frame.select("k", sequence, *values)


def delete_frame(spark: Any, keys: int, round_no: int, fraction: float, seq: int) -> Any:
    """One round of the delete log (a CDC log's ``-D`` rows: ``k``, ``seq``, ``op``):
    ``fraction`` of the keys, spread over the key space (none: an empty round)."""
    from pyspark.sql import functions as F

    bucket = F.abs(F.hash(F.col("k"), F.lit(round_no), F.lit("deletes"))) % 10_000
    frame = spark.range(keys).withColumnRenamed("id", "k").where(bucket < int(fraction * 10_000))
    return frame.select("k", F.lit(seq).cast("int").alias("seq"), F.lit("-D").alias("op"))


def write_source(spark: Any, index: int, keys: int, round_no: int, **options: Any) -> int:
    """Append one round of source ``index`` (``source_frame`` with ``options``) to its table
    (``source_table``)."""
    frame = source_frame(spark, index, keys, round_no, **options)
    append(spark, frame, source_table(index))
    return int(frame.count()) if options.get("fraction", 1.0) < 1.0 else keys


def append(spark: Any, frame: Any, table: str) -> None:
    """Append ``frame`` to the Iceberg ``table``, created by the first write."""
    if spark.catalog.tableExists(table):
        frame.writeTo(table).append()
    else:
        frame.writeTo(table).using("iceberg").create()


#: the delete log's model config: its ``op`` is the row kind, and a ``-D`` removes the whole row
DELETES_CONFIG = ", row_kind_column='op', remove_record_on_delete=true"


def wide_model(sources: int, config: str, source: str = "bench", deletes: bool = False) -> str:
    """The UNION ALL model: each source owns its own columns of the wide table. ``deletes``:
    ``s{sources}`` is a delete log (``delete_frame``) whose rows remove the whole row."""
    everything = [c for i in range(sources) for c in source_columns(i)]
    branches = []
    for i in range(sources + deletes):
        mine = set(source_columns(i))
        cols = [c if c in mine else f"CAST(NULL AS BIGINT) AS {c}" for c in everything]
        kind = (", op" if i == sources else ", CAST(NULL AS STRING) AS op") if deletes else ""
        branches.append(
            f"SELECT k, {', '.join(cols)}, seq{kind} FROM {{{{ source('{source}', 's{i}') }}}}"
        )
    config += DELETES_CONFIG if deletes else ""
    return f"{{{{ config({config}) }}}}\n" + "\nUNION ALL\n".join(branches) + "\n"


def full_outer_joins(parts: list[str], sep: str = " ") -> tuple[str, str]:
    """``parts`` (``(...) AS t0``, ``(...) AS t1``, ...) chained by FULL OUTER JOIN on ``k``, and
    the chain's key: each join's ``ON t{i}.k = COALESCE(t0.k, ..., t{i-1}.k)``, flat as a person
    writes it. (Nested, ``COALESCE(COALESCE(t0.k, t1.k), t2.k)``, Spark's subexpression
    elimination grows exponentially with the depth: at 64 sources one shuffle's key projection
    took over 1,000 s of CPU to generate.)"""
    sql = parts[0]
    for i in range(1, len(parts)):
        sql += f"{sep}FULL OUTER JOIN {parts[i]} ON t{i}.k = {_first_key(i)}"
    return sql, _first_key(len(parts))


def _first_key(n: int) -> str:
    """The first non-NULL ``k`` of ``t0`` .. ``t{n-1}``."""
    return "t0.k" if n == 1 else "COALESCE(" + ", ".join(f"t{i}.k" for i in range(n)) + ")"


def join_select(
    catalog: str, namespace: str, sources: int, source_seqs: bool = False, deletes: bool = False
) -> str:
    """Latest row per key per source, FULL OUTER JOINed: the wide table as one SELECT.

    ``source_seqs``: also each source's own sequence as ``s{i}_seq`` (what a hand-written
    column-scoped MERGE compares a source's new rows with).

    ``deletes``: ``s{sources}`` is the delete log; a source's rows not newer than the key's last
    delete are left out (the delete removed the row they set; a tie goes to the delete, the
    model's last branch), so a key deleted after its last change has no row.
    """
    parts = []
    for i in range(sources):
        cols = ", ".join(f"MAX_BY({c}, s.seq) AS {c}" for c in source_columns(i))
        rows = f"{catalog}.{namespace}.s{i} s"
        if deletes:
            rows += (
                f" LEFT JOIN (SELECT k, MAX(seq) AS gone FROM {catalog}.{namespace}.s{sources} "
                "GROUP BY k) d ON s.k = d.k WHERE d.gone IS NULL OR s.seq > d.gone"
            )
        parts.append(f"(SELECT s.k, {cols}, MAX(s.seq) AS seq FROM {rows} GROUP BY s.k) AS t{i}")
    sql, key = full_outer_joins(parts)
    columns = ", ".join(f"t{i}.{c}" for i in range(sources) for c in source_columns(i))
    seqs = ", ".join(f"t{i}.seq" for i in range(sources))
    own = "".join(f", t{i}.seq AS s{i}_seq" for i in range(sources)) if source_seqs else ""
    return f"SELECT {key} AS k, {columns}, GREATEST({seqs}) AS seq{own} FROM {sql}"


def join_rebuild(
    catalog: str, namespace: str, sources: int, target: str, deletes: bool = False
) -> str:
    """The baseline a user would write: latest row per key per source, FULL OUTER JOINed."""
    return f"CREATE OR REPLACE TABLE {target} USING iceberg AS " + join_select(
        catalog, namespace, sources, deletes=deletes
    )


def write_project(root: Path, warehouse: Path, sources: int, models: dict[str, str]) -> Path:
    """A lakewide project over the benchmark warehouse with the given models (only those), its
    sources ``s0`` .. ``s{sources - 1}``."""
    for stale in (root / "models").glob("*.sql"):
        stale.unlink()
    (root / "models").mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bench"\n\n[tool.lakewide]\nprofile = "bench"\n'
    )
    (root / "profiles.yml").write_text(
        "bench:\n  target: dev\n  outputs:\n    dev:\n      master: local[2]\n"
        f"      catalog: lw\n      catalog_type: hadoop\n      warehouse: {warehouse}\n"
        "      namespace: wide\n      spark_conf:\n        spark.driver.memory: 6g\n"
    )
    tables = "".join(f"      - name: s{i}\n" for i in range(sources))
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: bench\n    schema: bench\n    tables:\n{tables}"
    )
    for name, sql in models.items():
        (root / "models" / f"{name}.sql").write_text(sql)
    return root
