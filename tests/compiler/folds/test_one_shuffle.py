"""The one-shuffle assembly of the bootstrap's folds (lakewide.compiler.folds.one_shuffle): with
the folds' column types, every union branch fills slots of one type each and no slot holds two
types; without them (or with one missing), one struct per source as ``lakewide compile``
writes it. Rows: tests/integration/test_typed_folds.py (every type, against the untyped form)
and the width property tests."""

from __future__ import annotations

from typing import Any

import pytest
from sqlglot import exp

from lakewide.compiler import CompiledModel, PlanContext, compile_model
from lakewide.compiler.folds import one_shuffle
from lakewide.compiler.folds.build_prefolds import KEYS
from lakewide.compiler.folds.prefold_columns import fold_name
from lakewide.compiler.model.split_union import split_union
from tests.compiler.fixtures import Case
from tests.compiler.test_rules import node_for

# narrow models (3 x 2): their bootstraps built from the pre-folds, as a wide table's are
pytestmark = pytest.mark.usefixtures("bootstraps_apart")

SOURCES = 4
STRUCTS = {one_shuffle.struct_name(i) for i in range(SOURCES)}


def model(groups: bool) -> Any:
    """SOURCES sources, each owning ``s{i}_a`` and ``s{i}_b`` (and group sequence ``g{i}``)."""
    own = {i: [f"s{i}_a", f"s{i}_b"] for i in range(SOURCES)}
    every = [c for cols in own.values() for c in cols]
    gs = [f"g{i}" for i in range(SOURCES)] if groups else ["seq"]
    branches = []
    for i in range(SOURCES):
        cols = [c if c in own[i] else f"CAST(NULL AS BIGINT) AS {c}" for c in every]
        if groups:
            cols += [g if g == f"g{i}" else f"CAST(NULL AS INT) AS {g}" for g in gs]
        else:
            cols.append("seq")
        branches.append(f"SELECT k, {', '.join(cols)} FROM src_{i}")
    if groups:
        config: dict[str, Any] = {
            "merge_engine": "partial_update",
            "primary_key": "k",
            "sequence_groups": {f"g{i}": own[i] for i in range(SOURCES)},
        }
    else:
        config = {
            "merge_engine": "aggregation",
            "primary_key": "k",
            "sequence_field": "seq",
            "aggregates": {c: "sum" if c.endswith("_a") else "max" for c in every},
        }
    return node_for(Case("m", config, "\nUNION ALL\n".join(branches), []))


def type_of(source: int, column: str) -> str:
    """A type per fold column: sources differ (source 1's ``_b`` a STRING, source 2's a
    DECIMAL), so that slots must keep them apart."""
    if column.endswith("_b") and source in (1, 2):
        return '"string"' if source == 1 else '"decimal(20,2)"'
    return '"integer"' if "seq" in column or column.startswith("g") else '"long"'


def fold_types(compiled: CompiledModel) -> dict[int, dict[str, str]]:
    query = compiled.bootstrap.expression
    ctes = {c.alias: c.this for c in query.args["with_"].expressions}
    assert compiled.model is not None
    return {
        b.index: {n: type_of(b.index, n) for n in ctes[fold_name(b)].named_selects}
        for b in compiled.model.branches
    }


def branches_of(query: exp.Expr) -> list[exp.Select]:
    """The branches of the bootstrap's one union (the folds' rows)."""
    [union] = [u for u in query.find_all(exp.Union) if not isinstance(u.parent, exp.Union)]
    return split_union(union, model="m")


@pytest.mark.parametrize("groups", [False, True], ids=["aggregation", "sequence_groups"])
def test_each_slot_holds_one_type(groups: bool) -> None:
    node = model(groups)
    types = fold_types(compile_model(node))
    query = compile_model(node, PlanContext(fold_types=types)).bootstrap.expression
    branches = branches_of(query)
    assert len(branches) == SOURCES
    assert len({len(b.expressions) for b in branches}) == 1  # one row type
    slot_types: dict[str, set[str]] = {}
    for i, branch in enumerate(branches):
        [source] = [e.this.name for e in branch.expressions if e.alias == one_shuffle.SOURCE]
        assert source == str(i)
        [payload] = [e.this for e in branch.expressions if e.alias == one_shuffle.PAYLOAD]
        filled = {
            e.alias: e.this.name for e in payload.expressions if isinstance(e.this, exp.Column)
        }
        assert sorted(filled.values()) == sorted(types[i])  # every fold column, in one slot
        for slot, column in filled.items():
            slot_types.setdefault(slot, set()).add(types[i][column])
        assert not [e for e in branch.expressions if e.alias in STRUCTS]
    assert all(len(t) == 1 for t in slot_types.values()), slot_types
    # the kinds of slot: BIGINT, INT, STRING and DECIMAL, as many of each as one fold needs
    assert {next(iter(t)) for t in slot_types.values()} == {
        '"long"',
        '"integer"',
        '"string"',
        '"decimal(20,2)"',
    }


def test_a_missing_type_keeps_a_struct_per_source() -> None:
    node = model(False)
    types = fold_types(compile_model(node))
    del types[2]["s2_a"]
    query = compile_model(node, PlanContext(fold_types=types)).bootstrap.expression
    assert "__lw_src" not in query.sql()
    for branch in branches_of(query):
        assert len([e for e in branch.expressions if e.alias in STRUCTS]) == SOURCES


def test_the_probe_names_each_fold_once() -> None:
    """The compiled bootstrap with each fold's struct as an output column; none once typed."""
    node = model(True)
    compiled = compile_model(node)
    assert compiled.model is not None
    probe = one_shuffle.with_fold_structs(compiled.model, compiled.bootstrap.expression, KEYS)
    assert probe is not None
    names = [one_shuffle.struct_name(b.index) for b in compiled.model.branches]
    assert probe.named_selects[-SOURCES:] == names
    fields = {n: {"k": '"long"'} for n in names}
    assert one_shuffle.fold_types_of(compiled.model, fields) == {
        b.index: {"k": '"long"'} for b in compiled.model.branches
    }
    assert one_shuffle.fold_types_of(compiled.model, {n: fields[n] for n in names[1:]}) == {}
    typed = compile_model(node, PlanContext(fold_types=fold_types(compiled)))
    assert typed.model is not None
    assert one_shuffle.with_fold_structs(typed.model, typed.bootstrap.expression, KEYS) is None


def test_the_typed_grouping_collects_each_row_once() -> None:
    """Typed, the rows are grouped by one aggregate (each row collected once into a map from
    its source to its payload), each source's looked up once per key; untyped, one ``FIRST``
    per source (every row fed to every source's aggregate)."""
    node = model(False)
    compiled = compile_model(node)
    untyped = compiled.bootstrap.expression
    typed = compile_model(node, PlanContext(fold_types=fold_types(compiled))).bootstrap.expression
    assert len(list(untyped.find_all(exp.First))) == SOURCES
    assert not list(typed.find_all(exp.First))
    [collect] = [f for f in typed.find_all(exp.Func) if f.sql().startswith("COLLECT_LIST")]
    assert collect.find(exp.Column).name == one_shuffle.SOURCE
    lookups = [b for b in typed.find_all(exp.Bracket) if b.this.name == one_shuffle.BY_SOURCE]
    assert sorted(b.expressions[0].name for b in lookups) == [str(i) for i in range(SOURCES)]
