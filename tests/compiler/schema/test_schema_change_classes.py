"""The classification of a key table's schema changes, stored contract -> model (no JVM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler.model.wide_model import WideModel, analyze
from lakewide.compiler.schema.contract import Contract, contract_of, source_identities
from lakewide.compiler.schema.schema_changes import (
    SchemaPlan,
    add_columns,
    alter_type,
    classify,
    drop_columns,
    promotable,
    set_property,
)
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.run.schema.schema_steps import contract_options, reread_refusals
from lakewide.vocabulary.dialect import to_sql

PARTIAL = {"merge_engine": "partial_update", "primary_key": "k", "sequence_field": "ts"}
SUMS = {"merge_engine": "aggregation", "primary_key": "k", "aggregates": {"a": "sum", "b": "sum"}}
A = "SELECT k, ts, a, CAST(NULL AS BIGINT) AS b FROM lw.src.x WHERE a > 0"
B = "SELECT k, ts, CAST(NULL AS BIGINT), b FROM lw.src.y"
THREE = f"{A}\nUNION ALL\n{B}\nUNION ALL\nSELECT k, ts, NULL, NULL FROM lw.src.z"


def model(sql: str, config: dict[str, Any]) -> WideModel:
    cfg = parse_model_config(config, path="m.sql")
    node = ModelNode(
        name="m",
        path=Path("models/m.sql"),
        raw_sql=sql,
        sql=sql,
        config=cfg,
        relation=Relation("lw", "db", "m"),
    )
    return analyze(node)


def contract(sql: str, config: dict[str, Any], **types: str) -> Contract:
    found = model(sql, config)
    kinds = {c: "bigint" for c in found.table_columns}
    kinds.update({c: "struct<s0:bigint,b:int>" for c in kinds if c.startswith("__lw_v")})
    options = contract_options(found.node)
    return contract_of(found, {**kinds, **types}, options=options, definition="d", layout=2)


def plan(
    old: str,
    new: str,
    config: dict[str, Any] = PARTIAL,
    new_config: dict[str, Any] | None = None,
    policy: str = "append_new_columns",
    old_types: dict[str, str] | None = None,
    new_types: dict[str, str] | None = None,
) -> SchemaPlan:
    configured = model(new, new_config or config)
    return classify(
        contract(old, config, **(old_types or {})),
        contract(new, new_config or config, **(new_types or {})),
        policy,
        reread_refusals(configured),
    )


def refused(found: SchemaPlan, *parts: str) -> None:
    assert any(all(p in r for p in parts) for r in found.refusals), found.refusals


def test_unchanged_and_cosmetic_edits_plan_nothing() -> None:
    two = f"{A} UNION ALL {B}"
    assert not plan(two, two).changed
    spaced = two.replace("SELECT k, ts, a,", "select  k ,ts,\n a ,").replace("WHERE", "where")
    assert not plan(two, spaced).changed


def test_a_new_source_last_is_merged_alone_with_its_columns_added() -> None:
    two = f"{A} UNION ALL {B}"
    new = (
        f"{A.replace('AS b', 'AS b, CAST(NULL AS BIGINT) AS c')} UNION ALL "
        f"{B.replace('b FROM', 'b, NULL FROM')} UNION ALL SELECT k, ts, NULL, NULL, c FROM lw.src.w"
    )
    found = plan(two, new)
    assert found.refusals == []
    assert found.new_sources == {2}
    assert found.add == {"c": "bigint", "__lw_v_c": "struct<s0:bigint,b:int>"}
    assert found.reread == {} and found.drop == []
    assert any(
        "new source lw.src.w (branch 3)" in n and "adding column(s) c" in n for n in found.notes
    )


def test_a_new_source_in_the_middle_moves_the_others_and_is_refused() -> None:
    two = f"{A} UNION ALL {B}"
    middle = f"{A} UNION ALL SELECT k, ts, a, NULL FROM lw.src.w UNION ALL {B}"
    refused(plan(two, middle), "source lw.src.y moved from branch 2 to branch 3", "add new")


def test_a_source_read_twice_is_told_apart() -> None:
    twice = f"{A} UNION ALL {A.replace('a > 0', 'a < 0')}"
    assert source_identities(model(twice, PARTIAL)) == ["lw.src.x", "lw.src.x#2"]


def test_a_new_column_of_a_source_rereads_it_where_harmless() -> None:
    two = f"{A} UNION ALL {B}"
    new = f"{A.replace('AS b', 'AS b, a * 2 AS d')} UNION ALL {B.replace('b FROM', 'b, NULL FROM')}"
    found = plan(two, new)
    assert found.refusals == [] and found.reread == {0: ["d"]}
    assert "d" in found.add and found.new_sources == set()


def test_a_new_column_of_a_summing_source_is_refused() -> None:
    old = "SELECT k, a, CAST(NULL AS BIGINT) AS b FROM lw.src.x UNION ALL SELECT k, NULL, b FROM lw.src.y"
    new = old.replace("AS b FROM", "AS b, a AS d FROM").replace(
        "b FROM lw.src.y", "b, NULL FROM lw.src.y"
    )
    found = plan(old, new, SUMS, {**SUMS, "aggregates": {"a": "sum", "b": "sum", "d": "max"}})
    refused(found, "new column d in existing source lw.src.x", "count its rows twice", "sum(a)")


def test_removed_column_kept_dropped_or_refused_by_policy() -> None:
    two = f"{A} UNION ALL {B}"
    fewer = "SELECT k, ts, a FROM lw.src.x WHERE a > 0 UNION ALL SELECT k, ts, NULL FROM lw.src.y"
    kept = plan(two, fewer)
    assert kept.refusals == [] and kept.drop == []
    assert any("column b kept in the table" in n for n in kept.notes)
    synced = plan(two, fewer, policy="sync_all_columns")
    assert sorted(synced.drop) == ["__lw_v_b", "b"] and synced.refusals == []
    refused(plan(two, fewer, policy="fail"), "column b kept", "on_schema_change='fail'")


def test_removed_last_source_is_said_and_refused_under_fail() -> None:
    found = plan(THREE, f"{A} UNION ALL {B}")
    assert any("source lw.src.z (branch 3) removed" in n for n in found.notes)
    assert found.refusals == []
    refused(plan(THREE, f"{A} UNION ALL {B}", policy="fail"), "lw.src.z", "removed")


def test_a_new_source_is_refused_under_fail() -> None:
    refused(plan(f"{A} UNION ALL {B}", THREE, policy="fail"), "new source lw.src.z")


@pytest.mark.parametrize(
    ("new_config", "parts"),
    [
        ({**PARTIAL, "primary_key": ["k", "ts"]}, ("primary_key changed", "['k']", "['k', 'ts']")),
        ({**PARTIAL, "merge_engine": "deduplicate"}, ("merge_engine changed", "partial_update")),
        (
            {**PARTIAL, "sequence_field": ["ts", "k"]},
            ("sequence_field changed", "['ts']", "['ts', 'k']"),
        ),
        ({**PARTIAL, "partition_by": ["bucket(4, k)"]}, ("config partition_by changed",)),
    ],
    ids=["primary_key", "merge_engine", "sequence_field", "partition_by"],
)
def test_changed_keys_are_refused_naming_stored_and_configured(
    new_config: dict[str, Any], parts: tuple[str, ...]
) -> None:
    two = f"{A} UNION ALL {B}"
    refused(plan(two, two, PARTIAL, new_config), *parts)


def test_changed_sequence_groups_and_aggregate_are_refused() -> None:
    sql = (
        "SELECT k, g, a FROM lw.src.x UNION ALL SELECT k, CAST(NULL AS BIGINT), NULL FROM lw.src.y"
    )
    groups = {"merge_engine": "partial_update", "primary_key": "k", "sequence_groups": {"g": ["a"]}}
    found = plan(sql, sql, groups, {**groups, "sequence_groups": {"g": []}})
    refused(found, "sequence_groups changed")
    sums = "SELECT k, a, CAST(NULL AS BIGINT) AS b FROM lw.src.x UNION ALL SELECT k, NULL, b FROM lw.src.y"
    found = plan(sums, sums, SUMS, {**SUMS, "aggregates": {"a": "max", "b": "sum"}})
    refused(found, "aggregate function of column a changed: stored sum, configured max")


def test_changed_filter_or_expression_is_refused() -> None:
    two = f"{A} UNION ALL {B}"
    refused(plan(two, two.replace("a > 0", "a > 1")), "source lw.src.x reads differently", "a > 1")
    refused(
        plan(two, two.replace("SELECT k, ts, a,", "SELECT k, ts, a + 1 AS a,")),
        "expression of column a in source lw.src.x changed: stored `a`, configured `a + 1`",
    )


def test_types_promoted_in_place_or_refused() -> None:
    two = f"{A} UNION ALL {B}"
    widened = plan(two, two, old_types={"a": "int"}, new_types={"a": "bigint"})
    assert widened.promote == {"a": "bigint"} and widened.refusals == []
    refused(
        plan(two, two, old_types={"a": "bigint"}, new_types={"a": "int"}),
        "type of column a changed: stored bigint, configured int",
    )
    refused(plan(two, two, old_types={"a": "bigint"}, new_types={"a": "string"}), "column a")
    assert promotable("decimal(10,2)", "decimal(12,2)") and promotable("float", "double")
    assert not promotable("decimal(10,2)", "decimal(12,3)") and not promotable("int", "string")


def test_new_versions_for_a_stored_column_are_refused() -> None:
    # without a sequence field a column of one source stores no version; a second source
    # writing it would need versions the stored rows do not have
    one = {"merge_engine": "partial_update", "primary_key": "k"}
    old = "SELECT k, a, CAST(NULL AS BIGINT) AS b FROM lw.src.x UNION ALL SELECT k, NULL, b FROM lw.src.y"
    new = f"{old} UNION ALL SELECT k, a, NULL FROM lw.src.z"
    refused(plan(old, new, one), "hidden state of column a", "__lw_v_a")


def test_statements_are_built_as_trees() -> None:
    table = Relation("lw", "db", "m")
    add = add_columns(table, {"c": "bigint", "__lw_v_c": "struct<s0:bigint,b:int>"})
    assert to_sql(add, pretty=False) == (
        "ALTER TABLE lw.db.m ADD COLUMNS (`c` BIGINT, `__lw_v_c` STRUCT<s0: BIGINT, b: INT>)"
    )
    assert (
        to_sql(drop_columns(table, ["c"]), pretty=False) == "ALTER TABLE lw.db.m DROP COLUMNS (`c`)"
    )
    assert to_sql(alter_type(table, "a", "bigint"), pretty=False) == (
        "ALTER TABLE lw.db.m ALTER COLUMN `a` TYPE BIGINT"
    )
    assert to_sql(set_property(table, "lakewide.contract", "{'x'}"), pretty=False) == (
        "ALTER TABLE lw.db.m SET TBLPROPERTIES ('lakewide.contract'='{\\'x\\'}')"
    )


def test_contract_round_trips_through_json() -> None:
    stored = contract(THREE, PARTIAL)
    assert Contract.from_json(stored.to_json()) == stored


@pytest.mark.parametrize(
    "extra",
    [
        {"freshness": "5 minutes"},
        {"maintenance": {"retain_last": 3}},
        {"on_schema_change": "fail"},
        {"merge_filter": True},
        {"tags": ["nightly"]},
    ],
    ids=["freshness", "maintenance", "policy", "merge_filter", "tags"],
)
def test_keys_that_leave_the_table_as_it_is_plan_nothing(extra: dict[str, Any]) -> None:
    two = f"{A} UNION ALL {B}"
    assert not plan(two, two, PARTIAL, {**PARTIAL, **extra}).changed


def test_a_new_column_is_refused_naming_only_the_sums_its_source_feeds() -> None:
    old = "SELECT k, a, CAST(NULL AS BIGINT) AS b FROM lw.src.x UNION ALL SELECT k, NULL, b FROM lw.src.y"
    new = old.replace("b FROM lw.src.y", "b, 'x' AS d FROM lw.src.y").replace(
        "AS b FROM lw.src.x", "AS b, NULL AS d FROM lw.src.x"
    )
    config = {**SUMS, "aggregates": {"a": "sum", "b": "sum", "d": "max"}}
    found = plan(old, new, SUMS, config)
    assert len(found.refusals) == 1, found.refusals
    refused(found, "new column d in existing source lw.src.y", "twice (sum(b))")


MAX = {"function": "max", "ignore_retract": True}
MAXES = {
    "merge_engine": "aggregation",
    "primary_key": "k",
    "row_kind_column": "op",
    "aggregates": {"a": "sum", "m": MAX},
}
FEEDS = "SELECT k, a, CAST(NULL AS INT) AS m, op FROM lw.src.x UNION ALL SELECT k, NULL, m, op FROM lw.src.y"


def test_a_new_column_of_a_source_feeding_no_sum_is_added_by_rereading_it() -> None:
    """Re-reading a source can count twice only the sums it feeds: a source feeding none gets
    its new column as partial_update does (issue: email_domain of the profile branch)."""
    new = FEEDS.replace("m, op FROM lw.src.y", "m, op, 'x' AS email_domain FROM lw.src.y")
    new = new.replace("op FROM lw.src.x", "op, NULL AS email_domain FROM lw.src.x")
    config = {**MAXES, "aggregates": {**MAXES["aggregates"], "email_domain": MAX}}
    found = plan(FEEDS, new, MAXES, config)
    assert found.refusals == [] and found.reread == {1: ["email_domain"]}
    assert "email_domain" in found.add
    # the summing source is still refused, naming its sum
    summing = FEEDS.replace("m, op FROM lw.src.x", "m, op, a AS e FROM lw.src.x")
    summing = summing.replace("m, op FROM lw.src.y", "m, op, NULL FROM lw.src.y")
    config = {**MAXES, "aggregates": {**MAXES["aggregates"], "e": MAX}}
    refused(plan(FEEDS, summing, MAXES, config), "source lw.src.x", "twice (sum(a))")


def test_a_source_feeding_no_sum_is_reread_under_stored_row_counts() -> None:
    """Without a row_kind_column an aggregation stores each key's upstream row count; the
    re-read source's rows are not counted again (its batch counts 0), so it is re-read too."""
    old = "SELECT k, a, CAST(NULL AS INT) AS m FROM lw.src.x UNION ALL SELECT k, NULL, m FROM lw.src.y"
    new = old.replace("m FROM lw.src.y", "m, 'x' AS d FROM lw.src.y").replace(
        "AS m FROM lw.src.x", "AS m, NULL AS d FROM lw.src.x"
    )
    counts = {"merge_engine": "aggregation", "primary_key": "k", "aggregates": {"a": "sum"}}
    found = plan(old, new, counts, {**counts, "aggregates": {"a": "sum", "d": "max"}})
    assert found.refusals == [] and found.reread == {1: ["d"]}
