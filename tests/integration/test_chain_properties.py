"""Property test: a chain ``wide -> ref() aggregation`` stays exact across random changes.

Each example draws a few runs; before each, random rows are appended to the wide table's two
sources (new keys, changed values, a key's group moving) and some dimension rows are deleted
(the wide model removes their rows). The wide table is merge-on-read or copy-on-write, with or
without format v3 deletion vectors. After every run the downstream sum per group must equal
the same sum computed in plain Python from the wide table's rows, which the downstream never
reads in full: it follows the wide table's produced changelog, updates and deletes included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.integration.conftest import ModelRun, null_first
from tests.support.suite_profile import examples

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture
def model_run(inline_model_run: Callable[..., ModelRun]) -> Callable[..., ModelRun]:
    """The shared factory, source rows written as inline VALUES (tests.support.inline_rows)."""
    return inline_model_run


WIDE = """
{{{{ config(merge_engine='partial_update', primary_key='k', remove_record_on_delete=true,
            write_mode='{mode}', format_version={version}) }}}}
SELECT k, g, CAST(NULL AS BIGINT) AS amount FROM {{{{ source('src', 'dim') }}}}
UNION ALL
SELECT k, CAST(NULL AS STRING), amount FROM {{{{ source('src', 'fact') }}}}
"""
BY_GROUP = """
{{ config(merge_engine='aggregation', primary_key='g', aggregates={'total': 'sum', 'n': 'sum'}) }}
SELECT g, amount AS total, CAST(1 AS BIGINT) AS n FROM {{ ref('wide') }} WHERE g IS NOT NULL
"""
SCHEMAS = {"dim": "k INT, g STRING", "fact": "k INT, amount BIGINT"}
KEYS = st.integers(0, 7)
# dimension rows may name keys 8 and 9, which have no fact row until one comes: their amount is
# NULL, and a group can be left with NULL amounts only (its sum must then be NULL, not 0)
DIM_KEYS = st.integers(0, 9)


def _groups(wide: list[tuple]) -> list[tuple]:
    out: dict[str, list] = {}
    for _, g, amount in wide:
        if g is not None:
            row = out.setdefault(g, [g, None, 0])
            row[1] = amount if row[1] is None else row[1] + (amount or 0)
            row[2] += 1
    return sorted((tuple(r) for r in out.values()), key=null_first)


STEP = st.fixed_dictionaries(
    {
        "dim": st.lists(st.tuples(DIM_KEYS, st.sampled_from(["a", "b", "c"])), max_size=4),
        "fact": st.lists(st.tuples(KEYS, st.integers(-5, 20)), max_size=4),
        "delete": st.lists(KEYS, max_size=2, unique=True),
    }
)


@settings(
    max_examples=examples(4),
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    layout=st.sampled_from([("merge-on-read", 2), ("merge-on-read", 3), ("copy-on-write", 2)]),
    steps=st.lists(STEP, min_size=2, max_size=3),
)
def test_downstream_sum_follows_the_wide_table(
    model_run: Callable[..., ModelRun], layout: tuple[str, int], steps: list[dict[str, Any]]
) -> None:
    m = model_run(BY_GROUP, SCHEMAS)
    mode, version = layout
    (m.run.root / "models" / "wide.sql").write_text(WIDE.format(mode=mode, version=version))
    m.step({"dim": [(k, "a") for k in range(0, 8, 2)], "fact": [(k, k) for k in range(8)]})
    for step in steps:
        if step["delete"]:
            keys = ", ".join(str(k) for k in step["delete"])
            m.run.spark.sql(f"DELETE FROM lw.{m.run.seed_schema}.dim WHERE k IN ({keys})")
        rows = m.step({"dim": step["dim"], "fact": step["fact"]})
        assert rows == _groups(m.run.rows("wide")), step
        assert m.last.rows == len(rows)  # from the summary: data rows minus deleted positions
        modes = {r["relation"].rsplit(".", 1)[1]: r["mode"] for r in m.last.ranges}
        assert modes["wide"] in ("none", "incremental", "changelog"), m.last.ranges


def test_a_group_whose_every_amount_moved_away_sums_to_null(
    model_run: Callable[..., ModelRun],
) -> None:
    """Key 0 (amount 5) leaves group a, key 1 (no amount yet) stays: a rebuild sums a's
    remaining amounts to NULL, so must the downstream that subtracted key 0's 5 (not 0)."""
    m = model_run(BY_GROUP, SCHEMAS)
    (m.run.root / "models" / "wide.sql").write_text(WIDE.format(mode="copy-on-write", version=2))
    first = m.step({"dim": [(0, "a"), (1, "a")], "fact": [(0, 5)]})
    assert first == _groups(m.run.rows("wide"))
    moved = m.step({"dim": [(0, "b")], "fact": []})
    expected = _groups(m.run.rows("wide"))
    assert ("a", None, 1) in expected  # the case at stake: a has a row but no amount
    assert moved == expected
    again = m.step({"dim": [], "fact": [(1, 7)]})  # and the count goes on from there
    assert again == _groups(m.run.rows("wide"))


# ------------------------------------------------------------ a column added along the chain

