"""The bootstrap's folds put together with their column types, from the analysis a run makes
anyway.

A run analyses the bootstrap query for the table's contract (its column types,
lakewide.run.schema.schema_steps.model_schema) when it builds, fully refreshes or re-folds a
table whose stored contract does not answer for it. Analysed with each source's fold as one
more column (``with_fold_structs``), that same analysis gives the folds' column types; the
plans compiled again with them (``typed_plans``) put the folds together in one shuffle
without a NULL per other source (lakewide.compiler.folds.one_shuffle). Where the types are
not at hand (the stored contract answered), the plans stay as compiled: exact, with the NULLs.
The fold columns reach no contract: a contract keeps the model's table columns only
(lakewide.compiler.schema.contract.contract_of).
"""

from __future__ import annotations

import dataclasses

from sqlglot import exp

from lakewide.compiler import CompiledModel, compile_model
from lakewide.compiler.folds import one_shuffle
from lakewide.compiler.folds.build_prefolds import KEYS
from lakewide.compiler.model.wide_model import WideModel
from lakewide.compiler.plans.steps import ModelPlans, Step
from lakewide.run.schema.schema_steps import ModelSchema


def with_fold_structs(model: WideModel, query: exp.Expr) -> exp.Select | None:
    """The bootstrap ``query`` with each source's fold as one more column, where it puts
    the folds together in one shuffle without their types; else None. (The key table's run
    calls this, not the compiler's fold modules: the run side imports no compiler internals,
    tests/compiler/plans/test_run_plan.py.)"""
    return one_shuffle.with_fold_structs(model, query, KEYS)


def typed_model(compiled: CompiledModel, schema: ModelSchema | None) -> CompiledModel:
    """``compiled``, compiled again with the folds' column types where the run's analysis
    for ``schema`` (or the types stored with it) gave them; else as compiled."""
    model = compiled.model
    types = (
        {} if model is None or schema is None else one_shuffle.fold_types_of(model, schema.fields)
    )
    if not types:
        return compiled
    context = dataclasses.replace(compiled.context, fold_types=types)
    return compile_model(compiled.node, context)


def typed_plans(compiled: CompiledModel, schema: ModelSchema | None) -> ModelPlans:
    """``compiled``'s plans, typed as :func:`typed_model` compiles them."""
    plans = typed_model(compiled, schema).plans
    assert plans is not None
    return plans


def typed_combined(
    compiled: CompiledModel, schema: ModelSchema | None
) -> tuple[list[Step] | None, list[Step] | None]:
    """``compiled``'s combined plans (appended rows, changelog reads), typed as
    :func:`typed_model` compiles them; of the typed model only these are built."""
    typed = typed_model(compiled, schema)
    if typed is compiled:
        plans = compiled.plans
        assert plans is not None
        return plans.combined, plans.combined_changes
    return typed.combined_plans
