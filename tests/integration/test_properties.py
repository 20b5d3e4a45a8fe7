"""Property tests: random change streams through lakewide on real Spark + Iceberg vs the oracle.

Every example builds two tiny projects (one model ``m`` over sources ``src.t0..t2``):

* **incremental**: before each run, that batch's records are *appended* to every source table
  (lakewide reads the rows appended since its consumed offsets), one data file per source in
  arrival order; the source tables are created with the first batch (so they always have a
  snapshot); the first run bootstraps, the later runs merge;
* **bootstrap**: the source tables hold all records of all batches in arrival order; one run.

and asserts ``incremental table == oracle.incremental``, ``bootstrap table ==
oracle.bootstrap`` and, where the contract makes both coincide (see ``Case.coincide``),
``incremental table == bootstrap table``.

Generator constraints (docs/merge-semantics.md makes results depend on batching otherwise):

* Row-level ``sequence_field``: the merge units are the first batch (bootstrapped as a whole),
  then each (later batch, source) in branch order. For every key, a unit's records are either
  all *after* every earlier record of the key (sequence ``>``, or ``==`` only with a record of
  the same batch, i.e. of a lower source) or all strictly *before* them (a late batch); records
  that fit neither are dropped. A late unit is only allowed when the engine's contract makes it
  order-independent: not after a ``-D`` (``remove_record_on_delete``) or a retract
  (deduplicate).
* Equal sequences (row-level or group) of one key in two batches come from the same source
  or the later from a higher source: the bootstrap orders ties by (source, arrival), the runs
  by batch, and these are the ties on which both agree. (The brief said to avoid same-source
  ties across batches; those are in fact safe, the source tables keep arrival order, while
  ties where the later batch's source is lower are not.)
* Without a sequence field, bootstrap orders by (source, arrival) and the runs by batch, so
  ``coincide`` needs every value column to be owned by one source (partial_update,
  aggregation) or the whole key to stay in one source's hands (deduplicate, first_row).
* A source owns a sequence group entirely (its sequence column(s) and columns) or not at all.
* ``product`` retracts only +-1 (other divisions are not exact and depend on order).
"""

from __future__ import annotations

import itertools
import os
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.oracle import engines as oracle
from tests.oracle.engines import Agg, Spec

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_counter = itertools.count(1)

SETTINGS = dict(deadline=None, derandomize=True, print_blob=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large])

def _examples(n: int) -> int:
    """``LW_PROPERTY_SCALE`` (default 1) scales every property's example count."""
    return max(1, round(n * float(os.environ.get("LW_PROPERTY_SCALE", "1"))))


ROW_KINDS = ["+I", "+U", "-U", "-D", "INSERT", "UPDATE_AFTER", "UPDATE_BEFORE", "DELETE"]
ADDS = ["+I", "+U", "INSERT", "UPDATE_AFTER"]


# ---------------------------------------------------------------------------------------------
# a case: a spec, column types, batches, and whether incremental and bootstrap must coincide


@dataclass
class Case:
    spec: Spec
    types: dict[str, str]
    batches: list[list[tuple[int, dict]]]
    sources: int
    coincide: bool = True
    notes: list[str] = field(default_factory=list)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis' printer
        printer.text(repr(self))

    def __repr__(self) -> str:  # what hypothesis prints for a failing example
        lines = [f"Case(engine={self.spec.engine}, sources={self.sources}, "
                 f"coincide={self.coincide})", "  model:", textwrap.indent(model_sql(self), "    ")]
        for i, batch in enumerate(self.batches):
            lines.append(f"  batch {i}:")
            lines += [f"    src{s}: {r}" for s, r in batch]
        return "\n".join(lines)


def _config_value(value: Any) -> str:
    return repr(value)


def aggregate_config(agg: Agg | str) -> Any:
    if isinstance(agg, str):
        return agg
    options: dict[str, Any] = {"function": agg.function}
    if agg.delimiter != ",":
        options["delimiter"] = agg.delimiter
    if agg.distinct:
        options["distinct"] = True
    if agg.ignore_retract:
        options["ignore_retract"] = True
    return agg.function if len(options) == 1 else options


