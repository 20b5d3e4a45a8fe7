"""A seed whose CSV gained columns or widened types keeps its table's history (no JVM)."""

from __future__ import annotations

import pytest

from lakewide.project.nodes import Relation
from lakewide.project.seed_schema import evolution
from lakewide.vocabulary.dialect import to_sql

T = Relation("lw", "ods", "orders")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ({"k": "int"}, {"k": "int"}, []),
        ({"k": "int", "v": "string"}, {"v": "string", "k": "int"}, []),  # order: by name
        (
            {"k": "int"},
            {"k": "bigint", "note": "string"},
            [
                "ALTER TABLE lw.ods.orders ALTER COLUMN k TYPE BIGINT",
                "ALTER TABLE lw.ods.orders ADD COLUMNS (note STRING)",
            ],
        ),
        (
            {"p": "decimal(6,2)", "f": "float"},
            {"p": "decimal(10,2)", "f": "double"},
            [
                "ALTER TABLE lw.ods.orders ALTER COLUMN p TYPE DECIMAL(10, 2)",
                "ALTER TABLE lw.ods.orders ALTER COLUMN f TYPE DOUBLE",
            ],
        ),
        ({"k": "int", "v": "string"}, {"k": "int"}, None),  # a column dropped
        ({"k": "int"}, {"k": "string"}, None),  # 00123 arrived: no promotion to text
        ({"k": "bigint"}, {"k": "int"}, None),  # narrowed
        ({"p": "decimal(6,2)"}, {"p": "decimal(10,3)"}, None),  # another scale
    ],
)
def test_evolution(old: dict, new: dict, expected: list[str] | None) -> None:
    found = evolution(T, old, new)
    assert (None if found is None else [to_sql(s, pretty=False) for s in found]) == expected
