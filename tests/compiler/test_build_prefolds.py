"""Per-source pre-folds (lakewide.compiler.build_prefolds): the statements a wide model sends
grow with its columns, not with sources x columns, and give the union fold's columns. Their
rows equal the union fold's: the Spark property tests (tests/integration/test_properties.py,
test_incremental.py) prove bootstrap == incremental == the plain-Python fold."""

from __future__ import annotations

from typing import Any

import pytest

from lakewide.compiler.build_bootstrap import (
    bootstrap_query,
    reduce_per_key,
    tagged_branch,
    union_all,
    union_of_branches,
)
from lakewide.compiler.build_merge import combined_batch
from lakewide.compiler.build_prefolds import prefolds
from lakewide.compiler.fold_rows import Rows
from lakewide.compiler.wide_model import WideModel, analyze
from lakewide.dialect import to_sql
from tests.compiler.fixtures import Case
from tests.compiler.test_rules import node_for


def wide(sources: int, columns: int, config: dict[str, Any], shared: int = 0) -> WideModel:
    """``sources`` branches owning ``columns`` columns each, plus ``shared`` columns every
    source owns."""
    every = [f"s{i}_c{j}" for i in range(sources) for j in range(columns)]
    common = [f"x{j}" for j in range(shared)]
    branches = []
    for i in range(sources):
        mine = {f"s{i}_c{j}" for j in range(columns)}
        cols = [c if c in mine else f"CAST(NULL AS BIGINT) AS {c}" for c in every]
        branches.append(f"SELECT k, {', '.join(cols + common)}, seq, t FROM src_{i}")
    return analyze(node_for(Case("m", config, "\nUNION ALL\n".join(branches), [])))


SEQUENCE = {"merge_engine": "partial_update", "primary_key": "k", "sequence_field": "seq"}
CONFIGS = {
    "sequence": SEQUENCE,
    "two_fields": {**SEQUENCE, "sequence_field": ["seq", "t"]},
    "no_sequence": {"merge_engine": "partial_update", "primary_key": "k"},
}


@pytest.mark.parametrize("statement", ["bootstrap", "batch"])
def test_statements_grow_linearly_with_the_columns(statement: str) -> None:
    build = {"bootstrap": bootstrap_query, "batch": combined_batch}[statement]
    sizes = {s: len(to_sql(build(wide(s, 8, SEQUENCE, shared=2)))) for s in (8, 16, 32)}
    # the union of branches carrying every other source's NULLs grew 3.6x per doubling
    assert sizes[32] / sizes[16] < 2.2 and sizes[16] / sizes[8] < 2.2, sizes


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("shared", [0, 2])
def test_the_prefolds_give_the_union_folds_columns(name: str, shared: int) -> None:
    model = wide(3, 2, CONFIGS[name], shared)
    assert prefolds(model)
    union = bootstrap_query(model, union_of_branches(model)).named_selects
    assert bootstrap_query(model).named_selects == union


@pytest.mark.parametrize(
    "config",
    [
        {**SEQUENCE, "sequence_groups": {"seq": ["s0_c0"]}, "sequence_field": []},
        {"merge_engine": "aggregation", "primary_key": "k", "sequence_field": "seq"},
        {"merge_engine": "deduplicate", "primary_key": "k", "sequence_field": "seq"},
    ],
)
def test_other_engines_keep_the_union_fold(config: dict[str, Any]) -> None:
    model = wide(3, 2, config)
    assert not prefolds(model)
    assert "UNION ALL" in to_sql(bootstrap_query(model))


@pytest.mark.parametrize("name", CONFIGS)
def test_the_batch_gives_the_union_folds_columns(name: str) -> None:
    model = wide(3, 2, CONFIGS[name], shared=1)
    union = union_all([tagged_branch(model, b) for b in model.branches])
    folded = reduce_per_key(Rows(model, model.stored, with_branch=True, has_row_kind=False), union)
    touched = [f"__lw_in_{b.index}" for b in model.branches]
    assert sorted(combined_batch(model).named_selects) == sorted(folded.named_selects + touched)
