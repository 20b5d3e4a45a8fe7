"""The width benchmark's projects: S sources of C own columns (and N shared ones), the models
of every merge engine written with ``lakewide.union_sources``, and the FULL OUTER JOIN that
rebuilds the same table.

Source ``s{i}`` has ``k``, ``seq`` (1000 x round + i: no two sources tie), ``s{i}_seq`` (the
same value, its sequence group's field), its own columns ``s{i}_c{j}`` and the shared columns
``sh{j}`` (fed by every source). Values are hashes of (key, column, round, seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import generate

#: engine -> what it is (the keys of ``--engines``)
ENGINES = {
    "pu_seq": "partial_update, sequence_field",
    "pu_groups": "partial_update, a sequence group per source",
    "agg": "aggregation, sum/max/min/last_non_null_value per column",
    "dedup": "deduplicate, sequence_field",
    "first": "first_row (the first arrived row; ``seq`` a plain column)",
}
AGGREGATES = ("sum", "max", "min", "last_non_null_value")
# Spark aggregate of one source's rows giving each aggregate's per-source value
PER_SOURCE = {"sum": "SUM({c})", "max": "MAX({c})", "min": "MIN({c})"}
LAST = "MAX_BY({c}, seq)"


@dataclass(frozen=True)
class Shape:
    """S sources x C own columns each, plus N columns shared by every source."""

    sources: int
    columns: int = 16
    shared: int = 0

    @classmethod
    def parse(cls, text: str) -> Shape:
        """``8`` (x16), ``4x250`` or ``8x16+4`` (4 shared columns)."""
        base, _, shared = text.partition("+")
        sources, _, columns = base.partition("x")
        return cls(int(sources), int(columns or 16), int(shared or 0))

    @property
    def name(self) -> str:
        return f"{self.sources}x{self.columns}" + (f"+{self.shared}" if self.shared else "")

    @property
    def width(self) -> int:
        """The wide table's value columns."""
        return self.sources * self.columns + self.shared

    def own(self, i: int) -> list[str]:
        return [f"s{i}_c{j}" for j in range(self.columns)]

    def shared_columns(self) -> list[str]:
        return [f"sh{j}" for j in range(self.shared)]


def aggregate_of(j: int) -> str:
    return AGGREGATES[j % len(AGGREGATES)]


def source_frame(
    spark: Any, shape: Shape, i: int, keys: int, round_no: int, fraction: float, seed: int = 7
) -> Any:
    """Source ``i``'s rows of a round: every key (round 0) or ``fraction`` of them."""
    from pyspark.sql import functions as F

    frame = spark.range(keys).withColumnRenamed("id", "k")
    if fraction < 1.0:
        bucket = F.abs(F.hash(F.col("k"), F.lit(round_no), F.lit(i), F.lit(seed))) % 10_000
        frame = frame.where(bucket < int(fraction * 10_000))
    seq = F.lit(1000 * round_no + i).cast("int")
    values = [
        (F.abs(F.hash(F.col("k"), F.lit(c), F.lit(round_no), F.lit(i), F.lit(seed))) % 1_000_000)
        .cast("bigint")
        .alias(c)
        for c in [*shape.own(i), *shape.shared_columns()]
    ]
    return frame.select("k", seq.alias("seq"), seq.alias(f"s{i}_seq"), *values)


def sources_yaml(shape: Shape) -> str:
    """models/sources.yml: each source's own and shared columns with their data_type."""
    tables = []
    for i in range(shape.sources):
        columns = "".join(
            f"          - {{name: {c}, data_type: bigint}}\n"
            for c in [*shape.own(i), *shape.shared_columns()]
        )
        tables.append(f"      - name: s{i}\n        columns:\n{columns}")
    return "sources:\n  - name: bench\n    schema: bench\n    tables:\n" + "".join(tables)


_TABLES = (
    "{% set tables = [] %}{% for i in range(S) %}"
    "{% set _ = tables.append(source('bench', 's' ~ i)) %}{% endfor %}\n"
)


