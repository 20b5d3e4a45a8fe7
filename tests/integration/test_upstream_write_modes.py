"""Property tests: sources kept as CDC mirrors (updated in place by MERGE) in each write mode.

Two source tables ``p (k, v)`` and ``q (k, w)`` are mirrors: before each run, one ``MERGE INTO``
per source inserts new keys, updates existing ones in place and deletes keys (a deleted key
leaves both sources in the same run, as an entity deleted upstream), the change sequence drawn
by hypothesis (keys 1-4, 2-4 runs). Each example writes the sources in one mode:

* ``cow``: format v2, copy-on-write (read through Iceberg's changelog);
* ``cow_v3``: format v3, copy-on-write (each commit's files read, rows paired by row lineage,
  lakewide.spark.lineage_changes);
* ``mor_v2``: format v2, merge-on-read: position delete files (read by row position,
  lakewide.spark.position_changes);
* ``mor_v3``: format v3, merge-on-read: deletion vectors (read by row position); the delete
  files' formats are checked in the ``delete_files`` metadata table;
* ``eq``: format v2, kept as Flink's upsert sink keeps a table: each run one commit of the new
  rows and an equality delete file on ``k`` (tests/support/equality_upsert.py; read with Iceberg's
  ``_deleted`` column, the only read that sees equality deletes).

A run may also compact ``p`` (``rewrite_data_files``, a ``replace`` snapshot) between its
upserts and its deletes, so a merge-on-read range has a compaction inside it.

One project holds one model per engine over the mirrors. After every incremental run each
model must equal the plain-Python expectation (the row kinds of docs/concepts/exactly-once.md);
where the result is a function of the upstream's current rows (``REBUILT``) that expectation
is the upstream's current rows, and after the last run the model must equal, row by row, the
same model rebuilt by ``--full-refresh`` (a twin project over the same sources; one rebuild per
change sequence, by the first mode that meets it, as the rebuild reads the current rows, the
same in every mode; the long profile rebuilds in every mode). A run's models run concurrently
(``--threads``); their rows are read by one Spark query per run:

* ``pu``: partial_update of ``p`` and ``q`` with ``remove_record_on_delete``;
* ``total``: aggregation, ``sum`` (retracts) over both sources;
* ``top``: aggregation, ``max`` (cannot retract: retracts, deletes included, are dropped),
  over both sources: the largest value a key ever held; the rebuild sees only current rows;
* ``dd``: deduplicate over ``p``;
* ``dd2``: deduplicate over ``p`` and ``q``: ``q``'s row where ``q`` has the key (the
  higher source's record is the last one), else ``p``'s (its batch folded per source and put
  together per key: lakewide.compiler.folds.prefold_rows);
* ``first``: first_row over ``p``: the first value a key ever had (first_row drops retracts);
* ``even``: partial_update of ``p``'s rows with an even value, ``remove_record_on_delete``:
  the rows the filter keeps, as the branch sees its changes (a row updated to an odd value
  leaves: its old image passes the filter, its new one does not, a delete). The filter reads
  the old images, so they keep ``v`` where partial_update needs only their key
  (``retract_columns``).

The ``COMPACTED`` example in every mode, and two generated ones per mode in the long profile
(``LW_SOAK=long``, about 5 minutes in all on 2 loaded cores; tests.support.suite_profile),
shrinking off (a Spark example shrinks for minutes). The default run has ``COMPACTED`` alone:
measured with coverage.py on this file, one generated example per mode besides it covered no
line of ``lakewide/`` that ``COMPACTED`` does not (6,055 lines either way), for 216 s against
111 s.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from tests.integration.conftest import ProjectRun, hadoop_project, null_first
from tests.integration.test_properties import _examples
from tests.support.equality_upsert import upsert
from tests.support.suite_profile import long_profile

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_counter = itertools.count(1)
KEYS = st.integers(1, 4)
VALUES = st.integers(0, 9)

MODES = {
    "cow": ("2", "copy-on-write"),
    "cow_v3": ("3", "copy-on-write"),
    "mor_v2": ("2", "merge-on-read"),
    "mor_v3": ("3", "merge-on-read"),
    "eq": ("2", "merge-on-read"),
}
#: how a run reads a source changed by MERGE in each mode (docs/concepts/exactly-once.md);
#: a MERGE that only inserts commits an append (``incremental``)
READ = {
    "cow": "changelog",
    "cow_v3": "positions",
    "mor_v2": "positions",
    "mor_v3": "positions",
    "eq": "positions",
}

MODELS = {
    "pu": """
{{ config(merge_engine='partial_update', primary_key='k', remove_record_on_delete=true) }}
SELECT k, v, CAST(NULL AS INT) AS w FROM {{ source('src', 'p') }}
UNION ALL
SELECT k, CAST(NULL AS INT), w FROM {{ source('src', 'q') }}
""",
    "total": """
{{ config(merge_engine='aggregation', primary_key='k', aggregates={'v': 'sum'}) }}
SELECT k, v FROM {{ source('src', 'p') }}
UNION ALL
SELECT k, w FROM {{ source('src', 'q') }}
""",
    "top": """
{{ config(merge_engine='aggregation', primary_key='k', aggregates={'v': 'max'}) }}
SELECT k, v FROM {{ source('src', 'p') }}
UNION ALL
SELECT k, w FROM {{ source('src', 'q') }}
""",
    "dd": """
{{ config(merge_engine='deduplicate', primary_key='k') }}
SELECT k, v FROM {{ source('src', 'p') }}
""",
    "dd2": """
{{ config(merge_engine='deduplicate', primary_key='k') }}
SELECT k, v, CAST(NULL AS INT) AS w FROM {{ source('src', 'p') }}
UNION ALL
SELECT k, CAST(NULL AS INT), w FROM {{ source('src', 'q') }}
""",
    "first": """
{{ config(merge_engine='first_row', primary_key='k') }}
SELECT k, v FROM {{ source('src', 'p') }}
""",
    "even": """
{{ config(merge_engine='partial_update', primary_key='k', remove_record_on_delete=true) }}
SELECT k, v FROM {{ source('src', 'p') }} WHERE v % 2 = 0
""",
}
#: a run's models are independent: they run concurrently, each on its own session (``lakewide
#: run --threads``), which cuts a run's wall time (the models' statements are small Spark jobs)
THREADS = len(MODELS)
#: models whose result is a function of the upstream's current rows: equal to the rebuild
REBUILT = ("pu", "total", "dd", "dd2", "even")

SETTINGS = dict(
    deadline=None,
    derandomize=True,
    print_blob=True,
    # shrinking a Spark example takes minutes; generated examples in the long profile only
    phases=[Phase.explicit, Phase.generate] if long_profile() else [Phase.explicit],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# ---------------------------------------------------------------------------------------------
# the change sequence and the expected tables


@dataclass
class Change:
    """One run's upstream changes: new values per source, keys deleted from both sources."""

    p: dict[int, int]
    q: dict[int, int]
    deleted: frozenset[int]
    compact: bool = False  # compact p between its upserts and its deletes


