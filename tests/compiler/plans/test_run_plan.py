"""The compiled run plans (no JVM): fixtures of every plan kind, parameters the executor binds,
and the import contract of the run-time side (it never reaches into compiler internals)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler import PlanContext, compile_model
from lakewide.compiler.plans import steps as p
from lakewide.compiler.trees import placeholders
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from tests.compiler.fixtures import FIXTURES

PACKAGE = Path(__file__).resolve().parents[3] / "lakewide"


def _cases() -> list[tuple[str, dict[str, Any], dict[str, Any], str, dict[str, str]]]:
    text = (FIXTURES / "run_plans.sql").read_text(encoding="utf-8")
    cases = []
    for chunk in re.split(r"^-- case: ", text, flags=re.M)[1:]:
        name, _, body = chunk.partition("\n")
        config = json.loads(re.search(r"^-- config: (.*)$", body, flags=re.M).group(1))
        context = json.loads(re.search(r"^-- context: (.*)$", body, flags=re.M).group(1))
        parts = re.split(r"^-- plan: (\S+)\n", body, flags=re.M)
        sql = parts[0].strip().splitlines()[-1].rstrip(";")
        plans = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts), 2)}
        cases.append((name, config, context, sql, plans))
    return cases


CASES = _cases()


def compiled(config: dict[str, Any], context: dict[str, Any], sql: str):
    node = ModelNode(
        "m",
        Path("models/m.sql"),
        sql,
        sql,
        parse_model_config(config, path="m.sql"),
        Relation("lw", "db", "m"),
    )
    return compile_model(
        node,
        PlanContext(
            {k: Relation(*k.split(".")) for k in context["upstream"]},
            frozenset(context["producing"]),
            context["produces"],
        ),
    )


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_run_plans(case: tuple) -> None:
    _, config, context, sql, expected = case
    files = compiled(config, context, sql).files(plans=True)
    for name, text in expected.items():
        assert files[name].strip() == text, name
    # compile prints the trees themselves (no copies), plans first: the same text
    assert compiled(config, context, sql).files(plans=True, in_place=True) == files


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_combined_plans_built_alone_are_the_plans_combined(case: tuple) -> None:
    """What a run compiled again with the folds' types builds of the typed model: the combined
    plans alone, equal to those of every plan, and no other plan built."""
    _, config, context, sql, _ = case
    alone = compiled(config, context, sql)
    combined, combined_changes = alone.combined_plans
    assert "plans" not in alone.__dict__
    every = compiled(config, context, sql).plans
    assert every is not None
    assert (combined, combined_changes) == (every.combined, every.combined_changes)


def test_the_plans_a_run_seldom_takes_are_built_on_first_use() -> None:
    """A run takes one plan of the lot; the full refresh, the combined batches and the re-fold
    are built when a run first asks for them (each costs seconds of Python for a wide model)."""
    _, config, context, sql, _ = next(c for c in CASES if "plans/incremental_all_merge.sql" in c[4])
    plans = compiled(config, context, sql).plans
    assert plans is not None
    lazy = ("full_refresh", "combined", "combined_changes", "refold")
    assert not set(lazy) & set(vars(plans))
    assert plans.combined is not None and plans.refold and plans.full_refresh
    assert {"full_refresh", "combined", "refold"} <= set(vars(plans))


def _placeholders(tree: Any) -> set[str]:
    import sqlglot.expressions as exp

    return {node.name for node in tree.find_all(exp.Placeholder)}


def _trees(step: p.Step) -> list[Any]:
    fields = ("statement", "query", "probe", "narrowed", "bounds")
    return [getattr(step, f) for f in fields if getattr(step, f, None) is not None]


def test_every_parameter_a_step_names_is_bound_before_it() -> None:
    """Walk each plan as the executor does: the parameters of every step are those a run binds
    up front (pins, branch ranges, the commit's parent/snapshot) or results of earlier steps."""
    config = {
        "merge_engine": "partial_update",
        "primary_key": "id",
        "sequence_field": "ts",
        "merge_filter": True,
    }
    sql = (
        "SELECT id, a, CAST(NULL AS INT) AS b, ts FROM lw.ods.a UNION ALL "
        "SELECT u.id, NULL, u.b, u.ts FROM lw.db.up AS u"
    )
    plans = compiled(
        config,
        {"upstream": ["lw.ods.a", "lw.db.up"], "producing": ["lw.db.up"], "produces": True},
        sql,
    ).plans
    assert plans is not None
    up_front = (
        {r.at for r in plans.pins}
        | {placeholders.start(b.index) for b in plans.branches}
        | {placeholders.end(b.index) for b in plans.branches}
    )

    def walk(steps: list[p.Step], known: set[str]) -> None:
        known = set(known)
        for step in steps:
            for tree in _trees(step):
                names = _placeholders(tree) - (
                    {"low", "high"} if tree is getattr(step, "narrowed", None) else set()
                )
                assert names <= known, (step, names - known)
            for attribute in ("at", "after", "newer_than", "of"):
                value = getattr(step, attribute, None)
                assert value is None or value in known, (step, value)
            known |= set(getattr(step, "into", ()) if isinstance(step, p.Query) else ())
            if isinstance(step, (p.Stage, p.Sequence)):
                known.add(step.into)
            if isinstance(step, p.Commit) and not step.changelog:
                known |= {"parent", "snapshot"}

    walk(plans.bootstrap, up_front)
    for branch in plans.branches:
        for reads in branch.reads.values():
            walk(reads, up_front)
        walk(branch.merge, up_front)
        assert branch.changelog is not None
        walk(branch.changelog, up_front)
    assert plans.combined is not None and plans.recover is not None
    walk(plans.combined, up_front)
    walk(plans.combined_changes or [], up_front)
    walk(plans.recover, up_front | {"parent", "snapshot"})
    assert set(plans.branches[1].reads) == {
        "incremental",
        "full",
        "changelog",
        "produced",
        "empty",
        "no_changes",
    }
    assert "produced" not in plans.branches[0].reads


def test_bind_replaces_parameters_and_refuses_a_missing_one() -> None:
    import sqlglot.expressions as exp

    tree = exp.select("*").from_("t").where(exp.column("a").eq(placeholders.param("end_1")))
    assert placeholders.bind(tree, {"end_1": 7}).sql("spark") == "SELECT * FROM t WHERE a = 7"
    assert placeholders.bind(tree, {"end_1": None}).sql("spark") == "SELECT * FROM t WHERE a = NULL"
    with pytest.raises(KeyError):
        placeholders.bind(tree, {})


RUN_SIDE = (
    "run/models/executor.py",
    "run/models/key_table_run.py",
    "run/models/step_runner.py",
    "run/models/read_modes.py",
    "state/changelog_producer.py",
)


@pytest.mark.parametrize("module", RUN_SIDE)
def test_the_run_side_imports_no_compiler_internals(module: str) -> None:
    """Data flows one way: project -> compiler -> plan -> executor -> engine -> state. The
    run-time modules take the compiler's output (``lakewide.compiler``'s public names, the step
    types ``lakewide.compiler.plans.steps`` with ``lakewide.compiler.trees.placeholders``, and
    ``lakewide.compiler.plans.upstream``, which compiles a model in its upstreams' context),
    never its rule modules."""
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            folder = PACKAGE.parent.joinpath(*node.module.split("."))
            for alias in node.names:  # a module imported from its folder counts by its own name
                is_module = (folder / f"{alias.name}.py").is_file()
                imported.add(f"{node.module}.{alias.name}" if is_module else node.module)
    public = {
        "lakewide.compiler.plans.upstream",
        "lakewide.compiler.plans.steps",
        "lakewide.compiler.trees.placeholders",
    }
    assert not [m for m in imported if m.startswith("lakewide.compiler.") and m not in public]


NULL_KEY_CONFIG = {"merge_engine": "partial_update", "primary_key": "k", "sequence_field": "seq"}


@pytest.mark.parametrize(
    ("first", "columns"),
    [
        ("SELECT k, x, CAST(NULL AS BIGINT) AS y, seq FROM lw.db.a", ("k",)),
        ("SELECT id AS k, x, CAST(NULL AS BIGINT) AS y, seq FROM lw.db.a", ("id",)),
        (
            "SELECT a.k, c.x, CAST(NULL AS BIGINT) AS y, a.seq FROM lw.db.a AS a "
            "LEFT JOIN lw.db.c AS c ON a.k = c.k",
            ("k",),
        ),
        ("SELECT CAST(k AS BIGINT) AS k, x, CAST(NULL AS BIGINT) AS y, seq FROM lw.db.a", None),
        (
            "SELECT a.k, c.x, CAST(NULL AS BIGINT) AS y, a.seq FROM lw.db.a AS a "
            "RIGHT JOIN lw.db.c AS c ON a.k = c.k",
            None,
        ),
        (
            "SELECT c.k, c.x, CAST(NULL AS BIGINT) AS y, a.seq FROM lw.db.a AS a "
            "JOIN lw.db.c AS c ON a.k = c.k",
            None,
        ),
        (
            "SELECT k, x, CAST(NULL AS BIGINT) AS y, seq FROM lw.db.a AS a "
            "JOIN lw.db.c AS c USING (k)",
            None,
        ),
        (
            "SELECT k, x, CAST(NULL AS BIGINT) AS y, seq FROM "
            "(SELECT NULLIF(k, 0) AS k, x, seq FROM lw.db.a) AS s",
            None,
        ),
        (
            "SELECT k, MAX(x) AS x, CAST(NULL AS BIGINT) AS y, MAX(seq) AS seq FROM lw.db.a "
            "GROUP BY k",
            None,
        ),
    ],
)
def test_a_null_key_count_is_left_to_file_statistics_only_where_the_key_is_a_column(
    first: str, columns: tuple[str, ...] | None
) -> None:
    """A branch's NULL-key count may be answered by its driving table's files (no NULL in
    the key's column) only where the key is that column as it is: no cast, no other table,
    no subquery, no join that adds rows without it, no grouping."""
    from lakewide.compiler.statements.build_bootstrap import key_columns

    second = "SELECT k, CAST(NULL AS BIGINT), y, seq FROM lw.db.b"
    context = {"upstream": ["lw.db.a", "lw.db.b", "lw.db.c"], "producing": [], "produces": False}
    model = compiled(NULL_KEY_CONFIG, context, f"{first} UNION ALL {second}")
    assert model.model is not None
    branch, other = model.model.branches
    assert key_columns(model.model, branch) == columns
    assert key_columns(model.model, other) == ("k",)
    plans = model.plans
    assert plans is not None
    one = plans.branches[0]
    query, read = one.merge[0], one.reads["incremental"][0]
    assert isinstance(query, p.Query) and isinstance(read, p.Read)
    assert query.nulls == (None if columns is None else tuple(("__lw_new_1", c) for c in columns))
    assert read.stats == (columns or ())
    combined = plans.combined
    assert combined is not None and isinstance(combined[0], p.Query)
    both = (("__lw_new_1", columns[0]), ("__lw_new_2", "k")) if columns else None
    assert combined[0].nulls == both
