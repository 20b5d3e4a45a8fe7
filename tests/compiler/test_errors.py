"""Errors of compile_model: what is wrong, how to fix it, and where (path, key)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler import compile_model
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import CompileError, ConfigError, LakewideError

PATH = Path("models/wide/m.sql")
PK = {"merge_engine": "partial_update", "primary_key": "id"}


def node(sql: str, config: dict[str, Any] | None = None) -> ModelNode:
    parsed = parse_model_config(PK if config is None else config, path=str(PATH))
    return ModelNode(
        name="m", path=PATH, raw_sql=sql, sql=sql, config=parsed, relation=Relation("lw", "db", "m")
    )


def compile_error(sql: str, config: dict[str, Any] | None = None) -> CompileError:
    with pytest.raises(CompileError) as info:
        compile_model(node(sql, config))
    err = info.value
    assert err.path == PATH, "every compile error names the model file"
    assert err.model == "m"
    assert err.exit_code == 2
    return err


def test_valid_model_compiles() -> None:
    compiled = compile_model(
        node("SELECT id, a, CAST(NULL AS INT) AS b FROM s1 UNION ALL SELECT id, NULL, b FROM s2")
    )
    assert [m.name for m in compiled.merges] == ["s1", "s2"]


def test_branches_with_different_column_counts() -> None:
    err = compile_error("SELECT id, a, b FROM s1 UNION ALL SELECT id, a FROM s2")
    assert "UNION ALL branch 2 has 2 columns but the model has 3 (id, a, b)" in err.message
    assert "CAST(NULL AS <type>)" in err.message
    assert str(err).startswith(f"{PATH}: ")


def test_third_branch_number_is_reported() -> None:
    err = compile_error(
        "SELECT id, a FROM s1 UNION ALL SELECT id, a FROM s2 UNION ALL SELECT id, a, a FROM s3"
    )
    assert "branch 3 has 3 columns but the model has 2 (id, a)" in err.message


def test_branch_not_providing_the_primary_key() -> None:
    err = compile_error("SELECT id, a FROM s1 UNION ALL SELECT CAST(NULL AS BIGINT), a FROM s2")
    assert err.key == "primary_key"
    assert "UNION ALL branch 2 (s2) does not provide primary_key column(s) id" in err.message
    assert "every source must give the full primary_key" in err.message


def test_branch_not_providing_part_of_a_composite_key() -> None:
    err = compile_error(
        "SELECT u, i, a FROM s1 UNION ALL SELECT u, NULL, a FROM s2",
        {"merge_engine": "partial_update", "primary_key": ["u", "i"]},
    )
    assert err.key == "primary_key"
    assert "does not provide primary_key column(s) i;" in err.message


def test_branch_not_providing_the_sequence_field() -> None:
    err = compile_error(
        "SELECT id, a, ts FROM s1 UNION ALL SELECT id, a, NULL FROM s2",
        {**PK, "sequence_field": "ts"},
    )
    assert err.key == "sequence_field"
    assert "branch 2 (s2) does not provide sequence_field column(s) ts" in err.message


def test_primary_key_not_a_column() -> None:
    err = compile_error("SELECT user_id, a FROM s1 UNION ALL SELECT user_id, a FROM s2")
    assert err.key == "primary_key"
    assert (
        "primary_key column 'id' is not a column of the model (columns: user_id, a)" in err.message
    )


def test_sequence_field_not_a_column() -> None:
    err = compile_error(
        "SELECT id, a FROM s1 UNION ALL SELECT id, a FROM s2",
        {**PK, "sequence_field": "binlog_time"},
    )
    assert err.key == "sequence_field"
    assert (
        "sequence_field column 'binlog_time' is not a column of the model (columns: id, a)"
        in err.message
    )


def test_union_distinct_is_rejected() -> None:
    err = compile_error("SELECT id, a FROM s1 UNION SELECT id, a FROM s2")
    assert "UNION ALL, not UNION" in err.message
    assert "write UNION ALL" in err.message


def test_nested_union_distinct_is_rejected() -> None:
    err = compile_error(
        "SELECT id, a FROM s1 UNION ALL (SELECT id, a FROM s2 UNION SELECT id, a FROM s3)"
    )
    assert "UNION ALL, not UNION" in err.message


def test_intersect_is_not_a_source() -> None:
    err = compile_error("SELECT id, a FROM s1 INTERSECT SELECT id, a FROM s2")
    assert "found INTERSECT" in err.message


@pytest.mark.parametrize("star", ["*", "s1.*"])
def test_select_star_in_first_branch(star: str) -> None:
    err = compile_error(f"SELECT {star} FROM s1 UNION ALL SELECT id, a FROM s2")
    assert "SELECT * cannot be split into owned columns" in err.message
    assert "list the columns of the first branch explicitly" in err.message


def test_unnamed_expression_in_first_branch() -> None:
    err = compile_error("SELECT id, a + 1 FROM s1 UNION ALL SELECT id, a FROM s2")
    assert "column 2 of the first branch has no name" in err.message
    assert "add AS <column_name> to `a + 1`" in err.message


def test_unnamed_function_call_in_first_branch() -> None:
    err = compile_error("SELECT id, UPPER(a) FROM s1 UNION ALL SELECT id, a FROM s2")
    assert "column 2 of the first branch has no name" in err.message


def test_unnamed_aggregate_in_first_branch() -> None:
    err = compile_error(
        "SELECT id, COUNT(*) FROM s1 GROUP BY id UNION ALL SELECT id, CAST(NULL AS BIGINT) FROM s2"
    )
    assert "column 2 of the first branch has no name" in err.message


def test_unaliased_null_in_first_branch() -> None:
    err = compile_error("SELECT id, CAST(NULL AS STRING) FROM s1 UNION ALL SELECT id, name FROM s2")
    assert "column 2 of the first branch has no name" in err.message


def test_duplicate_column_in_first_branch() -> None:
    err = compile_error("SELECT id, a, b AS a FROM s1 UNION ALL SELECT id, a, b FROM s2")
    assert "column 'a' appears twice in the first branch" in err.message


def test_sql_that_does_not_parse() -> None:
    err = compile_error("SELECT id, FROM FROM s1 WHERE")
    assert err.message.startswith("SQL does not parse")


def test_parse_error_carries_the_line() -> None:
    err = compile_error("SELECT id,\n  a\nFROM s1 WHERE (")
    assert err.line == 3
    assert str(err).startswith(f"{PATH}:3: SQL does not parse")


def test_sql_that_does_not_parse_for_a_table_model() -> None:
    err = compile_error("SELECT (1", {"materialized": "table"})
    assert err.message.startswith("SQL does not parse")
    assert err.key is None


def test_two_statements() -> None:
    err = compile_error("SELECT 1 AS id; SELECT 2 AS id", {"materialized": "table"})
    assert "found 2 statements" in err.message


def test_table_model_must_be_a_query() -> None:
    err = compile_error("INSERT INTO t VALUES (1)", {"materialized": "table"})
    assert "a model is a SELECT query, found INSERT" in err.message


def test_incremental_not_supported_names_materialized() -> None:
    err = compile_error("SELECT 1 AS id", {"materialized": "incremental"})
    assert err.key == "materialized"
    assert "'table', 'view' or a merge_engine" in err.message


def test_bad_partition_by_names_the_key() -> None:
    err = compile_error("SELECT 1 AS id", {"materialized": "table", "partition_by": "bucket(4,"})
    assert err.key == "partition_by"
    assert "bucket(N, col)" in err.message


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("bucket(x, id)", "the width of bucket must be a positive whole number, not 'x'"),
        ("bucket(0, id)", "the width of bucket must be a positive whole number, not '0'"),
        ("bucket(id)", "bucket takes a width and a column: bucket(N, id)"),
        ("days(4, ts)", "days takes a column: days(col)"),
        ("weeks(ts)", "'weeks' is not an Iceberg transform"),
        ("days(tss)", "'tss' is not a column of the model (columns: id, ts)"),
        ("idd", "'idd' is not a column of the model"),
        ("id + 1", "is not a column or a transform of one"),
    ],
)
@pytest.mark.parametrize("materialized", ["table", "key table"])
def test_partition_by_is_checked_at_compile(entry: str, expected: str, materialized: str) -> None:
    """A partition field Iceberg would refuse at run time fails the compile, naming the entry."""
    config: dict[str, Any] = (
        {"materialized": "table"}
        if materialized == "table"
        else {"merge_engine": "partial_update", "primary_key": "id"}
    )
    err = compile_error(
        "SELECT id, ts FROM s", {**config, "partition_by": ["bucket(2, id)", entry]}
    )
    assert err.key == "partition_by"
    assert f"partition_by entry {entry!r}: {expected}" in err.message


def test_partition_by_prints_every_transform_as_iceberg_names_it() -> None:
    """Each spelling Iceberg accepts is printed as written (sqlglot's own functions would print
    truncate(4, c) as a CAST and date(ts) as a CAST too)."""
    fields = ["ID", "bucket(16, id)", "Truncate(4, name)", "years(ts)", "month(ts)", "date(ts)"]
    fields += ["date_hour(ts)", "identity(name)", "`ts`"]
    compiled = compile_model(
        node("SELECT id, name, ts FROM s", {"materialized": "table", "partition_by": fields})
    )
    sql = to_sql(compiled.bootstrap)
    partitioned = sql[sql.index("PARTITIONED BY (") : sql.index(")\n", sql.index("PARTITIONED"))]
    printed = [line.strip().rstrip(",") for line in partitioned.splitlines()[1:]]
    assert printed == [
        "ID",
        "BUCKET(16, id)",
        "TRUNCATE(4, name)",
        "YEARS(ts)",
        "MONTH(ts)",
        "DATE(ts)",
        "DATE_HOUR(ts)",
        "name",
        "`ts`",
    ]


def test_config_errors_are_not_compile_errors_but_share_the_root() -> None:
    with pytest.raises(ConfigError) as info:
        node("SELECT 1", {"merge_engine": "aggregation"})
    assert info.value.key == "primary_key"
    assert not isinstance(info.value, CompileError)
    assert isinstance(info.value, LakewideError) and info.value.exit_code == 2


def test_ttl_column_must_be_a_column_of_the_model() -> None:
    """Checked at compile, not first at `lakewide maintain` (which also checks its type)."""
    err = compile_error(
        "SELECT id, ts FROM s",
        {
            "merge_engine": "partial_update",
            "primary_key": "id",
            "ttl": {"column": "updated_at", "keep": "30 days"},
        },
    )
    assert err.key == "ttl.column"
    assert "ttl column 'updated_at' is not a column of the model (columns: id, ts)" in err.message