@st.composite
def changes(draw: Any) -> list[Change]:
    """2-4 runs: the first inserts every key in both sources; each later one changes at least
    one kept key of each source in place and upserts others, and may delete keys (one
    survives). Even hypothesis' smallest example updates in place."""
    state: list[dict[int, int]] = [{}, {}]
    runs: list[Change] = []
    for n in range(draw(st.integers(2, 4))):
        present = sorted(set(state[0]) | set(state[1]))
        deleted: frozenset[int] = frozenset()
        if len(present) > 1:
            deleted = frozenset(draw(st.sets(st.sampled_from(present), max_size=len(present) - 1)))
        upserts = []
        for old in state:
            if n == 0:
                upserts.append({k: draw(VALUES) for k in range(1, 5)})
                continue
            new = draw(st.dictionaries(KEYS, VALUES, max_size=3))
            kept = sorted(set(old) - deleted)
            if kept:  # an update in place that changes the value
                k = draw(st.sampled_from(kept))
                new[k] = (old[k] + 1 + draw(st.integers(0, 8))) % 10
            upserts.append({k: v for k, v in new.items() if k not in deleted})
        runs.append(Change(upserts[0], upserts[1], deleted, n > 0 and draw(st.booleans())))
        for old, new in zip(state, upserts, strict=True):
            for k in deleted:
                old.pop(k, None)
            old.update(new)
    return runs


@dataclass
class Expected:
    """The mirrors' current rows and each model's expected rows after the runs so far."""

    p: dict[int, int] = field(default_factory=dict)
    q: dict[int, int] = field(default_factory=dict)
    top: dict[int, int] = field(default_factory=dict)
    first: dict[int, int] = field(default_factory=dict)

    def apply(self, change: Change) -> None:
        for k in change.deleted:
            self.p.pop(k, None)
            self.q.pop(k, None)
        for k in set(change.p) | set(change.q):
            new = [x for x in (change.p.get(k), change.q.get(k)) if x is not None]
            self.top[k] = max([*new, *([self.top[k]] if k in self.top else [])])
        for k, v in change.p.items():
            self.first.setdefault(k, v)  # deletes and updates dropped
        self.p.update(change.p)
        self.q.update(change.q)

    def rows(self, model: str) -> list[tuple]:
        keys = sorted(set(self.p) | set(self.q))
        if model == "pu":
            return [(k, self.p.get(k), self.q.get(k)) for k in keys]
        if model == "total":
            return [(k, self.p.get(k, 0) + self.q.get(k, 0)) for k in keys]
        if model == "dd":
            return sorted(self.p.items())
        if model == "dd2":
            return [(k, None, self.q[k]) if k in self.q else (k, self.p[k], None) for k in keys]
        if model == "even":
            return sorted((k, v) for k, v in self.p.items() if v % 2 == 0)
        return sorted(getattr(self, model).items())


