"""SQL fixture tests of the compiler rules (no JVM): input model -> expected statements."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot

from lakewide.compiler import compile_model
from lakewide.compiler.model.split_union import split_union
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary.dialect import to_sql
from tests.compiler.fixtures import Case, load_cases, normalize


def node_for(case: Case) -> ModelNode:
    config = parse_model_config(case.config, path="m.sql")
    return ModelNode(
        name="m",
        path=Path("models/m.sql"),
        raw_sql=case.source,
        sql=case.source,
        config=config,
        relation=Relation("lw", "db", "m"),
    )


def ids(cases: list[Case]) -> list[str]:
    return [c.name for c in cases]


SPLIT = load_cases("split_union.sql")
BOOTSTRAP = load_cases("build_bootstrap.sql")
MERGE = load_cases("build_merge.sql")
COMBINED = load_cases("build_combined.sql")


@pytest.mark.parametrize("case", SPLIT, ids=ids(SPLIT))
def test_split_union(case: Case) -> None:
    branches = split_union(sqlglot.parse_one(case.source, read="spark"), model="m")
    assert [normalize(b.sql("spark")) for b in branches] == [normalize(e) for e in case.expected]


@pytest.mark.parametrize("case", BOOTSTRAP, ids=ids(BOOTSTRAP))
def test_build_bootstrap(case: Case) -> None:
    compiled = compile_model(node_for(case))
    assert [normalize(to_sql(compiled.bootstrap, pretty=False))] == [
        normalize(e) for e in case.expected
    ]


@pytest.mark.parametrize("case", MERGE, ids=ids(MERGE))
def test_build_merge(case: Case) -> None:
    compiled = compile_model(node_for(case))
    produced = []
    for merge in compiled.merges:
        produced += [to_sql(merge.staging(), pretty=False), to_sql(merge.statement, pretty=False)]
    assert [normalize(p) for p in produced] == [normalize(e) for e in case.expected]


@pytest.mark.parametrize("case", COMBINED, ids=ids(COMBINED))
def test_build_combined(case: Case) -> None:
    compiled = compile_model(node_for(case))
    assert compiled.combined is not None
    produced = [
        to_sql(compiled.combined.staging(), pretty=False),
        to_sql(compiled.combined.statement, pretty=False),
    ]
    assert [normalize(p) for p in produced] == [normalize(e) for e in case.expected]


def test_full_refresh_is_create_or_replace_of_the_bootstrap() -> None:
    case = BOOTSTRAP[0]
    compiled = compile_model(node_for(case))
    assert compiled.full_refresh is not None and compiled.full_refresh.args["replace"] is True
    replaced = compiled.full_refresh.copy()
    replaced.set("replace", False)
    assert replaced == compiled.bootstrap


AGGREGATES = load_cases("aggregates.sql", has_input=False)


@pytest.mark.parametrize("case", AGGREGATES, ids=ids(AGGREGATES))
def test_aggregates(case: Case) -> None:
    from sqlglot import exp

    from lakewide.compiler.aggregates.aggregates import REGISTRY, Combine, FoldInput

    options = {k: v for k, v in case.config.items() if k not in ("function", "retract")}
    function = REGISTRY[case.config["function"]]
    retract = exp.column("rk") if case.config["retract"] else None
    inp = FoldInput(exp.column("v"), retract, exp.column("o"), options)
    ops = exp.column("ops", table="s") if function.ops and retract else None
    combine = Combine(
        exp.column("v", table="t"),
        exp.column("v", table="s"),
        ops,
        exp.column("wins"),
        exp.column("older"),
        options,
    )
    produced = [function.fold(inp), function.combine(combine)]
    if ops is not None:
        produced.append(function.ops(inp))
    assert [normalize(p.sql("spark")) for p in produced] == [normalize(e) for e in case.expected]


def test_every_registered_aggregate_has_a_fixture() -> None:
    from lakewide.compiler.aggregates.aggregates import REGISTRY

    assert {c.config["function"] for c in AGGREGATES} == set(REGISTRY)
