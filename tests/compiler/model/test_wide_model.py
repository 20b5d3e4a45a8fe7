"""The analyzed model owns the model's meaning: groups, delete policy, each column's aggregate."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler import analyze
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation

COMPILER = Path(__file__).resolve().parents[3] / "lakewide" / "compiler"
SQL = "SELECT k, a, b, n, ts, g_1, g_2, op FROM src"


def analyzed(config: dict[str, Any], sql: str = SQL):  # noqa: ANN201 - WideModel
    node = ModelNode(
        "m",
        Path("models/m.sql"),
        sql,
        sql,
        parse_model_config({"primary_key": "k", **config}, path="models/m.sql"),
        Relation("lw", "db", "m"),
    )
    return analyze(node)


def test_groups_are_objects_with_their_name_and_removal() -> None:
    model = analyzed(
        {
            "merge_engine": "partial_update",
            "row_kind_column": "op",
            "sequence_groups": {"g_1,g_2": ["a"], "ts": ["b"]},
            "remove_record_on_sequence_group": ["g_1,g_2"],
        }
    )
    first, second = model.groups
    assert (first.name, first.sequence, first.columns, first.removes_record) == (
        "g_1,g_2",
        ["g_1", "g_2"],
        ["a"],
        True,
    )
    assert (second.name, second.removes_record) == ("ts", False)
    assert model.group_of("g_2") is first and model.group_of("n") is None
    assert model.row_kind == "op" and model.stored == ["k", "a", "b", "n", "ts", "g_1", "g_2"]


def test_each_column_has_its_aggregate() -> None:
    model = analyzed(
        {
            "merge_engine": "aggregation",
            "sequence_field": "ts",
            "aggregates": {"n": "sum", "a": {"function": "max", "ignore_retract": True}},
        }
    )
    assert model.aggregated == ["a", "b", "n", "g_1", "g_2", "op"]
    n, a, b = model.aggregate("n"), model.aggregate("a"), model.aggregate("b")
    assert (n.name, n.configured, n.retracts, n.idempotent) == ("sum", True, True, False)
    assert (a.name, a.options, a.refuses_retracts) == ("max", {"ignore_retract": True}, False)
    assert (b.name, b.configured, b.idempotent) == ("last_non_null_value", False, True)


def test_partial_update_aggregates_group_columns_with_the_default() -> None:
    model = analyzed(
        {
            "merge_engine": "partial_update",
            "sequence_groups": {"g_1": ["a", "b"]},
            "default_aggregate": "last_value",
            "aggregates": {"b": "max"},
        }
    )
    assert model.aggregated == ["a", "b"]
    assert model.aggregate("a").name == "last_value" and model.aggregate("b").name == "max"
    assert model.group_aggregated("a") and not model.group_aggregated("g_1")


def test_the_delete_policy_is_resolved() -> None:
    model = analyzed(
        {"merge_engine": "partial_update", "row_kind_column": "op", "remove_record_on_delete": True}
    )
    assert model.deletes.remove_record_on_delete and not model.deletes.ignore_delete


@pytest.mark.parametrize(
    "module", sorted(str(p.relative_to(COMPILER)) for p in COMPILER.rglob("*.py"))
)
def test_rules_read_the_analyzed_model_not_the_config(module: str) -> None:
    """Only the analysis (and the table layout, the top-level dispatch and the project-level
    changelog decision) reads a node's config; every other rule reads the WideModel."""
    readers = {"wide_model.py", "layout.py", "compiled.py", "build_changes.py", "snapshot_model.py"}
    readers |= {"upstream.py"}  # compiles a project's models in their upstreams' context
    text = (COMPILER / module).read_text(encoding="utf-8")
    if Path(module).name not in readers:
        assert not re.search(r"(?<!lakewide)(?<!project)\.config\b", text), module