def model_config(spec: Spec) -> dict[str, Any]:
    config: dict[str, Any] = {"merge_engine": spec.engine, "primary_key": list(spec.key)}
    if spec.sequence:
        config["sequence_field"] = list(spec.sequence)
    if spec.groups:
        config["sequence_groups"] = {k: list(v) for k, v in spec.groups.items()}
    if spec.aggregates:
        config["aggregates"] = {c: aggregate_config(a) for c, a in spec.aggregates.items()}
    if spec.default_aggregate:
        config["default_aggregate"] = spec.default_aggregate
    for flag in ("ignore_delete", "remove_record_on_delete"):
        if getattr(spec, flag):
            config[flag] = True
    if spec.remove_record_on_sequence_group:
        config["remove_record_on_sequence_group"] = list(spec.remove_record_on_sequence_group)
    if spec.row_kind_column:
        config["row_kind_column"] = spec.row_kind_column
    return config


def source_columns(case: Case, source: int) -> list[str]:
    owned = case.spec.owns(source, {})
    return [c for c in case.spec.columns if c in owned]


def model_sql(case: Case) -> str:
    config = ", ".join(f"{k}={_config_value(v)}" for k, v in model_config(case.spec).items())
    branches = []
    for i in range(case.sources):
        owned = set(source_columns(case, i))
        items = []
        for c in case.spec.columns:
            item = c if c in owned else f"CAST(NULL AS {case.types[c]})"
            if i == 0 and c not in owned:
                item += f" AS {c}"
            items.append(item)
        branches.append(f"SELECT {', '.join(items)} FROM {{{{ source('src', 't{i}') }}}}")
    return "{{ config(" + config + ") }}\n" + "\nUNION ALL\n".join(branches) + "\n"


# ---------------------------------------------------------------------------------------------
# running a case through lakewide


PYPROJECT = """\
[project]
name = "props"
version = "0.1.0"

[tool.lakewide]
profile = "props"
"""


