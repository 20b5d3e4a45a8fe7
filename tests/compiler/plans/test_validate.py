"""Every merge-engine combination Paimon rejects is a compile error naming the key and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler import compile_model
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary.errors import CompileError

BASE = "SELECT k, a, b, n, ts, g_1, op FROM src"
TYPED = "SELECT k, CAST(a AS STRING) AS a, b, CAST(n AS BIGINT) AS n, ts, g_1, op FROM src"


def compile_with(config: dict[str, Any], sql: str = BASE) -> None:
    node = ModelNode(
        "m",
        Path("models/m.sql"),
        sql,
        sql,
        parse_model_config({"primary_key": "k", **config}, path="models/m.sql"),
        Relation("lw", "db", "m"),
    )
    compile_model(node)


REJECTED = [
    (
        "ignore_and_remove",
        {
            "merge_engine": "partial_update",
            "ignore_delete": True,
            "remove_record_on_delete": True,
            "row_kind_column": "op",
        },
        "remove_record_on_delete",
        "contradict",
    ),
    (
        "remove_with_groups",
        {
            "merge_engine": "partial_update",
            "remove_record_on_delete": True,
            "sequence_groups": {"g_1": ["a"]},
            "row_kind_column": "op",
        },
        "remove_record_on_delete",
        "remove_record_on_sequence_group",
    ),
    (
        "deletes_without_policy",
        {"merge_engine": "partial_update", "row_kind_column": "op"},
        "row_kind_column",
        "1. ignore_delete",
    ),
    (
        "update_before_without_row_kinds",
        {"merge_engine": "aggregation", "ignore_update_before": True},
        "ignore_update_before",
        "row_kind_column",
    ),
    (
        "default_aggregate_outside_groups",
        {
            "merge_engine": "partial_update",
            "sequence_groups": {"g_1": ["a"]},
            "default_aggregate": "sum",
        },
        "default_aggregate",
        "'b' is in no group",
    ),
    (
        "key_in_group",
        {"merge_engine": "partial_update", "sequence_groups": {"g_1": ["k"]}},
        "sequence_groups",
        "primary key column 'k'",
    ),
    (
        "column_in_two_groups",
        {"merge_engine": "partial_update", "sequence_groups": {"g_1": ["a"], "ts": ["a"]}},
        "sequence_groups",
        "two sequence groups",
    ),
    (
        "group_sequence_not_a_column",
        {"merge_engine": "partial_update", "sequence_groups": {"nope": ["a"]}},
        "sequence_groups",
        "not a column",
    ),
    (
        "aggregate_outside_group",
        {"merge_engine": "partial_update", "aggregates": {"n": "sum"}},
        "aggregates.n",
        "only inside a sequence group",
    ),
    (
        "remove_on_unknown_group",
        {
            "merge_engine": "partial_update",
            "row_kind_column": "op",
            "sequence_groups": {"g_1": ["a"]},
            "remove_record_on_sequence_group": ["g_9"],
        },
        "remove_record_on_sequence_group",
        "not a sequence group",
    ),
    (
        "unknown_aggregate",
        {"merge_engine": "aggregation", "aggregates": {"n": "median"}},
        "aggregates.n",
        "expected one of sum, product",
    ),
    (
        "aggregate_options_without_function",
        {"merge_engine": "aggregation", "aggregates": {"n": {"delimiter": "|"}}},
        "aggregates.n",
        "add 'function'",
    ),
    (
        "unknown_default_aggregate",
        {"merge_engine": "aggregation", "default_aggregate": "avg"},
        "default_aggregate",
        "expected one of",
    ),
    (
        "option_of_other_function",
        {"merge_engine": "aggregation", "aggregates": {"n": {"function": "sum", "delimiter": ","}}},
        "aggregates.n",
        "does not apply to sum",
    ),
    (
        "retract_not_supported",
        {"merge_engine": "aggregation", "row_kind_column": "op", "aggregates": {"n": "max"}},
        "aggregates.n",
        "ignore_retract",
    ),
    (
        "aggregate_on_key",
        {"merge_engine": "aggregation", "aggregates": {"k": "sum"}},
        "aggregates.k",
        "not a value column",
    ),
    (
        "sequence_with_first_row",
        {"merge_engine": "first_row", "sequence_field": "ts"},
        "sequence_field",
        "deduplicate",
    ),
    (
        "first_row_with_deletes",
        {"merge_engine": "first_row", "row_kind_column": "op"},
        "ignore_delete",
        "ignore_delete=true",
    ),
    (
        "row_kind_not_a_column",
        {"merge_engine": "deduplicate", "row_kind_column": "kind"},
        "row_kind_column",
        "not a column",
    ),
    (
        "groups_on_aggregation",
        {"merge_engine": "aggregation", "sequence_groups": {"g_1": ["a"]}},
        "sequence_groups",
        "partial_update",
    ),
    (
        "aggregates_on_deduplicate",
        {"merge_engine": "deduplicate", "aggregates": {"n": "sum"}},
        "aggregates",
        "aggregation",
    ),
    (
        "remove_group_without_row_kind",
        {
            "merge_engine": "partial_update",
            "sequence_groups": {"g_1": ["a"]},
            "remove_record_on_sequence_group": ["g_1"],
        },
        "remove_record_on_sequence_group",
        "row_kind_column",
    ),
]


@pytest.mark.parametrize(
    "config,key,fragment", [r[1:] for r in REJECTED], ids=[r[0] for r in REJECTED]
)
def test_rejected_combination(config: dict[str, Any], key: str, fragment: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_with(config)
    assert info.value.key == key
    assert fragment in info.value.message
    assert str(info.value.path) == "models/m.sql"


def test_type_check_uses_declared_types() -> None:
    with pytest.raises(CompileError) as info:
        compile_with({"merge_engine": "aggregation", "aggregates": {"a": "sum"}}, TYPED)
    assert info.value.key == "aggregates.a"
    assert "sum cannot aggregate column 'a' of type" in info.value.message
    compile_with({"merge_engine": "aggregation", "aggregates": {"n": "sum"}}, TYPED)


def test_group_must_be_written_whole_by_a_source() -> None:
    sql = "SELECT k, a, CAST(NULL AS INT) AS g_1 FROM x UNION ALL SELECT k, NULL, g_1 FROM y"
    with pytest.raises(CompileError) as info:
        compile_with({"merge_engine": "partial_update", "sequence_groups": {"g_1": ["a"]}}, sql)
    assert "owns part of group 'g_1'" in info.value.message


@pytest.mark.parametrize(
    "config",
    [
        {"merge_engine": "partial_update", "row_kind_column": "op", "ignore_delete": True},
        {
            "merge_engine": "partial_update",
            "row_kind_column": "op",
            "remove_record_on_delete": True,
        },
        {
            "merge_engine": "partial_update",
            "row_kind_column": "op",
            "sequence_groups": {"g_1": ["a"]},
            "aggregates": {"a": "last_value"},
            "remove_record_on_sequence_group": ["g_1"],
        },
        {
            "merge_engine": "aggregation",
            "row_kind_column": "op",
            "aggregates": {"n": {"function": "max", "ignore_retract": True}},
        },
        {"merge_engine": "deduplicate", "row_kind_column": "op", "sequence_field": "ts"},
        {"merge_engine": "first_row", "row_kind_column": "op", "ignore_delete": True},
    ],
    ids=["ignore", "remove", "groups", "ignore_retract", "dedup", "first_row"],
)
def test_accepted_combinations_compile(config: dict[str, Any]) -> None:
    compile_with(config)


def test_undeclared_types_of_typed_aggregates_are_probed_and_checked() -> None:
    from lakewide.compiler.plans.validate import check_probed_types, type_probes

    sql = "SELECT k, a, CAST(n AS BIGINT) AS n, b FROM src"
    node = ModelNode(
        "m",
        Path("models/m.sql"),
        sql,
        sql,
        parse_model_config(
            {
                "primary_key": "k",
                "merge_engine": "aggregation",
                "aggregates": {"a": "sum", "n": "sum", "b": "max"},
            },
            path="models/m.sql",
        ),
        Relation("lw", "db", "m"),
    )
    model = compile_model(node).model
    assert model is not None
    # only a: n declares its type (checked at compile time), max takes any type
    [probe] = type_probes(model)
    assert probe.sql("spark") == "SELECT a AS a FROM src"
    check_probed_types(model, {"a": "bigint"})
    check_probed_types(model, {"a": "decimal(10,2)"})
    with pytest.raises(CompileError) as info:
        check_probed_types(model, {"a": "string"})
    assert info.value.key == "aggregates.a"
    assert "gives as STRING" in info.value.message and "CAST(a AS" in info.value.message


@pytest.mark.parametrize("declared", ["INTERVAL DAY", "INTERVAL YEAR TO MONTH", "STRING"])
def test_type_check_reads_the_type_not_its_printed_name(declared: str) -> None:
    """``INTERVAL DAY`` is no number, though its name starts like ``INT``."""
    sql = f"SELECT k, CAST(n AS {declared}) AS n FROM src"
    with pytest.raises(CompileError) as info:
        compile_with({"merge_engine": "aggregation", "aggregates": {"n": "sum"}}, sql)
    assert info.value.key == "aggregates.n"
    assert "sum cannot aggregate column 'n'" in info.value.message


@pytest.mark.parametrize("declared", ["DECIMAL(10, 2)", "TINYINT", "DOUBLE", "BIGINT"])
def test_numeric_declared_types_are_summed(declared: str) -> None:
    compile_with(
        {"merge_engine": "aggregation", "aggregates": {"n": "sum"}},
        f"SELECT k, CAST(n AS {declared}) AS n FROM src",
    )


def test_probed_interval_is_not_numeric() -> None:
    """The run-time probe reads Spark's type name as a type too (``interval day``)."""
    from lakewide.compiler.plans.validate import check_probed_types

    sql = "SELECT k, n FROM src"
    node = ModelNode(
        "m",
        Path("models/m.sql"),
        sql,
        sql,
        parse_model_config(
            {"primary_key": "k", "merge_engine": "aggregation", "aggregates": {"n": "sum"}},
            path="models/m.sql",
        ),
        Relation("lw", "db", "m"),
    )
    model = compile_model(node).model
    assert model is not None
    check_probed_types(model, {"n": "int"})
    for found in ("interval day", "interval year to month", "array<int>"):
        with pytest.raises(CompileError):
            check_probed_types(model, {"n": found})
