"""The one-shuffle bootstrap (aggregation, sequence groups, partial_update) as a run sends
it: with its folds' column types, taken from the run's analysis for the contract
(lakewide.compiler.folds.one_shuffle), each branch fills slots of its own columns' types and
carries no NULL per other source; so does an incremental batch of every source. A column of
every type the folds carry (decimals of several scales, timestamps, dates, strings, arrays,
maps, structs, booleans, doubles), built, run and fully refreshed, equals the same bootstrap
without the types (the form ``lakewide compile`` writes, read at the same sources), row for
row and type for type (real Spark + Iceberg)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from lakewide.compiler import compile_model
from lakewide.run.models.executor import run_models
from lakewide.vocabulary.dialect import to_sql
from tests.integration.conftest import ModelRun, null_first, statements

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("bootstraps_apart")]  # 3 narrow sources

#: source -> its own columns (name, Spark type), after the key ``k``
OWN = {
    "a": [("ga", "INT"), ("d", "DECIMAL(20,4)"), ("ts", "TIMESTAMP"), ("s", "STRING")],
    "b": [("gb", "INT"), ("dt", "DATE"), ("arr", "ARRAY<BIGINT>"), ("flag", "BOOLEAN")],
    "c": [
        ("gc", "BIGINT"),
        ("mp", "MAP<STRING, INT>"),
        ("st", "STRUCT<x: INT, y: STRING>"),
        ("d2", "DECIMAL(38,10)"),
        ("big", "DECIMAL(38,0)"),
        ("dbl", "DOUBLE"),
    ],
}
SCHEMAS = {t: ", ".join(["k INT", *(f"{c} {ty}" for c, ty in cols)]) for t, cols in OWN.items()}
AGGREGATES = {"d": "sum", "ts": "max", "dt": "min", "flag": "bool_or", "d2": "sum", "dbl": "max"}
GROUPS = {cols[0][0]: [c for c, _ in cols[1:]] for cols in OWN.values()}


def model_sql(config: str) -> str:
    """The positional UNION ALL of the three sources, typed NULLs for the others' columns."""
    every = [(c, ty) for cols in OWN.values() for c, ty in cols]
    branches = []
    for table, cols in OWN.items():
        mine = {c for c, _ in cols}
        select = [c if c in mine else f"CAST(NULL AS {ty}) AS {c}" for c, ty in every]
        branches.append(f"SELECT k, {', '.join(select)} FROM {{{{ source('src', '{table}') }}}}")
    return "{{ config(" + config + ") }}\n" + "\nUNION ALL\n".join(branches)


AGG = model_sql(f"merge_engine='aggregation', primary_key='k', aggregates={AGGREGATES!r}")
PU_GROUPS = model_sql(f"merge_engine='partial_update', primary_key='k', sequence_groups={GROUPS!r}")
PARTIAL_UPDATE = model_sql("merge_engine='partial_update', primary_key='k'")

BIG = Decimal("12345678901234567890123456789012345678")
WIDE = Decimal("1234567890123456789012345678.0123456789")


def batch(round_no: int) -> dict[str, list[tuple[Any, ...]]]:
    """Every source's rows of a round: keys 1-4 (10 more a round: a key's rows are in one
    commit, so a plain read of the sources, the untyped bootstrap's, keeps their arrival
    order), a NULL here and there, several rows a key."""
    r = round_no
    rows = {
        "a": [
            (1, 1 + r, Decimal("1.2345") * (r + 1), dt.datetime(2024, 1, 2, 3, 4, 5, 678901), "x"),
            (1, 5 + r, Decimal("-9999999999999999.9999"), None, "y"),
            (2, r, None, dt.datetime(1999, 12, 31, 23, 59, 59, 1), None),
            (4, None, Decimal("0.0001"), dt.datetime(2030, 6, 1), "z"),
        ],
        "b": [
            (1, 2 + r, dt.date(2020, 2, 29), [1, None, 2**62], True),
            (3, r, dt.date(1970, 1, 1), [], False),
            (3, 7 + r, None, None, None),
        ],
        "c": [
            (2, 10 + r, {"a": 1, "b": None}, (1, "p"), WIDE, BIG, 1.5e300),
            (3, 3 + r, {}, (None, None), -WIDE, -BIG, float("inf")),
            (4, r, None, None, None, Decimal(r), -0.0),
        ],
    }
    return {t: [(k + 10 * r, *rest) for k, *rest in batch] for t, batch in rows.items()}


