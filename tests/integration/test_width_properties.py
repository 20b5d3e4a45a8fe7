"""Property tests at width: many sources, random column ownership, through lakewide on real Spark
+ Iceberg vs the plain-Python fold (tests/oracle/engines.py), as tests/integration/
test_properties.py checks narrow models.

These models take the per-source pre-folds (lakewide.compiler.folds.build_prefolds; which models do
is pinned in tests/compiler/folds/test_build_prefolds.py; their bootstraps too, as a table wider
than UNION_BOOTSTRAP_COLUMNS: the ``bootstraps_apart`` fixture): the bootstrap and the combined batch fold
each source over its own columns and put the folds together per key. Every example runs
incrementally (the first run bootstraps, the later ones MERGE the combined batch of the
sources with new rows) and as one bootstrap (a full refresh of every record), and both tables
must equal the ordered fold of all records.

* partial_update with sequence groups: 8-24 sources; most groups fed by one source, some by
  two, a summed column in a one-source group, columns in no group owned by one or several sources,
  sometimes a row-level sequence_field. Group sequences are constrained as the narrow
  property constrains them (docs/concepts/run-boundaries.md).
* aggregation: 8-24 sources owning columns of every function but the collections; some
  columns fed by two or three sources (their per-source aggregates combined: sum, max, min,
  bool_or, bool_and, and the last_* / first_* functions by their stored versions), with or
  without a sequence_field; late records, ties and NULLs anywhere, as the narrow property.
* deduplicate and first_row (lakewide.compiler.folds.prefold_rows): 8-24 sources, columns of one
  to three sources; the key's row is the winning source's last (first) record, NULL in the
  columns that source does not own. deduplicate with or without a sequence_field (late
  records, ties, NULL sequences), with deletes (records older than a delete constrained as
  the narrow property constrains them), ``ignore_delete`` or no row kinds; first_row with
  or without row kinds (``ignore_delete``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.integration.test_properties import (
    ANY_SEQ,
    BOOL,
    ROW_KINDS,
    SETTINGS,
    SMALL_INT,
    STRING,
    TYPE_VALUES,
    Case,
    Harness,
    _examples,
    _kind,
    batches_of,
    constrain_group_sequences,
    constrain_row_sequence,
    harness,  # noqa: F401 - the module's fixture
    seq,
)
from tests.oracle.engines import Spec

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.usefixtures("bootstraps_apart")]


@st.composite
def wide_group_cases(draw: Any) -> Case:
    sources = draw(st.sampled_from([8, 12, 16, 24]))
    types: dict[str, str] = {"k": "INT", "s": "INT"}
    owned: list[set[str]] = [set() for _ in range(sources)]
    groups: dict[str, list[str]] = {}
    aggregates: dict[str, str] = {}
    columns = ["k"]
    for g in range(draw(st.integers(sources // 2, sources))):
        name, cols = f"q{g}", [f"g{g}_c{j}" for j in range(draw(st.integers(1, 3)))]
        groups[name] = cols
        types[name] = "INT"
        types.update((c, draw(st.sampled_from(["INT", "STRING"]))) for c in cols)
        columns += [*cols, name]
        feeders = draw(st.sampled_from([1, 1, 1, 2]))
        who = draw(st.lists(st.integers(0, sources - 1), min_size=feeders, max_size=feeders))
        for s in who:  # a source writes a whole group or none of it
            owned[s] |= {name, *cols}
        if len(set(who)) == 1 and types[cols[-1]] == "INT" and draw(st.booleans()):
            aggregates[cols[-1]] = "sum"
    for p in range(draw(st.integers(1, sources))):  # columns in no group, some shared
        column = f"p{p}"
        types[column] = draw(st.sampled_from(["INT", "STRING"]))
        columns.append(column)
        for s in draw(st.sets(st.integers(0, sources - 1), min_size=1, max_size=3)):
            owned[s].add(column)
    sequence = draw(st.sampled_from([[], ["s"]]))
    spec = Spec(
        "partial_update",
        ["k"],
        columns + sequence,
        owned=owned,
        groups=groups,
        aggregates=aggregates,
        sequence=sequence,
    )

    def record(draw: Any, source: int, batch: int) -> dict:
        rec = {}
        for c in sorted(owned[source]):
            rec[c] = draw(seq(batch) if c in groups else TYPE_VALUES[types[c]])
        if sequence:
            rec["s"] = draw(seq(batch))
        return rec

    batches = draw(batches_of(sources, draw(st.integers(1, 4)), record, max_records=30))
    batches = constrain_group_sequences(spec, batches)
    if sequence:
        batches, _ = constrain_row_sequence(spec, batches, sources, lambda prev: True)
    return Case(spec, types, batches, sources, coincide=True, constrained=True)


@settings(max_examples=_examples(5), **SETTINGS)
@given(case=wide_group_cases())
def test_partial_update_sequence_groups_at_width(harness: Harness, case: Case) -> None:  # noqa: F811
    """partial_update with a sequence group per source or two at 8-24 sources."""
    harness.check(case)


#: function -> the column type its values take
WIDE_FUNCTIONS = {
    "sum": "BIGINT",
    "max": "INT",
    "min": "INT",
    "last_value": "INT",
    "last_non_null_value": "STRING",
    "first_value": "INT",
    "first_non_null_value": "STRING",
    "bool_or": "BOOLEAN",
    "bool_and": "BOOLEAN",
}
WIDE_VALUES = {"BIGINT": st.sampled_from([None, -1, 1, 2, 3]), "INT": SMALL_INT}
WIDE_VALUES |= {"STRING": STRING, "BOOLEAN": BOOL}


@st.composite
def wide_aggregation_cases(draw: Any) -> Case:
    sources = draw(st.sampled_from([8, 12, 16, 24]))
    types: dict[str, str] = {"k": "INT", "s": "INT"}
    owned: list[set[str]] = [set() for _ in range(sources)]
    aggregates: dict[str, str] = {}
    columns = ["k"]
    for n in range(draw(st.integers(sources, 2 * sources))):
        function = draw(st.sampled_from(sorted(WIDE_FUNCTIONS)))
        column = f"a{n}"
        columns.append(column)
        types[column] = WIDE_FUNCTIONS[function]
        aggregates[column] = function
        feeders = draw(st.sampled_from([1, 1, 2, 3]))
        for s in draw(st.lists(st.integers(0, sources - 1), min_size=feeders, max_size=feeders)):
            owned[s].add(column)
    sequence = draw(st.sampled_from([[], ["s"]]))
    spec = Spec(
        "aggregation",
        ["k"],
        columns + sequence,
        owned=owned,
        sequence=sequence,
        aggregates=dict(aggregates),
    )

    def record(draw: Any, source: int, batch: int) -> dict:
        rec = {c: draw(WIDE_VALUES[types[c]]) for c in sorted(owned[source])}
        if sequence:
            rec["s"] = draw(ANY_SEQ)
        return rec

    batches = draw(batches_of(sources, draw(st.integers(1, 4)), record, max_records=30))
    return Case(spec, types, batches, sources, True)


@settings(max_examples=_examples(5), **SETTINGS)
@given(case=wide_aggregation_cases())
def test_aggregation_at_width(harness: Harness, case: Case) -> None:  # noqa: F811
    """aggregation at 8-24 sources, columns of one to three sources."""
    harness.check(case)


@st.composite
def wide_row_cases(draw: Any, engine: str) -> Case:
    """deduplicate or first_row over 8-24 sources, columns of one to three sources."""
    sources = draw(st.sampled_from([8, 12, 16, 24]))
    types: dict[str, str] = {"k": "INT", "s": "INT", "op": "STRING"}
    owned: list[set[str]] = [set() for _ in range(sources)]
    columns = ["k"]
    for n in range(draw(st.integers(sources, 2 * sources))):
        column = f"c{n}"
        columns.append(column)
        types[column] = draw(st.sampled_from(["INT", "STRING"]))
        feeders = draw(st.sampled_from([1, 1, 2, 3]))
        for s in draw(st.lists(st.integers(0, sources - 1), min_size=feeders, max_size=feeders)):
            owned[s].add(column)
    first = engine == "first_row"
    sequence = [] if first else draw(st.sampled_from([["s"], ["s"], []]))
    # deletes without a sequence: one source only (docs/concepts/run-boundaries.md)
    policies = ["ignore_delete", "none"] if first or not sequence else ["deletes"]
    policy = draw(st.sampled_from([*policies, "ignore_delete", "none"]))
    row_kinds = policy != "none"
    spec = Spec(
        engine,
        ["k"],
        columns + sequence + (["op"] if row_kinds else []),
        owned=owned,
        sequence=sequence,
        ignore_delete=policy == "ignore_delete",
        row_kind_column="op" if row_kinds else None,
    )

    def record(draw: Any, source: int, batch: int) -> dict:
        rec = {c: draw(TYPE_VALUES[types[c]]) for c in sorted(owned[source])}
        if sequence:
            rec["s"] = draw(seq(batch) if policy == "deletes" else ANY_SEQ)
        if row_kinds:
            rec["op"] = draw(st.sampled_from(ROW_KINDS))
        return rec

    batches = draw(batches_of(sources, draw(st.integers(1, 4)), record, max_records=30))
    deletes = policy == "deletes"
    if deletes:  # a deleted row keeps no version (docs/concepts/run-boundaries.md)
        batches, _ = constrain_row_sequence(
            spec,
            batches,
            sources,
            lambda prev: not any(_kind(spec, r) in ("-U", "-D") for r in prev),
        )
    return Case(spec, types, batches, sources, True, constrained=deletes)


@settings(max_examples=_examples(6), **SETTINGS)
@given(case=wide_row_cases("deduplicate"))
def test_deduplicate_at_width(harness: Harness, case: Case) -> None:  # noqa: F811
    """deduplicate at 8-24 sources: deletes, ignore_delete or no row kinds."""
    harness.check(case)


@settings(max_examples=_examples(4), **SETTINGS)
@given(case=wide_row_cases("first_row"))
def test_first_row_at_width(harness: Harness, case: Case) -> None:  # noqa: F811
    """first_row at 8-24 sources, with or without row kinds (ignore_delete)."""
    harness.check(case)