class Harness:
    def __init__(self, spark: Any, warehouse: Path, root: Path) -> None:
        self.spark = spark
        self.warehouse = warehouse
        self.root = root
        self.seconds = {"write": 0.0, "run": 0.0}

    def project(self, case: Case, name: str) -> tuple[Path, str, str]:
        root = self.root / name
        (root / "models").mkdir(parents=True)
        namespace, src_namespace = name, f"{name}_src"
        (root / "pyproject.toml").write_text(PYPROJECT)
        (root / "profiles.yml").write_text(
            "props:\n  target: test\n  outputs:\n    test:\n      catalog: lw\n"
            f"      catalog_type: hadoop\n      warehouse: {self.warehouse}\n"
            f"      namespace: {namespace}\n")
        tables = "".join(f"      - name: t{i}\n" for i in range(case.sources))
        (root / "models" / "sources.yml").write_text(
            f"sources:\n  - name: src\n    schema: {src_namespace}\n    tables:\n{tables}")
        (root / "models" / "m.sql").write_text(model_sql(case))
        self.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{src_namespace}")
        return root, namespace, src_namespace

    def write_sources(self, case: Case, src_namespace: str, records: list[tuple[int, dict]],
                      create: bool) -> None:
        """Create (``create``) or append to each source table: one data file per source, the
        source's records in arrival order. Sources are append-only (lakewide reads the rows
        appended since its consumed offsets); a created table always has a snapshot.

        Plain SQL (``SELECT /*+ COALESCE(1) */ CAST(colN AS type) ... FROM VALUES``) with an
        explicit type per column: 3x faster than ``createDataFrame(...).writeTo``.
        """
        started = time.perf_counter()
        for i in range(case.sources):
            columns = source_columns(case, i)
            name = f"lw.{src_namespace}.t{i}"
            rows = [r for s, r in records if s == i]
            if create:
                self.spark.sql(f"CREATE TABLE {name} USING iceberg AS "
                               f"{_values_query(case, columns, rows)}")
            elif rows:
                self.spark.sql(f"INSERT INTO {name} {_values_query(case, columns, rows)}")
        self.seconds["write"] += time.perf_counter() - started

    def run(self, root: Path, expected_plan: str) -> None:
        started = time.perf_counter()
        try:
            self._run(root, expected_plan)
        finally:
            self.seconds["run"] += time.perf_counter() - started

    def _run(self, root: Path, expected_plan: str) -> None:
        from lakewide.engine.adapter import SparkAdapter
        from lakewide.executor import run_models
        from tests.project_factory import manifest_of

        manifest = manifest_of(root)
        [result] = run_models(manifest, ["m"], SparkAdapter(manifest.output, spark=self.spark))
        assert result.status == "success", result.message
        assert result.plan == expected_plan

    def table(self, case: Case, namespace: str) -> dict:
        spec = case.spec
        out = {}
        for row in self.spark.table(f"lw.{namespace}.m").collect():
            values = row.asDict()
            out[tuple(values[k] for k in spec.key)] = {c: values[c] for c in spec.stored}
        return out

    def run_incremental(self, case: Case) -> dict:
        root, namespace, src = self.project(case, f"pp{next(_counter)}_inc")
        for i, batch in enumerate(case.batches):
            self.write_sources(case, src, batch, create=i == 0)
            self.run(root, "bootstrap" if i == 0 else "incremental")
        return self.table(case, namespace)

    def run_bootstrap(self, case: Case) -> dict:
        root, namespace, src = self.project(case, f"pp{next(_counter)}_boot")
        self.write_sources(case, src, [r for b in case.batches for r in b], create=True)
        self.run(root, "bootstrap")
        return self.table(case, namespace)

    def check(self, case: Case) -> None:
        spec = case.spec
        event(f"batches={len(case.batches)} sources={case.sources} coincide={case.coincide}")
        kinds = {_kind(spec, r) for b in case.batches for _, r in b}
        event("retracts" if kinds & {"-U", "-D"} else "no retracts")
        expected_inc = oracle.incremental(spec, case.batches)
        expected_boot = oracle.bootstrap(spec, [r for b in case.batches for r in b])
        if case.coincide:  # the generator's constraints make the contract order-independent
            assert expected_inc == expected_boot, "oracle: incremental != bootstrap"
        inc = self.run_incremental(case)
        # with one batch, the incremental side's only run was this very bootstrap
        boot = inc if len(case.batches) == 1 else self.run_bootstrap(case)
        assert _normal(inc) == _normal(expected_inc), "incremental table != oracle"
        assert _normal(boot) == _normal(expected_boot), "bootstrap table != oracle"
        if case.coincide:
            assert _normal(inc) == _normal(boot)


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, list):
        return f"array({', '.join(_literal(v) for v in value)})"
    if isinstance(value, dict):
        return f"map({', '.join(_literal(x) for kv in value.items() for x in kv)})"
    raise TypeError(value)


def _values_query(case: Case, columns: list[str], rows: list[dict]) -> str:
    if not rows:
        casts = ", ".join(f"CAST(NULL AS {case.types[c]}) AS {c}" for c in columns)
        return f"SELECT {casts} WHERE false"
    casts = ", ".join(f"CAST(col{j + 1} AS {case.types[c]}) AS {c}"
                      for j, c in enumerate(columns))
    values = ", ".join("(" + ", ".join(_literal(r.get(c)) for c in columns) + ")" for r in rows)
    return f"SELECT /*+ COALESCE(1) */ {casts} FROM VALUES {values}"


def _normal(table: dict) -> dict:
    return {k: {c: (sorted(v.items()) if isinstance(v, dict) else v) for c, v in row.items()}
            for k, row in table.items()}


@pytest.fixture(scope="module")
def harness(spark: Any, warehouse: Path) -> Iterator[Harness]:
    root = Path(tempfile.mkdtemp(prefix="lw-props-"))
    harness = Harness(spark, warehouse, root)
    yield harness
    print(f"\nproperty harness: seconds spent {harness.seconds}")


# ---------------------------------------------------------------------------------------------
# generation helpers

SEQ = st.sampled_from([None, 0, 1, 2, 3, 4])
SMALL_INT = st.sampled_from([None, 0, 1, 2, 3])
STRING = st.sampled_from([None, "a", "b", "c"])
BOOL = st.sampled_from([None, True, False])

TYPE_VALUES = {"INT": SMALL_INT, "BIGINT": SMALL_INT, "STRING": STRING, "BOOLEAN": BOOL}


