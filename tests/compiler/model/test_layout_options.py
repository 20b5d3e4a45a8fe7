"""Table layout options of key tables: sort_by (Iceberg write order) and merge_filter."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler import compile_model
from lakewide.compiler.model.wide_model import analyze
from lakewide.compiler.statements.build_merge import narrow_merge
from lakewide.compiler.trees.placeholders import bind, exact_literal, param
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import CompileError

SQL = "SELECT id, a, CAST(NULL AS INT) AS b, ts FROM s1 UNION ALL SELECT id, NULL, b, ts FROM s2"
PK = {"merge_engine": "partial_update", "primary_key": "id", "sequence_field": "ts"}


def node(**config: Any) -> ModelNode:
    parsed = parse_model_config({**PK, **config}, path="models/m.sql")
    return ModelNode(
        name="m",
        path=Path("models/m.sql"),
        raw_sql=SQL,
        sql=SQL,
        config=parsed,
        relation=Relation("lw", "db", "m"),
    )


def test_sort_by_sets_the_write_order_after_the_create() -> None:
    compiled = compile_model(node(sort_by=["id", "ts DESC NULLS LAST"]))
    assert compiled.write_order is not None
    assert (
        to_sql(compiled.write_order, pretty=False)
        == "ALTER TABLE lw.db.m WRITE ORDERED BY id ASC NULLS FIRST, ts DESC NULLS LAST"
    )
    # the bootstrap writes its rows in that order too (both plans)
    for create in (compiled.bootstrap, compiled.full_refresh):
        assert create is not None
        assert to_sql(create, pretty=False).endswith(" ORDER BY id, ts DESC")
    assert to_sql(compiled.write_order) in compiled.files()["bootstrap.sql"]


def test_without_sort_by_nothing_is_ordered() -> None:
    compiled = compile_model(node())
    assert compiled.write_order is None
    assert "ORDER BY" not in to_sql(compiled.bootstrap, pretty=False)


def test_quoted_identifiers_stay_quoted_in_the_write_order() -> None:
    parsed = parse_model_config({**PK, "sort_by": "id"}, path="models/m.sql")
    quoted = ModelNode(
        name="m",
        path=Path("models/m.sql"),
        raw_sql=SQL,
        sql=SQL,
        config=parsed,
        relation=Relation("lw", "my db", "m"),
    )
    assert (
        to_sql(compile_model(quoted).write_order, pretty=False)
        == "ALTER TABLE lw.`my db`.m WRITE ORDERED BY id ASC NULLS FIRST"
    )


@pytest.mark.parametrize(
    "entry, said",
    [("bucket(4, id)", "not a column"), ("s.id", "not a column"), ("nope", "not a stored column")],
)
def test_sort_by_errors(entry: str, said: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_model(node(sort_by=entry))
    assert info.value.key == "sort_by" and said in info.value.message


def test_merge_filter_reads_the_batch_key_range() -> None:
    compiled = compile_model(node(merge_filter=True))
    assert [to_sql(m.bounds, pretty=False) for m in compiled.merges if m.bounds] == [
        "SELECT MIN(id), MAX(id) FROM __lw_batch_1",
        "SELECT MIN(id), MAX(id) FROM __lw_batch_2",
    ]
    assert all(m.bounds is None for m in compile_model(node()).merges)


@pytest.mark.parametrize(
    "low, high, literal",
    [
        (3, 17, "3 AND 17"),
        ("a'b", "z", "'a\\'b' AND 'z'"),
        (
            datetime.date(2024, 1, 2),
            datetime.date(2024, 1, 3),
            "CAST('2024-01-02' AS DATE) AND CAST('2024-01-03' AS DATE)",
        ),
        (decimal.Decimal("1.50"), decimal.Decimal("2"), "1.50 AND 2"),
    ],
)
def test_narrow_merge_adds_the_key_range_to_on(low: Any, high: Any, literal: str) -> None:
    model_node = node(merge_filter=True)
    compiled = compile_model(model_node)
    merge = compiled.merges[0].statement
    narrowed = narrow_merge(analyze(model_node), merge, param("low"), param("high"))
    assert "t.id BETWEEN :low AND :high" in to_sql(narrowed, pretty=False)
    assert exact_literal(low) and exact_literal(high)
    bound = bind(narrowed, {"low": low, "high": high})
    assert f"ON t.id = s.id AND t.id BETWEEN {literal} WHEN" in to_sql(bound, pretty=False)
    assert "BETWEEN" not in to_sql(merge, pretty=False), "the compiled statement is not mutated"


@pytest.mark.parametrize(
    "low, high",
    [
        (datetime.datetime(2024, 1, 1), datetime.datetime(2024, 1, 2)),  # time zone of the reader
        (0.5, float("nan")),
        (None, None),
        (True, True),
    ],
)
def test_inexact_bounds_are_not_bound_into_the_merge(low: Any, high: Any) -> None:
    """A run then takes the compiled MERGE without the range (lakewide.run.models.step_runner)."""
    assert not (exact_literal(low) and exact_literal(high))
