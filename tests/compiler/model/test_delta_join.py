"""``joins`` config: delta joins found, refused where re-derivation could not equal a rebuild,
and their plans naming only parameters a run binds (no JVM)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from lakewide.compiler.plans import steps as p
from lakewide.run.models.delta_join_run import derived_keys
from lakewide.vocabulary.errors import CompileError
from tests.compiler.plans.test_run_plan import _placeholders, _trees, compiled

ORDERS = (
    "SELECT o.id, o.amount, c.tier, o.ts FROM lw.ods.orders AS o "
    "LEFT JOIN lw.ods.customers AS c ON o.customer_id = c.customer_id"
)
PU = {"merge_engine": "partial_update", "primary_key": "id", "sequence_field": "ts"}
CONTEXT = {"upstream": ["lw.ods.orders", "lw.ods.customers", "lw.ods.notes"], "producing": []}


def build(sql: str = ORDERS, produces: bool = False, **config: Any) -> Any:
    return compiled({**PU, **config}, {**CONTEXT, "produces": produces}, sql)


@pytest.mark.parametrize("name", ["customers", "c", "lw.ods.customers", "CUSTOMERS"])
def test_a_join_is_named_by_alias_or_table(name: str) -> None:
    [join] = build(joins={name: "delta"}).deltas
    assert (join.table, join.alias, join.keys, join.columns) == (
        "lw.ods.customers",
        "c",
        ("customer_id",),
        ("tier",),
    )


def test_lookup_is_todays_behaviour_and_compiles_no_delta_plan() -> None:
    model = build(joins={"customers": "lookup"})
    assert model.deltas == [] and model.plans.delta_joins == []
    assert not any("delta" in name for name in model.files(plans=True))


def test_a_name_that_no_branch_joins_is_refused_with_the_joined_names() -> None:
    with pytest.raises(CompileError) as err:
        build(joins={"customer": "delta"})
    assert err.value.key == "joins.customer"
    assert "no source branch joins" in str(err.value) and "customers" in str(err.value)


REFUSED = {
    "inner join": (
        ORDERS.replace("LEFT JOIN", "JOIN"),
        {},
        "must be a LEFT JOIN",
    ),
    "not an equi-join": (
        ORDERS.replace("o.customer_id = c.customer_id", "o.customer_id > c.customer_id"),
        {},
        "must be equalities",
    ),
    "dimension compared with itself": (
        ORDERS.replace("o.customer_id = c.customer_id", "c.customer_id = c.region"),
        {},
        "must be equalities",
    ),
    "filter on the dimension": (
        ORDERS + " WHERE c.tier <> 'x'",
        {},
        "outside the SELECT list",
    ),
    "unqualified column": (ORDERS.replace("o.amount", "amount"), {}, "qualify amount"),
    "key from the dimension": (
        ORDERS.replace("o.id", "c.customer_id AS id"),
        {},
        "primary key from the driving table",
    ),
    "feeds the sequence": (
        ORDERS.replace("o.ts", "c.version AS ts"),
        {},
        "primary_key/sequence_field",
    ),
    "feeds nothing": (ORDERS.replace("c.tier", "o.tier"), {}, "feeds no column"),
    "column shared with another source": (
        ORDERS + " UNION ALL SELECT n.id, NULL, n.tier, n.ts FROM lw.ods.notes AS n",
        {},
        "also own",
    ),
    "deduplicate over two sources": (
        ORDERS + " UNION ALL SELECT n.id, n.amount, NULL, n.ts FROM lw.ods.notes AS n",
        {"merge_engine": "deduplicate"},
        "picks whole rows",
    ),
    "sequence groups": (
        ORDERS,
        {"sequence_groups": {"ts": ["amount", "tier"]}, "sequence_field": []},
        "sequence_groups",
    ),
    "self join": (ORDERS.replace("lw.ods.customers", "lw.ods.orders"), {}, "with itself"),
}


@pytest.mark.parametrize("case", REFUSED, ids=list(REFUSED))
def test_refused_where_re_deriving_could_not_equal_a_rebuild(case: str) -> None:
    sql, config, message = REFUSED[case]
    with pytest.raises(CompileError) as err:
        build(sql, **{"joins": {"c": "delta"}, **config})
    assert message in str(err.value), str(err.value)
    assert err.value.key == "joins.c" and str(err.value.path) == "models/m.sql"


def test_delta_for_sum_recomputes_the_fold_rather_than_adding_again() -> None:
    model = build(
        ORDERS.replace("c.tier", "c.points"),
        merge_engine="aggregation",
        aggregates={"points": "sum"},
        joins={"c": "delta"},
    )
    [join] = model.plans.delta_joins
    merge = next(s for s in join.rederive if isinstance(s, p.Commit)).statement.sql("spark")
    # the stored sum is replaced by the fold over every fact row of the key, never added to
    assert "t.points = s.points" in merge and "t.points +" not in merge


@pytest.mark.parametrize("produces", [False, True])
def test_every_parameter_of_a_delta_join_plan_is_bound_before_it(produces: bool) -> None:
    plans = build(joins={"c": "delta"}, produces=produces).plans
    [join] = plans.delta_joins
    up_front = {r.at for r in plans.pins} | {join.start, join.end}
    assert set(join.reads) == {"incremental", "changelog", "full"}
    assert set(join.derived) == {"dimension", "facts", "both", "full"}
    for reads, derived in itertools.product(join.reads.values(), join.derived.values()):
        known = set(up_front)
        for step in [*reads, *derived, *join.rederive]:
            for tree in _trees(step):
                assert _placeholders(tree) <= known, step
            for attribute in ("at", "after", "when", "of"):
                value = getattr(step, attribute, None)
                assert value is None or value in known, (step, value)
            if isinstance(step, (p.Stage, p.Sequence)):
                known.add(step.into)
            if isinstance(step, p.Commit) and not step.changelog:
                known |= {"parent", "snapshot"}
    commits = [s for s in join.rederive if isinstance(s, p.Commit)]
    assert [c.changelog for c in commits] == ([False, True] if produces else [False])


def test_a_sum_rederived_replaces_its_count_of_non_null_inputs_too() -> None:
    model = build(
        ORDERS.replace("o.id,", "o.store_id,").replace("c.tier", "c.points"),
        merge_engine="aggregation",
        primary_key="store_id",
        sequence_field=None,
        aggregates={"points": "sum"},
        joins={"c": "delta"},
    )
    [join] = model.plans.delta_joins
    merge = next(s for s in join.rederive if isinstance(s, p.Commit)).statement.sql("spark")
    # a later retraction of a re-derived key must find the rebuilt count
    assert "t.__lw_nn_points = s.__lw_nn_points" in merge


@pytest.mark.parametrize(
    ("dimension", "facts", "derived"),
    [
        ("none", "none", None),
        ("none", "incremental", None),  # appended facts joined the pinned dimension
        ("changelog", "incremental", "dimension"),
        ("incremental", "none", "dimension"),
        ("none", "changelog", "facts"),  # retractions, moved keys, NULL that never overwrites
        ("none", "positions", "facts"),
        ("changelog", "changelog", "both"),
        ("full", "changelog", "full"),
        ("none", "full", "full"),
    ],
)
def test_what_a_run_derives_again(dimension: str, facts: str, derived: str | None) -> None:
    assert derived_keys(dimension, facts) == derived


def test_the_changed_facts_are_re_derived_by_the_keys_of_both_images() -> None:
    [join] = build(joins={"c": "delta"}).plans.delta_joins
    [both] = join.derived["both"]
    assert isinstance(both, p.Run)
    sql = both.statement.sql("spark")
    # fact rows of the keys joined to changed customers, and of those the run's read changed
    assert "__lw_dkeys_1_1" in sql and "FROM __lw_new_1 AS o" in sql and "UNION" in sql