CHANGING = """
{{{{ config(merge_engine='partial_update', primary_key='k', write_mode='{mode}') }}}}
SELECT k, g, CAST(NULL AS {kind}) AS amount{dim} FROM {{{{ source('src', 'dim') }}}}
UNION ALL
SELECT k, CAST(NULL AS STRING), {amount}{fact} FROM {{{{ source('src', 'fact') }}}}{more}
"""
MIRROR = """
{{{{ config(merge_engine='deduplicate', primary_key='k') }}}}
SELECT k, g, amount{extra} FROM {{{{ ref('wide') }}}}
"""
EXTRA = "\nUNION ALL\nSELECT k, CAST(NULL AS STRING), CAST(NULL AS {kind}), tag FROM {{{{ source('src', 'extra') }}}}"
CHANGES = {
    # change: (the wide model's projections, the column the mirror reads too)
    "none": ({}, ""),
    "column": ({"dim": ", CAST(NULL AS BIGINT) AS twice", "fact": ", amount * 2"}, "twice"),
    "source": (
        {"dim": ", CAST(NULL AS STRING) AS tag", "fact": ", CAST(NULL AS STRING)", "more": EXTRA},
        "tag",
    ),
    "widen": ({"kind": "BIGINT", "amount": "CAST(amount AS BIGINT)"}, ""),
}
CHAIN_SCHEMAS = {
    "dim": "k INT, g STRING",
    "fact": "k INT, amount INT",
    "extra": "k INT, tag STRING",
}


def _chain_models(m: ModelRun, mode: str, change: str) -> None:
    shape = {"kind": "INT", "amount": "amount", "dim": "", "fact": "", "more": ""}
    projections, extra = CHANGES[change]
    shape.update(projections)
    shape["more"] = shape["more"].format(kind=shape["kind"])
    models = m.run.root / "models"
    (models / "wide.sql").write_text(CHANGING.format(mode=mode, **shape))
    (models / "mirror.sql").write_text(MIRROR.format(extra=f", {extra}" if extra else ""))


def _every_row(m: ModelRun, table: str) -> list[tuple]:
    """Every column by name, hidden ones too (a NULL non-null count reads as 0, as the MERGE
    reads it: tests.integration.test_schema_changes.all_rows)."""
    from pyspark.sql import functions as F

    frame = m.run.spark.table(f"lw.{m.run.namespace}.{table}")
    columns = [
        F.coalesce(F.col(c), F.lit(0)).alias(c) if c.startswith("__lw_nn_") else F.col(c)
        for c in sorted(frame.columns)
    ]
    return sorted((tuple(r) for r in frame.select(*columns).collect()), key=str)


CHAIN_STEP = st.fixed_dictionaries(
    {
        "dim": st.lists(st.tuples(DIM_KEYS, st.sampled_from(["a", "b", "c"])), max_size=3),
        "fact": st.lists(st.tuples(KEYS, st.integers(-5, 20)), max_size=3),
        "extra": st.lists(st.tuples(KEYS, st.sampled_from(["x", "y"])), max_size=2),
    }
)


@pytest.mark.parametrize("change", ["column", "source", "widen"])
@settings(
    max_examples=examples(2),
    deadline=None,
    derandomize=True,
    print_blob=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a shrink would take an hour
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    mode=st.sampled_from(["merge-on-read", "copy-on-write"]),
    before=st.lists(CHAIN_STEP, min_size=1, max_size=2),
    after=st.lists(CHAIN_STEP, min_size=0, max_size=2),
)
def test_a_schema_change_of_a_model_keeping_a_changelog_equals_a_full_refresh_of_the_chain(
    model_run: Callable[..., ModelRun],
    mode: str,
    change: str,
    before: list[dict[str, Any]],
    after: list[dict[str, Any]],
) -> None:
    """``wide`` (partial_update) keeps a changelog for two models over it: a sum per group and
    a mirror of its rows. Between random runs the wide model takes a change in place (a new
    column of a source, a new source with a column, a widened type; the mirror reads the new
    column too), with no rebuild: after every run both follow the wide table, and at the end
    every table equals a ``--full-refresh`` of the whole chain, hidden columns included (no
    deletes: a record older than a delete is a documented difference from a rebuild)."""
    m = model_run(BY_GROUP, CHAIN_SCHEMAS)
    _chain_models(m, mode, "none")
    m.step({"dim": [(k, "a") for k in range(0, 8, 2)], "fact": [(k, k) for k in range(8)]})
    m.write("extra", [(1, "x")])
    for index, step in enumerate([*before, None, *after]):
        if step is None:  # the change, with no new rows: in place, no model rebuilt
            _chain_models(m, mode, change)
            results = m.run.run()
            assert {r.plan for r in results.values()} == {"incremental"}, results
            rows = m.run.rows("m")
        else:
            rows = m.step(step)
        wide = m.run.rows("wide")
        assert rows == _groups([w[:3] for w in wide]), (index, step)
        assert m.run.rows("mirror") == wide, (index, step)
    tables = ("wide", "m", "mirror")
    incremental = {t: _every_row(m, t) for t in tables}
    m.run.run(full_refresh=True)
    assert {t: _every_row(m, t) for t in tables} == incremental
