"""benchmarks/width.py's own logic at a tiny size, without a JVM: the generated models of every
engine (written with ``lakewide.union_sources``) compile to the intended ownership, the JOIN
rebuild is one SELECT of the same columns, and the growth exponent is the log-log slope."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot

from benchmarks import width, width_models, width_report
from benchmarks.width_models import Shape
from lakewide.compiler import compile_model
from lakewide.vocabulary.dialect import DIALECT

SHAPE = Shape(3, 2, shared=1)


def test_shapes_parse_from_their_names() -> None:
    assert Shape.parse("8") == Shape(8, 16, 0)
    assert Shape.parse("4x250") == Shape(4, 250, 0)
    assert Shape.parse("8x16+4").name == "8x16+4" and Shape.parse("8x16+4").width == 132


@pytest.mark.parametrize("engine", list(width_models.ENGINES))
def test_each_engine_model_owns_what_the_join_selects(tmp_path: Path, engine: str) -> None:
    project = width_models.write_project(tmp_path, tmp_path / "warehouse", SHAPE, [engine])
    compiled = compile_model(width.manifest_of(project).models[f"wide_{engine}"])
    assert compiled.model is not None
    shared = [] if engine == "pu_groups" else SHAPE.shared_columns()
    sequence = [f"s{i}_seq" for i in range(3)] if engine == "pu_groups" else []
    for i, branch in enumerate(compiled.model.branches):
        assert sorted(branch.owned) == sorted(
            ["k", *SHAPE.own(i), *shared, *([sequence[i]] if sequence else ["seq"])]
        )
    join = sqlglot.parse_one(width_models.join_select(engine, SHAPE), read=DIALECT)
    assert sorted(join.named_selects) == sorted(compiled.model.columns)


def test_compile_figures_give_cpu_and_sizes(tmp_path: Path) -> None:
    project = width_models.write_project(tmp_path, tmp_path / "warehouse", SHAPE, ["pu_seq"])
    figures = width.compile_figures(project, ["pu_seq"])["pu_seq"]
    assert figures["summary_bytes"] > 0 and figures["merge_all_bytes"] > 0
    assert figures["all_plans_bytes"] > figures["bootstrap_bytes"] + figures["merge_all_bytes"]


def test_growth_is_the_log_log_slope_over_the_columns() -> None:
    assert width_report.slope([(64, 1.0), (128, 4.0), (256, 16.0)]) == pytest.approx(2.0)
    records = [
        {"shape": f"{s}x16", "columns": 16 * s, "compile": {"pu_seq": {"cpu": 0.01 * s}}}
        for s in (4, 8, 16)
    ]
    records.append({"shape": "4x250", "columns": 1000, "compile": {"pu_seq": {"cpu": 99.0}}})
    result = {"keys": 50, "engines": ["pu_seq"], "shapes": records}
    assert width_report.growth(result, "pu_seq")["compile (Python CPU)"] == pytest.approx(1.0)
    table = width_report.markdown(result)
    assert "| compile (Python CPU) | 0.04 | 0.08 | 0.16 | 99.00 | 1.00 |" in table


def test_plan_only_labels_what_a_statement_writes_or_reads() -> None:
    from benchmarks import width_plan_only

    def parsed(text: str) -> sqlglot.exp.Expr:
        return sqlglot.parse_one(text, read=DIALECT)

    merge = parsed(
        "MERGE INTO lw.wide.m AS t USING __lw_batch_3 AS s ON t.k = s.k WHEN MATCHED THEN DELETE"
    )
    assert width_plan_only.label(merge) == "MERGE m"
    view = parsed("CREATE OR REPLACE TEMPORARY VIEW __lw_batch_12 AS SELECT k FROM __lw_new_12")
    assert width_plan_only.label(view) == "CREATE VIEW __lw_batch_N"
    assert width_plan_only.planned(view) == view.expression  # a view: its query is planned
    query = parsed("SELECT COUNT(*) FROM __lw_new_1 UNION ALL SELECT 1 FROM __lw_new_2")
    assert width_plan_only.label(query) == "UNION __lw_new_N, __lw_new_N"
    assert width_plan_only.planned(parsed("ALTER TABLE lw.wide.m WRITE ORDERED BY k")) is None


def test_a_run_without_the_join_says_what_its_rows_were_compared_with() -> None:
    record = {
        "shape": "2x16",
        "columns": 32,
        "steps": {"all": {"pu_seq": {"cpu": 2.0}}},
        "equal": {"refresh": {"pu_seq": True}},
    }
    alone = width_report.markdown(
        {"keys": 50, "engines": ["pu_seq"], "shapes": [record], "joins": False}
    )
    assert "| rows equal to a full refresh's, after the runs | yes | |" in alone
    assert "x the JOIN" not in alone  # no JOIN ran: no ratio to it
    record["equal"] = {"refresh": {"pu_seq": False}}
    assert "| **no** |" in width_report.markdown(
        {"keys": 50, "engines": ["pu_seq"], "shapes": [record], "joins": False}
    )
