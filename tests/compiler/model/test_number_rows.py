"""Where a branch's rows are numbered (lakewide.compiler.model.number_rows): at the driving table's
read when the branch joins or computes a window, else on the branch's output."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from lakewide.compiler.model.number_rows import number_rows
from lakewide.compiler.model.split_union import split_union
from tests.compiler.fixtures import normalize


def numbered(sql: str) -> str:
    """The branch with its arrival appended as ``__lw_row``, as Spark SQL."""
    [select] = split_union(sqlglot.parse_one(sql, read="spark"), model="m")
    arrival = number_rows(select)
    select.select(exp.alias_(arrival, "__lw_row"), append=True, copy=False)
    return normalize(select.sql("spark"))


def test_a_branch_without_a_join_is_numbered_on_its_output() -> None:
    sql = "SELECT f.k, f.v FROM src AS f WHERE f.v > 0"
    expected = "SELECT f.k, f.v, MONOTONICALLY_INCREASING_ID() AS __lw_row FROM src AS f "
    assert numbered(sql) == normalize(expected + "WHERE f.v > 0")


def test_a_join_numbers_the_driving_table_where_it_is_read_with_its_own_filters() -> None:
    sql = (
        "SELECT f.k, d.label FROM src AS f LEFT JOIN dim AS d ON f.d = d.d "
        "WHERE f.v > 0 AND d.label IS NOT NULL AND (f.k = 1 OR d.d = 2)"
    )
    assert numbered(sql) == normalize(
        "SELECT f.k, d.label, f.__lw_row AS __lw_row FROM "
        "(SELECT *, MONOTONICALLY_INCREASING_ID() AS __lw_row FROM src AS f WHERE f.v > 0) AS f "
        "LEFT JOIN dim AS d ON f.d = d.d WHERE NOT d.label IS NULL AND (f.k = 1 OR d.d = 2)"
    )


def test_a_right_join_keeps_its_filter_after_the_join() -> None:
    sql = "SELECT f.k, d.label FROM src AS f RIGHT JOIN dim AS d ON f.d = d.d WHERE f.v > 0"
    assert numbered(sql) == normalize(
        "SELECT f.k, d.label, f.__lw_row AS __lw_row FROM "
        "(SELECT *, MONOTONICALLY_INCREASING_ID() AS __lw_row FROM src AS f) AS f "
        "RIGHT JOIN dim AS d ON f.d = d.d WHERE f.v > 0"
    )


def test_the_number_is_carried_up_through_a_cte() -> None:
    sql = (
        "WITH x AS (SELECT k, d FROM src WHERE v > 0), y AS (SELECT * FROM x) "
        "SELECT y.k, d.label FROM y LEFT JOIN dim AS d ON y.d = d.d"
    )
    assert numbered(sql) == normalize(
        "SELECT y.k, d.label, y.__lw_row AS __lw_row FROM (SELECT * FROM "
        "(SELECT k, d, src.__lw_row AS __lw_row FROM (SELECT *, MONOTONICALLY_INCREASING_ID() "
        "AS __lw_row FROM src WHERE v > 0) AS src) AS x) AS y "
        "LEFT JOIN dim AS d ON y.d = d.d"
    )


def test_a_cte_with_column_names_names_the_number_too() -> None:
    sql = (
        "WITH x(a, b) AS (SELECT k, d FROM src) "
        "SELECT x.a, d.label FROM x JOIN dim AS d ON x.b = d.d"
    )
    text = numbered(sql)
    assert "AS x(a, b, __lw_row)" in text and "x.__lw_row AS __lw_row" in text


def test_a_window_numbers_at_the_read() -> None:
    sql = "SELECT f.k, LAG(f.v) OVER (PARTITION BY f.k ORDER BY f.t) AS p FROM src AS f"
    assert "f.__lw_row AS __lw_row" in numbered(sql)


def test_an_aggregating_or_generating_path_is_numbered_on_its_output() -> None:
    for sql in (
        "SELECT x.k, d.label FROM (SELECT k, MAX(d) AS d FROM src GROUP BY k) AS x "
        "JOIN dim AS d ON x.d = d.d",
        "SELECT f.k, d.label FROM src AS f JOIN dim AS d ON f.d = d.d GROUP BY f.k, d.label",
        "SELECT DISTINCT f.k, d.label FROM src AS f JOIN dim AS d ON f.d = d.d",
        "SELECT f.k, EXPLODE(f.items) AS item FROM src AS f JOIN dim AS d ON f.d = d.d",
    ):
        text = numbered(sql)
        assert text.count("MONOTONICALLY_INCREASING_ID()") == 1, sql
        assert "SELECT\n  *,\n  MONOTONICALLY" not in text, sql
