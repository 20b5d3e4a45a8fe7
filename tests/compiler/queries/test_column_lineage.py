"""Column lineage with sqlglot.lineage, without a JVM: the example project's models, a ref()'d
model followed down to its sources, joins and CTEs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlglot import exp

from lakewide.compiler import analyze
from lakewide.compiler.queries.column_lineage import ColumnRef, model_lineage
from lakewide.compiler.trees.rewrite import table_key
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.manifest import Manifest, load_manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.project.profiles_file import find_profiles_file, load_output
from lakewide.project.settings import load_project
from lakewide.vocabulary.errors import CompileError

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def example() -> Manifest:
    project = load_project(REPO)
    output = load_output(find_profiles_file(project.root), project.profile, None, project.root)
    return load_manifest(project, output)


def _models_sql(manifest: Manifest) -> dict[str, str]:
    return {n.relation.key: n.sql for n in manifest.models.values()}


def _owned_oracle(node: ModelNode) -> dict[str, list[ColumnRef]]:
    """Independent oracle for a key table: per column, the columns its owning branches' own
    expressions name, on each branch's table (owned_columns, not sqlglot.lineage)."""
    model = analyze(node)
    out: dict[str, list[ColumnRef]] = {c: [] for c in model.columns}
    for branch in model.branches:
        table = branch.select.find(exp.Table)
        assert table is not None
        for column, value in branch.owned.items():
            for used in value.find_all(exp.Column):
                ref = ColumnRef(table_key(table), used.name.lower())
                if ref not in out[column]:
                    out[column].append(ref)
    return out


def test_imp_cnt_of_user_rec_wide_comes_from_ods_impressions(example: Manifest) -> None:
    lineage = model_lineage(example.models["user_rec_wide"], _models_sql(example))
    impressions = example.sources[("ods", "impressions")].relation.key
    assert lineage["imp_cnt"].sources == [ColumnRef(impressions, "imp_cnt")]
    # the key comes from every source
    assert {r.table.rsplit(".", 1)[1] for r in lineage["user_id"].sources} == {
        "recommendations",
        "impressions",
        "clicks",
    }


@pytest.mark.parametrize("name", ["user_rec_wide", "order_detail", "user_activity"])
def test_key_tables_match_the_owned_columns(example: Manifest, name: str) -> None:
    node = example.models[name]
    lineage = model_lineage(node, _models_sql(example))
    oracle = _owned_oracle(node)
    assert list(lineage) == list(oracle)
    for column, refs in oracle.items():
        assert sorted(lineage[column].direct) == sorted(refs), column
        assert lineage[column].sources == lineage[column].direct  # no ref(): the same


def test_through_a_ref_down_to_the_sources(example: Manifest) -> None:
    node = example.models["order_status_counts"]
    lineage = model_lineage(node, _models_sql(example))
    order_detail = example.models["order_detail"].relation.key
    order_info = example.sources[("ods", "order_info")].relation.key
    assert lineage["order_status"].direct == [ColumnRef(order_detail, "order_status")]
    # order_detail's order_status is owned by order_info only (order_address: CAST(NULL))
    assert lineage["order_status"].sources == [ColumnRef(order_info, "order_status")]
    assert lineage["orders"].direct == [] and lineage["orders"].sources == []  # COUNT(*)


def _node(name: str, sql: str, refs: list[str] | None = None) -> ModelNode:
    return ModelNode(
        name,
        Path(f"models/{name}.sql"),
        sql,
        sql,
        parse_model_config({}, path=f"models/{name}.sql"),
        Relation("lw", "an", name),
        refs=refs or [],
    )


def test_two_refs_deep_through_a_join_and_a_cte() -> None:
    first = _node("a", "SELECT k, x + 1 AS y FROM lw.src.t")
    second = _node(
        "b",
        "WITH c AS (SELECT k, y FROM lw.an.a) "
        "SELECT c.k, c.y * u.w AS z FROM c JOIN lw.src.u AS u ON c.k = u.k",
        refs=["a"],
    )
    third = _node("c", "SELECT k, z FROM lw.an.b", refs=["b"])
    models = {n.relation.key: n.sql for n in (first, second, third)}
    lineage = model_lineage(third, models)
    assert lineage["z"].direct == [ColumnRef("lw.an.b", "z")]
    assert sorted(lineage["z"].sources) == [ColumnRef("lw.src.t", "x"), ColumnRef("lw.src.u", "w")]
    assert lineage["k"].sources == [ColumnRef("lw.src.t", "k")]


def test_star_resolves_with_a_schema() -> None:
    node = _node("s", "SELECT * FROM lw.src.t")
    schema = {"lw": {"src": {"t": {"a": "INT", "b": "STRING"}}}}
    lineage = model_lineage(node, {}, schema)
    assert {c: lin.direct for c, lin in lineage.items()} == {
        "a": [ColumnRef("lw.src.t", "a")],
        "b": [ColumnRef("lw.src.t", "b")],
    }


def test_star_over_a_table_of_unknown_columns_stays_a_star() -> None:
    node = _node("s", "SELECT * FROM lw.an.a", refs=["a"])
    lineage = model_lineage(node, {"lw.an.a": "SELECT k FROM lw.src.t"})
    assert list(lineage) == ["*"] and lineage["*"].direct == [ColumnRef("lw.an.a", "*")]


def test_an_ambiguous_column_is_unresolved_and_a_schema_resolves_it() -> None:
    node = _node("j", "SELECT k, w FROM lw.src.t JOIN lw.src.u ON t.k = u.k")
    lineage = model_lineage(node, {})
    assert lineage["k"].unresolved == ["k"] and lineage["k"].direct == []
    schema = {"lw": {"src": {"t": {"k": "INT"}, "u": {"k": "INT", "w": "INT"}}}}
    resolved = model_lineage(node, {}, schema)
    assert resolved["w"].direct == [ColumnRef("lw.src.u", "w")] and not resolved["w"].unresolved


def test_sql_that_does_not_parse_is_a_compile_error_naming_the_model() -> None:
    with pytest.raises(CompileError, match="bad"):
        model_lineage(_node("bad", "SELECT ("), {})


def test_the_lineage_module_does_not_import_pyspark() -> None:
    code = (
        "import sys, lakewide.compiler.queries.column_lineage; "
        "assert not any(m.startswith(('pyspark', 'py4j')) for m in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
