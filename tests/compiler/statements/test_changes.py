"""The produced changelog's statements (fixtures) and when a model produces one (no JVM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.compiler import compile_model
from lakewide.compiler.statements import build_changes
from lakewide.compiler.trees.placeholders import bind
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import ConfigError
from tests.compiler.fixtures import Case, load_cases, normalize
from tests.compiler.test_rules import ids, node_for

CHANGES = load_cases("build_changes.sql")


@pytest.mark.parametrize("case", CHANGES, ids=ids(CHANGES))
def test_build_changes(case: Case) -> None:
    compiled = compile_model(node_for(case))
    assert compiled.model is not None and compiled.combined is not None
    produced = [
        *build_changes.statements(compiled.model, compiled.combined.batch_view),
        build_changes.read(compiled.node.relation),
    ]
    assert [normalize(to_sql(p, pretty=False)) for p in produced] == [
        normalize(e) for e in case.expected
    ]
    files = compiled.files(changelog=True)
    assert files["changelog.sql"].count(";") == 3 and "m__changelog" in files["changelog.sql"]
    assert "changelog.sql" not in compiled.files()


def test_bind_replaces_named_parameters() -> None:
    read = bind(build_changes.read(Relation("lw", "db", "w")), {"low": 3, "high": 9})
    text = to_sql(read, pretty=False)
    assert "> CAST(3 AS BIGINT)" in text and "<= CAST(9 AS BIGINT)" in text and ":" not in text


def _node(name: str, config: dict, refs: list[str]) -> ModelNode:
    return ModelNode(
        name=name,
        path=Path(f"models/{name}.sql"),
        raw_sql="",
        sql="",
        config=parse_model_config(config, path=f"{name}.sql"),
        relation=Relation("lw", "db", name),
        refs=refs,
    )


KEYED = {"merge_engine": "partial_update", "primary_key": "k"}


@pytest.mark.parametrize(
    ("wide", "downstream", "expected"),
    [
        (KEYED, KEYED, True),  # a key table reads it: its changes are needed
        (KEYED, {"materialized": "table"}, False),  # a table is rebuilt from the whole upstream
        ({**KEYED, "changelog_producer": "none"}, KEYED, False),
        ({**KEYED, "changelog_producer": "lookup"}, {"materialized": "table"}, True),
    ],
)
def test_who_produces_a_changelog(wide: dict, downstream: dict, expected: bool) -> None:
    models = [_node("wide", wide, []), _node("down", downstream, ["wide"])]
    assert build_changes.produces_changelog(models[0], models) is expected


def test_a_table_model_cannot_produce_a_changelog() -> None:
    with pytest.raises(ConfigError, match="changelog_producer='lookup' needs a merge_engine"):
        parse_model_config({"materialized": "table", "changelog_producer": "lookup"}, path="t.sql")