def model(engine: str, shape: Shape) -> str:
    """The engine's model over every source, written with ``lakewide.union_sources``."""
    head = f"{{% set S = {shape.sources} %}}{{% set C = {shape.columns} %}}\n"
    union = "{{ lakewide.union_sources(tables, key='k', sequence='seq') }}\n"
    if engine == "pu_seq":
        config = "merge_engine='partial_update', primary_key='k', sequence_field='seq'"
        return head + f"{{{{ config({config}) }}}}\n" + _TABLES + union
    if engine == "dedup":
        config = "merge_engine='deduplicate', primary_key='k', sequence_field='seq'"
        return head + f"{{{{ config({config}) }}}}\n" + _TABLES + union
    if engine == "first":
        config = "merge_engine='first_row', primary_key='k'"
        return head + f"{{{{ config({config}) }}}}\n" + _TABLES + union
    if engine == "agg":
        functions = ", ".join(f"'{f}'" for f in AGGREGATES)
        return (
            head + f"{{% set F = [{functions}] %}}{{% set aggs = {{}} %}}"
            "{% for i in range(S) %}{% for j in range(C) %}"
            "{% set _ = aggs.update({('s' ~ i ~ '_c' ~ j): F[j % 4]}) %}"
            "{% endfor %}{% endfor %}"
            f"{{% for j in range({shape.shared}) %}}"
            "{% set _ = aggs.update({('sh' ~ j): 'sum'}) %}{% endfor %}\n"
            "{{ config(merge_engine='aggregation', primary_key='k', sequence_field='seq', "
            "aggregates=aggs) }}\n" + _TABLES + union
        )
    assert engine == "pu_groups", engine
    # one group per source over its own columns (a shared column can be in one group only:
    # left out of this engine's model)
    return head + (
        "{% set tables = [] %}{% set groups = {} %}{% set types = {} %}"
        "{% for i in range(S) %}{% set own = [] %}"
        "{% for j in range(C) %}{% set _ = own.append('s' ~ i ~ '_c' ~ j) %}{% endfor %}"
        "{% set _ = groups.update({('s' ~ i ~ '_seq'): own}) %}"
        "{% set _ = types.update({('s' ~ i ~ '_seq'): 'INT'}) %}"
        "{% set _ = tables.append({'relation': source('bench', 's' ~ i), "
        "'columns': own + ['s' ~ i ~ '_seq']}) %}{% endfor %}\n"
        "{{ config(merge_engine='partial_update', primary_key='k', sequence_groups=groups) }}\n"
        "{{ lakewide.union_sources(tables, key='k', types=types) }}\n"
    )


def _latest(parts: list[str], column: str) -> str:
    """The value of ``column`` from the source with the newest ``seq`` of a key."""
    structs = ", ".join(
        f"IF(t{i}.seq IS NULL, NULL, STRUCT(t{i}.seq, t{i}.{column}))" for i in range(len(parts))
    )
    return f"GREATEST({structs}).col2"


def join_select(engine: str, shape: Shape, namespace: str = "lw.bench") -> str:
    """Every source folded per key, FULL OUTER JOINed: the engine's table as one SELECT."""
    n, shared = shape.sources, shape.shared_columns()
    parts = []
    for i in range(n):
        own = shape.own(i)
        if engine == "agg":
            cols = [
                (PER_SOURCE.get(aggregate_of(j), LAST)).format(c=c) + f" AS {c}"
                for j, c in enumerate(own)
            ] + [f"SUM({c}) AS {c}" for c in shared]
        else:  # first_row: a source's rows arrive in seq order
            by = "MIN_BY" if engine == "first" else "MAX_BY"
            cols = [f"{by}({c}, seq) AS {c}" for c in own + shared]
        newest_of = "MIN(seq)" if engine == "first" else "MAX(seq)"
        parts.append(
            f"(SELECT k, {', '.join(cols)}, {newest_of} AS seq FROM {namespace}.s{i} "
            f"GROUP BY k) AS t{i}"
        )
    sql, key = generate.full_outer_joins(parts)
    newest = "GREATEST(" + ", ".join(f"t{i}.seq" for i in range(n)) + ")"
    if engine == "pu_groups":
        out = [f"t{i}.{c}" for i in range(n) for c in shape.own(i)]
        out += [f"t{i}.seq AS s{i}_seq" for i in range(n)]
        return f"SELECT {key} AS k, {', '.join(out)} FROM {sql}"
    if engine == "first":  # the lowest source's first row wins whole
        first = "LEAST(" + ", ".join(f"IF(t{i}.k IS NULL, NULL, {i})" for i in range(n)) + ")"

        def of_first(c: str) -> str:
            return f"CASE {first} " + " ".join(f"WHEN {i} THEN t{i}.{c}" for i in range(n)) + " END"

        out = [f"IF({first} = {i}, t{i}.{c}, NULL) AS {c}" for i in range(n) for c in shape.own(i)]
        out += [f"{of_first(c)} AS {c}" for c in [*shared, "seq"]]
        return f"SELECT {key} AS k, {', '.join(out)} FROM {sql}"
    if engine == "dedup":  # the newest row wins whole: other sources' columns NULL
        out = [
            f"IF(t{i}.seq = {newest}, t{i}.{c}, NULL) AS {c}"
            for i in range(n)
            for c in shape.own(i)
        ]
    else:
        out = [f"t{i}.{c}" for i in range(n) for c in shape.own(i)]
    if engine == "agg":
        out += [" + ".join(f"COALESCE(t{i}.{c}, 0)" for i in range(n)) + f" AS {c}" for c in shared]
    else:
        out += [f"{_latest(parts, c)} AS {c}" for c in shared]
    return f"SELECT {key} AS k, {', '.join(out)}, {newest} AS seq FROM {sql}"


def write_project(root: Path, warehouse: Path, shape: Shape, engines: list[str]) -> Path:
    """A lakewide project over the benchmark warehouse with one model per engine, its
    sources declared with their columns."""
    models = {f"wide_{engine}": model(engine, shape) for engine in engines}
    generate.write_project(root, warehouse, shape.sources, models)
    (root / "models" / "sources.yml").write_text(sources_yaml(shape))
    return root