#: an update, a compaction and a delete in one range, then an update and a delete after it
COMPACTED = [
    Change({k: k for k in range(1, 5)}, {k: 10 * k for k in range(1, 5)}, frozenset()),
    Change({1: 5, 2: 6}, {2: 7}, frozenset({3}), compact=True),
    Change({2: 8}, {1: 9}, frozenset({4})),
]


# ---------------------------------------------------------------------------------------------
# the mirrors and the two projects


def _project(root: Path, spark: Any, warehouse: Path, src: str, models: list[str]) -> ProjectRun:
    namespace = f"{root.name}_ns"
    hadoop_project(root, warehouse, namespace)
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: src\n    schema: {src}\n    tables:\n      - name: p\n      - name: q\n"
    )
    for name in models:
        (root / "models" / f"{name}.sql").write_text(MODELS[name])
    return ProjectRun(root, spark, namespace, src)


def _create_mirrors(spark: Any, src: str, mode: str) -> None:
    version, write = MODES[mode]
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{src}")
    for table, column in (("p", "v"), ("q", "w")):
        spark.sql(
            f"CREATE TABLE lw.{src}.{table} (k INT, {column} INT) USING iceberg TBLPROPERTIES ("
            f"'format-version'='{version}', 'write.merge.mode'='{write}', "
            f"'write.update.mode'='{write}', 'write.delete.mode'='{write}')"
        )


def _merge(spark: Any, src: str, table: str, column: str, change: Change, mode: str) -> None:
    """One MERGE per source: upserts of the run's new values, deletes of its deleted keys;
    ``p`` of a compacting run: its upserts, a compaction, then its deletes. ``eq``: one
    equality-delete upsert commit instead of each MERGE."""
    upserts = [(k, v, "U") for k, v in sorted(getattr(change, table).items())]
    deletes = [(k, None, "D") for k in sorted(change.deleted)]
    if mode == "eq":
        _write = _equality_rows
    else:
        _write = _merge_rows
    if table == "p" and change.compact:
        _write(spark, src, table, column, upserts)
        spark.sql(
            f"CALL lw.system.rewrite_data_files(table => '{src}.{table}', "
            "options => map('rewrite-all', 'true'))"
        )
        _write(spark, src, table, column, deletes)
        return
    _write(spark, src, table, column, upserts + deletes)


def _equality_rows(
    spark: Any, src: str, table: str, column: str, rows: list[tuple[int, int | None, str]]
) -> None:
    """``_merge_rows`` as Flink's upsert sink writes it: new rows plus an equality delete."""
    upserts = [(k, v) for k, v, op in rows if op == "U"]
    deleted = [(k,) for k, _, op in rows if op == "D"]
    upsert(
        spark,
        f"lw.{src}.{table}",
        spark.createDataFrame(upserts, f"k INT, {column} INT") if upserts else None,
        spark.createDataFrame(deleted, "k INT") if deleted else None,
        "k",
    )


def _merge_rows(
    spark: Any, src: str, table: str, column: str, rows: list[tuple[int, int | None, str]]
) -> None:
    if not rows:
        return
    values = ", ".join(f"({k}, {'NULL' if v is None else v}, '{op}')" for k, v, op in rows)
    spark.sql(
        f"MERGE INTO lw.{src}.{table} t USING (SELECT CAST(k AS INT) AS k, CAST(x AS INT) AS x, "
        f"op FROM VALUES {values} AS s(k, x, op)) s ON t.k = s.k "
        "WHEN MATCHED AND s.op = 'D' THEN DELETE "
        f"WHEN MATCHED THEN UPDATE SET t.{column} = s.x "
        f"WHEN NOT MATCHED AND s.op = 'U' THEN INSERT (k, {column}) VALUES (s.k, s.x)"
    )