@st.composite
def batches_of(draw: Any, sources: int, keys: int,
               record: Callable[[Any, int], dict], max_records: int = 6) -> list:
    """2, 3 or 1 batches of 1..max_records records; keys 1..keys, or NULL."""
    key = st.sampled_from(list(range(1, keys + 1)) * 3 + [None])
    batches = []
    for b in range(draw(st.sampled_from([2, 3, 1]))):
        batch = []
        for _ in range(draw(st.integers(1, max_records))):
            source = draw(st.integers(0, sources - 1))
            batch.append((source, {"k": draw(key), **record(draw, source)}))
        batches.append(batch)
    return batches


def _key(spec: Spec, rec: dict) -> tuple | None:
    key = tuple(rec.get(k) for k in spec.key)
    return None if any(v is None for v in key) else key


def _kind(spec: Spec, rec: dict) -> str:
    raw = rec.get(spec.row_kind_column) if spec.row_kind_column else "+I"
    return {"INSERT": "+I", "UPDATE_AFTER": "+U", "UPDATE_BEFORE": "-U",
            "DELETE": "-D"}.get(raw, raw)


def effective(spec: Spec, rec: dict) -> bool:
    """False when the contract drops the record before anything else."""
    kind = _kind(spec, rec)
    if spec.ignore_delete and kind in ("-U", "-D"):
        return False
    if spec.remove_record_on_delete and kind == "-U":
        return False
    return True


def constrain_row_sequence(spec: Spec, batches: list, sources: int,
                           allow_late: Callable[[list[dict]], bool]) -> tuple[list, bool]:
    """Drop records so every merge unit is all-after or all-before its key's earlier records.

    After: a greater sequence, or an equal one when the record's source is not lower than the
    earlier record's (see the module docstring on ties). Before: a strictly smaller sequence.

    Returns the kept batches and whether a late (all-before) unit was kept.
    """
    prev: dict[tuple, list[tuple[tuple, int, dict]]] = {}
    used_late = False
    out = []
    for b, batch in enumerate(batches):
        if b == 0:
            units = [list(range(len(batch)))]
        else:
            units = [[i for i, (s, _) in enumerate(batch) if s == src] for src in range(sources)]
        keep: set[int] = set()
        for unit in units:
            mode: dict[tuple, str] = {}
            added: list[tuple[tuple, tuple, int, dict]] = []
            for i in unit:
                source, rec = batch[i]
                key = _key(spec, rec)
                if key is None or not effective(spec, rec):
                    keep.add(i)
                    continue
                sk = oracle.seq_key(tuple(rec.get(f) for f in spec.sequence))
                earlier = prev.get(key, [])
                if not earlier:
                    keep.add(i)
                    added.append((key, sk, source, rec))
                    continue
                after = all(sk > q or (sk == q and source >= qs) for q, qs, _ in earlier)
                before = (all(sk < q for q, _, _ in earlier)
                          and allow_late([r for _, _, r in earlier]))
                m = mode.get(key) or ("after" if after else "before" if before else None)
                if m is None:
                    continue
                mode[key] = m
                if (m == "after" and after) or (m == "before" and before):
                    keep.add(i)
                    added.append((key, sk, source, rec))
                    used_late |= m == "before"
            for key, sk, source, rec in added:
                prev.setdefault(key, []).append((sk, source, rec))
        out.append([batch[i] for i in sorted(keep)])
    return out, used_late


def _ties_across_batches(batches: list, marks: Callable[[int, dict], list]) -> list:
    """Drop a record that ties (same mark) with a record of an earlier batch from a higher
    source: the bootstrap orders such ties by source, the runs by batch. A tie with a record of
    the same or a lower source is ordered alike by both (source, then arrival). (For row-level
    sequences, constrain_row_sequence applies the same rule.)"""
    highest: dict[Any, int] = {}
    out = []
    for batch in batches:
        kept, seen = [], {}
        for source, rec in batch:
            found = marks(source, rec)
            if any(highest.get(m, -1) > source for m in found):
                continue
            for m in found:
                seen[m] = max(seen.get(m, -1), source)
            kept.append((source, rec))
        for m, source in seen.items():
            highest[m] = max(highest.get(m, -1), source)
        out.append(kept)
    return out


