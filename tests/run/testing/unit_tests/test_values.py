"""Typing, converting and comparing unit-test values (no JVM)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from lakewide.run.testing.unit_tests.runner import diff
from lakewide.run.testing.unit_tests.values import (
    ValueMismatch,
    comparable,
    convert,
    data_type,
    infer_type,
    literal,
)
from lakewide.vocabulary.dialect import to_sql


@pytest.mark.parametrize(
    ("value", "type_name", "expected"),
    [
        (7, "bigint", 7),
        ("7", "int", 7),
        (7.0, "int", 7),
        (1, "double", 1.0),
        ("2.5", "double", 2.5),
        (1.5, "decimal(10,2)", Decimal("1.5")),
        ("true", "boolean", True),
        (12, "string", "12"),
        (False, "string", "false"),
        ("2024-05-01", "date", dt.date(2024, 5, 1)),
        ("2024-05-01 10:00:01", "timestamp", dt.datetime(2024, 5, 1, 10, 0, 1)),
        (dt.date(2024, 5, 1), "timestamp", dt.datetime(2024, 5, 1)),
        ([1, "2"], "array<int>", [1, 2]),
        ({"a": "1"}, "map<string,int>", {"a": 1}),
        ({"s0": 3, "b": 0}, "struct<s0:bigint,b:int>", {"s0": 3, "b": 0}),
        (None, "int", None),
    ],
)
def test_convert(value: object, type_name: str, expected: object) -> None:
    assert convert(value, data_type(type_name)) == expected


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        ("x", "int"),
        (True, "int"),
        (2**31, "int"),
        (1.5, "bigint"),
        ("abc", "double"),
        ("yes", "boolean"),
        ("2024-13-01", "date"),
        ("noon", "timestamp"),
        (dt.datetime(2024, 5, 1, 1), "date"),
        ("a", "array<int>"),
        ({"zz": 1}, "struct<s0:bigint,b:int>"),
        ([1], "string"),
    ],
)
def test_convert_refuses(value: object, type_name: str) -> None:
    with pytest.raises(ValueMismatch):
        convert(value, data_type(type_name))


@pytest.mark.parametrize(
    ("values", "text", "expected"),
    [
        ([1, 2, None], False, "int"),
        ([1, 2**40], False, "bigint"),
        ([1, 2.5], False, "double"),
        ([True], False, "boolean"),
        ([dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 1)], False, "timestamp"),
        (["a"], False, "string"),
        ([None, None], False, None),
        (["1", "2"], True, "int"),
        (["1", "2.5"], True, "double"),
        (["2024-05-01 10:00:00"], True, "timestamp"),
        (["2024-05-01"], True, "date"),
        (["true", "false"], True, "boolean"),
        (["1", "x"], True, "string"),
    ],
)
def test_infer_type(values: list[object], text: bool, expected: str | None) -> None:
    assert infer_type(values, text) == expected


def test_infer_type_refuses_mixed_yaml_values() -> None:
    with pytest.raises(ValueMismatch, match="int, string"):
        infer_type([1, "x"], False)


def test_literals_are_typed() -> None:
    assert to_sql(literal(7, data_type("bigint")), pretty=False) == "CAST(7 AS BIGINT)"
    assert (
        to_sql(literal(dt.datetime(2024, 5, 1, 10), data_type("timestamp")), pretty=False)
        == "CAST('2024-05-01 10:00:00' AS TIMESTAMP)"
    )
    assert to_sql(literal(None, data_type("string")), pretty=False) == "CAST(NULL AS STRING)"
    assert to_sql(literal("it's", data_type("string")), pretty=False) == "CAST('it\\'s' AS STRING)"


def test_floats_compare_to_twelve_digits() -> None:
    assert comparable(0.1 + 0.2) == comparable(0.3)
    assert comparable(Decimal("1.50")) == comparable(Decimal("1.5"))


def test_diff_marks_missing_and_extra_rows() -> None:
    message = diff(["k", "v"], [(1, "old")], [(1, "new"), (2, None)], [(1, "new"), (2, None)])
    assert message.splitlines() == [
        "1 expected row(s) missing, 2 unexpected row(s) (2 row(s) produced); - expected but "
        "not produced, + produced but not expected:",
        "    k | v",
        "  + 1 | new",
        "  - 1 | old",
        "  + 2 | NULL",
    ]
