"""Ties keep arrival order when a branch joins, filters or reads a CTE (issue 48, item 1).

A branch's rows are numbered where its driving table is read (in commit order,
docs/concepts/arrival-order.md), before a join's shuffle reorders them: a key whose records come in two
commits keeps the later commit's values after the bootstrap, incremental runs, a
``--full-refresh`` and a ``--restate``, whatever the branch joins (a lookup of a table model,
a ``delta`` join, a temporal join of a snapshot). The expected tables come from the
plain-Python fold of all records in commit order (tests/oracle).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lakewide.run.models.executor import run_models
from tests.integration.conftest import ModelRun
from tests.oracle import engines as oracle
from tests.oracle.engines import Spec
from tests.support.suite_profile import examples

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture
def model_run(inline_model_run: Callable[..., ModelRun]) -> Callable[..., ModelRun]:
    """The shared factory, source rows written as inline VALUES (tests.support.inline_rows)."""
    return inline_model_run


# ------------------------------------------------------------------ the scenario

ACCOUNTS = "account_id INT, region STRING, tier STRING"
SCENARIO_SCHEMAS = {
    "accounts": ACCOUNTS,
    "orders": "account_id INT, amount BIGINT",
    "labels": "tier STRING, label STRING",
}
TIER_LABELS = """{{ config(materialized='table') }}
SELECT tier, label FROM {{ source('src', 'labels') }}
"""
WIDE = """
{{ config(merge_engine='partial_update', primary_key='account_id') }}
SELECT a.account_id, a.region, a.tier, COALESCE(l.label, 'unlabelled') AS label,
       CAST(NULL AS BIGINT) AS amount
FROM {{ source('src', 'accounts') }} AS a
LEFT JOIN {{ ref('tier_labels') }} AS l ON a.tier = l.tier
UNION ALL
SELECT o.account_id, NULL, NULL, NULL, o.amount FROM {{ source('src', 'orders') }} AS o
"""
WIDE_COLUMNS = ["account_id", "region", "tier", "label", "amount"]
LABELS = {"bronze": "Bronze", "silver": "Silver", "gold": "Gold", "platinum": "Platinum"}
TIERS = ["bronze", "silver", "gold", "platinum", "iron", "copper"]
REGIONS = ["north", "south", "east", "west"]


def _accounts(commit: int, keys: range) -> list[tuple]:
    """One commit's account records: every key's region and tier move with the commit."""
    return [(k, REGIONS[(k + commit) % 4], TIERS[(k * 5 + commit * 7) % 6]) for k in keys]


def _wide(accounts: list[list[tuple]], orders: list[tuple]) -> list[tuple]:
    """The plain fold, in commit order, of the accounts joined to the labels and the orders."""
    spec = Spec(engine="partial_update", key=["account_id"], columns=WIDE_COLUMNS)
    records: list[tuple[int, dict[str, Any]]] = []
    for rows in accounts:
        for k, region, tier in rows:
            values = {"account_id": k, "region": region, "tier": tier}
            records.append((0, values | {"label": LABELS.get(tier, "unlabelled")}))
    records += [(1, {"account_id": k, "amount": amount}) for k, amount in orders]
    return oracle.as_rows(oracle.bootstrap(spec, records), WIDE_COLUMNS)


def _restate(m: ModelRun, predicate: str) -> Any:
    manifest = m.run.manifest()
    [result] = run_models(manifest, ["m"], m.run.adapter(manifest), restate=predicate)
    assert result.status == "success", result.message
    assert result.plan == "restate"
    return result


def test_a_branch_joining_a_lookup_model_keeps_the_later_commit(
    model_run: Callable[..., ModelRun],
) -> None:
    """The issue's model: ``accounts`` LEFT JOINs the ``tier_labels`` model, no sequence
    field; keys 1-12 get a record in each of two commits before the bootstrap and in each of
    two more before an incremental run: every plan keeps each key's last commit."""
    m = model_run(WIDE, SCENARIO_SCHEMAS)
    (m.run.root / "models" / "tier_labels.sql").write_text(TIER_LABELS)
    m.write("labels", list(LABELS.items()))
    orders = [(k, 10 * k) for k in range(1, 13, 3)]
    m.write("orders", orders)
    accounts = [_accounts(0, range(1, 13)), _accounts(1, range(1, 13))]
    for rows in accounts:
        m.write("accounts", rows)
    assert m.step({}) == _wide(accounts, orders)
    assert m.last.plan == "bootstrap"
    accounts += [_accounts(2, range(1, 13, 2)), _accounts(3, range(1, 13, 2))]
    for rows in accounts[2:]:
        m.write("accounts", rows)
    want = _wide(accounts, orders)
    assert m.step({}) == want
    assert m.last.plan == "incremental"
    assert m.step({}, full_refresh=True) == want
    assert m.last.plan == "full-refresh"
    _restate(m, "account_id BETWEEN 2 AND 11")
    assert m.run.rows("m") == want


# ------------------------------------------------------------------ property: every shape