def constrain_group_sequences(spec: Spec, batches: list) -> list:
    """Group sequences: no tie with an earlier batch's record from a higher source."""
    def marks(source: int, rec: dict) -> list:
        key = _key(spec, rec)
        found = []
        for name, seqs, _ in spec.group_list():
            value = tuple(rec.get(s) for s in seqs)
            if key is not None and any(v is not None for v in value):
                found.append((name, key, value))
        return found
    return _ties_across_batches(batches, marks)


def single_owner(owned: list[set[str]]) -> bool:
    seen: set[str] = set()
    for cols in owned:
        if cols & seen:
            return False
        seen |= cols
    return True


def key_stays_in_first_source(spec: Spec, batches: list) -> bool:
    """No key gets a record from a lower source in a later batch than its first batch."""
    first: dict[tuple, tuple[int, int]] = {}
    for b, batch in enumerate(batches):
        for source, rec in batch:
            key = _key(spec, rec)
            if key is None or not effective(spec, rec):
                continue
            if key not in first:
                first[key] = (b, source)
            elif b != first[key][0] and source < first[key][1]:
                return False
            elif b == first[key][0]:
                first[key] = (b, min(source, first[key][1]))
    return True


@st.composite
def ownership(draw: Any, sources: int, columns: list[str], single: bool = False) -> list[set]:
    """Which value columns each source owns (every column has at least one owner)."""
    owned: list[set[str]] = [set() for _ in range(sources)]
    for c in columns:
        if single or sources == 1:
            owned[draw(st.integers(0, sources - 1))].add(c)
        else:
            who = draw(st.sets(st.integers(0, sources - 1), min_size=1))
            for s in who:
                owned[s].add(c)
    return owned


def _values(owned: list[set[str]], types: dict[str, str]) -> Callable[[Any, int], dict]:
    def make(draw: Any, source: int) -> dict:
        return {c: draw(TYPE_VALUES[types[c]]) for c in sorted(owned[source])}
    return make


# ---------------------------------------------------------------------------------------------
# strategies per engine family


@st.composite
def partial_update_cases(draw: Any) -> Case:
    sources = draw(st.integers(1, 3))
    values = {"a": "INT", "b": "STRING", "c": "BIGINT", "d": "BOOLEAN"}
    cols = list(values)[:draw(st.integers(1, 4))]
    owned = draw(ownership(sources, cols))
    sequence = draw(st.sampled_from([["s"], [], ["s"], ["s", "s2"]]))
    types = {"k": "INT", "k2": "STRING", **{c: values[c] for c in cols}, "s": "INT",
             "s2": "INT"}
    key = draw(st.sampled_from([["k"], ["k", "k2"]]))
    spec = Spec("partial_update", key, [*key, *cols, *sequence], owned=owned,
                sequence=sequence)

    def record(draw: Any, source: int) -> dict:
        rec = _values(owned, types)(draw, source)
        if len(key) == 2:
            rec["k2"] = draw(st.sampled_from(["x", "y", "x", "y", None]))
        for f in sequence:
            rec[f] = draw(SEQ if f == "s" else st.sampled_from([None, 0, 1]))
        return rec

    batches = draw(batches_of(sources, draw(st.integers(1, 3)), record))
    coincide = True
    if sequence:
        batches, _ = constrain_row_sequence(spec, batches, sources, lambda prev: True)
    else:
        coincide = single_owner(owned)
    return Case(spec, types, batches, sources, coincide)


