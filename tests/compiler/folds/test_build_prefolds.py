"""Per-source pre-folds (lakewide.compiler.folds.build_prefolds): the statements a wide model sends
grow with its columns, not with sources x columns, and give the union fold's columns. Their
rows equal the union fold's: the Spark property tests (tests/integration/test_properties.py,
test_incremental.py) prove bootstrap == incremental == the plain-Python fold."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from sqlglot import exp

from lakewide.compiler.folds.build_prefolds import prefolds
from lakewide.compiler.folds.fold_rows import Rows, S
from lakewide.compiler.folds.prefold_columns import fold_name
from lakewide.compiler.model.ordering import BRANCH_COLUMN
from lakewide.compiler.model.wide_model import WideModel, analyze
from lakewide.compiler.plans.validate import validate
from lakewide.compiler.statements.build_bootstrap import (
    bootstrap_query,
    reduce_per_key,
    tagged_branch,
    union_all,
    union_of_branches,
)
from lakewide.compiler.statements.build_merge import build_combined_merge, combined_batch
from lakewide.vocabulary.dialect import to_sql
from tests.compiler.fixtures import Case
from tests.compiler.test_rules import node_for

# narrow models (3 x 2): their bootstraps built from the pre-folds, as a wide table's are
pytestmark = pytest.mark.usefixtures("bootstraps_apart")


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


def owned_by(owners: dict[str, list[int]], config: dict[str, Any], sources: int = 3) -> WideModel:
    """A model of ``sources`` branches over ``k`` and ``owners``' columns (column -> the
    sources owning it; the others write ``CAST(NULL AS INT)``, a STRING for ``f``)."""
    branches = []
    for i in range(sources):
        cols = [
            c if i in who else f"CAST(NULL AS {'STRING' if c == 'f' else 'INT'}) AS {c}"
            for c, who in owners.items()
        ]
        branches.append(f"SELECT k, {', '.join(cols)} FROM src_{i}")
    return analyze(node_for(Case("m", config, "\nUNION ALL\n".join(branches), [])))


PU = {"merge_engine": "partial_update", "primary_key": "k"}
GROUPS = {**PU, "sequence_groups": {"g0": ["a", "b"], "g1": ["c"]}}
AGGREGATION = {"merge_engine": "aggregation", "primary_key": "k", "sequence_field": "s"}
DEDUPLICATE = {**PU, "merge_engine": "deduplicate", "sequence_field": "s"}
FUNCTIONS = {"a": "sum", "b": "max", "c": "last_value", "d": "first_non_null_value", "e": "min"}
#: name -> (column owners, config, whether the model takes the per-source pre-folds)
PATHS: dict[str, tuple[dict[str, list[int]], dict[str, Any], bool]] = {
    "groups_of_one_source_each": (
        {"a": [0], "b": [0], "g0": [0], "c": [1], "g1": [1], "p": [2]},
        GROUPS,
        True,
    ),
    "group_of_two_sources": (
        {"a": [0, 1], "b": [0, 1], "g0": [0, 1], "c": [2], "g1": [2]},
        GROUPS,
        True,
    ),
    "groups_and_a_shared_column_in_no_group": (
        {"a": [0], "b": [0], "g0": [0], "c": [1], "g1": [1], "p": [0, 1, 2], "s": [0, 1, 2]},
        {**GROUPS, "sequence_field": "s"},
        True,
    ),
    "summed_column_of_a_one_source_group": (
        {"a": [0], "b": [0], "g0": [0], "c": [1], "g1": [1]},
        {**GROUPS, "aggregates": {"c": "sum"}},
        True,
    ),
    "two_field_group_sequence_of_two_sources": (
        {"a": [0, 1], "g0": [0, 1], "g2": [0, 1], "c": [2], "g1": [2]},
        {**PU, "sequence_groups": {"g0,g2": ["a"], "g1": ["c"]}},
        True,
    ),
    "summed_column_of_a_two_source_group": (
        {"a": [0, 1], "b": [0, 1], "g0": [0, 1], "c": [2], "g1": [2]},
        {**GROUPS, "aggregates": {"a": "sum"}},
        False,
    ),
    "row_kinds": (
        {"a": [0], "b": [0], "g0": [0], "c": [1], "g1": [1], "op": [0, 1, 2]},
        {**GROUPS, "row_kind_column": "op"},
        True,
    ),
    "row_kinds_of_a_group_of_two_sources": (
        {"a": [0, 1], "b": [0, 1], "g0": [0, 1], "c": [2], "g1": [2], "op": [0, 1, 2]},
        {**GROUPS, "row_kind_column": "op"},
        True,
    ),
    "row_kinds_a_removing_group": (  # its delete removes every source's columns
        {"a": [0], "b": [0], "g0": [0], "c": [1], "g1": [1], "op": [0, 1, 2]},
        {**GROUPS, "row_kind_column": "op", "remove_record_on_sequence_group": ["g0"]},
        False,
    ),
    "row_kinds_without_groups": (
        {"a": [0], "b": [1], "s": [0, 1, 2], "op": [0, 1, 2]},
        {**PU, "sequence_field": "s", "row_kind_column": "op", "remove_record_on_delete": True},
        False,
    ),
    "aggregation_of_combinable_functions": (
        {"a": [0, 1], "b": [0, 2], "c": [1, 2], "d": [0, 1, 2], "e": [2], "f": [1], "s": [0, 1, 2]},
        {**AGGREGATION, "aggregates": {**FUNCTIONS, "f": "listagg"}},
        True,
    ),
    "aggregation_without_a_sequence": (
        {"a": [0], "b": [1, 2], "c": [2, 0], "d": [1], "e": [0]},
        {**AGGREGATION, "sequence_field": []},
        True,
    ),
    "aggregation_listagg_of_two_sources": (
        {"a": [0], "f": [1, 2], "s": [0, 1, 2]},
        {**AGGREGATION, "aggregates": {"a": "sum", "f": "listagg"}},
        False,
    ),
    "aggregation_product_of_two_sources": (
        {"a": [0, 1], "s": [0, 1, 2]},
        {**AGGREGATION, "aggregates": {"a": "product"}},
        False,
    ),
    "aggregation_sum_of_an_undeclared_type": (
        {"a": [0, 1, 2], "s": [0, 1, 2]},
        {**AGGREGATION, "aggregates": {"a": "sum"}},
        False,
    ),
    "aggregation_row_kinds": (
        {"a": [0], "b": [1], "s": [0, 1, 2], "op": [0, 1, 2]},
        {**AGGREGATION, "row_kind_column": "op"},
        False,
    ),
    "deduplicate": (
        {"a": [0], "b": [1], "s": [0, 1, 2]},
        {**PU, "merge_engine": "deduplicate", "sequence_field": "s"},
        True,
    ),
    "deduplicate_shared_column_without_a_sequence": (
        {"a": [0, 2], "b": [1], "c": [0, 1, 2]},
        {**PU, "merge_engine": "deduplicate"},
        True,
    ),
    "deduplicate_deletes": (
        {"a": [0], "b": [1, 2], "s": [0, 1, 2], "op": [0, 1, 2]},
        {**DEDUPLICATE, "row_kind_column": "op"},
        True,
    ),
    "deduplicate_ignoring_deletes_of_one_source": (
        {"a": [0], "b": [1], "s": [0, 1, 2], "op": [1]},
        {**DEDUPLICATE, "row_kind_column": "op", "ignore_delete": True},
        True,
    ),
    "first_row": ({"a": [0], "b": [1]}, {**PU, "merge_engine": "first_row"}, True),
    "first_row_ignoring_deletes": (
        {"a": [0], "b": [1, 2], "op": [0, 1, 2]},
        {**PU, "merge_engine": "first_row", "row_kind_column": "op", "ignore_delete": True},
        True,
    ),
}


@pytest.mark.parametrize("name", PATHS)
def test_which_models_take_the_prefolds(name: str) -> None:
    owners, config, expected = PATHS[name]
    model = owned_by(owners, config)
    validate(model)  # a model lakewide compiles
    assert prefolds(model) is expected
    # the union of the branches tags each row with its source; the pre-folds do not
    assert (BRANCH_COLUMN in to_sql(bootstrap_query(model))) is not expected
    assert (BRANCH_COLUMN in to_sql(combined_batch(model))) is not expected


def test_one_source_keeps_the_union_fold() -> None:
    assert not prefolds(owned_by({"a": [0], "b": [0], "g0": [0], "c": [0], "g1": [0]}, GROUPS, 1))


@pytest.mark.parametrize("name", [n for n, (_, _, folds) in PATHS.items() if folds])
def test_grouped_prefolds_give_the_union_folds_columns(name: str) -> None:
    owners, config, _ = PATHS[name]
    model = owned_by(owners, config)
    union = bootstrap_query(model, union_of_branches(model)).named_selects
    assert bootstrap_query(model).named_selects == union
    kinds = model.row_kind is not None
    folded = reduce_per_key(
        Rows(model, model.stored, with_branch=True, has_row_kind=kinds),
        union_all([tagged_branch(model, b) for b in model.branches]),
    )
    touched = [f"__lw_in_{b.index}" for b in model.branches]
    batch = combined_batch(model).named_selects
    # a group's delete flags: read by a MERGE under remove_record_on_sequence_group only,
    # whose models keep the union's fold
    union_columns = [c for c in folded.named_selects if not c.startswith("__lw_gdel_")]
    assert sorted(batch) == sorted(union_columns + touched)
    if model.engine.picks_rows:  # in the union's order, too
        assert batch == folded.named_selects + touched
    read = {c.name for c in build_combined_merge(model).find_all(exp.Column) if c.table == S}
    assert read <= set(batch), read - set(batch)


def typed(model: WideModel) -> WideModel:
    """``model`` with its folds' column types, as a run hands them from its analysis of the
    bootstrap (``one_shuffle.typed_rows``; every column BIGINT here)."""
    query = bootstrap_query(model)
    ctes = {c.alias: c.this for c in query.args["with_"].expressions}
    types = {
        b.index: {n: '"long"' for n in ctes[fold_name(b)].named_selects} for b in model.branches
    }
    return dataclasses.replace(model, fold_types=types)


def test_groups_grow_linearly_with_the_columns() -> None:
    """The bootstrap and the batch as a run sends them, with the folds' types (without them,
    ``lakewide compile``'s one shuffle carries a NULL per other source in every branch)."""

    def sized(sources: int) -> int:
        owners = {f"g{i}_c{j}": [i] for i in range(sources) for j in range(8)}
        owners.update({f"g{i}": [i] for i in range(sources)})
        groups = {f"g{i}": [f"g{i}_c{j}" for j in range(8)] for i in range(sources)}
        model = typed(owned_by(owners, {**PU, "sequence_groups": groups}, sources))
        return len(to_sql(bootstrap_query(model))) + len(to_sql(combined_batch(model)))

    sizes = {s: sized(s) for s in (8, 16, 32)}
    assert sizes[32] / sizes[16] < 2.2 and sizes[16] / sizes[8] < 2.2, sizes


@pytest.mark.parametrize("name", CONFIGS)
def test_the_batch_gives_the_union_folds_columns(name: str) -> None:
    model = wide(3, 2, CONFIGS[name], shared=1)
    union = union_all([tagged_branch(model, b) for b in model.branches])
    folded = reduce_per_key(Rows(model, model.stored, with_branch=True, has_row_kind=False), union)
    touched = [f"__lw_in_{b.index}" for b in model.branches]
    assert sorted(combined_batch(model).named_selects) == sorted(folded.named_selects + touched)
