"""Compiling at width without a JVM: models of 32 and 64 sources x 16 own columns (512 and
1,024 value columns) written with ``lakewide.union_sources``. What the compiler reads and
writes grows with the columns, not with sources x columns: sizes and counts are compared
between the two widths (doubling the columns may double them, a square would quadruple
them); no timings."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import sqlglot

from benchmarks import width, width_models
from benchmarks.width_models import Shape
from lakewide.compiler import CompiledModel, PlanContext, compile_model
from lakewide.compiler.statements.build_combined_changes import combined_changes
from lakewide.project.by_name import positional
from lakewide.project.nodes import ModelNode
from lakewide.vocabulary.dialect import DIALECT, to_sql
from tests.compiler.test_width_statements import fold_types

SMALL, LARGE = Shape(32), Shape(64)
LINEAR = 2.2  # the most a figure may grow from 512 to 1,024 columns


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[ModelNode, CompiledModel]]:
    """Per source count: the rendered ``pu_seq`` model and its compiled model."""
    out = {}
    for shape in (SMALL, LARGE):
        root = tmp_path_factory.mktemp(f"width_{shape.name}")
        project = width_models.write_project(root, root / "warehouse", shape, ["pu_seq"])
        node = width.manifest_of(project).models["wide_pu_seq"]
        out[shape.sources] = (node, compile_model(node))
    return out


def grows_linearly(small: int, large: int) -> bool:
    return large <= LINEAR * small


def test_the_model_and_its_compiled_columns_have_1024_columns(
    wide: dict[int, tuple[ModelNode, CompiledModel]],
) -> None:
    model = wide[64][1].model
    assert model is not None and len(model.branches) == 64
    assert len(model.columns) == 1 + 64 * 16 + 1  # key, value columns, sequence
    assert [sorted(b.owned) for b in model.branches[:2]] == [
        sorted(["k", "seq", *LARGE.own(0)]),
        sorted(["k", "seq", *LARGE.own(1)]),
    ]


def test_the_rendered_model_grows_with_the_columns(
    wide: dict[int, tuple[ModelNode, CompiledModel]],
) -> None:
    assert grows_linearly(len(wide[32][0].sql), len(wide[64][0].sql))
    assert len(wide[64][0].sql) < 60 * len(LARGE.own(0)) * 64  # bytes a column, not a square


def test_branches_carry_their_own_columns_only(
    wide: dict[int, tuple[ModelNode, CompiledModel]],
) -> None:
    """Only the first branch names every column; the others their own (no NULL per column
    of every other source)."""
    counts = {}
    for sources, (_node, compiled) in wide.items():
        model = compiled.model
        assert model is not None
        written = [len(b.select.expressions) for b in model.branches]
        assert written[0] == len(model.columns)
        assert written[1:] == [len(b.owned) for b in model.branches[1:]]
        counts[sources] = sum(written)
    assert grows_linearly(counts[32], counts[64])


def test_summary_and_bootstrap_grow_with_the_columns(
    wide: dict[int, tuple[ModelNode, CompiledModel]],
) -> None:
    """The summary, and the bootstrap as a run sends it: compiled again with its folds'
    column types (the width benchmark's, as a run's analysis for the contract gives them),
    its one shuffle carries no NULL per other source. (``lakewide compile`` has no types: its
    ``bootstrap.sql`` carries a NULL struct per other source in each branch, S(S-1), counted
    by tests/compiler/test_width_statements.py.)"""
    summary = {s: len(c.shown()["summary.md"]) for s, (_n, c) in wide.items()}
    assert grows_linearly(summary[32], summary[64])
    bootstrap = {}
    for sources, (node, compiled) in wide.items():
        types = fold_types(compiled)
        assert types, "the bootstrap puts its folds together in one shuffle"
        sent = compile_model(node, PlanContext(fold_types=types)).bootstrap
        assert "NULL AS __lw_s" not in to_sql(sent, pretty=False)
        bootstrap[sources] = len(to_sql(sent))
    assert grows_linearly(bootstrap[32], bootstrap[64])


def test_a_column_keeps_the_type_of_the_nulls_other_sources_stand_for(
    wide: dict[int, tuple[ModelNode, CompiledModel]],
) -> None:
    model = wide[64][1].model
    assert model is not None
    for column in ("s0_c0", "s63_c15"):  # owned by the first branch, by the last
        assert [t.sql(DIALECT) for t in model.null_types(column)] == ["BIGINT"]
    assert model.null_types("k") == []


@pytest.mark.parametrize("engine", list(width_models.ENGINES))
def test_the_narrow_model_compiles_to_what_its_positional_form_compiles_to(
    tmp_path: Path, engine: str
) -> None:
    """Every statement and plan of the narrow model (UNION ALL BY NAME) equals those of the
    UNION ALL with every NULL written out."""
    shape = Shape(3, 2, shared=1)
    project = width_models.write_project(tmp_path, tmp_path / "warehouse", shape, [engine])
    node = width.manifest_of(project).models[f"wide_{engine}"]
    assert "UNION ALL BY NAME" in node.sql
    widened = positional(sqlglot.parse_one(node.sql, read=DIALECT)).sql(DIALECT)
    assert "BY NAME" not in widened
    by_hand = dataclasses.replace(node, sql=widened)
    files = compile_model(node).shown(all_plans=True)
    assert "bootstrap.sql" in files and "merge_all.sql" in files
    assert files == compile_model(by_hand).shown(all_plans=True)


#: the engines whose one record's whole row wins (deduplicate, first_row)
ROW_ENGINES = ["dedup", "first"]


@pytest.mark.parametrize("engine", ROW_ENGINES)
def test_row_engines_send_statements_that_grow_with_the_columns(
    tmp_path_factory: pytest.TempPathFactory, engine: str
) -> None:
    """deduplicate and first_row: the bootstrap, the combined batch and the combined batch
    of changes (changelog reads) fold each source over its own columns (no NULL per column
    of every other source), so each grows at most 2.2x from 512 to 1,024 columns; the union
    of every branch grew 3.7-3.9x."""
    sizes: dict[int, dict[str, int]] = {}
    for shape in (SMALL, LARGE):
        root = tmp_path_factory.mktemp(f"width_{engine}_{shape.name}")
        project = width_models.write_project(root, root / "warehouse", shape, [engine])
        compiled = compile_model(width.manifest_of(project).models[f"wide_{engine}"])
        assert compiled.model is not None and compiled.combined is not None
        changes = combined_changes(compiled.model)
        assert changes is not None
        sizes[shape.sources] = {
            "bootstrap": len(to_sql(compiled.bootstrap)),
            "batch": len(to_sql(compiled.combined.batch)),
            "changes": len(to_sql(changes.batch)),
        }
    for statement, size in sizes[64].items():
        assert grows_linearly(sizes[32][statement], size), (statement, sizes)
