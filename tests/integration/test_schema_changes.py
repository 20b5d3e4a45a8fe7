"""Schema changes by plan on real Spark + Iceberg: a fourth source merged without a rebuild, a
new column filled by re-reading its source where harmless, unsafe changes refused (exit 2,
nothing written)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from lakewide.compiler.model.versions import NON_NULL_PREFIX
from lakewide.compiler.schema.contract import CONTRACT, CONTRACT_INPUTS
from lakewide.run.models.executor import run_models
from lakewide.run.schema.schema_steps import ModelSchema, SchemaChangeRefused
from tests.integration.conftest import (
    InlineModelRun,
    ModelRun,
    model_project,
    null_first,
    statements,
)
from tests.oracle import engines
from tests.support.suite_profile import examples

pytestmark = [pytest.mark.spark]


@pytest.fixture
def model_run(inline_model_run: Callable[..., ModelRun]) -> Callable[..., ModelRun]:
    """The shared factory, source rows written as inline VALUES (tests.support.inline_rows)."""
    return inline_model_run


NULL = "CAST(NULL AS BIGINT)"
SOURCES = ("a", "b", "c", "d")


def wide(n: int, config: str, seq: bool, extra: str = "") -> str:
    """A model over the first ``n`` sources, each writing its own column (``extra``: more
    projections of source a, NULL in the others)."""
    names = SOURCES[:n]
    branches = []
    for i, source in enumerate(names):
        values = [source if j == i else NULL for j in range(n)]
        if i == 0:
            values = [f"{v} AS {c}" for v, c in zip(values, names)]
        more = extra if i == 0 else ", ".join(NULL for _ in extra.split(",")) if extra else ""
        projection = ", ".join(["k", *(["ts"] if seq else []), *values, *([more] if more else [])])
        branches.append(f"SELECT {projection} FROM {{{{ source('src', '{source}') }}}}")
    return f"{{{{ config({config}) }}}}\n" + "\nUNION ALL\n".join(branches) + "\n"


PARTIAL = "merge_engine='partial_update', primary_key='k', sequence_field='ts'"


def sums(n: int) -> str:
    """aggregation: ``sum`` of each of the first ``n`` sources' columns."""
    folded = ", ".join(f"'{c}': 'sum'" for c in SOURCES[:n])
    return f"merge_engine='aggregation', primary_key='k', aggregates={{{folded}}}"


def config_of(engine: str, n: int) -> str:
    return PARTIAL if engine == "partial_update" else sums(n)


def schemas(seq: bool) -> dict[str, str]:
    return {s: f"k INT, {'ts BIGINT, ' if seq else ''}{s} BIGINT" for s in SOURCES}


def spec(engine: str, n: int) -> engines.Spec:
    names = list(SOURCES[:n])
    if engine == "partial_update":
        return engines.Spec(
            engine,
            ["k"],
            ["k", "ts", *names],
            owned=[{"k", "ts", s} for s in names],
            sequence=["ts"],
        )
    return engines.Spec(
        engine,
        ["k"],
        ["k", *names],
        owned=[{"k", s} for s in names],
        aggregates=dict.fromkeys(names, "sum"),
    )


def oracle(engine: str, n: int, written: list[tuple[str, tuple]]) -> list[tuple]:
    """Every record ever written, folded at once by the plain-Python reference."""
    model = spec(engine, n)
    records: list[tuple[int, dict[str, Any]]] = []
    for source, row in written:
        if SOURCES.index(source) < n:
            values = {"k": row[0], source: row[-1]}
            if engine == "partial_update":
                values["ts"] = row[1]
            records.append((SOURCES.index(source), values))
    table = engines.bootstrap(model, records)
    return sorted(
        (tuple(values[c] for c in model.stored) for values in table.values()), key=null_first
    )


def edit(m: ModelRun, sql: str) -> None:
    (m.run.root / "models" / "m.sql").write_text(sql)


def all_rows(m: ModelRun) -> list[tuple]:
    """Every column, hidden ones too, by column name. A hidden non-null count added with a
    column is NULL on the rows its sources never touched, where a rebuild writes 0; the MERGE
    reads a NULL count as 0 (COALESCE), so they compare as 0."""
    from pyspark.sql import functions as F

    frame = m.run.spark.table(f"lw.{m.run.namespace}.m")
    columns = [
        F.coalesce(F.col(c), F.lit(0)).alias(c) if c.startswith(NON_NULL_PREFIX) else F.col(c)
        for c in sorted(frame.columns)
    ]
    return sorted((tuple(r) for r in frame.select(*columns).collect()), key=str)