def model_rows(run: ProjectRun, names: list[str]) -> dict[str, list[tuple]]:
    """Each model's rows as ``ProjectRun.rows`` reads them (its own columns, sorted), the models
    read by one Spark query (a union of the tables, a row as the array of its values) instead
    of a query each."""
    from pyspark.sql import functions as F

    run.refresh(*names)  # the models ran on sessions of their own (``threads``)
    frames = []
    for name in names:
        frame = run.spark.table(f"lw.{run.namespace}.{name}")
        cells = [F.col(c).cast("bigint") for c in frame.columns if not c.startswith("__lw_")]
        frames.append(frame.select(F.lit(name).alias("model"), F.array(*cells).alias("cells")))
    rows: dict[str, list[tuple]] = {name: [] for name in names}
    for row in functools.reduce(lambda a, b: a.unionAll(b), frames).collect():
        rows[row["model"]].append(tuple(row["cells"]))
    return {name: sorted(found, key=null_first) for name, found in rows.items()}


def _delete_file_formats(spark: Any, src: str) -> set[str]:
    """``format/content`` of the mirrors' delete files (content 1: positions, 2: equality)."""
    return {
        f"{r[0]}/{r[1]}"
        for t in ("p", "q")
        for r in spark.sql(f"SELECT file_format, content FROM lw.{src}.{t}.delete_files").collect()
    }


def check(
    spark: Any, warehouse: Path, tmp: Path, mode: str, runs: list[Change], seen: set[str]
) -> set[str]:
    """Run ``runs`` against mirrors written in ``mode``; return the delete files' formats and
    add the read modes of the incremental runs to ``seen``."""
    n = next(_counter)
    src = f"wm{n}_src"
    models = list(MODELS)
    inc = _project(tmp / f"wm{n}_inc", spark, warehouse, src, models)
    _create_mirrors(spark, src, mode)
    expected = Expected()
    for i, change in enumerate(runs):
        _merge(spark, src, "p", "v", change, mode)
        _merge(spark, src, "q", "w", change, mode)
        expected.apply(change)
        results = inc.run(threads=THREADS)
        found = model_rows(inc, models)
        for name in models:
            assert found[name] == expected.rows(name), (i, name, results[name].ranges)
            if i:
                seen.update(r["mode"] for r in results[name].ranges)
            changed = [r for r in results[name].ranges if r["mode"] in ("changelog", "positions")]
            if len(changed) == len(results[name].ranges) == 2:  # both sources' changes: one MERGE
                assert len(results[name].commits) == 1, (name, results[name].ranges)
    # a REBUILT model's expectation after each run is the upstream's current rows; the rebuild
    # itself is compared after the last run (a full refresh per run would double the time)
    reference = rebuild(tmp / f"wm{n}_full", spark, warehouse, src, runs)
    for name, rows in reference.items():
        assert found[name] == rows, name
    return _delete_file_formats(spark, src)


#: the REBUILT models' rows by ``--full-refresh`` per change sequence: one rebuild reference per
#: sequence (the modes' examples are derandomized alike, so every mode meets the same ones)
_REFERENCES: dict[str, dict[str, list[tuple]]] = {}


def rebuild(
    root: Path, spark: Any, warehouse: Path, src: str, runs: list[Change]
) -> dict[str, list[tuple]]:
    """The REBUILT models built by ``--full-refresh`` (a twin project) over mirrors ``src``
    after ``runs``: by the first mode that meets ``runs``, the later ones reuse its rows (the
    rebuild reads the mirrors' current rows, the same in every mode); in the long profile
    (``LW_SOAK=long``) each mode rebuilds over its own mirrors."""
    key = repr(runs)
    if key not in _REFERENCES or long_profile():
        twin = _project(root, spark, warehouse, src, list(REBUILT))
        twin.run(full_refresh=True, threads=THREADS)
        _REFERENCES[key] = model_rows(twin, list(REBUILT))
    return _REFERENCES[key]


@pytest.mark.parametrize("mode", list(MODES))
def test_mirror_updated_in_place_equals_the_rebuild(
    mode: str, spark: Any, warehouse: Path, tmp_path: Path
) -> None:
    formats: set[str] = set()
    seen: set[str] = set()

    @settings(max_examples=_examples(2), **SETTINGS)  # type: ignore[arg-type]
    @given(runs=changes())
    @example(runs=COMPACTED)
    def prop(runs: list[Change]) -> None:
        formats.update(check(spark, warehouse, tmp_path, mode, runs, seen))

    prop()
    assert READ[mode] in seen and seen <= {READ[mode], "incremental", "none"}, seen
    if not mode.startswith("cow"):
        assert formats == {"mor_v2": {"PARQUET/1"}, "mor_v3": {"PUFFIN/1"}}.get(
            mode, {"PARQUET/2"}
        ), formats
