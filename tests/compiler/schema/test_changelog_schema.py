"""The statements keeping a model's changelog table in its model's columns (no JVM)."""

from __future__ import annotations

from lakewide.compiler.schema.changelog_schema import changelog_changes
from lakewide.project.nodes import Relation
from lakewide.vocabulary.dialect import to_sql

CHANGELOG = Relation("lw", "db", "m__changelog")
OWN = {"_change_type": "string", "_change_ordinal": "bigint", "_commit_snapshot_id": "bigint"}


def _sql(present: dict[str, str], columns: dict[str, str]) -> list[str]:
    return [to_sql(s, pretty=False) for s in changelog_changes(CHANGELOG, present, columns)]


def test_the_same_columns_need_no_statement() -> None:
    assert _sql({"k": "int", "v": "bigint", **OWN}, {"k": "int", "v": "bigint"}) == []


def test_a_column_is_added_dropped_and_widened_as_the_model_is() -> None:
    present = {"k": "int", "gone": "string", "n": "int", **OWN}
    assert _sql(present, {"k": "int", "n": "bigint", "new": "double"}) == [
        "ALTER TABLE lw.db.m__changelog ADD COLUMNS (`new` DOUBLE)",
        "ALTER TABLE lw.db.m__changelog DROP COLUMNS (`gone`)",
        "ALTER TABLE lw.db.m__changelog ALTER COLUMN `n` TYPE BIGINT",
    ]


def test_names_compare_without_case_and_an_unwidenable_type_is_left() -> None:
    assert _sql({"K": "int", "s": "string", **OWN}, {"k": "int", "s": "bigint"}) == []