@st.composite
def sequence_group_cases(draw: Any, row_kinds: bool = False) -> Case:
    sources = draw(st.integers(1, 3))
    types = {"k": "INT", "a": "INT", "b": "STRING", "g1": "INT", "c": "INT", "n": "BIGINT",
             "g2": "INT", "g3": "INT", "p": "INT", "op": "STRING"}
    groups: dict[str, list[str]] = {"g1": ["a", "b"]}
    second = draw(st.sampled_from(["g2", "g2,g3", None]))
    aggregates: dict[str, Any] = {}
    if second:
        groups[second] = ["c", "n"]
        aggregates["n"] = draw(st.sampled_from(
            ["sum", Agg("max", ignore_retract=True)] if row_kinds else ["sum", "max"]))
    plain = draw(st.booleans())
    columns = ["k", "a", "b", "g1"] + (["c", "n", *second.split(",")] if second else [])
    columns += ["p"] if plain else []
    owned: list[set[str]] = [set() for _ in range(sources)]
    for name, cols in groups.items():
        for s in draw(st.sets(st.integers(0, sources - 1), min_size=1)):
            owned[s] |= {*name.split(","), *cols}
    if plain:
        owned[draw(st.integers(0, sources - 1))].add("p")
    removal: list[str] = []
    if row_kinds:
        columns.append("op")
        removal = draw(st.sampled_from([[], ["g1"]] + ([[second]] if second else [])))
    spec = Spec("partial_update", ["k"], columns, owned=owned, groups=groups,
                aggregates=aggregates, row_kind_column="op" if row_kinds else None,
                remove_record_on_sequence_group=removal)
    group_seq = st.sampled_from([None, 0, 1, 2, 3, 4])

    def record(draw: Any, source: int) -> dict:
        rec = {}
        for c in sorted(owned[source]):
            if c in ("g1", "g2", "g3"):
                rec[c] = draw(group_seq if c != "g3" else st.sampled_from([None, 0, 1]))
            else:
                rec[c] = draw(TYPE_VALUES[types[c]])
        if row_kinds:
            rec["op"] = draw(st.sampled_from(ROW_KINDS))
        return rec

    batches = draw(batches_of(sources, draw(st.integers(1, 3)), record))
    batches = constrain_group_sequences(spec, batches)
    coincide = True
    if row_kinds:
        # a key first seen through retracts only, or a removed row, depends on batching
        coincide = not removal and _first_unit_has_add(spec, batches, sources)
    return Case(spec, types, batches, sources, coincide)


def _first_unit_has_add(spec: Spec, batches: list, sources: int) -> bool:
    seen: set[tuple] = set()
    for b, batch in enumerate(batches):
        units = [batch] if b == 0 else [[(s, r) for s, r in batch if s == src]
                                         for src in range(sources)]
        for unit in units:
            keys = {_key(spec, r) for _, r in unit} - {None} - seen
            for key in keys:
                if not any(_key(spec, r) == key and _kind(spec, r) in ("+I", "+U")
                           for _, r in unit):
                    return False
            seen |= keys
    return True


@st.composite
def row_kind_cases(draw: Any) -> Case:
    """partial_update + row_kind_column with ignore_delete or remove_record_on_delete."""
    sources = draw(st.integers(1, 3))
    policy = draw(st.sampled_from(["ignore_delete", "remove_record_on_delete"]))
    types = {"k": "INT", "a": "INT", "b": "STRING", "c": "INT", "s": "INT", "op": "STRING"}
    cols = ["a", "b", "c"][:draw(st.integers(1, 3))]
    owned = draw(ownership(sources, cols))
    spec = Spec("partial_update", ["k"], ["k", *cols, "s", "op"], owned=owned, sequence=["s"],
                row_kind_column="op", **{policy: True})

    def record(draw: Any, source: int) -> dict:
        rec = _values(owned, types)(draw, source)
        rec["s"] = draw(SEQ)
        rec["op"] = draw(st.sampled_from(ROW_KINDS))
        return rec

    batches = draw(batches_of(sources, draw(st.integers(1, 3)), record))
    batches, _ = constrain_row_sequence(
        spec, batches, sources,
        lambda prev: not any(_kind(spec, r) == "-D" for r in prev))
    return Case(spec, types, batches, sources, True)


AGG_COLUMNS = {  # column: (function, type, retractable)
    "total": ("sum", "BIGINT", True),
    "hi": ("max", "INT", False),
    "lo": ("min", "INT", False),
    "last": ("last_value", "INT", True),
    "lnn": ("last_non_null_value", "STRING", True),
    "fnn": ("first_non_null_value", "INT", False),
    "names": ("listagg", "STRING", False),
    "flag": ("bool_or", "BOOLEAN", False),
    "items": ("collect", "ARRAY<INT>", True),
    "prod": ("product", "BIGINT", True),
    "first": ("first_value", "INT", False),
    "all": ("bool_and", "BOOLEAN", False),
    "kv": ("merge_map", "MAP<STRING, INT>", True),
}
# the contract's merge ignores "older" for these: a late batch gives another result than the
# bootstrap's order
ORDER_SENSITIVE_WHEN_LATE = {"last_value", "last_non_null_value", "collect", "merge_map"}


