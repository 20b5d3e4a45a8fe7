"""What lakewide sends for a wide model, without a JVM: no statement of any plan (bootstrap,
batches, MERGEs, combined batches of appends and of changes, reads of upstream changelogs,
restate) carries a NULL placeholder for another source's column, for every engine with and
without row kinds; and ``compile --all-plans`` grows with the columns (sizes compared at two
widths by ratio, no timings)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from benchmarks import width, width_models
from benchmarks.width_models import Shape
from lakewide.compiler import CompiledModel, PlanContext, compile_model
from lakewide.compiler.folds import one_shuffle
from lakewide.compiler.folds.build_prefolds import KEYS, UNION_BOOTSTRAP_COLUMNS
from lakewide.compiler.folds.prefold_columns import fold_name
from lakewide.compiler.plans import steps as p
from lakewide.project.nodes import Relation
from lakewide.vocabulary.dialect import DIALECT, to_sql
from tests.compiler.fixtures import Case
from tests.compiler.test_rules import node_for

#: a table wider than a union bootstrap's (``UNION_BOOTSTRAP_COLUMNS``): its bootstrap and
#: restatement are built from the pre-folds
SOURCES = 6
COLUMNS = UNION_BOOTSTRAP_COLUMNS // SOURCES + 1


def _own(i: int) -> list[str]:
    return [f"s{i}_c{j}" for j in range(COLUMNS)]


def model_sql(*, groups: bool, kinds: bool) -> str:
    """The positional UNION ALL of SOURCES sources, each owning COLUMNS columns (a sequence
    group of its own with ``groups``, a row kind ``op`` with ``kinds``)."""
    every = [c for i in range(SOURCES) for c in _own(i)]
    branches = []
    for i in range(SOURCES):
        mine = set(_own(i))
        cols = [c if c in mine else f"CAST(NULL AS BIGINT) AS {c}" for c in every]
        if groups:
            cols += [f"g{j}" if j == i else f"CAST(NULL AS INT) AS g{j}" for j in range(SOURCES)]
        else:
            cols.append("seq")
        if kinds:
            cols.append("op")
        branches.append(f"SELECT k, {', '.join(cols)} FROM lw.ods.s{i}")
    return "\nUNION ALL\n".join(branches)


PU = {"merge_engine": "partial_update", "primary_key": "k", "sequence_field": "seq"}
GROUPS = {
    "merge_engine": "partial_update",
    "primary_key": "k",
    "sequence_groups": {f"g{i}": _own(i) for i in range(SOURCES)},
}
AGGREGATION = {
    "merge_engine": "aggregation",
    "primary_key": "k",
    "sequence_field": "seq",
    "aggregates": {c: ("sum", "max")[j % 2] for i in range(SOURCES) for j, c in enumerate(_own(i))},
}
DEDUPLICATE = {"merge_engine": "deduplicate", "primary_key": "k", "sequence_field": "seq"}
FIRST_ROW = {"merge_engine": "first_row", "primary_key": "k"}
KINDS = {"row_kind_column": "op"}
#: the union's fold of every branch still carries the other sources' NULLs where a delete
#: removes a whole row or a retract reaches an aggregate (each source cannot be folded apart)
UNION_FOLD = pytest.mark.xfail(strict=True, reason="folded as one union of every branch")

MODELS: list[Any] = [
    pytest.param(PU, False, False, id="partial_update"),
    pytest.param(GROUPS, True, False, id="partial_update_groups"),
    pytest.param({**GROUPS, **KINDS}, True, True, id="partial_update_groups_row_kinds"),
    pytest.param(
        {**PU, **KINDS, "ignore_delete": True}, False, True, id="pu_ignore", marks=UNION_FOLD
    ),
    pytest.param(
        {**PU, **KINDS, "remove_record_on_delete": True},
        False,
        True,
        id="pu_remove",
        marks=UNION_FOLD,
    ),
    pytest.param(AGGREGATION, False, False, id="aggregation"),
    pytest.param(
        {**AGGREGATION, **KINDS}, False, True, id="aggregation_row_kinds", marks=UNION_FOLD
    ),
    pytest.param(DEDUPLICATE, False, False, id="deduplicate"),
    pytest.param({**DEDUPLICATE, **KINDS}, False, True, id="deduplicate_row_kinds"),
    pytest.param(FIRST_ROW, False, False, id="first_row"),
    pytest.param(
        {**FIRST_ROW, **KINDS, "ignore_delete": True}, False, True, id="first_row_row_kinds"
    ),
]


def _statements(config: dict[str, Any], groups: bool, kinds: bool) -> dict[str, str]:
    """Every statement ``compile --all-plans`` writes (sources read as appends, as Iceberg
    changes and, half of them, as the changelog a lakewide model produces), and the steps of
    ``run --restate``, by name."""
    sql = model_sql(groups=groups, kinds=kinds)
    node = node_for(Case("m", config, sql, []))
    upstream = {f"lw.ods.s{i}": Relation("lw", "ods", f"s{i}") for i in range(SOURCES)}
    context = PlanContext(upstream, frozenset(list(upstream)[::2]), True)
    compiled = compile_model(node, context)
    out = {n: t for n, t in compiled.shown(all_plans=True).items() if n.endswith(".sql")}
    for n, step in enumerate(compiled.restate_plan("k BETWEEN 1 AND 9")):
        for field in ("statement", "query", "narrowed"):
            tree = getattr(step, field, None)
            if isinstance(tree, exp.Expr) and not isinstance(step, p.Read):
                out[f"restate_{n}_{field}"] = to_sql(tree)
    return out


def _null(node: exp.Expr) -> bool:
    while isinstance(node, (exp.Cast, exp.TryCast, exp.Paren)):
        node = node.this
    return isinstance(node, exp.Null)


def statements_holding(text: str, *kinds: TokenType) -> Iterator[exp.Expr]:
    """The statements of ``text`` whose tokens include every one of ``kinds``, parsed (the
    others are only tokenized: a statement without a ``NULL`` token projects no NULL, and one
    without ``UNION`` has no union branch; parsing every statement was most of this module's
    time)."""
    dialect = Dialect.get_or_raise(DIALECT)
    parser = dialect.parser()
    statement: list[Token] = []
    for token in [*dialect.tokenize(text), None]:
        if token is not None and token.token_type != TokenType.SEMICOLON:
            statement.append(token)
            continue
        if statement and set(kinds) <= {t.token_type for t in statement}:
            yield from filter(None, parser.parse(statement, text))
        statement = []


def placeholders_in(text: str, columns: set[str]) -> list[str]:
    """The model columns a SELECT of ``text`` projects as a bare NULL (a branch standing in
    for another source's column)."""
    found = []
    for statement in statements_holding(text, TokenType.NULL):
        for select in statement.find_all(exp.Select):
            found += [
                e.alias
                for e in select.expressions
                if isinstance(e, exp.Alias) and e.alias in columns and _null(e.this)
            ]
    return found


@pytest.mark.parametrize(("config", "groups", "kinds"), MODELS)
def test_no_statement_holds_another_sources_nulls(
    config: dict[str, Any], groups: bool, kinds: bool
) -> None:
    columns = {c for i in range(SOURCES) for c in _own(i)}
    statements = _statements(config, groups, kinds)
    assert "bootstrap.sql" in statements and "merge_all.sql" in statements
    assert any(name.startswith("restate_") for name in statements)
    found = {n: placeholders_in(t, columns) for n, t in statements.items()}
    assert {n: f for n, f in found.items() if f} == {}


AllPlans = Callable[[str, int], dict[str, str]]


def fold_types(compiled: CompiledModel) -> dict[int, dict[str, str]]:
    """The folds' column types a run's analysis of the bootstrap would hand the compiler
    (``one_shuffle.with_fold_structs``): here, without a JVM, the width benchmark's (its
    sequence columns INT, every other column BIGINT), as Spark's JSON names; empty where the
    bootstrap does not put its folds together in one shuffle."""
    model, query = compiled.model, compiled.bootstrap.expression
    assert model is not None
    probe = one_shuffle.with_fold_structs(model, query, KEYS)
    if probe is None:
        return {}
    ctes = {c.alias: c.this for c in query.args["with_"].expressions}
    return {
        b.index: {
            n: '"integer"' if "seq" in n else '"long"' for n in ctes[fold_name(b)].named_selects
        }
        for b in model.branches
    }


@pytest.fixture(scope="module")
def all_plans(tmp_path_factory: pytest.TempPathFactory) -> AllPlans:
    """``compile --all-plans`` of the width benchmark's model of an engine at S sources x 4
    columns, compiled once for the tests of this module, as a run sends it: compiled again
    with the folds' column types where its bootstrap puts them together in one shuffle
    (``lakewide compile`` has no JVM, so no types: there each branch of that one shuffle
    carries a NULL struct per other source)."""

    @functools.cache
    def compiled(engine: str, sources: int) -> dict[str, str]:
        root = tmp_path_factory.mktemp(f"{engine}_{sources}")
        shape = Shape(sources, 4)
        project = width_models.write_project(root, root / "warehouse", shape, [engine])
        node = width.manifest_of(project).models[f"wide_{engine}"]
        types = fold_types(compile_model(node))
        return compile_model(node, PlanContext(fold_types=types)).shown(all_plans=True)

    return compiled


#: deduplicate and first_row: a source's own MERGE replaces the whole row, so it names every
#: column of the table (the other sources' set to NULL): one such statement per source
WHOLE_ROW = pytest.mark.xfail(strict=True, reason="a MERGE per source naming every column")


def engines_marked(mark: pytest.MarkDecorator, *marked: str) -> list[Any]:
    """Every engine of the width benchmark, those of ``marked`` carrying ``mark``."""
    return [pytest.param(e, marks=mark) if e in marked else e for e in width_models.ENGINES]


@pytest.mark.parametrize("engine", engines_marked(WHOLE_ROW, "dedup", "first"))
def test_all_plans_grow_with_the_columns(all_plans: AllPlans, engine: str) -> None:
    """``compile --all-plans`` of 16 and 32 sources x 4 columns: doubling the sources (and
    the columns) may double the bytes written, a square would quadruple them (the union of
    branches with every other source's NULLs grew 2.6-3.7x)."""
    small, large = (sum(len(t) for t in all_plans(engine, s).values()) for s in (16, 32))
    assert large <= 2.2 * small, (small, large, large / small)


def placeholders(text: str) -> int:
    """The bare NULLs the branches of the statements' UNIONs project (of any name: a branch
    standing in for another source's column, or for another source's struct of columns)."""
    found = 0
    for statement in statements_holding(text, TokenType.UNION, TokenType.NULL):
        for union in statement.find_all(exp.Union):
            for side in (union.this, union.expression):
                if isinstance(side, exp.Select):
                    found += sum(
                        1 for e in side.expressions if isinstance(e, exp.Alias) and _null(e.this)
                    )
    return found


@pytest.mark.parametrize("engine", width_models.ENGINES)
def test_placeholders_grow_at_most_linearly(all_plans: AllPlans, engine: str) -> None:
    """Every statement of ``compile --all-plans`` at 16 and 32 sources x 4 columns, as a run
    sends it: the NULL placeholders its union branches carry, summed over the branches, at
    most double with the sources (one NULL per other source in every branch is S(S-1): 240
    -> 992, the one-shuffle bootstrap of aggregation and sequence groups without its folds'
    types)."""
    small, large = (
        {n: placeholders(t) for n, t in all_plans(engine, s).items() if n.endswith(".sql")}
        for s in (16, 32)
    )
    grown = {n: (small.get(n, 0), c) for n, c in large.items() if c > 2 * small.get(n, 0)}
    assert grown == {}