def untyped(m: ModelRun) -> tuple[list[tuple[Any, ...]], dict[str, str]]:
    """The rows and types of the bootstrap as compiled without the folds' types, at the
    sources as they are now (the table's own columns)."""
    node = m.run.manifest().models["m"]
    query = compile_model(node).bootstrap.expression
    frame = m.run.spark.sql(to_sql(query))
    frame = frame.select(*(c for c in frame.columns if not c.startswith("__lw_")))
    rows = sorted((tuple(r) for r in frame.collect()), key=null_first)
    return rows, {f.name: f.dataType.simpleString() for f in frame.schema.fields}


def table_types(m: ModelRun) -> dict[str, str]:
    frame = m.run.spark.table(f"lw.{m.run.namespace}.m")
    return {f.name: f.dataType.simpleString() for f in frame.schema.fields if "__lw_" not in f.name}


def typed_bootstrap(seen: list[str]) -> str:
    """The one statement that wrote the table anew (CREATE [OR REPLACE] TABLE ... AS)."""
    [text] = [t for t in seen if t.startswith("CREATE") and " AS WITH " in t]
    return text


@pytest.mark.parametrize(
    "sql",
    [AGG, PU_GROUPS, PARTIAL_UPDATE],
    ids=["aggregation", "sequence_groups", "partial_update"],
)
def test_typed_one_shuffle_equals_the_untyped_for_every_type(
    model_run: Callable[..., ModelRun], sql: str
) -> None:
    m = model_run(sql, SCHEMAS)
    for table, rows in batch(0).items():
        m.write(table, rows)
    with statements() as seen:
        built = m.step({})
    sent = typed_bootstrap(seen)
    assert "__lw_src" in sent and "NULL AS __lw_s" not in sent
    # the types come from the analysis made for the contract: two statements fold the
    # sources, that analysis (the untyped form, its folds as columns) and the bootstrap
    assert len([t for t in seen if "__lw_f0" in t]) == 2
    rows, types = untyped(m)
    assert built == rows and table_types(m) == types
    with statements() as seen:  # an incremental run of every source on the typed bootstrap
        assert m.step(batch(1)) == untyped(m)[0]
    # its batch puts the folds together in one shuffle too, typed (its helper counts as well)
    [staged] = [t for t in seen if "__lw_f0" in t and "__lw_in_0" in t]
    assert "__lw_src" in staged and "NULL AS __lw_s" not in staged
    with statements() as seen:
        m.run.run(full_refresh=True)
    assert "__lw_src" in typed_bootstrap(seen)
    assert m.run.rows("m") == untyped(m)[0] and table_types(m) == types


def test_a_refold_whose_stored_contract_answered_is_sent_typed(
    model_run: Callable[..., ModelRun],
) -> None:
    """A re-fold (``refresh_mode='full'``) whose upstreams' schemas did not change analyses
    nothing: the folds' types come from the table's properties, stored beside the contract."""
    m = model_run(AGG.replace("config(", "config(refresh_mode='full', ", 1), SCHEMAS)
    for table, rows in batch(0).items():
        m.write(table, rows)
    m.step({})
    with statements() as seen:
        rows = m.step(batch(1))
    folds = [t for t in seen if "__lw_f0" in t]
    assert len(folds) == 1, folds  # the re-fold, no analysis of the query
    assert "__lw_src" in folds[0] and "NULL AS __lw_s" not in folds[0]
    assert rows == untyped(m)[0]


def test_a_restate_is_sent_typed(model_run: Callable[..., ModelRun]) -> None:
    """``run --restate``: the restated keys' folds put together typed (the types stored with
    the contract), equal to the untyped bootstrap's rows."""
    m = model_run(AGG, SCHEMAS)
    for table, rows in batch(0).items():
        m.write(table, rows)
    m.step({})
    manifest = m.run.manifest()
    with statements() as seen:
        [result] = run_models(manifest, ["m"], m.run.adapter(manifest), restate="k > 1")
    assert result.status == "success", result.message
    [restated] = [t for t in seen if "__lw_f0" in t]
    assert "__lw_src" in restated and "NULL AS __lw_s" not in restated
    assert m.run.rows("m") == untyped(m)[0]