@st.composite
def aggregation_cases(draw: Any) -> Case:
    sources = draw(st.integers(1, 3))
    # every function in one model (each column dropped with probability 1/4): Spark's cost is
    # per run, not per column
    cols = [c for c in AGG_COLUMNS if draw(st.integers(0, 3))] or ["total"]
    mode = draw(st.sampled_from(["none", "retracts", "ignore_delete"]))
    sequence = draw(st.sampled_from([[], ["s"]]))
    owned = draw(ownership(sources, cols, single=not sequence))
    types = {"k": "INT", "s": "INT", "op": "STRING", **{c: AGG_COLUMNS[c][1] for c in cols}}
    aggregates: dict[str, Any] = {}
    default = "sum" if "total" in cols and draw(st.booleans()) else None
    for c in cols:
        function, _, retractable = AGG_COLUMNS[c]
        ignore_retract = mode == "retracts" and not retractable
        if function in ("listagg", "collect") and draw(st.booleans()):
            aggregates[c] = Agg(function, delimiter="|" if function == "listagg" else ",",
                                distinct=draw(st.booleans()), ignore_retract=ignore_retract)
        elif ignore_retract:
            aggregates[c] = Agg(function, ignore_retract=True)
        elif function == default:
            pass                              # the default_aggregate
        elif function != "last_non_null_value" or default or draw(st.booleans()):
            aggregates[c] = function          # else: the built-in default
    row_kinds = mode != "none"
    spec = Spec("aggregation", ["k"], ["k", *cols, *sequence] + (["op"] if row_kinds else []),
                owned=owned, sequence=sequence, aggregates=aggregates, default_aggregate=default,
                ignore_delete=mode == "ignore_delete",
                row_kind_column="op" if row_kinds else None)
    values = {"BIGINT": st.sampled_from([None, -1, 1, 2, 3]), "INT": SMALL_INT,
              "STRING": STRING, "BOOLEAN": BOOL,
              "ARRAY<INT>": st.one_of(st.none(), st.lists(st.integers(0, 3), max_size=2)),
              "MAP<STRING, INT>": st.one_of(st.none(), st.dictionaries(
                  st.sampled_from(["x", "y"]), st.integers(0, 3), max_size=2))}

    def record(draw: Any, source: int) -> dict:
        rec = {c: draw(values[types[c]]) for c in sorted(owned[source])}
        if sequence:
            rec["s"] = draw(SEQ)
        if row_kinds:
            rec["op"] = draw(st.sampled_from(ROW_KINDS))
            if "prod" in rec and _kind(spec, rec) in ("-U", "-D") and rec["prod"] not in (
                    None, 1, -1):
                rec["prod"] = draw(st.sampled_from([None, 1, -1]))
        return rec

    batches = draw(batches_of(sources, draw(st.integers(1, 3)), record))
    coincide = True
    if sequence:
        batches, late = constrain_row_sequence(spec, batches, sources, lambda prev: True)
        functions = {AGG_COLUMNS[c][0] for c in cols}
        coincide = not (late and functions & ORDER_SENSITIVE_WHEN_LATE)
    # first_value: a NULL first value is replaced by a later batch, never by the bootstrap
    coincide = coincide and "first" not in cols
    return Case(spec, types, batches, sources, coincide)


@st.composite
def deduplicate_cases(draw: Any) -> Case:
    sources = draw(st.integers(1, 3))
    types = {"k": "INT", "a": "INT", "b": "STRING", "s": "INT", "op": "STRING"}
    owned = draw(ownership(sources, ["a", "b"]))
    sequence = draw(st.sampled_from([["s"], ["s"], []]))
    policy = draw(st.sampled_from(["deletes", "ignore_delete", "none"]))
    row_kinds = policy != "none"
    spec = Spec("deduplicate", ["k"], ["k", "a", "b", *sequence] + (["op"] if row_kinds else []),
                owned=owned, sequence=sequence, ignore_delete=policy == "ignore_delete",
                row_kind_column="op" if row_kinds else None)

    def record(draw: Any, source: int) -> dict:
        rec = _values(owned, types)(draw, source)
        if sequence:
            rec["s"] = draw(SEQ)
        if row_kinds:
            rec["op"] = draw(st.sampled_from(ROW_KINDS))
        return rec

    batches = draw(batches_of(sources, draw(st.integers(1, 3)), record))
    if sequence:
        batches, _ = constrain_row_sequence(
            spec, batches, sources,
            lambda prev: not any(_kind(spec, r) in ("-U", "-D") for r in prev))
        coincide = True
    else:
        coincide = sources == 1
    return Case(spec, types, batches, sources, coincide)