FACTS = "k INT, d INT, v STRING, at TIMESTAMP"
DIM = "d INT, label STRING, updated_at TIMESTAMP"
FACT_TIME = dt.datetime(2024, 6, 1)
DIM_TIME = dt.datetime(2024, 1, 1)
#: the dimension: d -> label (d 4 has no row: a LEFT JOIN gives NULL)
DIMENSION = {0: "zero", 1: "one", 2: "two", 3: "three"}
DIM_SNAPSHOT = """{{ config(materialized='snapshot', unique_key='d', strategy='timestamp',
                    updated_at='updated_at') }}
SELECT d, label, updated_at FROM {{ source('src', 'dim') }}
"""
_DIM = "{{ source('src', 'dim') }}"
_FACTS = "{{ source('src', 'facts') }}"
#: branch shape -> (the model's branch, which records it keeps, whether it joins the label)
SHAPES: dict[str, str] = {
    "plain": f"SELECT f.k, f.v, CAST(f.d AS STRING) AS label FROM {_FACTS} AS f",
    "filter": f"SELECT f.k, f.v, CAST(f.d AS STRING) AS label FROM {_FACTS} AS f WHERE f.d <> 3",
    "lookup": f"SELECT f.k, f.v, l.label FROM {_FACTS} AS f LEFT JOIN {_DIM} AS l ON f.d = l.d",
    "lookup_filter": f"SELECT f.k, f.v, l.label FROM {_FACTS} AS f "
    f"LEFT JOIN {_DIM} AS l ON f.d = l.d WHERE f.d <> 3",
    "delta": f"SELECT f.k, f.v, l.label FROM {_FACTS} AS f LEFT JOIN {_DIM} AS l ON f.d = l.d",
    "cte": f"WITH x AS (SELECT k, v, d FROM {_FACTS} WHERE d <> 3) "
    f"SELECT x.k, x.v, l.label FROM x LEFT JOIN {_DIM} AS l ON x.d = l.d",
    "inner": f"SELECT f.k, f.v, l.label FROM {_FACTS} AS f JOIN {_DIM} AS l ON f.d = l.d",
    "temporal": f"SELECT f.k, f.v, l.label FROM {_FACTS} AS f "
    "LEFT JOIN {{ ref('dim_snapshot') }} FOR SYSTEM_TIME AS OF f.at AS l ON f.d = l.d",
}
COLUMNS = ["k", "v", "label"]


def _keeps(shape: str, d: int) -> bool:
    return not (shape in ("filter", "lookup_filter", "cte") and d == 3) and not (
        shape == "inner" and d not in DIMENSION
    )


def _label(shape: str, d: int) -> str | None:
    return str(d) if shape in ("plain", "filter") else DIMENSION.get(d)


def _model(shape: str, engine: str) -> str:
    joins = ", joins={'l': 'delta'}" if shape == "delta" else ""
    return f"{{{{ config(merge_engine='{engine}', primary_key='k'{joins}) }}}}\n{SHAPES[shape]}\n"


def _expected(shape: str, engine: str, commits: list[list[tuple]]) -> list[tuple]:
    spec = Spec(engine=engine, key=["k"], columns=COLUMNS)
    records = [
        (0, {"k": k, "v": v, "label": _label(shape, d)})
        for rows in commits
        for k, d, v in rows
        if _keeps(shape, d)
    ]
    return oracle.as_rows(oracle.bootstrap(spec, records), COLUMNS)


RECORD = st.tuples(
    st.sampled_from([1, 2, 3]), st.integers(0, 4), st.sampled_from(["a", "b", "c", None])
)


@st.composite
def histories(draw: Any) -> dict[str, Any]:
    """Records of three keys with several join-key values, in 2-4 commits (a run after some)."""
    commits = draw(st.lists(st.lists(RECORD, min_size=2, max_size=6), min_size=2, max_size=4))
    return {
        "commits": [
            [(k, d, f"{v}{i}" if v else None) for k, d, v in c] for i, c in enumerate(commits)
        ],
        "runs": [draw(st.booleans()) for _ in commits[:-1]] + [True],
        "shape": draw(st.sampled_from(sorted(SHAPES))),
        "engine": draw(st.sampled_from(["partial_update", "deduplicate"])),
    }


@settings(
    max_examples=examples(10),  # tests.support.suite_profile: 4 by default
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=histories())
def test_every_plan_follows_commit_order_through_joins_filters_and_ctes(
    model_run: Callable[..., ModelRun], history: dict[str, Any]
) -> None:
    """Random commits of facts whose join key varies per key, runs between some: the
    bootstrap, the incremental runs, a --full-refresh and a --restate of every key equal the
    fold of all kept records in commit order."""
    shape, engine, commits = history["shape"], history["engine"], history["commits"]
    m = model_run(_model(shape, engine), {"facts": FACTS, "dim": DIM})
    if shape == "temporal":
        (m.run.root / "models" / "dim_snapshot.sql").write_text(DIM_SNAPSHOT)
    m.write("dim", [(d, label, DIM_TIME) for d, label in DIMENSION.items()])
    ran = False
    for i, (rows, run) in enumerate(zip(commits, history["runs"])):
        m.write("facts", [(k, d, v, FACT_TIME) for k, d, v in rows])
        if run:
            assert m.step({}) == _expected(shape, engine, commits[: i + 1]), (i, ran)
            assert m.last.plan == ("incremental" if ran else "bootstrap")
            ran = True
    want = _expected(shape, engine, commits)
    assert m.step({}, full_refresh=True) == want
    _restate(m, "k BETWEEN 1 AND 3")
    assert m.run.rows("m") == want
