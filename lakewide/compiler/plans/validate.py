"""Rule: reject what Paimon rejects and only the model's columns show (a group or aggregate on
no value column, a type an aggregate cannot take), with the fix in the message."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.model.wide_model import WideModel
from lakewide.compiler.plans.steps import CheckTypes
from lakewide.project.config.specs import DEFAULT_AGGREGATE
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError


def _fail(model: WideModel, key: str, message: str) -> None:
    raise CompileError(message, path=model.node.path, model=model.node.name, key=key)


def _check_aggregates(model: WideModel) -> None:
    for column, aggregate in model.aggregates.items():
        if not aggregate.configured:
            continue
        key, name, function = f"aggregates.{column}", aggregate.name, aggregate.function
        if column not in model.stored or column in model.primary_key:
            _fail(model, key, f"'{column}' is not a value column of the model")
        declared = model.declared.get(column)
        if function.types and declared is not None and not function.types.admits(declared):
            _fail(
                model,
                key,
                f"{name} cannot aggregate column '{column}' of type "
                f"{declared.sql(DIALECT).upper()}; it takes {', '.join(function.types.names)}",
            )


def _check_groups(model: WideModel) -> None:
    for group in model.groups:
        label = group.name
        for column in group.all_columns:
            if column not in model.stored:
                _fail(
                    model,
                    "sequence_groups",
                    f"group '{label}' names '{column}', which is not "
                    f"a column of the model (columns: {', '.join(model.stored)})",
                )
        for branch in model.branches:
            owned = [c for c in group.all_columns if c in branch.owned]
            if owned and len(owned) != len(group.all_columns):
                missing = [c for c in group.all_columns if c not in branch.owned]
                _fail(
                    model,
                    "sequence_groups",
                    f"UNION ALL branch {branch.index + 1} "
                    f"({branch.name}) owns part of group '{label}' but not "
                    f"{', '.join(missing)}; a source writes a whole group or none of it",
                )
    default = model.default_function
    if model.engine.takes_groups and default is not None and default.name != DEFAULT_AGGREGATE:
        fixed = {*model.primary_key, *model.sequence, model.row_kind}
        outside = [
            c
            for c in model.stored
            if c not in fixed and model.group_of(c) is None and c not in model.aggregates
        ]
        if outside:
            _fail(
                model,
                "default_aggregate",
                f"partial_update applies default_aggregate "
                f"{default.name!r} to the columns of sequence groups, and '{outside[0]}' is in "
                "no group; add it to sequence_groups or drop default_aggregate (Paimon: "
                "aggregation functions need a sequence group)",
            )


def typed_aggregates(model: WideModel) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Aggregated columns whose function takes only some types and whose branches declare no
    type with CAST: column -> (function, Spark's names of the accepted types)."""
    out = {}
    for column in model.stored:
        if column in model.primary_key + model.sequence or column == model.row_kind:
            continue
        if not model.engine.aggregates_values and not model.group_aggregated(column):
            continue
        aggregate = model.aggregate(column)
        types = aggregate.function.types
        if types is not None and column not in model.declared:
            out[column] = (aggregate.name, types.names)
    return out


def type_probes(model: WideModel) -> list[exp.Select]:
    """Per branch, its projection of the aggregated columns whose type the SQL does not
    declare: the engine analyses them (no rows read) and :func:`check_probed_types` checks the
    types it reports, before anything is written."""
    typed = typed_aggregates(model)
    probes = []
    for branch in model.branches:
        columns = [c for c in typed if c in branch.owned]
        if columns:
            probes.append(branch.projected(columns))
    return probes


def check_probed_types(model: WideModel, types: dict[str, str]) -> None:
    """Raise CompileError when a probed column's type (Spark's name, any case) does not suit
    its aggregate function (the run plan's ``CheckTypes`` step)."""

    CheckTypes(exp.Null(), typed_aggregates(model), str(model.node.path), model.node.name).check(
        types
    )


def validate(model: WideModel) -> None:
    """Raise CompileError for what Paimon rejects and needs the model's columns to see (the
    rules that need only the config are its model validators:
    ``lakewide.project.config.model_config``)."""
    if model.row_kind is not None and model.row_kind not in model.columns:
        _fail(
            model,
            "row_kind_column",
            f"row_kind_column '{model.row_kind}' is not a column of "
            f"the model (columns: {', '.join(model.columns)})",
        )
    _check_groups(model)
    _check_aggregates(model)
