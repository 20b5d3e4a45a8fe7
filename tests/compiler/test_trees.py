"""Compiled trees are sound and cheap to build (no JVM, no timing).

The compiler builds with ``copy=False`` wherever a node is fresh. A node placed in two trees (or
twice in one) would print as it should only until either place is changed, and the SQL
generator does change what it prints; so every compiled tree must own all of its nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp
from sqlglot.expressions import core

from lakewide.compiler import CompiledModel, compile_model
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary.dialect import to_sql
from tests.compiler.fixtures import load_cases

TWO_SOURCES = """
WITH recent AS (SELECT * FROM events WHERE day > '2024-01-01')
SELECT k, a, CAST(NULL AS BIGINT) AS n, CAST(NULL AS ARRAY<STRING>) AS tags,
       CAST(NULL AS MAP<STRING, INT>) AS flags, CAST(NULL AS STRING) AS names, ts, op
FROM recent r JOIN dims d ON r.k = d.k WHERE d.ok
UNION ALL
SELECT k, CAST(NULL AS INT), n, tags, flags, names, ts, op FROM other
"""
GROUPS = """
SELECT k, a, g1, CAST(NULL AS BIGINT) AS n, CAST(NULL AS INT) AS g2, op FROM t1
UNION ALL
SELECT k, NULL, NULL, n, g2, op FROM t2
"""

EXTRA = {
    "aggregation_every_retractable_function": (
        TWO_SOURCES,
        {
            "merge_engine": "aggregation",
            "primary_key": "k",
            "sequence_field": "ts",
            "row_kind_column": "op",
            "aggregates": {
                "a": "last_non_null_value",
                "n": "sum",
                "tags": "collect",
                "flags": "merge_map",
                "names": {"function": "listagg", "ignore_retract": True},
            },
        },
    ),
    "aggregation_without_retracts": (
        TWO_SOURCES,
        {
            "merge_engine": "aggregation",
            "primary_key": "k",
            "sequence_field": "ts",
            "aggregates": {
                "a": "max",
                "n": "product",
                "tags": {"function": "collect", "distinct": True},
                "names": {"function": "listagg", "distinct": True, "delimiter": "|"},
            },
        },
    ),
    "groups_with_retracts": (
        GROUPS,
        {
            "merge_engine": "partial_update",
            "primary_key": "k",
            "row_kind_column": "op",
            "sequence_groups": {"g1": ["a"], "g2": ["n"]},
            "aggregates": {"n": "sum"},
            "remove_record_on_sequence_group": ["g1"],
        },
    ),
    "deduplicate_with_retracts": (
        TWO_SOURCES,
        {
            "merge_engine": "deduplicate",
            "primary_key": "k",
            "sequence_field": "ts",
            "row_kind_column": "op",
        },
    ),
    "remove_record_on_delete": (
        TWO_SOURCES,
        {
            "merge_engine": "partial_update",
            "primary_key": "k",
            "sequence_field": "ts",
            "row_kind_column": "op",
            "remove_record_on_delete": True,
        },
    ),
}


def _node(sql: str, config: dict[str, Any]) -> ModelNode:
    return ModelNode(
        name="m",
        path=Path("models/m.sql"),
        raw_sql=sql,
        sql=sql,
        config=parse_model_config(config, path="m.sql"),
        relation=Relation("lw", "db", "m"),
    )


def _models() -> dict[str, ModelNode]:
    models = {name: _node(sql, config) for name, (sql, config) in EXTRA.items()}
    for file_name in ("build_bootstrap.sql", "build_merge.sql"):
        for case in load_cases(file_name):
            models[f"{file_name[:-4]}:{case.name}"] = _node(case.source, case.config)
    return models


MODELS = _models()


def _trees(compiled: CompiledModel) -> Iterator[exp.Expression]:
    yield compiled.bootstrap
    for plan in (compiled.full_refresh, compiled.null_keys):
        if plan is not None:
            yield plan
    for merge in compiled.merges:
        yield merge.batch
        yield merge.statement
        if merge.null_keys is not None:
            yield merge.null_keys


def _owned_nodes(tree: exp.Expression) -> list[exp.Expression]:
    """Every node of ``tree``, failing on a child whose parent link points elsewhere."""
    nodes = []
    for node in tree.walk():
        nodes.append(node)
        for child in node.iter_expressions():
            assert child.parent is node, (
                f"{type(child).__name__} `{child.sql('spark')}` under {type(node).__name__} "
                f"`{node.sql('spark')[:80]}` belongs to another parent"
            )
    return nodes


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_trees_share_no_node(name: str) -> None:
    compiled = compile_model(MODELS[name])
    assert compiled.model is not None
    seen: dict[int, str] = {}
    kept = [("branch", b.select) for b in compiled.model.branches]
    for label, tree in [*kept, *((f"plan {i}", t) for i, t in enumerate(_trees(compiled)))]:
        for node in _owned_nodes(tree):
            assert seen.setdefault(id(node), label) == label, (
                f"`{node.sql('spark')}` is in both {seen[id(node)]} and {label}"
            )


@pytest.mark.parametrize("name", list(MODELS))
def test_printing_changes_no_tree(name: str) -> None:
    compiled = compile_model(MODELS[name])
    before = [to_sql(t, pretty=False) for t in _trees(compiled)]
    first = compiled.files()
    assert compiled.files() == first
    assert [to_sql(t, pretty=False) for t in _trees(compiled)] == before
    assert compile_model(MODELS[name]).files(in_place=True) == first


def test_compiling_copies_fewer_nodes_than_it_keeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard against needless deep copies, compile's main cost (a count, not a timing).

    With the sqlglot builders' default (copy every argument) compiling this model copied over
    twice the nodes of its plans; fresh nodes and ``copy=False`` bring that under the plans' size.
    """
    node = _node(
        TWO_SOURCES, {"merge_engine": "partial_update", "primary_key": "k", "sequence_field": "ts"}
    )
    copied = 0
    deepcopy = core.deepcopy  # what every Expression.copy() goes through

    def counting(value: Any, memo: Any = None) -> Any:
        nonlocal copied
        out = deepcopy(value, memo)
        if isinstance(out, exp.Expression):
            copied += sum(1 for _ in out.walk())
        return out

    monkeypatch.setattr(core, "deepcopy", counting)
    compiled = compile_model(node)
    monkeypatch.undo()
    assert copied > 0  # the counter sees copies (a user's projections must be copied)
    kept = sum(
        len(list(tree.walk()))
        for tree in (
            compiled.bootstrap,
            *(m.batch for m in compiled.merges),
            *(m.statement for m in compiled.merges),
        )
    )
    assert copied < kept, f"compile copied {copied} nodes for plans of {kept}"