def snapshot_ids(m: ModelRun) -> list[int]:
    name = f"lw.{m.run.namespace}.m.snapshots"
    return [r[0] for r in m.run.spark.sql(f"SELECT snapshot_id FROM {name}").collect()]


def stored_contract(m: ModelRun) -> dict[str, Any]:
    rows = m.run.spark.sql(f"SHOW TBLPROPERTIES lw.{m.run.namespace}.m ('{CONTRACT}')").collect()
    return dict(json.loads(rows[0][1]))


@pytest.mark.parametrize("engine", ["partial_update", "aggregation"])
def test_a_fourth_source_merges_only_its_own_history(
    model_run: Callable[..., ModelRun], engine: str
) -> None:
    seq = engine == "partial_update"
    m = model_run(wide(3, config_of(engine, 3), seq), schemas(seq))
    written: list[tuple[str, tuple]] = []

    def batch(source: str, *rows: tuple) -> dict[str, list[tuple]]:
        shaped = [r if seq else (r[0], r[2]) for r in rows]  # rows are (k, ts, value)
        written.extend((source, r) for r in shaped)
        return {source: shaped}

    m.step({**batch("a", (1, 1, 10), (2, 1, 20)), **batch("b", (1, 2, 5)), **batch("c", (3, 1, 7))})
    m.step({**batch("a", (1, 3, 11)), **batch("c", (1, 1, 8))})
    # source d has a history of its own before the model reads it: two snapshots
    for rows in (((1, 1, 100), (4, 1, 400)), ((1, 5, 101), (2, 2, 200), (4, 1, 401))):
        m.write("d", batch("d", *rows)["d"])
    assert m.run.rows("m") == oracle(engine, 3, written)
    before = stored_contract(m)
    assert [s["source"].rsplit(".", 1)[1] for s in before["sources"]] == ["a", "b", "c"]

    edit(m, wide(4, config_of(engine, 4), seq))
    shown: list[ModelSchema] = []
    manifest = m.run.manifest()
    with statements() as ran:
        results = run_models(manifest, ["m"], m.run.adapter(manifest), on_schema=shown.append)
    result = results[0]
    assert result.status == "success", result.message
    assert result.plan == "incremental"
    assert not any(s.upper().startswith("CREATE") and " TABLE " in s.upper() for s in ran), ran
    assert any(s.startswith("ALTER TABLE") and "ADD COLUMNS (`d` BIGINT" in s for s in ran)
    modes = {r["relation"].rsplit(".", 1)[1]: r["mode"] for r in result.ranges}
    assert modes == {"a": "none", "b": "none", "c": "none", "d": "full"}
    assert any("  new source lw." in line for s in shown for line in s.lines())
    assert "new source" in result.message
    expected = oracle(engine, 4, written)
    assert m.run.rows("m") == expected
    assert [s["source"].rsplit(".", 1)[1] for s in stored_contract(m)["sources"]] == list("abcd")

    # the next run reads d from its offsets like any other source
    m.step({**batch("d", (5, 9, 500)), **batch("a", (4, 2, 40))})
    modes = {r["relation"].rsplit(".", 1)[1]: r["mode"] for r in m.last.ranges}
    assert modes["d"] == "incremental" and modes["a"] == "incremental"
    incremental = all_rows(m)
    assert m.run.rows("m") == oracle(engine, 4, written)
    m.step({}, full_refresh=True)
    assert m.last.plan == "full-refresh"
    assert all_rows(m) == incremental  # hidden versions included