@st.composite
def first_row_cases(draw: Any) -> Case:
    sources = draw(st.integers(1, 3))
    types = {"k": "INT", "a": "INT", "b": "STRING", "op": "STRING"}
    owned = draw(ownership(sources, ["a", "b"]))
    row_kinds = draw(st.booleans())
    spec = Spec("first_row", ["k"], ["k", "a", "b"] + (["op"] if row_kinds else []),
                owned=owned, ignore_delete=row_kinds,
                row_kind_column="op" if row_kinds else None)

    def record(draw: Any, source: int) -> dict:
        rec = _values(owned, types)(draw, source)
        if row_kinds:
            rec["op"] = draw(st.sampled_from(ROW_KINDS))
        return rec

    batches = draw(batches_of(sources, draw(st.integers(1, 3)), record))
    return Case(spec, types, batches, sources, key_stays_in_first_source(spec, batches))


# ---------------------------------------------------------------------------------------------
# the properties


@settings(max_examples=_examples(20), **SETTINGS)
@given(case=partial_update_cases())
def test_partial_update_plain_and_sequence_field(harness: Harness, case: Case) -> None:
    harness.check(case)


@settings(max_examples=_examples(15), **SETTINGS)
@given(case=sequence_group_cases())
def test_partial_update_sequence_groups(harness: Harness, case: Case) -> None:
    harness.check(case)


@settings(max_examples=_examples(15), **SETTINGS)
@given(case=st.one_of(row_kind_cases(), sequence_group_cases(row_kinds=True)))
def test_partial_update_row_kinds(harness: Harness, case: Case) -> None:
    harness.check(case)


@settings(max_examples=_examples(20), **SETTINGS)
@given(case=aggregation_cases())
def test_aggregation(harness: Harness, case: Case) -> None:
    harness.check(case)


@settings(max_examples=_examples(15), **SETTINGS)
@given(case=deduplicate_cases())
def test_deduplicate(harness: Harness, case: Case) -> None:
    harness.check(case)


@settings(max_examples=_examples(10), **SETTINGS)
@given(case=first_row_cases())
def test_first_row(harness: Harness, case: Case) -> None:
    harness.check(case)


SG_COLUMNS = ["k", "a", "b", "g_1", "c", "d", "g_2"]


def test_seed_article_sequence_groups(harness: Harness) -> None:
    """The contract's seed-article example, three runs, through lakewide."""
    spec = Spec("partial_update", ["k"], SG_COLUMNS, owned=[set(SG_COLUMNS)],
                groups={"g_1": ["a", "b"], "g_2": ["c", "d"]})
    types = dict.fromkeys(SG_COLUMNS, "INT")

    def rows(*values: tuple) -> list:
        return [(0, dict(zip(SG_COLUMNS, v))) for v in values]

    batches = [rows((1, 1, 1, 1, 1, 1, 1), (1, 2, 2, 2, 2, 2, None)),
               rows((1, 3, 3, 1, 3, 3, 3)),
               rows((1, 3, 3, 3, 2, 2, None), (1, 4, 4, 4, 2, 2, None),
                    (1, 5, 5, 3, 5, None, 4))]
    case = Case(spec, types, batches, 1)
    root, namespace, src = harness.project(case, f"pp{next(_counter)}_seed")
    expected = [(1, 2, 2, 2, 1, 1, 1), (1, 2, 2, 2, 3, 3, 3), (1, 4, 4, 4, 5, None, 4)]
    for i, batch in enumerate(batches):
        harness.write_sources(case, src, batch, create=i == 0)
        harness.run(root, "bootstrap" if i == 0 else "incremental")
        assert [tuple(r) for r in harness.spark.table(f"lw.{namespace}.m").collect()] == [
            expected[i]]
    assert harness.run_bootstrap(case) == {(1,): dict(zip(SG_COLUMNS, expected[-1]))}