def test_a_new_column_of_a_source_is_filled_by_rereading_it(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(wide(2, PARTIAL, True), schemas(True))
    m.step({"a": [(1, 1, 10), (2, 1, 20)], "b": [(1, 2, 5)]})
    m.step({"a": [(1, 3, 11)]})
    edit(m, wide(2, PARTIAL, True, extra="a * 2 AS twice"))
    rows = m.step({})
    modes = {r["relation"].rsplit(".", 1)[1]: r["mode"] for r in m.last.ranges}
    assert modes == {"a": "full", "b": "none"}
    assert rows == [(1, 3, 11, 5, 22), (2, 1, 20, None, 40)]
    incremental = all_rows(m)
    m.step({}, full_refresh=True)
    assert all_rows(m) == incremental


FEEDS_NO_SUM = (
    "{{{{ config(merge_engine='aggregation', primary_key='k'{kind}, "
    "aggregates={{'a': 'sum', 'b': {max}{more}}}) }}}}\n"
    "SELECT k, a, CAST(NULL AS BIGINT) AS b{a_more}{op} FROM {{{{ source('src', 'a') }}}}\n"
    "UNION ALL SELECT k, CAST(NULL AS BIGINT), b{b_more}{op} FROM {{{{ source('src', 'b') }}}}\n"
)


@pytest.mark.parametrize("row_kinds", [False, True])
def test_a_new_column_of_a_source_feeding_no_sum_is_added_as_a_rebuild_has_it(
    model_run: Callable[..., ModelRun], row_kinds: bool
) -> None:
    """aggregation: a new column of a source that feeds no sum (max only) is filled by
    re-reading that source alone, and the table equals a --full-refresh of the new model,
    hidden row counts included (without a row_kind_column); the summing source is not read
    again."""
    fmax = "{'function': 'max', 'ignore_retract': True}" if row_kinds else "'max'"
    shape = {
        "max": fmax,
        "kind": ", row_kind_column='op'" if row_kinds else "",
        "op": ", op" if row_kinds else "",
    }
    m = model_run(
        FEEDS_NO_SUM.format(more="", a_more="", b_more="", **shape),
        {s: f"k INT, {s} BIGINT" + (", op STRING" if row_kinds else "") for s in ("a", "b")},
    )

    def rows(*values: tuple) -> list[tuple]:
        return [v if row_kinds else v[:2] for v in values if row_kinds or v[2] == "+I"]

    m.step({"a": rows((1, 10, "+I"), (2, 3, "+I")), "b": rows((1, 5, "+I"))})
    m.step({"a": rows((1, 1, "+I")), "b": rows((1, 7, "+I"), (2, 1, "+I"), (1, 2, "-D"))})
    more, twice = f", 'twice': {fmax}", f", {NULL} AS twice"
    edit(m, FEEDS_NO_SUM.format(more=more, a_more=twice, b_more=", b * 2", **shape))
    found = m.step({})
    modes = {r["relation"].rsplit(".", 1)[1]: r["mode"] for r in m.last.ranges}
    assert modes == {"a": "none", "b": "full"}
    assert found == [(1, 11, 7, 14), (2, 3, 1, 2)]
    incremental = all_rows(m)
    m.step({}, full_refresh=True)
    assert all_rows(m) == incremental


_KEYS, _VALUES = st.integers(1, 3), st.integers(-2, 5)


@settings(
    max_examples=examples(4),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_column_added_to_a_source_feeding_no_sum_equals_a_full_refresh(
    model_run: Callable[..., ModelRun], data: st.DataObject
) -> None:
    """Property: random rows (retracts too, with a row_kind_column) of a summing source and a
    max-only source, the max-only source's new column added between runs, more rows after:
    the incremental table equals a --full-refresh of the same rows, hidden columns included."""
    row_kinds = data.draw(st.booleans(), "row_kinds")
    event(f"row_kind_column: {row_kinds}")
    fmax = "{'function': 'max', 'ignore_retract': True}" if row_kinds else "'max'"
    shape = {
        "max": fmax,
        "kind": ", row_kind_column='op'" if row_kinds else "",
        "op": ", op" if row_kinds else "",
    }
    kinds = st.sampled_from(["+I", "+I", "-D"]) if row_kinds else st.just("+I")
    row = st.tuples(_KEYS, _VALUES, kinds).map(lambda r: r if row_kinds else r[:2])

    def batch(label: str) -> dict[str, list[tuple]]:
        return {s: data.draw(st.lists(row, max_size=4), f"{label} {s}") for s in ("a", "b")}

    m = model_run(
        FEEDS_NO_SUM.format(more="", a_more="", b_more="", **shape),
        {s: f"k INT, {s} BIGINT" + (", op STRING" if row_kinds else "") for s in ("a", "b")},
    )
    m.step(batch("first"))
    m.step(batch("second"))
    more, twice = f", 'twice': {fmax}", f", {NULL} AS twice"
    edit(m, FEEDS_NO_SUM.format(more=more, a_more=twice, b_more=", b * 2", **shape))
    m.step({})
    m.step(batch("after the change"))
    incremental = all_rows(m)
    m.step({}, full_refresh=True)
    assert all_rows(m) == incremental


def _sums_sql(extra: str = "") -> str:
    return wide(2, sums(2), False, extra)


GROUPED = (
    "{{ config(merge_engine='partial_update', primary_key='k', sequence_groups={'ts': ['a']}) }}\n"
    "SELECT k, ts, a, CAST(NULL AS BIGINT) AS b FROM {{ source('src', 'a') }}\n"
    "UNION ALL SELECT k, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), b FROM {{ source('src', 'b') }}\n"
)
REFUSED = {
    # name: (edited model, words the message holds)
    "primary_key": (
        wide(2, PARTIAL.replace("primary_key='k'", "primary_key=['k', 'ts']"), True),
        ("primary_key changed: stored ['k'], configured ['k', 'ts']",),
    ),
    "merge_engine": (
        wide(2, PARTIAL.replace("partial_update", "deduplicate"), True),
        ("merge_engine changed: stored 'partial_update', configured 'deduplicate'",),
    ),
    "sequence_field": (
        wide(2, PARTIAL.replace("sequence_field='ts'", "sequence_field=['ts', 'k']"), True),
        ("sequence_field changed: stored ['ts'], configured ['ts', 'k']",),
    ),
    "sequence_groups": (
        GROUPED.replace(", sequence_groups={'ts': ['a']}", ""),
        ("sequence_groups changed: stored [{'columns': ['a']",),
    ),
    "type": (
        wide(2, PARTIAL, True).replace("a AS a", "CAST(a AS STRING) AS a"),
        ("type of column a changed: stored bigint, configured string",),
    ),
    "filter": (
        wide(2, PARTIAL, True).replace("'a') }}", "'a') }} WHERE a > 10"),
        ("source", "reads differently", "a > 10"),
    ),
    "moved": (  # a new source first: the others move
        f"{{{{ config({PARTIAL}) }}}}\n"
        f"SELECT k, ts, {NULL} AS a, {NULL} AS b, c FROM {{{{ source('src', 'c') }}}}\n"
        f"UNION ALL SELECT k, ts, a, {NULL}, {NULL} FROM {{{{ source('src', 'a') }}}}\n"
        f"UNION ALL SELECT k, ts, {NULL}, b, {NULL} FROM {{{{ source('src', 'b') }}}}\n",
        ("source", "moved from branch 1 to branch 2", "add new sources last"),
    ),
}


@pytest.fixture(scope="module")
def refusal_bases(
    tmp_path_factory: pytest.TempPathFactory, spark: Any, warehouse: Path
) -> Callable[[str], tuple[ModelRun, list[tuple]]]:
    """``base(sql)``: a project of model ``sql`` built once per module, with new data waiting
    (a run would not be a no-op), and its rows. The refusals share it: a refused run writes
    nothing (each test checks it) and each test puts the model back."""
    built: dict[str, tuple[ModelRun, list[tuple]]] = {}

    def base(sql: str) -> tuple[ModelRun, list[tuple]]:
        if sql not in built:
            root = tmp_path_factory.mktemp("refusals")
            m = InlineModelRun(
                model_project(root, spark, warehouse, sql, schemas(True)), schemas(True)
            )
            rows = m.step({"a": [(1, 1, 10)], "b": [(1, 2, 5)], "c": [(9, 1, 1)]})
            m.write("a", [(2, 1, 20)])
            built[sql] = (m, rows)
        return built[sql]

    return base


@pytest.mark.parametrize("change", list(REFUSED))
def test_unsafe_changes_are_refused_and_nothing_is_written(
    refusal_bases: Callable[[str], tuple[ModelRun, list[tuple]]], change: str
) -> None:
    base = GROUPED if change == "sequence_groups" else wide(2, PARTIAL, True)
    m, built = refusal_bases(base)
    before, contract = snapshot_ids(m), stored_contract(m)
    sql, words = REFUSED[change]
    edit(m, sql)
    try:
        manifest = m.run.manifest()
        with pytest.raises(SchemaChangeRefused) as caught:
            run_models(manifest, ["m"], m.run.adapter(manifest))
    finally:
        edit(m, base)
    message = str(caught.value)
    assert caught.value.exit_code == 2
    assert all(w in message for w in words), message
    assert "--full-refresh -s m+" in message and "Nothing was written" in message
    assert snapshot_ids(m) == before and stored_contract(m) == contract
    assert m.run.rows("m") == built


def test_a_sum_source_with_a_new_column_is_refused(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(_sums_sql(), schemas(False))
    m.step({"a": [(1, 10)], "b": [(1, 5)]})
    before = snapshot_ids(m)
    edit(m, _sums_sql("a AS twice"))
    manifest = m.run.manifest()
    with pytest.raises(SchemaChangeRefused) as caught:
        run_models(manifest, ["m"], m.run.adapter(manifest))
    assert "new column twice in existing source" in str(caught.value)
    assert "count its rows twice (sum(a)" in str(caught.value)
    assert snapshot_ids(m) == before


def test_a_column_dropped_outside_lakewide_is_refused_before_anything_runs(
    model_run: Callable[..., ModelRun],
) -> None:
    """The table lost a column its stored schema holds (an ALTER outside lakewide): the run
    refuses it up front (exit 2, the rebuild named) instead of failing inside its MERGE."""
    m = model_run(wide(2, PARTIAL, True), schemas(True))
    m.step({"a": [(1, 1, 10)], "b": [(1, 2, 5)]})
    m.run.spark.sql(f"ALTER TABLE lw.{m.run.namespace}.m DROP COLUMN b")
    m.write("a", [(2, 1, 20)])
    before = snapshot_ids(m)
    manifest = m.run.manifest()
    with pytest.raises(SchemaChangeRefused) as caught:
        run_models(manifest, ["m"], m.run.adapter(manifest))
    message = str(caught.value)
    assert caught.value.exit_code == 2
    assert "the table no longer has column(s) b of the schema lakewide stored" in message
    assert "--full-refresh -s m" in message and "Nothing was written" in message
    assert snapshot_ids(m) == before


@pytest.mark.slow
def test_cli_dry_run_prints_the_plan_and_a_refusal_exits_2(
    model_run: Callable[..., ModelRun], cli_streams: Callable[..., tuple[int, str, str]]
) -> None:
    """The CLI in-process on the test session: the exit code and the two streams."""
    m = model_run(wide(2, PARTIAL, True), schemas(True))
    m.step({"a": [(1, 1, 10)], "b": [(1, 2, 5)], "c": [(1, 3, 7)]})
    before, contract = snapshot_ids(m), stored_contract(m)
    edit(m, wide(3, PARTIAL, True))
    code, out, err = cli_streams(m.run.root, "run", "--dry-run")
    assert code == 0, out + err
    assert "schema changes of m" in out and "new source" in out
    assert "nothing was written" in out
    assert snapshot_ids(m) == before and stored_contract(m) == contract
    edit(m, REFUSED["primary_key"][0])
    code, out, err = cli_streams(m.run.root, "run")
    assert code == 2, out + err
    assert "primary_key changed" in out and "--full-refresh -s m" in out
    assert out.count("primary_key changed") == 1, out  # said once
    assert "Traceback" not in out + err
    assert snapshot_ids(m) == before


PROMOTED = (
    "{{ config(merge_engine='partial_update', primary_key='k') }}\n"
    "SELECT k, v, CAST(NULL AS STRING) AS w FROM {{ source('src', 'a') }}\n"
    "UNION ALL SELECT k, CAST(NULL AS INT), w FROM {{ source('src', 'b') }}\n"
)


def test_contract_types_come_from_the_stored_contract_until_an_upstream_schema_changes(
    model_run: Callable[..., ModelRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose model and upstream schemas are those the stored contract was analysed
    from takes the contract's types from it (Spark analyses no model query: lakewide.run.
    contract_inputs); a source column promoted from INT to BIGINT is analysed again, and the
    model's column is promoted with it, a value past INT's range stored exactly."""
    from lakewide.spark.adapter import SparkAdapter

    analysed: list[str] = []
    analyse = SparkAdapter.types_and_fields  # every analysis of a query's columns goes here

    def spy(self: SparkAdapter, query: Any) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        if not query.is_star:  # a table's own columns (SELECT *) are not the model's query
            analysed.append(query.sql())
        return analyse(self, query)

    monkeypatch.setattr(SparkAdapter, "types_and_fields", spy)
    m = model_run(PROMOTED, {"a": "k INT, v INT", "b": "k INT, w STRING"})

    def inputs() -> str:
        name = f"lw.{m.run.namespace}.m"
        rows = m.run.spark.sql(f"SHOW TBLPROPERTIES {name} ('{CONTRACT_INPUTS}')").collect()
        return str(rows[0][1])

    assert m.step({"a": [(1, 10)], "b": [(1, "x")]}) == [(1, 10, "x")]
    first = inputs()
    assert len(first) == 64 and analysed, analysed
    analysed.clear()
    assert m.step({"a": [(2, 20)]}) == [(1, 10, "x"), (2, 20, None)]
    assert analysed == [] and inputs() == first
    assert stored_contract(m)["columns"]["v"] == "int"

    m.run.spark.sql(f"ALTER TABLE lw.{m.run.seed_schema}.a ALTER COLUMN v TYPE BIGINT")
    m.schemas["a"] = "k INT, v BIGINT"
    rows = m.step({"a": [(3, 2**40)]})
    assert analysed and inputs() not in (first, ""), analysed
    assert stored_contract(m)["columns"]["v"] == "bigint"
    assert rows == [(1, 10, "x"), (2, 20, None), (3, 2**40, None)]
    analysed.clear()
    m.step({"b": [(3, "y")]})
    assert analysed == []
